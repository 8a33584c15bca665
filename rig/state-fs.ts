/**
 * The engine's state filesystem on a host: where an engine keeps what must survive its own
 * death (Clink's checkpoint log and sink journal, Flink's checkpoints). The disk-full fault
 * fills this filesystem, so it must be small and separate from the machine's own disk.
 *
 * On the local rig every worker and coordinator host gets a tmpfs of STATE_FS_BYTES mounted
 * at <dataDir>/state (registered in the teardown journal the moment it is mounted). A tmpfs
 * survives every process death the campaigns inflict; only the rig's own teardown ends it.
 * On an inventory rig <dataDir>/state is whatever filesystem holds it, and the disk-full
 * fault refuses to fill one larger than MAX_FILL_BYTES, or one that is not its own (the
 * filesystem of /, /var or /home: rig/disk.ts ownFilesystemRefusal): it would fill a real disk.
 */
import type { HostSpec } from './types.ts';

/** Size of each engine host's state tmpfs on the local rig. */
export const STATE_FS_BYTES = 64 * 1024 * 1024;
/** The tmpfs source name, so that mounts of ours can be found in /proc/mounts. */
export const STATE_FS_SOURCE = 'clink-qual-state';
/** The largest filesystem the disk-full fault agrees to fill. */
export const MAX_FILL_BYTES = 1024 * 1024 * 1024;

/** The directory engines keep their durable state under, on this host. */
export function hostStateDir(host: Pick<HostSpec, 'dataDir'>): string {
  return `${host.dataDir}/state`;
}
