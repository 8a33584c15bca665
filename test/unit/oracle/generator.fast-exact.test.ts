import t from 'tap';
import { Generator, judgeLineExact, judgeSpan, judgeSpanFast, type LineVerdict } from '../../../oracle/generator.ts';
import { EventTally, judgeBody } from '../../../oracle/tally.ts';
import { JudgePool } from '../../../oracle/judge-pool.ts';

const spec = { seed: 'fast-exact', partitions: 4, keys: 50_000 };
const g = new Generator(spec);

/** Good and bad lines: every kind of damage the fast path must not wave through. */
function cases(): string[] {
  const out: string[] = [];
  for (const [p, seq] of [[0, 0], [1, 7], [3, 99_999], [2, 2 ** 40 + 5], [0, Number.MAX_SAFE_INTEGER]] as const) {
    const line = g.line(p, seq);
    const e = g.event(p, seq);
    out.push(line, line); // good, and its duplicate
    // Tampered payload: each position, changed to another alphabet character and to a byte outside it.
    const at = line.indexOf('"payload":"') + 11;
    for (let i = at; i < line.length - 2; i++) {
      out.push(line.slice(0, i) + (line[i] === 'A' ? 'B' : 'A') + line.slice(i + 1));
      if (i % 7 === 0) out.push(line.slice(0, i) + '!' + line.slice(i + 1));
    }
    out.push(line.replace(`"payload":"${e.payload}"`, `"payload":"${e.payload}A"`), line.replace(`"payload":"${e.payload}"`, `"payload":"${e.payload.slice(0, -1)}"`));
    out.push(line.replace(`"payload":"${e.payload}"`, `"payload":"\\u00${e.payload.charCodeAt(0).toString(16)}${e.payload.slice(1)}"`), 'JSON-equal escape');
    // Wrong key: another key, another width, the key of another event.
    const k = Number(e.key.slice(1));
    out.push(line.replace(e.key, `k${String((k + 1) % 50_000).padStart(5, '0')}`), line.replace(e.key, `k0${e.key.slice(1)}`), line.replace(e.key, e.key.slice(0, -1)), line.replace(e.key, g.event(p, seq + 1).key));
    // Reordered fields, extra spaces, trailing garbage, truncation.
    out.push(JSON.stringify({ p: e.p, id: e.id, seq: e.seq, key: e.key, payload: e.payload }));
    out.push(JSON.stringify({ id: e.id, p: e.p, seq: e.seq, payload: e.payload, key: e.key }));
    out.push(JSON.stringify(e, null, 1).replace(/\n/g, ''), line.replace('{"id"', '{ "id"'), line.replace(',"seq"', ', "seq"'), line.replace('"p":', '"p": '), ' ' + line, line + ' ', line + '\t');
    out.push(line + 'x', line + '}', line + '{}', line.slice(0, -1), line.slice(0, -2) + '"', line.slice(0, 20));
    // id, p and seq that disagree, non-canonical numbers, out of range.
    out.push(line.replace(`"seq":${seq}`, `"seq":${seq + 1}`), line.replace(`"p":${p}`, `"p":${(p + 1) % 4}`), line.replace(`"id":"${p}-`, `"id":"${p}-0`), line.replace(`"p":${p}`, `"p":${p}.0`));
    out.push(line.replace(`"id":"${p}-${seq}"`, `"id":"${p + 4}-${seq}"`).replace(`"p":${p}`, `"p":${p + 4}`));
    out.push(new Generator({ ...spec, partitions: 8 }).line(p + 4, seq), new Generator({ ...spec, seed: 'other' }).line(p, seq));
  }
  out.push('', ' ', '{}', '[]', '[1,2]', 'null', '"x"', '{"p":1}', '{"p":1,"seq":-1}', '{"p":-1,"seq":1}', '{"id":"1-2"', 'garbage', '{"id":"9999999999999999999-1","p":1}', '\u00e9{"id":"0-0"}');
  return out;
}

const same = (a: LineVerdict, b: LineVerdict) => JSON.stringify(a) === JSON.stringify(b);

t.test('fast path and exact path agree on good and bad lines', async (t) => {
  let events = 0;
  let bad = 0;
  for (const line of cases()) {
    const buf = Buffer.from('\n' + line + '\n', 'utf8');
    const exact = judgeLineExact(g, line);
    const fast = judgeSpanFast(g, buf, 1, buf.length - 1);
    const full = judgeSpan(g, buf, 1, buf.length - 1);
    if (fast !== undefined && !same(fast, exact)) t.fail(`fast path accepted what the exact path calls ${JSON.stringify(exact)}: ${line}`);
    if (exact.kind === 'event' && fast === undefined) t.fail(`fast path missed a canonical line: ${line}`);
    if (!same(full, exact)) t.fail(`judgeSpan ${JSON.stringify(full)} vs exact ${JSON.stringify(exact)}: ${line}`);
    if (exact.kind === 'event') events++;
    else bad++;
  }
  t.equal(events, 10, 'five good lines, each twice');
  t.ok(bad > 400, `${bad} bad lines`);
});

t.test('random damage: the fast path never accepts what the exact path rejects', async (t) => {
  let s = 12345;
  const rnd = (n: number) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s % n;
  };
  const bytes = 'AZaz09_-"{}:, \\x\u00e9';
  let accepted = 0;
  for (let k = 0; k < 20_000; k++) {
    const line = g.line(rnd(5), rnd(1_000_000));
    const i = rnd(line.length + 1);
    const ch = bytes[rnd(bytes.length)]!;
    const op = rnd(4);
    const bent = op === 0 ? line.slice(0, i) + ch + line.slice(i + 1) : op === 1 ? line.slice(0, i) + ch + line.slice(i) : op === 2 ? line.slice(0, i) + line.slice(i + 1) : line;
    const buf = Buffer.from(bent, 'utf8');
    const exact = judgeLineExact(g, bent);
    const fast = judgeSpanFast(g, buf, 0, buf.length);
    if (fast ? !same(fast, exact) : exact.kind === 'event') {
      t.fail(`disagree on ${bent}: fast ${JSON.stringify(fast)}, exact ${JSON.stringify(exact)}`);
      break;
    }
    if (!same(judgeSpan(g, buf, 0, buf.length), exact)) t.fail(`judgeSpan disagrees on ${bent}`);
    if (fast) accepted++;
  }
  t.ok(accepted > 1000, `${accepted} untouched or still-canonical lines accepted`);
});

/** The reference tally: the definitions of oracle/tally.ts applied with the exact path only. */
function referenceCounts(bodies: [string, Buffer][]) {
  const seen = new Set<string>();
  const c = { objects: 0, lines: 0, events: 0, duplicates: 0, foreign: 0, corrupted: 0 };
  for (const [, b] of bodies) {
    c.objects++;
    if (b.length === 0) {
      c.corrupted++;
      continue;
    }
    const text = b.toString('utf8');
    const lines = text.split('\n');
    if (text.endsWith('\n')) lines.pop();
    let unparsable = 0;
    for (const l of lines) {
      c.lines++;
      const v = judgeLineExact(g, l);
      if (v.kind === 'event') {
        c.events++;
        const k = `${v.p}-${v.seq}`;
        if (seen.has(k)) c.duplicates++;
        seen.add(k);
      } else if (v.kind === 'foreign') c.foreign++;
      else unparsable++;
    }
    if (unparsable) c.corrupted++;
  }
  return c;
}

t.test('whole objects: tally (in-thread and through judge workers) = the exact reference', async (t) => {
  const all = cases();
  const bodies: [string, Buffer][] = [];
  for (let o = 0; o < 12; o++) {
    const lines: string[] = [];
    for (let seq = o * 50; seq < o * 50 + 60; seq++) lines.push(g.line(o % 4, seq)); // overlapping: duplicates across objects
    for (let k = 0; k < 25; k++) lines.splice((k * 37 + o) % lines.length, 0, all[(o * 25 + k * 13) % all.length]!);
    bodies.push([`o${o}`, Buffer.from(lines.join('\n') + (o % 3 ? '\n' : ''))]);
  }
  bodies.push(['empty', Buffer.alloc(0)], ['nl', Buffer.from('\n')], ['clean', Buffer.from(g.line(1, 1) + '\n' + g.line(1, 2) + '\n' + g.line(1, 1) + '\n')]);
  const ref = referenceCounts(bodies);
  t.ok(ref.duplicates > 0 && ref.foreign > 0 && ref.corrupted > 0, 'the mix holds every kind of finding');

  const inThread = new EventTally(g);
  const a = bodies.map(([k, b]) => inThread.addObject(k, b));
  const pooled = new EventTally(g);
  const pool = new JudgePool(spec, 2);
  try {
    const judged = await Promise.all(bodies.map(([k, b]) => pool.judge(k, Buffer.from(b))));
    const b = bodies.map(([k, body], i) => pooled.addJudged(k, body.length, judged[i]!));
    t.strictSame(b, a, 'per-object judgements identical');
  } finally {
    await pool.close();
  }
  for (const tally of [inThread, pooled]) {
    t.strictSame(
      { objects: tally.objects, lines: tally.lines, duplicates: tally.duplicates, foreign: tally.foreign, corrupted: tally.corrupted },
      { objects: ref.objects, lines: ref.lines, duplicates: ref.duplicates, foreign: ref.foreign, corrupted: ref.corrupted },
    );
  }
  t.strictSame(pooled.counters([700, 700, 700, 700]), inThread.counters([700, 700, 700, 700]));
  t.strictSame(judgeBody(g, 'x', bodies[0]![1]).events, a[0]!.events);
});
