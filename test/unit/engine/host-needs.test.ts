/** Every engine the harness can load declares what it needs of inventory hosts, from its own constants. */
import t from 'tap';
import { ENGINE_HOST_NEEDS, engineHostNeeds } from '../../../engine/host-needs.ts';
import { ENGINE_NAMES } from '../../../engine/index.ts';
import { COORDINATOR_PORT } from '../../../engine/clink/plug.ts';
import { FLINK_PORTS } from '../../../engine/flink/config.ts';

t.test('each engine has its needs; an unknown name has none', async (t) => {
  t.same(Object.keys(ENGINE_HOST_NEEDS).sort(), [...ENGINE_NAMES].sort());
  t.same(engineHostNeeds('clink')[0]!.ports.map((p) => [p.role, p.port]), [['coordinator', COORDINATOR_PORT]]);
  t.same(engineHostNeeds('clink')[0]!.javaRoles, [], 'Clink runs on the Node the rig uploads');
  t.same(engineHostNeeds('flink')[0]!.javaRoles, ['coordinator', 'worker']);
  t.same(new Set(engineHostNeeds('flink')[0]!.ports.map((p) => p.port)), new Set(Object.values(FLINK_PORTS)), "every fixed port of Flink's config");
  t.same(engineHostNeeds('__proto__'), []);
});
