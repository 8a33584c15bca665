/**
 * campaigns/runner/held-recount.ts with the real chaos controller and an in-process fault
 * package: a fault held through the recount is still in force during the held pass, healed
 * after it and before the verdict's recount; healed even when the held pass fails; without
 * held faults only the verdict's recount runs.
 */
import t from 'tap';
import { ChaosController } from '../../../../chaos/controller.ts';
import type { FaultContext, FaultKindSpec, FaultPackage } from '../../../../chaos/fault.ts';
import type { ChaosRecord, PlannedFault } from '../../../../lib/evidence.ts';
import { recountAroundHeld } from '../../../../campaigns/runner/held-recount.ts';

const FAKE_SPEC: FaultKindSpec = { label: 'fake', summary: 'fake', colour: '#000000', targets: { roles: [], what: 'none', defaultRoles: [] }, fields: { required: [], optional: [] }, evidence: 'none' };

/** A controller whose one package is a held rot (a store-bitrot committed), logging into `events`. */
function controllerWith(events: string[], holds = true): { controller: ChaosController; records: ChaosRecord[] } {
  const records: ChaosRecord[] = [];
  const rot: FaultPackage = {
    kind: 'store-bitrot', spec: FAKE_SPEC,
    inject: async (f) => ({ evidence: { key: `k/${f.id}` }, ...(holds ? { holdThroughRecount: true } : {}), heal: async () => (events.push(`heal ${f.id}`), {}) }),
  };
  const ctx = { rig: { hosts: [] }, engine: { health: async () => ({ lastCompletedAt: new Date(Date.now() + 50).toISOString() }) }, log: () => {} } as unknown as FaultContext;
  const controller = new ChaosController({ plan: [], ctx, record: (r) => records.push({ t: new Date().toISOString(), ...r } as ChaosRecord), recoveryDeadlineS: 5, signal: new AbortController().signal, packageFor: () => rot });
  return { controller, records };
}

const fault = (id: string): PlannedFault => ({ id, kind: 'store-bitrot', atS: 0, variant: 'committed' });

t.test('held pass with the fault in force, then its heal, then the verdict\'s recount', async (t) => {
  const events: string[] = [];
  const { controller, records } = controllerWith(events);
  await controller['runEpisode']([fault('f1')]);
  await controller['runEpisode']([fault('f2')]);
  await controller.healActive({ keepHeld: true }); // the drain
  await recountAroundHeld({
    held: () => controller.heldFaults,
    heldPass: async () => void events.push(`held pass (in force: ${controller.heldFaults.map((f) => f.id).join(',')})`),
    healHeld: () => controller.healHeld(),
    recount: async () => void events.push(`recount (in force: ${controller.heldFaults.map((f) => f.id).join(',') || 'none'})`),
    log: () => {},
  });
  t.same(events, ['held pass (in force: f1,f2)', 'heal f1', 'heal f2', 'recount (in force: none)']);
  t.same(records.filter((r) => r.phase === 'healed').map((r) => [r.faultId, r.evidence?.afterHeldRecount]), [['f1', true], ['f2', true]]);
});

t.test('a held pass that fails still heals the held faults; the error is passed on and no recount runs on a rotten store', async (t) => {
  const events: string[] = [];
  const { controller } = controllerWith(events);
  await controller['runEpisode']([fault('f1')]);
  await t.rejects(
    recountAroundHeld({
      held: () => controller.heldFaults,
      heldPass: async () => {
        events.push('held pass');
        throw new Error('verify crashed');
      },
      healHeld: () => controller.healHeld(),
      recount: async () => void events.push('recount'),
      log: () => {},
    }),
    /verify crashed/,
  );
  t.same(events, ['held pass', 'heal f1']);
});

t.test('nothing held: only the verdict\'s recount', async (t) => {
  const events: string[] = [];
  const { controller } = controllerWith(events, false);
  await controller['runEpisode']([fault('f1')]);
  t.same(events, ['heal f1'], 'an ordinary fault heals at the end of its hold');
  await recountAroundHeld({ held: () => controller.heldFaults, heldPass: async () => void events.push('held pass'), healHeld: () => controller.healHeld(), recount: async () => void events.push('recount'), log: () => {} });
  t.same(events, ['heal f1', 'recount']);
});
