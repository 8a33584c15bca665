/**
 * How long an armed point may take to fire: a recovery-only point also waits out the
 * campaign's recovery deadline (Flink's failover took 32 s in a flink-quick run, past the
 * plain 34 s wait, so sink.recover.before-commit was reported not landed).
 */
import t from 'tap';
import { fireDeadlineMs, pointDeadlineMs } from '../../../chaos/protocol-point.ts';
import type { Engine } from '../../../engine/engine.ts';

const engine = { recoveryFaultPoints: ['sink.recover.before-commit', 'sink.recover.after-commit'] } as unknown as Engine;

t.test('a point fires within a few checkpoints; a recovery-only one also gets the recovery deadline', async (t) => {
  t.equal(fireDeadlineMs(6000), 34_000);
  t.equal(fireDeadlineMs(1000), 30_000, 'at least 30 s');
  t.equal(pointDeadlineMs('sink.after-commit', { checkpointIntervalMs: 6000, recoveryDeadlineMs: 240_000, engine }), 34_000);
  t.equal(pointDeadlineMs('sink.recover.before-commit', { checkpointIntervalMs: 6000, recoveryDeadlineMs: 240_000, engine }), 274_000);
  t.equal(pointDeadlineMs('sink.recover.before-commit', { checkpointIntervalMs: 6000, engine }), 34_000, 'no recovery deadline given: the plain wait');
});
