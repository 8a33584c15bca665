/** Packet loss's probe address: the local rig's default; on an inventory another host, never the target's own address (its datagrams would leave by lo, which the rules exempt). */
import t from 'tap';
import { probeAddressFor } from '../../../chaos/packet-loss.ts';
import type { HostSpec, Role } from '../../../rig/types.ts';

const h = (name: string, address: string, roles: Role[]): HostSpec => ({ name, address, roles, dataDir: `/srv/${name}`, ssh: { user: 'root', port: 22, privateKeyPath: '/k', knownHostsPath: '/kh' } });
const hosts = [h('app-1', '10.9.0.11', ['worker']), h('app-2', '10.9.0.12', ['worker']), h('control', '10.9.0.20', ['coordinator']), h('s3', '10.9.0.40', ['store'])];

t.test('local rig: the default probe (the bridge)', async (t) => {
  t.equal(probeAddressFor({ kind: 'local', hosts }, 'app-1'), undefined);
});

t.test('inventory: the coordinator, or another host when the target is the coordinator', async (t) => {
  t.equal(probeAddressFor({ kind: 'inventory', hosts }, 'app-1'), '10.9.0.20');
  t.equal(probeAddressFor({ kind: 'inventory', hosts }, 'control'), '10.9.0.11');
});

t.test('inventory: never an address of the target itself (two hosts on one machine)', async (t) => {
  const shared = [h('app-1', '10.9.0.11', ['worker']), h('control', '10.9.0.11', ['coordinator']), h('s3', '10.9.0.40', ['store'])];
  t.equal(probeAddressFor({ kind: 'inventory', hosts: shared }, 'app-1'), '10.9.0.40');
  t.equal(probeAddressFor({ kind: 'inventory', hosts: [h('all', '10.9.0.11', ['worker', 'coordinator'])] }, 'all'), undefined, 'no other machine: the default');
});
