/**
 * The judge pool (oracle/judge-pool.ts): bodies handed over in the same turn of the event
 * loop go to a worker in one message (up to JUDGE_BATCH_BYTES), later ones in later
 * messages; every body's judgement is judgeBody's on this thread, whatever batch it came in;
 * a body that owns its whole buffer is moved (detached here), a slice of a larger one copied.
 */
import t from 'tap';
import { Generator, type GeneratorSpec } from '../../../oracle/generator.ts';
import { JUDGE_BATCH_BYTES, JudgePool } from '../../../oracle/judge-pool.ts';
import { judgeBody } from '../../../oracle/tally.ts';

const spec: GeneratorSpec = { seed: 'pool-test', partitions: 3, keys: 100 };
const g = new Generator(spec);

/** An object's body: `count` events of partition p from seq `from`, with a foreign line and a cut last line when asked. */
function body(p: number, from: number, count: number, dirty = false): Buffer {
  const lines: string[] = [];
  for (let seq = from; seq < from + count; seq++) lines.push(g.line(p, seq));
  if (dirty) lines.splice(1, 0, '{"p":9,"seq":1,"k":"x","v":1}', lines[0]!);
  const text = lines.join('\n') + '\n';
  return Buffer.from(dirty ? text.slice(0, -7) : text);
}

t.test('bodies handed over in one turn travel in one message per worker; judgements are judgeBody', async (t) => {
  const bodies = Array.from({ length: 20 }, (_, i) => ({ key: `o${i}`, b: body(i % 3, i * 10, 30, i % 4 === 0) }));
  const want = bodies.map(({ key, b }) => judgeBody(g, key, b));
  const pool = new JudgePool(spec, 1);
  try {
    const got = await Promise.all(bodies.map(({ key, b }) => pool.judge(key, Buffer.from(b))));
    t.strictSame(got, want, 'each body judged as on this thread');
    t.equal(pool.messagesSent, 1, '20 bodies, one message');
    // Handed over in separate turns: separate messages.
    for (const { key, b } of bodies.slice(0, 3)) {
      t.strictSame(await pool.judge(key, Buffer.from(b)), judgeBody(g, key, b));
    }
    t.equal(pool.messagesSent, 4, 'one more message a turn');
  } finally {
    await pool.close();
  }
});

t.test('with two workers, one turn makes one message for each', async (t) => {
  const pool = new JudgePool(spec, 2);
  try {
    const bodies = Array.from({ length: 10 }, (_, i) => body(i % 3, i, 5));
    const got = await Promise.all(bodies.map((b, i) => pool.judge(`k${i}`, Buffer.from(b))));
    t.strictSame(got, bodies.map((b, i) => judgeBody(g, `k${i}`, b)));
    t.equal(pool.messagesSent, 2);
  } finally {
    await pool.close();
  }
});

t.test('a batch goes at once when it reaches JUDGE_BATCH_BYTES', async (t) => {
  const pool = new JudgePool(spec, 1);
  try {
    const lineBytes = body(0, 0, 100).length / 100;
    const big = body(0, 0, Math.ceil((0.6 * JUDGE_BATCH_BYTES) / lineBytes));
    t.ok(big.length < JUDGE_BATCH_BYTES && 2 * big.length >= JUDGE_BATCH_BYTES, 'one of them does not fill a batch, two do');
    const pending = [pool.judge('a', Buffer.from(big)), pool.judge('b', Buffer.from(big))];
    t.equal(pool.messagesSent, 1, 'sent in the same turn, before the end of the turn');
    pending.push(pool.judge('c', body(1, 0, 3)));
    t.equal(pool.messagesSent, 1, 'the next body waits for the end of the turn');
    const got = await Promise.all(pending);
    t.equal(pool.messagesSent, 2);
    t.equal(got[0]!.events, big.toString().split('\n').length - 1);
    t.strictSame(got[2], judgeBody(g, 'c', body(1, 0, 3)));
  } finally {
    await pool.close();
  }
});

t.test('a whole buffer is moved (detached here), a slice of a larger one copied', async (t) => {
  const pool = new JudgePool(spec, 1);
  try {
    const copyOfWhole = body(2, 0, 4);
    const whole = Buffer.alloc(copyOfWhole.length); // not from the pool: it owns its whole buffer
    copyOfWhole.copy(whole);
    const backing = Buffer.concat([Buffer.from('xx'), body(2, 4, 4), Buffer.from('yy')]);
    const slice = backing.subarray(2, backing.length - 2);
    const copyOfSlice = Buffer.from(slice);
    const [a, b] = await Promise.all([pool.judge('w', whole), pool.judge('s', slice)]);
    t.strictSame(a, judgeBody(g, 'w', copyOfWhole));
    t.strictSame(b, judgeBody(g, 's', copyOfSlice));
    t.equal(whole.buffer.byteLength, 0, 'the whole body was transferred');
    t.equal(backing.toString('utf8', 0, 2), 'xx', 'the larger buffer is left as it was');
    t.equal(slice.length, copyOfSlice.length);
  } finally {
    await pool.close();
  }
});
