/**
 * What each engine needs on the inventory hosts it runs on, for `doctor --inventory`
 * (rig/inventory-doctor.ts): which roles need Java, and the ports its processes listen on.
 * Clink runs on the Node the rig uploads and listens only on its coordinator's port; Flink
 * needs Java 17 (its job and agent are compiled with --release 17) on the coordinator and
 * the workers, and listens on the ports of engine/flink/config.ts.
 */
import type { EngineHostNeeds } from '../rig/inventory-doctor.ts';
import { COORDINATOR_PORT } from './clink/plug.ts';
import { FLINK_PORTS } from './flink/config.ts';

export const ENGINE_HOST_NEEDS: Readonly<Record<string, EngineHostNeeds>> = {
  clink: { engine: 'Clink', javaRoles: [], ports: [{ role: 'coordinator', port: COORDINATOR_PORT, what: "Clink's coordinator" }] },
  flink: {
    engine: 'Flink',
    javaRoles: ['coordinator', 'worker'],
    ports: [
      { role: 'coordinator', port: FLINK_PORTS.rest, what: "Flink's REST API" },
      { role: 'coordinator', port: FLINK_PORTS.jobManagerRpc, what: "Flink's JobManager RPC" },
      { role: 'coordinator', port: FLINK_PORTS.blob, what: "Flink's blob server" },
      { role: 'coordinator', port: FLINK_PORTS.zookeeper, what: "ZooKeeper (Flink's HA leader retrieval)" },
      { role: 'worker', port: FLINK_PORTS.taskManagerData, what: "Flink's TaskManager data port" },
    ],
  },
};

/** The needs of the engine of that name (none for a name it does not know: loadEngine refuses those). */
export function engineHostNeeds(name: string): EngineHostNeeds[] {
  return Object.hasOwn(ENGINE_HOST_NEEDS, name) ? [ENGINE_HOST_NEEDS[name]!] : [];
}
