/**
 * A rung's disk, checked before the rung starts. A climb of `npm run bench -- engine-sustained`
 * can offer more than a million events a second: a 30 s produce-only rung at 1.24 M ev/s is
 * 37 M events in each replica's log, three replicas on the local rig's one disk, and Kafka
 * deletes a finished rung's topic in the background (its files a minute later). On a smaller
 * disk such a climb would fill it under the brokers. So before each rung the bench reads the
 * free space where the brokers keep their logs (rig/disk.ts fsUsage, over SSH), waits a while
 * for earlier rungs' topics to go when it is short, and refuses the rung, saying what it
 * needs, rather than start it.
 */
import { QualError } from '../lib/errors.ts';
import { sleep } from '../lib/sleep.ts';
import { fsUsage } from '../rig/disk.ts';
import type { Remote } from '../rig/remote.ts';
import type { RigState } from '../rig/types.ts';

/**
 * Bytes an event takes in one replica's log, counted with room: the bench's line
 * (`{"p":12,"seq":1234567,"pad":"<60 x>"}`, about 90 bytes), its record's framing in a batch
 * and the log's indexes.
 */
export const LOG_BYTES_PER_EVENT = 120;
/** Bytes an event's line takes in the store, once (the engine's or the baseline's output). */
export const OUTPUT_BYTES_PER_EVENT = 100;
/** Kept free beyond a rung's need. */
export const DISK_HEADROOM_BYTES = 2 * 1024 ** 3;

export interface BrokerDisk {
  host: string;
  dir: string;
  availBytes: number;
}

export interface RungDiskShape {
  /** The local rig: every host on this machine's disk. */
  local: boolean;
  /** Broker hosts (the bench's topics have min(3, brokers) replicas). */
  brokers: number;
  /** The side writes its output to the store (engine, baseline), not only to Kafka (producer). */
  output: boolean;
}

/**
 * What a rung at `rate` for `durationMs` puts on a broker host's disk. On the local rig the
 * hosts share one disk: every replica, and the side's output in the store. On an inventory
 * rig each broker host holds one replica (the store's disk is another host's).
 */
export function rungDiskBytes(rate: number, durationMs: number, s: RungDiskShape): number {
  const events = (rate * durationMs) / 1000;
  const replicas = Math.min(3, Math.max(1, s.brokers));
  const logs = events * LOG_BYTES_PER_EVENT * (s.local ? replicas : 1);
  return Math.ceil(logs + (s.local && s.output ? events * OUTPUT_BYTES_PER_EVENT : 0));
}

const gb = (bytes: number): string => (bytes / 1e9).toFixed(1);

/** Why a rung cannot start on these disks (the first one short), or null when each has its need and the headroom free. */
export function diskRefusal(what: string, needBytes: number, disks: readonly BrokerDisk[]): string | null {
  const short = disks.find((d) => d.availBytes < needBytes + DISK_HEADROOM_BYTES);
  if (!short) return null;
  return `not enough disk for ${what}: it puts about ${gb(needBytes)} GB where the brokers keep their logs (${short.dir} on ${short.host}: ${gb(short.availBytes)} GB free, and ${gb(DISK_HEADROOM_BYTES)} GB are kept free); a shorter rung (--duration-s, --producer-duration-s) needs less`;
}

/** The free space where each broker keeps its logs; on the local rig, one (the hosts share the disk). */
export async function brokerDisks(state: RigState, remote: (name: string) => Remote): Promise<BrokerDisk[]> {
  const brokers = state.hosts.filter((h) => h.roles.includes('broker'));
  const out: BrokerDisk[] = [];
  for (const h of state.kind === 'local' ? brokers.slice(0, 1) : brokers) {
    const u = await fsUsage(remote(h.name), h.dataDir);
    out.push({ host: h.name, dir: h.dataDir, availBytes: u.availBytes });
  }
  return out;
}

/**
 * Before a rung: its need against the brokers' free space, read again every `pollMs` for up to
 * `waitMs` while it is short (an earlier rung's deleted topic leaves the disk a minute later).
 * Throws the refusal (a QualError, PRECONDITION) when the space never came; says once that it waits.
 */
export async function guardRungDisk(
  what: string,
  needBytes: number,
  read: () => Promise<BrokerDisk[]>,
  o: { waitMs?: number; pollMs?: number; log?: (s: string) => void } = {},
): Promise<void> {
  const waitMs = o.waitMs ?? 120_000;
  const pollMs = o.pollMs ?? 5_000;
  const t0 = Date.now();
  let said = false;
  for (;;) {
    const refusal = diskRefusal(what, needBytes, await read());
    if (!refusal) return;
    if (Date.now() - t0 >= waitMs) throw new QualError('PRECONDITION', `${refusal} (waited ${Math.round((Date.now() - t0) / 1000)} s for earlier rungs' topics to be deleted)`);
    if (!said) (o.log ?? console.log)(`  waiting for disk (up to ${Math.round(waitMs / 1000)} s): ${refusal}`);
    said = true;
    await sleep(pollMs);
  }
}
