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

t.test("the plan's 'coordinator' arms the rig's coordinator host, whatever an inventory names it", async (t) => {
  const { armedHost } = await import('../../../chaos/protocol-point.ts');
  const host = (name: string, roles: ('worker' | 'coordinator')[]) => ({ name, roles });
  const inventory = { hosts: [host('app-1', ['worker']), host('control', ['coordinator'])] } as unknown as Parameters<typeof armedHost>[1];
  const local = { hosts: [host('worker-1', ['worker']), host('coordinator', ['coordinator'])] } as unknown as Parameters<typeof armedHost>[1];
  t.equal(armedHost('coordinator', inventory), 'control');
  t.equal(armedHost('coordinator', local), 'coordinator');
  t.equal(armedHost('app-1', inventory), 'app-1', 'a host name stays');
  t.equal(armedHost(undefined, inventory), undefined, 'no target: the engine picks');
});
