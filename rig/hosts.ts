/**
 * The standard rig's hosts (DESIGN.md, "The rig"): 3 workers, a coordinator, 3 brokers and
 * the store, with each one's address octet in the local rig's subnet. The one list: the
 * local rig (rig/local.ts) builds its namespaces from it, and the campaign loader
 * (campaigns/types.ts STANDARD_HOSTS) checks targets against it.
 */
import type { Role } from './types.ts';

export const LOCAL_HOSTS: readonly { name: string; roles: Role[]; octet: number }[] = [
  { name: 'worker-1', roles: ['worker'], octet: 11 },
  { name: 'worker-2', roles: ['worker'], octet: 12 },
  { name: 'worker-3', roles: ['worker'], octet: 13 },
  { name: 'coordinator', roles: ['coordinator'], octet: 20 },
  { name: 'broker-1', roles: ['broker'], octet: 31 },
  { name: 'broker-2', roles: ['broker'], octet: 32 },
  { name: 'broker-3', roles: ['broker'], octet: 33 },
  { name: 'store', roles: ['store'], octet: 40 },
];
