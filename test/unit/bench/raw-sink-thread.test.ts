/**
 * The baseline's consumers and puts in their own thread (bench/raw-sink-thread.ts), without
 * Kafka or a store (port 9 on loopback: nothing listens; the sources retry their fetches
 * until closed): a partition whose target is 0 ends at its first slot with nothing put, so
 * finish() resolves; started() resolves once the thread's sources started; a target the
 * sources cannot reach keeps finish() pending, and abort() still ends it, rejecting finish()
 * rather than leaving it hanging; abort() does not wait for the next slot; after either, the
 * thread is gone. A put (and a put that fails) needs Kafka to read from: the rig.
 */
import t from 'tap';
import { ThreadedRawSink, type RawSinkOptions } from '../../../bench/raw-sink-thread.ts';

const nowhere = (o: Partial<RawSinkOptions> = {}): ThreadedRawSink =>
  new ThreadedRawSink({
    bootstrap: ['127.0.0.1:9'],
    topic: 'topic',
    partitions: 2,
    s3: { endpoint: 'http://127.0.0.1:9', region: 'us-east-1', accessKeyId: 'k', secretAccessKey: 's' },
    bucket: 'bucket',
    prefix: 'prefix/',
    intervalMs: 300,
    ...o,
  });

/** Whether p settled within ms. */
const settlesWithin = (p: Promise<unknown>, ms: number): Promise<boolean> =>
  Promise.race([p.then(() => true, () => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

t.test('a target of 0 per partition: every loop ends at its first slot, finish() resolves, the thread is gone', async (t) => {
  const t0 = Date.now();
  // An interval longer than the thread usually takes to start, so that ending at the first slot, not before, shows.
  const sink = nowhere({ t0, intervalMs: 2000 });
  // When the thread's sources started: loading the thread can take seconds on a loaded box, and
  // is not what the bound below is about. (At nice 19 beside the rig, at 33a4c60, the finish
  // came 12,299 ms after t0 and failed the old bound, 12 s from t0.)
  const startedAt = sink.started().then(() => Date.now(), () => NaN);
  t.ok(sink.threadId > 0, `the thread runs (id ${sink.threadId})`);
  await t.rejects(sink.finish([0]), /not one count ≥ 0 per partition \(2\)/, 'a target for the wrong number of partitions is refused');
  await t.rejects(sink.finish([0, -1]), /not one count ≥ 0 per partition/);
  await sink.finish([0, 0]);
  const took = Date.now() - t0;
  t.ok(took >= 2000, `not before the first slot of the grid, t0 + 2000 ms (${took} ms)`);
  const sinceStart = Date.now() - (await startedAt);
  t.ok(sinceStart < 12_000, `ended ${sinceStart} ms after the thread's sources started (${took} ms after t0)`);
  t.equal(sink.threadId, -1, 'the thread stopped');
  await t.rejects(sink.finish([0, 0]), /called twice/);
  await sink.abort(); // the step's cleanup after a finished sink: nothing left to stop, no error
  t.equal(sink.threadId, -1);
});

t.test('a target the sources never reach (no Kafka): finish() stays pending, abort() ends it and rejects it, the thread is gone', async (t) => {
  const sink = nowhere();
  const t0 = Date.now();
  await sink.started();
  t.ok(Date.now() - t0 < 12_000, `the thread loaded and its sources started in ${Date.now() - t0} ms`);
  const finished = sink.finish([5, 0]);
  t.equal(await settlesWithin(finished, 1500), false, 'five slots later: still waiting for partition 0 to read 5 events');
  t.ok(sink.threadId > 0, 'the thread still runs');
  const started = Date.now();
  await sink.abort();
  t.ok(Date.now() - started < 12_000, `aborted in ${Date.now() - started} ms`);
  await t.rejects(finished, /raw sink aborted before every partition was put/, 'the pending finish() is rejected, never left hanging');
  t.equal(sink.threadId, -1, 'the thread stopped');
});

t.test('abort() with no finish(): the thread stops; a finish() after it is refused', async (t) => {
  const sink = nowhere({ partitions: 3, intervalMs: 60_000 });
  await sink.started(); // the sources are retrying their fetches against nothing
  const started = Date.now();
  await sink.abort();
  t.ok(Date.now() - started < 12_000, `aborted in ${Date.now() - started} ms, mid-interval (not at the next slot, a minute away)`);
  t.equal(sink.threadId, -1, 'the thread stopped');
  await t.rejects(sink.finish([0, 0, 0]), /raw sink aborted/);
  t.throws(() => nowhere({ partitions: 0 }), /0 partitions/);
  t.throws(() => nowhere({ intervalMs: 0 }), /interval 0 ms/);
});
