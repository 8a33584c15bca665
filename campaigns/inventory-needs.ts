/**
 * What a campaign needs of inventory hosts, for the checks `doctor --inventory` and
 * `rig up --inventory` run first (rig/inventory-doctor.ts): the store it names, its
 * engine's Java and ports (engine/host-needs.ts), and libfaketime when its plan steps clocks.
 */
import { engineHostNeeds } from '../engine/host-needs.ts';
import type { InventoryNeeds } from '../rig/inventory-doctor.ts';
import type { PlannedFault } from '../lib/evidence.ts';
import type { ResolvedCampaign } from './types.ts';

/** The needs of running `plan` (the campaign's planned faults) on an inventory rig. */
export function inventoryNeedsOf(campaign: Pick<ResolvedCampaign, 'store' | 'engine'>, plan: readonly Pick<PlannedFault, 'kind'>[]): InventoryNeeds {
  return { store: campaign.store ?? 'minio', engines: engineHostNeeds(campaign.engine.name), clockSteps: plan.some((f) => f.kind === 'clock-step') };
}
