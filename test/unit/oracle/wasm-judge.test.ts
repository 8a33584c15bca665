/**
 * The compiled fast path (oracle/wasm-judge.ts) against the JavaScript judge it stands in
 * for: on bodies of good and damaged lines, cut into chunks of every size and resumed after
 * every record limit, judgeBodyWasm must return exactly judgeBodyJs's BodyJudgement, and
 * must decide the bodies itself (undefined would hand them back to JavaScript).
 */
import t from 'tap';
import { Generator } from '../../../oracle/generator.ts';
import { JUDGE_IMPL, judgeBody, judgeBodyJs } from '../../../oracle/tally.ts';
import { judgeBodyWasm } from '../../../oracle/wasm-judge.ts';

const spec = { seed: 'wasm-judge', partitions: 4, keys: 50_000 };
const g = new Generator(spec);

let s = 4242;
const rnd = (n: number): number => {
  s = (Math.imul(s, 1103515245) + 12345) >>> 0;
  return s % n;
};

/** A line bent once: a byte changed, inserted or dropped (or left as it is). */
function bend(line: string): string {
  const bytes = 'AZaz09_-"{}:, \\x\u00e9\r';
  const i = rnd(line.length + 1);
  const ch = bytes[rnd(bytes.length)]!;
  const op = rnd(5);
  if (op === 0) return line.slice(0, i) + ch + line.slice(i + 1);
  if (op === 1) return line.slice(0, i) + ch + line.slice(i);
  if (op === 2) return line.slice(0, i) + line.slice(i + 1);
  return line;
}

/** A body like a sink's object: runs of consecutive events of one partition, some lines damaged, duplicated or foreign. */
function body(lines: number, damage: number): Buffer {
  const out: string[] = [];
  let p = rnd(4);
  let seq = rnd(1_000_000);
  for (let k = 0; k < lines; k++) {
    if (rnd(50) === 0) {
      p = rnd(4);
      seq = rnd(1_000_000);
    }
    const line = g.line(p, seq++);
    const r = rnd(1000) / 1000;
    if (r < damage) out.push(bend(line));
    else if (r < damage * 1.2) out.push(line, line); // a duplicate
    else if (r < damage * 1.3) out.push(new Generator({ ...spec, seed: 'other' }).line(p, seq)); // foreign
    else if (r < damage * 1.35) out.push(''); // an empty line
    else out.push(line);
  }
  return Buffer.from(out.join('\n') + (rnd(2) ? '\n' : ''), 'utf8');
}

t.test('the compiled judge returns the JavaScript judge\'s judgement, and decides it itself', async (t) => {
  let bodies = 0;
  let events = 0;
  let problems = 0;
  for (const damage of [0, 0.01, 0.2, 0.9]) {
    for (let k = 0; k < 40; k++) {
      const b = body(20 + rnd(400), damage);
      const js = judgeBodyJs(g, 'k', b);
      const wasm = judgeBodyWasm(g, 'k', b);
      if (wasm === undefined) {
        t.fail(`handed back to JavaScript: ${b.toString('utf8').slice(0, 200)}`);
        break;
      }
      if (JSON.stringify(wasm) !== JSON.stringify(js)) {
        t.same(wasm, js, `damage ${damage}, body ${k}`);
        break;
      }
      bodies++;
      events += js.events;
      problems += js.foreign + js.unparsable;
    }
  }
  t.equal(bodies, 160, 'every body judged alike');
  t.ok(events > 10_000 && problems > 1000, `${events} events, ${problems} foreign or unparsable lines among them`);
});

t.test('chunks of any size and resumed calls judge alike: runs go on across chunks, line numbers count on', async (t) => {
  const b = body(300, 0.05);
  const js = judgeBodyJs(g, 'obj', b);
  t.ok(js.foreign + js.unparsable > 3 && js.runs.length >= 6, 'a body with problems and several runs');
  for (const chunk of [300, 301, 512, 997, 4096, 65536]) {
    for (const records of [2, 3, 7, 1000]) {
      const wasm = judgeBodyWasm(g, 'obj', b, chunk, records);
      if (JSON.stringify(wasm) !== JSON.stringify(js)) {
        t.same(wasm, js, `chunks of ${chunk} bytes, ${records} records a call`);
        return;
      }
    }
  }
  t.pass('24 chunk and record sizes, one judgement');
});

t.test('where it cannot decide alone, it hands the body back, and judgeBody gives the JavaScript judgement', async (t) => {
  const long = Buffer.from(g.line(0, 1) + '\n' + 'x'.repeat(5000) + '\n' + g.line(0, 2) + '\n');
  t.equal(judgeBodyWasm(g, 'k', long, 1024), undefined, 'a line longer than a chunk');
  t.same(judgeBody(g, 'k', long), judgeBodyJs(g, 'k', long));
  t.same(judgeBodyWasm(g, 'k', long), judgeBodyJs(g, 'k', long), 'the same line within a chunk');
  // A module that refuses canonical lines (here: set up with another seed's state) leaves them
  // undecided; JavaScript calls them events, so the body goes back to JavaScript whole.
  const liar = new Generator(spec);
  Object.defineProperty(liar, 'fastPathParams', { get: () => new Generator({ ...spec, seed: 'not this one' }).fastPathParams });
  const good = Buffer.from([g.line(1, 7), g.line(1, 8), 'garbage'].join('\n'));
  t.equal(judgeBodyWasm(liar, 'k', good), undefined, 'an undecided line JavaScript calls an event: handed back');
  t.same(judgeBody(liar, 'k', good), judgeBodyJs(g, 'k', good), 'and judged in JavaScript: two events, one unparsable line');
  t.same(judgeBodyWasm(g, 'k', good)?.runs, [1, 7, 2], 'the same body, the module set up right: decided in it');
  const empty = Buffer.alloc(0);
  t.same(judgeBody(g, 'k', empty), { lines: 0, events: 0, foreign: 0, unparsable: 0, corrupted: true, runs: [], firstProblem: 'k: zero bytes' });
});

t.test('generators switch: each body is judged against its own seed, partitions and keys', async (t) => {
  const other = new Generator({ seed: 'another', partitions: 64, keys: 1_000_000 });
  const a = Buffer.from([g.line(3, 10), g.line(3, 11)].join('\n'));
  const b = Buffer.from([other.line(63, 5), other.line(63, 6), other.line(62, 0)].join('\n'));
  t.same(judgeBodyWasm(g, 'a', a)?.runs, [3, 10, 2]);
  t.same(judgeBodyWasm(other, 'b', b)?.runs, [63, 5, 2, 62, 0, 1], 'six-digit keys, 64 partitions');
  t.same(judgeBodyWasm(g, 'b', b), judgeBodyJs(g, 'b', b), "the other seed's lines are foreign here");
  t.equal(judgeBodyWasm(g, 'b', b)?.foreign, 3);
  const big = Buffer.from([g.line(1, 2 ** 40 + 5), g.line(1, Number.MAX_SAFE_INTEGER)].join('\n'));
  t.same(judgeBodyWasm(g, 'c', big)?.runs, [1, 2 ** 40 + 5, 1, 1, Number.MAX_SAFE_INTEGER, 1], 'sequences past 32 bits');
  t.equal(JUDGE_IMPL, process.env.CLINK_QUAL_JUDGE === 'js' ? 'js' : 'wasm');
});
