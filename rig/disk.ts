/**
 * Disk-full primitives: fill the filesystem that holds a directory until writes fail with
 * ENOSPC, and free it again. The ballast files are named so that a heal (or the abort path's
 * healAll) finds and removes every one of them, whichever fault wrote it.
 *
 * Filling: one fallocate of the space left, then appends of 4 KiB blocks until the
 * filesystem refuses (some filesystems keep a few blocks back from fallocate). Landing
 * evidence: the filesystem reports no available bytes and a 4 KiB write probe fails with
 * "No space left on device". Heal evidence: the ballast is gone and the probe succeeds.
 */
import { QualError } from '../lib/errors.ts';
import { shQuote } from './process.ts';
import type { Remote } from './remote.ts';
import { MAX_FILL_BYTES } from './state-fs.ts';

export const BALLAST_PREFIX = '.clink-qual-ballast';

export interface FsUsage {
  sizeBytes: number;
  availBytes: number;
}

export async function fsUsage(remote: Remote, dir: string): Promise<FsUsage> {
  const r = await remote.exec(`df -B1 --output=size,avail ${shQuote(dir)} | tail -n 1`);
  const [size, avail] = r.stdout.trim().split(/\s+/).map(Number);
  if (!Number.isFinite(size) || !Number.isFinite(avail)) throw new QualError('REMOTE_COMMAND_FAILED', `${remote.host.name}: cannot read the usage of ${dir}: ${r.stdout.trim()}`);
  return { sizeBytes: size!, availBytes: avail! };
}

/** Writes 4 KiB into a probe file under dir; returns the error text, or null when it succeeded. */
export async function writeProbe(remote: Remote, dir: string): Promise<string | null> {
  const probe = `${dir}/${BALLAST_PREFIX}-probe`;
  // stderr to the captured output, stdout (the 4 KiB) to the probe file.
  const r = await remote.exec(`head -c 4096 /dev/zero 2>&1 > ${shQuote(probe)}; rc=$?; rm -f ${shQuote(probe)}; exit $rc`, { check: false });
  return r.code === 0 ? null : (r.stdout + r.stderr).trim() || `exit ${r.code}`;
}

export interface FillEvidence {
  dir: string;
  sizeBytes: number;
  /** Bytes the ballast took. */
  ballastBytes: number;
  availAfter: number;
  /** The write probe's error after filling (ENOSPC). */
  probeError: string;
}

export async function fillFilesystem(remote: Remote, dir: string, faultId: string): Promise<FillEvidence> {
  if (!/^[A-Za-z0-9._-]{1,40}$/.test(faultId)) throw new QualError('BAD_ARGUMENTS', `bad fault id ${faultId}`);
  const before = await fsUsage(remote, dir);
  if (before.sizeBytes > MAX_FILL_BYTES) {
    throw new QualError('FAULT_NOT_LANDED', `${remote.host.name}: ${dir} is on a filesystem of ${before.sizeBytes} bytes; the disk-full fault fills at most ${MAX_FILL_BYTES} (give the engine a small state filesystem)`);
  }
  const ballast = `${dir}/${BALLAST_PREFIX}-${faultId}`;
  const q = shQuote(ballast);
  await remote.exec(
    `avail=$(df -B1 --output=avail ${shQuote(dir)} | tail -n 1); ` +
      `fallocate -l $avail ${q} 2>/dev/null || true; ` +
      `while head -c 4096 /dev/zero >> ${q}.tail 2>/dev/null; do :; done; true`,
    { check: false, timeoutMs: 60_000 },
  );
  const after = await fsUsage(remote, dir);
  const size = await remote.exec(`cat ${q} ${q}.tail 2>/dev/null | wc -c`, { check: false });
  const probeError = await writeProbe(remote, dir);
  if (probeError === null) {
    await freeFilesystem(remote, dir, faultId).catch(() => {});
    throw new QualError('FAULT_NOT_LANDED', `${remote.host.name}: a 4 KiB write under ${dir} still succeeded after filling (${after.availBytes} bytes available)`);
  }
  return { dir, sizeBytes: before.sizeBytes, ballastBytes: Number(size.stdout.trim()) || 0, availAfter: after.availBytes, probeError };
}

/** Removes the fault's ballast (every ballast when faultId is undefined); returns the space then available. */
export async function freeFilesystem(remote: Remote, dir: string, faultId?: string): Promise<{ dir: string; removed: number; availAfter: number; probeError: string | null }> {
  const pattern = faultId === undefined ? `${BALLAST_PREFIX}-*` : `${BALLAST_PREFIX}-${faultId}*`;
  const r = await remote.exec(`cd ${shQuote(dir)} 2>/dev/null || { echo 0; exit 0; }; n=0; for f in ${pattern}; do [ -e "$f" ] || continue; rm -f -- "$f" && n=$((n+1)); done; echo $n`, { check: false });
  const removed = Number(r.stdout.trim()) || 0;
  const usage = await fsUsage(remote, dir).catch(() => ({ sizeBytes: 0, availBytes: 0 }));
  return { dir, removed, availAfter: usage.availBytes, probeError: await writeProbe(remote, dir) };
}

/**
 * Whether a directory sits on a filesystem of its own, from findmnt's answers: `dirMount`
 * is the mount point holding the directory (`findmnt -n -o TARGET -T DIR`), `systemMounts`
 * the mount points holding /, /var and /home. Filling a filesystem that holds one of those
 * fills the machine's own disk (logs, package state, users' files): refused. Returns why,
 * or null when the directory's filesystem is its own.
 */
export function ownFilesystemRefusal(dir: string, dirMount: string, systemMounts: Readonly<Record<'/' | '/var' | '/home', string>>): string | null {
  const mount = firstLine(dirMount);
  if (!mount.startsWith('/')) return `cannot tell which filesystem holds ${dir} (findmnt said ${JSON.stringify(dirMount.trim())})`;
  if (mount === '/') return `${dir} is on the root filesystem (/): filling it would fill the machine's own disk; mount a filesystem of its own at ${dir} or above it`;
  for (const [sys, m] of Object.entries(systemMounts)) {
    if (firstLine(m) === mount) return `${dir} is on the filesystem mounted at ${mount}, which holds ${sys}: filling it would fill the machine's own disk; mount a filesystem of its own at ${dir} or above it`;
  }
  return null;
}

function firstLine(s: string): string {
  return s.trim().split('\n')[0]!.trim();
}

const MOUNT_SEP = '@@clink-qual-mount@@';

/** The shell that prints the mount point of `dir` (or of its nearest existing parent), then those of /, /var and /home: read-only. */
export function mountProbeCommand(dir: string): string {
  const where = (d: string) => `findmnt -n -o TARGET -T ${d} 2>/dev/null || stat -c %m ${d} 2>&1`;
  return `d=${shQuote(dir)}; while [ ! -e "$d" ]; do d=$(dirname "$d"); done; ${where('"$d"')}; ${['/', '/var', '/home'].map((s) => `echo ${MOUNT_SEP}; ${where(s)}`).join('; ')}`;
}

/** ownFilesystemRefusal from mountProbeCommand's output. */
export function ownFilesystemRefusalFrom(dir: string, probeOutput: string): string | null {
  const [dirMount = '', root = '', varMount = '', home = ''] = probeOutput.split(`${MOUNT_SEP}\n`);
  return ownFilesystemRefusal(dir, dirMount, { '/': root, '/var': varMount, '/home': home });
}

/** Why filling `dir` on this host is refused (it shares the machine's own disk), or null when its filesystem is its own. */
export async function ownFilesystemCheck(remote: Remote, dir: string): Promise<string | null> {
  const r = await remote.exec(mountProbeCommand(dir), { check: false });
  return ownFilesystemRefusalFrom(dir, r.stdout);
}

