/**
 * Partition: drop all traffic between a host and the coordinator (iptables in the host's
 * own namespace, both directions); heal by removing the rules. Landing evidence: TCP
 * connects fail both ways; healing evidence: they go through again.
 */
import { undoRules } from '../rig/dead-man.ts';
import { healPartition, partition as cut } from '../rig/faults.ts';
import { FaultNotLanded, hostAddress, hostsWithRole, targetOrFirst, type FaultPackage } from './fault.ts';

export const partition: FaultPackage = {
  kind: 'partition',
  spec: {
    label: 'Host cut off from the coordinator, then reconnected',
    summary: 'drop traffic between a host and the coordinator.',
    colour: '#2ca02c',
    targets: { roles: ['worker', 'broker', 'store'], what: 'workers, brokers or the store (each is cut from the coordinator)', defaultRoles: ['worker'] },
    fields: { required: ['durationS'], optional: [] },
    evidence: 'the iptables rules in place (cutAt: when) and a TCP connect to the coordinator refused or timing out; the rules gone at the heal',
  },
  async inject(fault, ctx) {
    const host = targetOrFirst(fault, ctx.rig, 'worker');
    const coordinator = hostsWithRole(ctx.rig, 'coordinator')[0];
    if (!coordinator) throw new FaultNotLanded('the rig has no coordinator host');
    const a = ctx.remote(host);
    const b = ctx.remote(coordinator);
    const bAddress = hostAddress(ctx.rig, coordinator);
    try {
      const ev = await cut(a, bAddress, fault.id, { b });
      ctx.log(`partitioned ${host} from ${coordinator}`);
      return {
        evidence: { host, peerHost: coordinator, ...ev },
        deadMan: undoRules(host, fault.id),
        async heal() {
          return { host, peerHost: coordinator, ...(await healPartition(a, bAddress, fault.id, { b })) };
        },
      };
    } catch (err) {
      await healPartition(a, bAddress, fault.id, { b }).catch(() => {});
      throw new FaultNotLanded((err as Error).message);
    }
  },
};
