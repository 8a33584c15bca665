/**
 * Lost unsynced writes: a crash loses every write a process made since its last completed
 * fsync (the model of Jepsen's lazyfs, without its FUSE layer). The engine process on the
 * target host is frozen (SIGSTOP), what it is doing in the kernel is read, it is SIGKILLed,
 * each durable file the plug declares as a log of records (Engine.durableFiles, writes
 * 'records') is truncated to its last fsynced length, and the process is started again.
 *
 * The last fsynced length, without a FUSE layer: the declared logs append one whole record
 * at a time and fsync it before the engine acts on it (Clink: DurableLog.append and the
 * sink's journal). So every complete record was fsynced, except one whose write or fsync
 * had not returned when the process died; and any tail without its newline is a write that
 * never completed. While the process is frozen, /proc/<pid>/task/<tid>/syscall says whether
 * a thread is inside write/pwrite/writev/fsync/fdatasync and on which descriptor, and
 * /proc/<pid>/fd/<fd> which file that is. A file with such a call in flight loses its
 * newest complete record too; every file loses its torn tail. Limits (docs/faults.md):
 * a record whose fsync returned just before the freeze is kept (right: it was synced);
 * files the plug declares as written whole are left as they are (their publication is
 * atomic: rename or a pointer written after them); and writes the engine made without any
 * fsync to files it does not declare are not modelled.
 *
 * Landing evidence: the PID frozen and killed, the calls in flight, each file's length
 * before and after and the bytes the cut took from it (lostBytes), those bytes in all
 * (lostBytes: 0 when every file was at its synced length, a crash that lost no write), the
 * restarted PID. Heal: none needed (the process was started again at
 * once); it records whether the process is still running.
 */
import type { EngineDurableFile, EngineRole } from '../engine/engine.ts';
import { killService } from '../rig/faults.ts';
import { pidAlive, servicePid, shQuote, signalService } from '../rig/process.ts';
import type { Remote } from '../rig/remote.ts';
import { existingDurableFiles, newestRecord } from './state-corruption.ts';
import { FaultNotLanded, targetOrFirst, type FaultPackage } from './fault.ts';

/** x86-64 and arm64 numbers of the calls that write or sync a descriptor given as their first argument. */
export const WRITE_SYNC_SYSCALLS: Readonly<Record<string, Readonly<Record<number, string>>>> = {
  x86_64: { 1: 'write', 18: 'pwrite64', 20: 'writev', 74: 'fsync', 75: 'fdatasync', 296: 'pwritev', 328: 'pwritev2' },
  aarch64: { 64: 'write', 66: 'writev', 68: 'pwrite64', 70: 'pwritev', 82: 'fsync', 83: 'fdatasync', 287: 'pwritev2' },
};

/**
 * The write/sync calls in flight in a frozen process, from its threads' /proc syscall lines
 * ("<nr> <arg1> ... <sp> <pc>", "running", or "-1 ..." when not in a call): the call's name
 * and its descriptor (first argument).
 */
export function inFlightWrites(syscallLines: readonly string[], arch: string): { call: string; fd: number }[] {
  const table = WRITE_SYNC_SYSCALLS[arch] ?? {};
  const out: { call: string; fd: number }[] = [];
  for (const line of syscallLines) {
    const [nr, arg1] = line.trim().split(/\s+/);
    const call = table[Number(nr)];
    if (call && arg1 !== undefined) out.push({ call, fd: Number.parseInt(arg1, 16) });
  }
  return out;
}

/**
 * A declared log's last fsynced length (pure): the end of its newest complete record, or
 * that record's start when a write or fsync on it was in flight at the crash (neither had
 * returned, so the engine cannot have acted on it). 0 when it holds no complete record.
 */
export function lastSyncedLength(content: Buffer, inFlight: boolean): number {
  const rec = newestRecord(content);
  if (!rec) return 0;
  return inFlight ? rec.start : rec.end + 1;
}

/** The frozen process's in-flight write/sync calls, each with the file its descriptor names. */
async function writesInFlight(remote: Remote, pid: number): Promise<{ call: string; fd: number; file: string | null }[]> {
  const r = await remote.exec(`uname -m; for f in /proc/${pid}/task/*/syscall; do cat "$f" 2>/dev/null || echo unreadable; done`, { check: false });
  const [arch = '', ...lines] = r.stdout.split('\n').filter(Boolean);
  const calls = inFlightWrites(lines, arch.trim());
  const out: { call: string; fd: number; file: string | null }[] = [];
  for (const c of calls) {
    const l = await remote.exec(`readlink /proc/${pid}/fd/${c.fd}`, { check: false });
    out.push({ ...c, file: l.stdout.trim() || null });
  }
  return out;
}

export const lostUnsyncedWrites: FaultPackage = {
  kind: 'lost-unsynced-writes',
  spec: {
    label: 'Engine process crashed, losing the writes it had not fsynced, then restarted',
    summary: "the engine process on a host is frozen, SIGKILLed, and each record log its plug declares is cut to its last fsynced length (lazyfs's model); the process is started again.",
    colour: '#c49c94',
    targets: { roles: ['coordinator', 'worker'], what: 'the coordinator or workers', defaultRoles: ['coordinator'] },
    fields: { required: [], optional: [] },
    evidence: 'the PID frozen and killed, the write/fsync calls in flight, each log\'s length before and after the cut and the bytes it lost, the bytes lost in all; the restarted PID',
  },
  async inject(fault, ctx) {
    const host = targetOrFirst(fault, ctx.rig, 'coordinator');
    const spec = ctx.rig.hosts.find((h) => h.name === host);
    if (!spec) throw new FaultNotLanded(`no host named ${host} in the rig`);
    const proc = (await ctx.engine.processes()).find((p) => p.host === host);
    if (!proc) throw new FaultNotLanded(`no engine process on ${host}`);
    const role: EngineRole = proc.role;
    const logs = (ctx.engine.durableFiles?.(spec, role) ?? []).filter((f) => f.writes === 'records');
    if (logs.length === 0) throw new FaultNotLanded(`the ${ctx.engine.name} plug declares no record logs for its ${role}`, { host, role });
    const remote = ctx.remote(host);
    const pid = await signalService(remote, proc.service, 'STOP');
    if (pid === null) throw new FaultNotLanded(`${host}: ${proc.service} was not running`, { host, role });
    let inFlight: { call: string; fd: number; file: string | null }[];
    let files: EngineDurableFile[];
    try {
      inFlight = await writesInFlight(remote, pid);
      files = await existingDurableFiles(remote, logs);
      await killService(remote, proc.service);
    } catch (err) {
      await signalService(remote, proc.service, 'CONT').catch(() => {});
      throw new FaultNotLanded((err as Error).message, { host, role, pid });
    }
    const cuts: { file: string; what: string; bytesBefore: number; bytesAfter: number; lostBytes: number; inFlight: boolean }[] = [];
    for (const f of files) {
      const content = await remote.readFile(f.path);
      const flying = inFlight.some((c) => c.file === f.path);
      const keep = lastSyncedLength(content, flying);
      if (keep < content.length) await remote.exec(`truncate -s ${keep} ${shQuote(f.path)} && sync ${shQuote(f.path)}`);
      cuts.push({ file: f.path, what: f.what, bytesBefore: content.length, bytesAfter: keep, lostBytes: content.length - keep, inFlight: flying });
    }
    const lostBytes = cuts.reduce((n, c) => n + c.lostBytes, 0);
    const again = await ctx.engine.restart(host, role);
    ctx.log(`lost-unsynced-writes: ${host} ${role} pid ${pid} killed; ${cuts.map((c) => `${c.file} ${c.bytesBefore} → ${c.bytesAfter} B`).join(', ') || 'no log yet'}; ${lostBytes} B lost; restarted as ${again.pid}`);
    return {
      evidence: { host, role, pid, signal: 'SIGKILL', lostBytes, inFlight, cuts, restartedPid: again.pid },
      async heal() {
        const now = await servicePid(remote, proc.service);
        return { host, role, running: now !== null && (await pidAlive(remote, now)), pid: now };
      },
    };
  },
};
