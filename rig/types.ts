/**
 * The rig's vocabulary, shared by every layer: hosts, their roles, how to reach them, and
 * the state a rig leaves behind for later commands (`rig status`, a campaign, the tests).
 */

export type Role = 'worker' | 'coordinator' | 'broker' | 'store';
export const ROLES: readonly Role[] = ['worker', 'coordinator', 'broker', 'store'];

export interface SshSettings {
  user: string;
  port: number;
  /** Private key file on the operations host. */
  privateKeyPath: string;
  /** The pinned known-hosts file; a host whose key is not in it, or differs, is refused. */
  knownHostsPath: string;
  /**
   * Log in as `user` (not root) and run every command as root through `sudo -n` (passwordless
   * sudo, as cloud images set up for ubuntu, admin, ec2-user): rig/ssh.ts. Absent: `user` is root.
   */
  sudo?: boolean;
}

export interface HostSpec {
  /** e.g. worker-1, coordinator, broker-2, store */
  name: string;
  /** Address the other hosts and the operations host use to reach it. */
  address: string;
  roles: Role[];
  ssh: SshSettings;
  /** The host's "disk": everything the rig puts on it lives under this directory. */
  dataDir: string;
}

export interface KafkaEndpoint {
  /** host:port,host:port,... as seen from any rig host and from the operations host. */
  bootstrap: string;
  brokers: { host: string; nodeId: number; address: string; port: number; controllerPort: number }[];
  version: string;
}

/** The S3 stores the rig can run on its store host (a campaign's `store:`). */
export const STORE_KINDS = ['minio', 'seaweedfs'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

export interface StoreEndpoint {
  /** e.g. http://10.203.0.18:9000 */
  endpoint: string;
  region: string;
  bucket: string;
  /** Credentials live in a 0600 file; never print them. */
  credentialsFile: string;
  host: string;
  version: string;
  /** Which store runs (absent in a rig.json written before SeaweedFS could: MinIO). */
  kind?: StoreKind;
  /** MinIO's drives (rig/store.ts MINIO_DRIVE_LAYOUTS): 1, or 4 erasure-coded; absent in a rig.json written before layouts could be chosen, and for SeaweedFS: one. */
  drives?: number;
}

/** What `rig up` writes to <stateDir>/rig.json and every later command reads. */
export interface RigState {
  kind: 'local' | 'inventory';
  createdAt: string;
  hosts: HostSpec[];
  kafka: KafkaEndpoint;
  store: StoreEndpoint;
  /** For kind 'local': the bridge and namespaces it created, for teardown. */
  local?: { bridge: string; subnet: string; namespaces: string[] };
  /** Node binary path on each host (uploaded by the rig for engines written in Node). */
  nodePath: string;
}

export interface StoreCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}
