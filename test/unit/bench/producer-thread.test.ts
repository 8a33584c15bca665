/**
 * The thread-backed line producer (bench/producer-thread.ts), without Kafka: events numbered
 * in the calling thread before produce() returns, round-robin over the partitions it owns,
 * as LineProducer numbers them; a send still pending when the producer closes (no broker
 * answers) is rejected, not left hanging; after close() the thread is gone. A successful
 * send needs Kafka (the rig).
 */
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
