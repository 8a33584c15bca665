/**
 * A controlled wall clock for engine processes, for the clock-step fault.
 *
 * The machine's real clock is shared by every network namespace (Linux time namespaces
 * virtualise only CLOCK_MONOTONIC and CLOCK_BOOTTIME, never CLOCK_REALTIME), so stepping it
 * would step the harness, the brokers and the store too. Instead an engine started with a
 * controlled clock runs under libfaketime (Debian's `libfaketime`): LD_PRELOAD intercepts
 * its clock_gettime/gettimeofday/time calls, and the offset is read from a file per host
 * (FAKETIME_TIMESTAMP_FILE, re-read at most every second). Writing `-120s` there steps that
 * host's engine processes' wall clock back by two minutes; `+0` puts it right again.
 * CLOCK_MONOTONIC is left alone (FAKETIME_DONT_FAKE_MONOTONIC=1), as a real NTP step leaves it.
 *
 * The clock file lives outside the state filesystem, so a disk-full fault cannot block it.
 */
import { QualError } from '../lib/errors.ts';
import { shQuote } from './process.ts';
import type { Remote } from './remote.ts';
import type { HostSpec } from './types.ts';

/** How often (seconds) libfaketime re-reads the clock file. */
export const CLOCK_CACHE_S = 1;

export function clockFile(host: Pick<HostSpec, 'dataDir'>): string {
  return `${host.dataDir}/clock/faketime`;
}

/** libfaketime's spec for an offset in whole seconds: '+0', '+90s', '-120s'. */
export function offsetSpec(offsetS: number): string {
  if (!Number.isFinite(offsetS)) throw new QualError('BAD_ARGUMENTS', `clock offset must be a finite number of seconds: ${offsetS}`);
  const s = Math.round(offsetS);
  return s === 0 ? '+0' : `${s > 0 ? '+' : '-'}${Math.abs(s)}s`;
}

/** The path of libfaketime on the host, or null when it is not installed there. */
export async function findFaketime(remote: Remote): Promise<string | null> {
  const r = await remote.exec('ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -n 1', { check: false });
  return r.stdout.trim() || null;
}

/**
 * The environment that starts a process under the host's controlled clock; creates the
 * clock file at '+0' when there is none. An existing file is left as it is, so a process
 * restarted while the host's clock is stepped (a kill during a clock-step fault) starts on
 * the stepped clock, as a real host's process would; the clock-step heal and the preflight
 * (rig/faults.ts healAll) put it back to '+0'. Throws PRECONDITION when libfaketime is
 * missing on the host.
 */
export async function controlledClockEnv(remote: Remote): Promise<Record<string, string>> {
  const lib = await findFaketime(remote);
  if (!lib) throw new QualError('PRECONDITION', `${remote.host.name}: libfaketime is not installed (Debian package libfaketime); a campaign with clock-step faults needs it on every engine host`);
  const file = clockFile(remote.host);
  await remote.exec(`mkdir -p ${shQuote(file.slice(0, file.lastIndexOf('/')))} && { [ -f ${shQuote(file)} ] || echo +0 > ${shQuote(file)}; }`);
  return {
    LD_PRELOAD: lib,
    FAKETIME_TIMESTAMP_FILE: file,
    FAKETIME_CACHE_DURATION: String(CLOCK_CACHE_S),
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
}

/** Writes the host's clock offset (atomically: a reader never sees a half-written spec). */
export async function setClockOffset(remote: Remote, offsetS: number): Promise<void> {
  const file = clockFile(remote.host);
  await remote.exec(`printf '%s\\n' ${shQuote(offsetSpec(offsetS))} > ${shQuote(file)}.tmp && mv -f ${shQuote(file)}.tmp ${shQuote(file)}`);
}

/**
 * What a process under the host's controlled clock sees now, against the real clock:
 * offsetS = its wall clock minus the real one (whole seconds), from a probe run under the
 * same preload and file with the cache off.
 */
export async function probeClockOffset(remote: Remote): Promise<{ offsetS: number; spec: string }> {
  const lib = await findFaketime(remote);
  if (!lib) throw new QualError('PRECONDITION', `${remote.host.name}: libfaketime is not installed`);
  const file = clockFile(remote.host);
  const r = await remote.exec(
    `real=$(date -u +%s); faked=$(env LD_PRELOAD=${shQuote(lib)} FAKETIME_TIMESTAMP_FILE=${shQuote(file)} FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1 date -u +%s); echo "$real $faked $(cat ${shQuote(file)})"`,
  );
  const [real, faked, spec] = r.stdout.trim().split(/\s+/);
  return { offsetS: Number(faked) - Number(real), spec: spec ?? '' };
}

/** True when the process runs under libfaketime reading this host's clock file. */
export async function processUnderControlledClock(remote: Remote, pid: number): Promise<boolean> {
  const file = clockFile(remote.host);
  const r = await remote.exec(`grep -q libfaketime /proc/${pid}/maps 2>/dev/null && tr '\\0' '\\n' < /proc/${pid}/environ | grep -qxF ${shQuote(`FAKETIME_TIMESTAMP_FILE=${file}`)} && echo yes`, { check: false });
  return r.stdout.trim() === 'yes';
}
