/**
 * Packet loss: drop a share of a host's packets at random (iptables -m statistic, both
 * directions; SSH and loopback exempt so the harness keeps control); heal by removing the
 * rules. Landing evidence: the rules' drop counters rise under probe traffic.
 */
import { undoRules } from '../rig/dead-man.ts';
import { healPacketLoss, packetLoss as drop } from '../rig/faults.ts';
import type { RigState } from '../rig/types.ts';
import { FaultNotLanded, targetOrFirst, type FaultPackage } from './fault.ts';

/**
 * Where the landing's probe datagrams go from `host`: on the local rig the default (the
 * bridge, i.e. the operations host); on an inventory, another rig host (the coordinator, or
 * else the first other host). The host's own address would not do: datagrams to it leave by
 * the loopback device, which the rules exempt, so nothing would be dropped.
 */
export function probeAddressFor(rig: Pick<RigState, 'kind' | 'hosts'>, host: string): string | undefined {
  if (rig.kind !== 'inventory') return undefined;
  const others = rig.hosts.filter((h) => h.name !== host && h.address !== rig.hosts.find((x) => x.name === host)?.address);
  return (others.find((h) => h.roles.includes('coordinator')) ?? others[0])?.address;
}

export const packetLoss: FaultPackage = {
  kind: 'packet-loss',
  spec: {
    label: "Share of a host's packets dropped, then cleared",
    summary: "drop a share of a host's packets.",
    colour: '#17becf',
    targets: { roles: ['worker', 'coordinator', 'broker', 'store'], what: 'any rig host', defaultRoles: ['worker'] },
    fields: { required: ['durationS', 'share'], optional: [] },
    evidence: 'the iptables statistic rules in place with their share; gone at the heal',
  },
  async inject(fault, ctx) {
    const host = targetOrFirst(fault, ctx.rig, 'worker');
    const remote = ctx.remote(host);
    const share = fault.share ?? 0.2;
    try {
      const probeAddress = probeAddressFor(ctx.rig, host);
      const ev = await drop(remote, share, fault.id, probeAddress ? { probeAddress } : {});
      ctx.log(`dropping ${Math.round(share * 100)}% of ${host}'s packets`);
      return {
        evidence: { host, ...ev },
        deadMan: undoRules(host, fault.id),
        async heal() {
          return { host, ...(await healPacketLoss(remote, fault.id)) };
        },
      };
    } catch (err) {
      await healPacketLoss(remote, fault.id).catch(() => {});
      throw new FaultNotLanded((err as Error).message);
    }
  },
};
