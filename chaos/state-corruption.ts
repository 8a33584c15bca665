/**
 * State corruption: a record in one of the engine's durable files (the files it restores
 * from after its own death, declared by the plug: Engine.durableFiles) is corrupted at rest,
 * as a failing disk or a torn sector would leave it, and the engine is started again so that
 * it reads it. The bug class: a checkpoint restored from a corrupted state file, a torn
 * write accepted as a record, both silent.
 *
 * Variants (PlannedFault.variant):
 *  - bitflip: one bit of the newest record flipped (of the newest record a restore reads, when
 *    the plug names them: EngineDurableFile.restoreRecordMarker). In a record of JSON text,
 *    the bit is the lowest of the last digit of a number (0↔1, 2↔3, ...; under the key a
 *    restore resumes from, EngineDurableFile.restoreKey, when there is one), so the record
 *    still parses and only a checksum can tell: the hardest single flip for a reader. In a
 *    binary file whose plug names the numbers a restore resumes from
 *    (EngineDurableFile.restoreNumbers: Flink's readers' Kafka offsets), the lowest bit of one
 *    of them (the number off by one); a binary file that holds none does not land. In
 *    another binary file, or a record with no number, the lowest bit of any byte.
 *  - torn:    the second half of the newest record zeroed, its length and its newline kept
 *    (what a write torn at a sector boundary leaves on a filesystem that allocated the
 *    blocks but never wrote them). In a file written whole, its second half (at most 4 KiB).
 *
 * The owning process is SIGKILLed first (a running process holds what it read; the
 * corruption is at rest when it next reads), the bytes are patched in place, read back, and
 * the process started again. Landing evidence: the file, what it holds, the offset, the
 * bytes before and after (hex), the killed and the restarted PID. Heal: the process is
 * watched for its reaction (REACTION_WATCH_MS, or durationS when longer; when the plug can
 * say whether the process has read its files, Engine.restoredAfterStart, on until it says so,
 * up to REACTION_MAX_MS: Flink's JobManager reads its HA checkpoint store, and refuses a
 * handle, half a minute after it starts). If it stopped (the engine refused the file: the
 * "stops loudly" branch), the last lines of its output (without a stack trace's frames) and
 * its last lines naming an error are recorded, the original bytes are written back (an
 * operator's repair from a replica) and the process started again, recorded as `stopped`
 * with `repaired`; if it stayed up, it went on from something, recorded as `running`, and
 * the oracle judges what it committed.
 */
import { createHash } from 'node:crypto';
import type { Engine, EngineDurableFile, EngineRole } from '../engine/engine.ts';
import { CORRUPTION_VARIANTS, type CorruptionVariant } from '../lib/evidence.ts';
import type { Remote } from '../rig/remote.ts';
import { killService } from '../rig/faults.ts';
import { sleep } from '../lib/sleep.ts';
import { serviceDir, shQuote } from '../rig/process.ts';
import { FaultNotLanded, targetOrFirst, type FaultPackage } from './fault.ts';

export { CORRUPTION_VARIANTS, type CorruptionVariant };

/** How long the heal watches the restarted process for a refusal (it reads its state at start). */
export const REACTION_WATCH_MS = 10_000;

/** How long at most the heal waits for a plug's restoredAfterStart (Flink's JobManager took 38 s to refuse a torn handle at abb911a). */
export const REACTION_MAX_MS = 180_000;

/** A line of a process's output that names an error (grep -E and JavaScript alike): what a refusal says. */
export const ERROR_LINE = /ERROR|FATAL|Fatal|Caused by|Exception|Error:/;

/** At most this many bytes are zeroed by a torn corruption of a file written whole. */
export const MAX_TORN_BYTES = 4096;

/**
 * The bytes of the newest newline-terminated record (containing `marker`, when given):
 * [start, end) without its newline; null when there is none. A tail without its newline is
 * a torn append, not a record.
 */
export function newestRecord(content: Buffer, marker?: string): { start: number; end: number } | null {
  let end = content.lastIndexOf(0x0a);
  while (end >= 0) {
    const start = end === 0 ? 0 : content.lastIndexOf(0x0a, end - 1) + 1;
    if (end > start && (marker === undefined || content.subarray(start, end).includes(marker))) return { start, end };
    end = start - 1;
  }
  return null;
}

/**
 * The offsets of the last digits of the JSON numbers (outside strings) in [start, end), or
 * only of those in the value of `key` when the record has that key: flipping the lowest bit
 * of such a digit keeps the JSON valid (no leading zero is made).
 */
export function numberLastDigits(content: Buffer, start: number, end: number, key?: string): number[] {
  let from = start;
  let to = end;
  if (key !== undefined) {
    const at = content.subarray(start, end).indexOf(`${JSON.stringify(key)}:`);
    if (at >= 0) {
      from = start + at + Buffer.byteLength(JSON.stringify(key)) + 1;
      to = valueEnd(content, from, end);
    }
  }
  const out: number[] = [];
  for (const i of outsideStrings(content, from, to)) {
    if (isDigit(content[i]!) && !(i + 1 < to && isDigit(content[i + 1]!))) out.push(i);
  }
  return out;
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/** The offsets in [from, to) of the JSON text's bytes outside strings (a string's quotes included in neither). */
function* outsideStrings(content: Buffer, from: number, to: number): Generator<number> {
  let inString = false;
  for (let i = from; i < to; i++) {
    const c = content[i]!;
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else yield i;
  }
}

/** Where the JSON value starting at `from` ends (exclusive), scanning no further than `end`. */
function valueEnd(content: Buffer, from: number, end: number): number {
  let depth = 0;
  for (const i of outsideStrings(content, from, end)) {
    const c = content[i]!;
    if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) return i;
      depth--;
      if (depth === 0) return i + 1;
    } else if (c === 0x2c && depth === 0) return i;
  }
  return end;
}

/** A planned corruption: what is written where, and what was there. */
export interface CorruptionPlan {
  variant: CorruptionVariant;
  /** The record (or the file) it falls in: [start, end). */
  record: { start: number; end: number };
  offset: number;
  before: Buffer;
  after: Buffer;
  /** The number a restore resumes from that the flip falls on, as the plug names it (EngineDurableFile.restoreNumbers). */
  aimedAt?: string;
}

/** A number in [0, n) drawn from the fault's id and a purpose, so that a plan is the same on replay. */
export function seededIndex(seed: string, purpose: string, n: number): number {
  if (n <= 0) throw new RangeError('seededIndex: empty range');
  return createHash('sha256').update(`${seed}\0${purpose}`).digest().readUInt32BE(0) % n;
}

/**
 * What a corruption of this variant changes in this content (pure): the newest record of a
 * file of records, or the whole of a file written whole. Null when there is nothing to corrupt.
 */
export function planCorruption(
  content: Buffer,
  file: Pick<EngineDurableFile, 'writes' | 'restoreRecordMarker' | 'restoreKey' | 'restoreNumbers'>,
  variant: CorruptionVariant,
  seed: string,
): CorruptionPlan | null {
  const writes = file.writes;
  const record = writes === 'records' ? (newestRecord(content, file.restoreRecordMarker) ?? newestRecord(content)) : content.length > 0 ? { start: 0, end: content.length } : null;
  if (!record) return null;
  const len = record.end - record.start;
  if (variant === 'bitflip') {
    if (writes === 'whole' && file.restoreNumbers) {
      const numbers = file.restoreNumbers(content);
      if (numbers.length === 0) return null;
      const n = numbers[seededIndex(seed, 'bitflip', numbers.length)]!;
      const before = Buffer.from(content.subarray(n.offset, n.offset + 1));
      return { variant, record, offset: n.offset, before, after: Buffer.from([before[0]! ^ 0x01]), aimedAt: n.what };
    }
    let digits = writes === 'records' ? numberLastDigits(content, record.start, record.end, file.restoreKey) : [];
    if (digits.length === 0 && writes === 'records') digits = numberLastDigits(content, record.start, record.end);
    const offset = digits.length > 0 ? digits[seededIndex(seed, 'bitflip', digits.length)]! : record.start + seededIndex(seed, 'bitflip', len);
    const before = Buffer.from(content.subarray(offset, offset + 1));
    return { variant, record, offset, before, after: Buffer.from([before[0]! ^ 0x01]) };
  }
  const tornLen = writes === 'records' ? len - Math.floor(len / 2) : Math.min(MAX_TORN_BYTES, len - Math.floor(len / 2));
  const offset = record.end - tornLen;
  const before = Buffer.from(content.subarray(offset, record.end));
  return { variant, record, offset, before, after: Buffer.alloc(tornLen) };
}

/** The content with the plan applied (pure; what the file holds after the patch). */
export function applyCorruption(content: Buffer, plan: Pick<CorruptionPlan, 'offset' | 'after'>): Buffer {
  const out = Buffer.from(content);
  plan.after.copy(out, plan.offset);
  return out;
}

/** A shell command that writes these bytes at this offset of the file in place, and fsyncs it. */
export function patchCommand(file: string, offset: number, bytes: Buffer): string {
  const octal = [...bytes].map((b) => `\\${b.toString(8).padStart(3, '0')}`).join('');
  return `printf '${octal}' | dd of=${shQuote(file)} bs=1 seek=${offset} conv=notrunc,fsync status=none`;
}

/** Writes the bytes in place on the host and reads them back; throws when they do not read back. */
export async function patchFile(remote: Remote, file: string, offset: number, bytes: Buffer): Promise<void> {
  await remote.exec(patchCommand(file, offset, bytes));
  const now = await remote.readFile(file);
  if (!now.subarray(offset, offset + bytes.length).equals(bytes)) throw new Error(`${file}: the bytes written at ${offset} do not read back`);
}

/**
 * The declared durable files of this process that exist and are not empty, globs expanded
 * newest first (the handle of the newest checkpoint is what a restore reads: a glob can
 * also match a subsumed one not yet deleted); those it restores from first.
 */
export async function existingDurableFiles(remote: Remote, declared: readonly EngineDurableFile[]): Promise<EngineDurableFile[]> {
  const out: EngineDurableFile[] = [];
  for (const d of [...declared].sort((a, b) => Number(b.restoredFrom) - Number(a.restoredFrom))) {
    const r = await remote.exec(d.glob ? `for f in $(ls -1td -- ${d.path} 2>/dev/null); do [ -f "$f" ] && [ -s "$f" ] && echo "$f"; done; true` : `[ -s ${shQuote(d.path)} ] && echo ${shQuote(d.path)}; true`, { check: false });
    for (const f of r.stdout.split('\n').filter(Boolean)) out.push({ ...d, path: f, glob: false });
  }
  return out;
}

/**
 * Watches the restarted process of this role on this host: for at least `minMs` (a process
 * that refuses its files stops as it reads them), then, when the plug can say whether the
 * process has read them (restoredAfterStart), on until it says so or the process stops, up to
 * REACTION_MAX_MS. Returns the PID still running (null once it stopped) and, with the plug's
 * answer, whether it restored and how long the watch took.
 */
export async function watchReaction(
  engine: Pick<Engine, 'processes' | 'restoredAfterStart'>,
  host: string,
  role: EngineRole,
  minMs: number,
  opts: { maxMs?: number; pollMs?: number } = {},
): Promise<{ pid: number | null; restored?: boolean; watchedS: number }> {
  const start = Date.now();
  const minUntil = start + minMs;
  const maxUntil = start + Math.max(minMs, opts.maxMs ?? REACTION_MAX_MS);
  const pidNow = async () => (await engine.processes()).find((p) => p.host === host && p.role === role)?.pid ?? null;
  const watchedS = () => Math.round((Date.now() - start) / 100) / 10;
  for (;;) {
    const pid = await pidNow();
    if (pid == null) return { pid: null, ...(engine.restoredAfterStart ? { restored: false } : {}), watchedS: watchedS() };
    if (Date.now() >= minUntil) {
      if (!engine.restoredAfterStart) return { pid, watchedS: watchedS() };
      if (await engine.restoredAfterStart(host, role)) {
        // Read and running: the process is looked at once more, since a refusal can land between the two looks.
        const still = await pidNow();
        return still == null ? { pid: null, restored: false, watchedS: watchedS() } : { pid: still, restored: true, watchedS: watchedS() };
      }
      if (Date.now() >= maxUntil) return { pid, restored: false, watchedS: watchedS() };
    }
    await sleep(opts.pollMs ?? 500);
  }
}

export const stateCorruption: FaultPackage = {
  kind: 'state-corruption',
  spec: {
    label: "A record of the engine's durable state corrupted at rest (a bit flipped or a write torn), then the owner restarted",
    summary: "the newest record of a file the engine restores from (declared by its plug) has a bit flipped or its second half zeroed while its process is down; the process is started again.",
    colour: '#ffbb78',
    targets: { roles: ['coordinator', 'worker'], what: 'the coordinator or workers', defaultRoles: ['coordinator'] },
    fields: { required: ['variant'], optional: ['durationS'] },
    variants: CORRUPTION_VARIANTS,
    evidence: 'the file, the offset, the bytes before and after, the killed and restarted PID; at the heal whether the process refused the file (its last lines, then repaired and restarted) or ran on',
  },
  async inject(fault, ctx) {
    const variant = fault.variant as CorruptionVariant | undefined;
    if (!variant || !(CORRUPTION_VARIANTS as readonly string[]).includes(variant)) throw new FaultNotLanded(`state-corruption needs a variant, one of ${CORRUPTION_VARIANTS.join(', ')} (got ${String(fault.variant)})`);
    const host = targetOrFirst(fault, ctx.rig, 'coordinator');
    const spec = ctx.rig.hosts.find((h) => h.name === host);
    if (!spec) throw new FaultNotLanded(`no host named ${host} in the rig`);
    const proc = (await ctx.engine.processes()).find((p) => p.host === host);
    if (!proc) throw new FaultNotLanded(`no engine process on ${host}`);
    const role: EngineRole = proc.role;
    const declared = ctx.engine.durableFiles?.(spec, role) ?? [];
    if (declared.length === 0) throw new FaultNotLanded(`the ${ctx.engine.name} plug declares no durable files for its ${role}`, { host, role });
    const remote = ctx.remote(host);
    const candidates = async () => (await existingDurableFiles(remote, declared)).filter((f, _, all) => f.restoredFrom || !all.some((x) => x.restoredFrom));
    if ((await candidates()).length === 0) throw new FaultNotLanded(`none of the ${role}'s durable files on ${host} exists yet`, { host, role, declared: declared.map((d) => d.path) });
    let killed;
    try {
      killed = await killService(remote, proc.service);
    } catch (err) {
      throw new FaultNotLanded((err as Error).message, { host, role });
    }
    // Chosen and read after the kill: the files as the next start will find them. A process
    // that wrote a newer one between a look before the kill and the kill would otherwise have
    // its older one corrupted (flink-corruption at d2dd64a: f001 flipped chk-10's handle while
    // the JobManager, killed 0.7 s after it completed chk-11, restored from chk-11).
    const files = await candidates();
    if (files.length === 0) {
      await ctx.engine.restart(host, role);
      throw new FaultNotLanded(`none of the ${role}'s durable files on ${host} exists after its kill`, { host, role, declared: declared.map((d) => d.path) });
    }
    const file = files[0]!; // the newest file of the first declared restoredFrom
    const content = await remote.readFile(file.path);
    const plan = planCorruption(content, file, variant, fault.id);
    if (!plan) {
      await ctx.engine.restart(host, role);
      const none = variant === 'bitflip' && file.writes === 'whole' && file.restoreNumbers ? 'no number a restore resumes from' : 'no complete record';
      throw new FaultNotLanded(`${file.path} holds ${none} to corrupt`, { host, role, file: file.path, size: content.length });
    }
    try {
      await patchFile(remote, file.path, plan.offset, plan.after);
    } catch (err) {
      await patchFile(remote, file.path, plan.offset, plan.before).catch(() => {});
      await ctx.engine.restart(host, role).catch(() => {});
      throw new FaultNotLanded((err as Error).message, { host, role, file: file.path });
    }
    // The log line shows at most 16 bytes each side (a torn record is hundreds); the evidence keeps them all.
    const hex = (b: Buffer) => (b.length > 16 ? `${b.subarray(0, 16).toString('hex')}… (${b.length} bytes)` : b.toString('hex'));
    ctx.log(`state-corruption ${variant}: ${host}:${file.path} at byte ${plan.offset}${plan.aimedAt ? ` (${plan.aimedAt})` : ''}: ${hex(plan.before)} → ${hex(plan.after)}`);
    let restartedPid: number | null = null;
    let restartError: string | null = null;
    try {
      restartedPid = (await ctx.engine.restart(host, role)).pid;
    } catch (err) {
      restartError = (err as Error).message;
    }
    const evidence = {
      host,
      role,
      variant,
      file: file.path,
      what: file.what,
      fileBytes: content.length,
      record: plan.record,
      offset: plan.offset,
      ...(plan.aimedAt ? { aimedAt: plan.aimedAt } : {}),
      length: plan.after.length,
      before: plan.before.toString('hex'),
      after: plan.after.toString('hex'),
      killedPid: killed.pid,
      restartedPid,
      ...(restartError ? { restartError } : {}),
    };
    return {
      evidence,
      async heal() {
        const watch = await watchReaction(ctx.engine, host, role, Math.max(0, REACTION_WATCH_MS - (fault.durationS ?? 0) * 1000));
        if (watch.pid != null) return { host, role, reaction: 'running', pid: watch.pid, ...(watch.restored !== undefined ? { restored: watch.restored, watchedS: watch.watchedS } : {}) };
        // The last lines that say something: a stack trace's frames ("    at …") are left out, so its message is kept;
        // and the last lines that name an error, since a JVM prints its shutdown's warnings after the fatal one.
        const out = shQuote(`${serviceDir(remote, proc.service)}/out.log`);
        const tail = await remote.exec(`tail -n 200 ${out} 2>/dev/null | grep -Ev '^[[:space:]]+at ' | tail -n 5`, { check: false });
        const errors = await remote.exec(`tail -n 400 ${out} 2>/dev/null | grep -Ev '^[[:space:]]+at ' | grep -E '${ERROR_LINE.source}' | tail -n 6`, { check: false });
        await patchFile(remote, file.path, plan.offset, plan.before);
        const again = await ctx.engine.restart(host, role);
        return { host, role, reaction: 'stopped', ...(watch.restored !== undefined ? { watchedS: watch.watchedS } : {}), lastLines: tail.stdout.split('\n').filter(Boolean), errorLines: errors.stdout.split('\n').filter(Boolean), repaired: { file: file.path, offset: plan.offset, bytes: plan.before.toString('hex') }, restartedPid: again.pid };
      },
    };
  },
};
