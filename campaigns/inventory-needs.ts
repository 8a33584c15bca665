/**
 * What a campaign needs of inventory hosts, for the checks `doctor --inventory` and
 * `rig up --inventory` run first (rig/inventory-doctor.ts): the store it names, its
 * engine's Java and ports (engine/host-needs.ts), libfaketime when its plan steps clocks, and
 * a filesystem of its own for the state directory of each host its disk-full faults fill.
 */
import { engineHostNeeds } from '../engine/host-needs.ts';
import type { InventoryNeeds } from '../rig/inventory-doctor.ts';
import type { PlannedFault } from '../lib/evidence.ts';
import type { ResolvedCampaign } from './types.ts';

/** The needs of running `plan` (the campaign's planned faults) on an inventory rig. */
export function inventoryNeedsOf(campaign: Pick<ResolvedCampaign, 'store' | 'engine'>, plan: readonly Pick<PlannedFault, 'kind' | 'target'>[]): InventoryNeeds {
  // disk-full without a target fills the first worker (chaos/fault.ts targetOrFirst): '*' asks every worker.
  const diskFullTargets = [...new Set(plan.filter((f) => f.kind === 'disk-full').map((f) => f.target ?? '*'))];
  return { store: campaign.store ?? 'minio', engines: engineHostNeeds(campaign.engine.name), clockSteps: plan.some((f) => f.kind === 'clock-step'), ...(diskFullTargets.length ? { diskFullTargets } : {}) };
}
