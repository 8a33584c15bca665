/**
 * The process's count of CompleteMultipartUpload requests in flight (engine/clink/sink/completions.ts):
 * it counts each request once, and `completionsSettled` resolves only when none is left.
 */
import t from 'tap';
import { completionStarted, completionsInFlight, completionsSettled } from '../../../../../engine/clink/sink/completions.ts';

t.test('counted while in flight; settled once every one has ended, each end counted once', async (t) => {
  t.equal(completionsInFlight(), 0);
  let settled = false;
  await completionsSettled();
  const a = completionStarted();
  const b = completionStarted();
  t.equal(completionsInFlight(), 2);
  void completionsSettled().then(() => (settled = true));
  a();
  a();
  await new Promise((r) => setImmediate(r));
  t.equal(completionsInFlight(), 1, 'ending one twice counts once');
  t.notOk(settled, 'one still in flight: not settled');
  b();
  await new Promise((r) => setImmediate(r));
  t.ok(settled, 'settled when the last ends');
  t.equal(completionsInFlight(), 0);
});
