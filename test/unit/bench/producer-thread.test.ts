/**
 * The thread-backed line producer (bench/producer-thread.ts), without Kafka: events numbered
 * in the calling thread before produce() returns, round-robin over the partitions it owns,
 * as LineProducer numbers them; a send still pending when the producer closes (no broker
 * answers) is rejected, not left hanging; after close() the thread is gone. A successful
 * send needs Kafka (the rig).
 */
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { ThreadedProducer } from '../../../bench/producer-thread.ts';

t.test('numbering in the calling thread; a pending send rejected on close; the thread gone after', async (t) => {
  // Port 9 (discard) on loopback: nothing listens; the thread's producer keeps trying until closed.
  const p = new ThreadedProducer(['127.0.0.1:9'], 'topic', 4, 60, [1, 3], { retries: 0 });
  const sent = p.produce(5);
  let settled = false;
  sent.catch(() => undefined).finally(() => (settled = true));
  t.same(p.seq, [0, 3, 0, 2], 'numbered before produce() returned, round-robin over partitions 1 and 3 only');
  t.equal(p.produced, 5);
  await t.rejects(p.produce(10, 5), /one batch per call/);
  t.same(p.seq, [0, 3, 0, 2], 'a refused call numbers nothing');
  await new Promise((r) => setTimeout(r, 300));
  t.equal(settled, false, 'not acknowledged: no broker');
  const started = Date.now();
  await p.close();
  t.ok(Date.now() - started < 12_000, `closed in ${Date.now() - started} ms`);
  await t.rejects(sent, /^producer thread(: | exited)/, 'the send never acknowledged is rejected (its error, or the thread ended under it), never left hanging');
  await t.rejects(p.produce(1), /producer thread exited/, 'after close: refused');
  t.throws(() => new ThreadedProducer(['127.0.0.1:9'], 'topic', 4, 60, [4]), /owned partitions \[4\] not within 0..3/);
});

/** The nice value of each thread of this process (field 19 of /proc/self/task/<tid>/stat), by thread id. */
function threadNices(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // After the command name in parentheses: state is field 3, nice field 19.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(Number(tid), Number(fields[19 - 3]));
  }
  return out;
}

t.test('nice: the sending thread sets its own nice value; the calling thread and the others keep theirs', async (t) => {
  const before = threadNices();
  const mainNice = before.get(process.pid);
  t.ok(mainNice !== undefined, 'the main thread is listed');
  // Raising it needs no privilege; at nice 19 already (the test runner's unit tests beside the
  // rig run so), only root can move it, downwards.
  const want = mainNice! < 19 ? Math.min(19, mainNice! + 5) : process.getuid?.() === 0 ? 10 : null;
  if (want === null) {
    t.comment('SKIPPED: at nice 19 and not root, no other nice value can be set');
    return;
  }
  t.not(want, mainNice, 'a nice value other than the calling thread\'s');
  const p = new ThreadedProducer(['127.0.0.1:9'], 'topic', 2, 60, undefined, { nice: want, retries: 0 });
  const deadline = Date.now() + 10_000;
  let raised: number[] = [];
  while (Date.now() < deadline) {
    raised = [...threadNices()].filter(([tid, n]) => !before.has(tid) && n === want).map(([tid]) => tid);
    if (raised.length) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  t.equal(raised.length, 1, `one new thread at nice ${want}: the producer's`);
  t.equal(threadNices().get(process.pid), mainNice, 'the calling thread kept its nice value');
  t.ok([...before].every(([tid, n]) => !threadNices().has(tid) || threadNices().get(tid) === n), 'every thread there before kept its own');
  await p.close();
  t.throws(() => new ThreadedProducer(['127.0.0.1:9'], 'topic', 2, 60, undefined, { nice: 20 }), /nice 20 is not an integer in -20..19/);
});
