/**
 * zombies.json: for every engine process the run held stopped and then resumed (a
 * process-pause, or a protocol point with variant pause), and for every engine host it cut
 * off from the coordinator and then reconnected (a partition: the process runs on, alive
 * and reaching the brokers and the store, while the coordinator may declare it lost), the
 * engine's own reading of what happened to it (Engine.zombieTrail): declared lost or not,
 * what it tried, what fenced it. Read from chaos.jsonl (the fault's landing and heal: host,
 * PID when the records name one, when) and the engine logs collected into logs/<host>/ at
 * the wrap-up. Written only when there was such a fault.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ChaosRecord, ZombieTrail } from '../../lib/evidence.ts';
import type { EngineLogFile, ZombieWindow } from '../../engine/zombie-trail.ts';

/**
 * The windows of every fault that held an engine process stopped and then resumed it, and
 * of every partition that cut an engine host (one of `engineHosts`: the rig's worker and
 * coordinator hosts) off and then healed, from chaos.jsonl's records. A partition's window
 * runs from the cut (its landing evidence's cutAt, the moment the rules were in; the landing
 * record itself, for a run before cutAt was recorded) to its heal. Its landing evidence
 * names the host, not the engine's process (the deadMan PID is the undo timer's), so the
 * window has no pid.
 */
export function zombieWindows(chaos: readonly ChaosRecord[], engineHosts: ReadonlySet<string>): ZombieWindow[] {
  const out: ZombieWindow[] = [];
  for (const landed of chaos) {
    if (landed.phase !== 'landed') continue;
    const ev = landed.evidence ?? {};
    const healed = chaos.find((c) => c.faultId === landed.faultId && c.phase === 'healed');
    if (!healed) continue;
    if (landed.kind === 'partition') {
      const host = ev['host'];
      if (typeof host !== 'string' || !engineHosts.has(host)) continue;
      out.push({ faultId: landed.faultId, kind: landed.kind, host, stoppedAt: typeof ev['cutAt'] === 'string' ? ev['cutAt'] : landed.t, resumedAt: healed.t });
      continue;
    }
    const pausedPoint = landed.kind === 'protocol-point' && ev['action'] === 'pause';
    if (landed.kind !== 'process-pause' && !pausedPoint) continue;
    const host = (ev['host'] ?? ev['firedOn']) as string | undefined;
    const pid = ev['pid'] as number | undefined;
    if (!host || typeof pid !== 'number') continue;
    out.push({
      faultId: landed.faultId,
      kind: landed.kind,
      host,
      pid,
      ...(pausedPoint && typeof ev['point'] === 'string' ? { point: ev['point'] } : {}),
      // A point's process stopped itself when it recorded the firing; a pause lands with the signal.
      stoppedAt: pausedPoint && typeof ev['at'] === 'string' ? ev['at'] : landed.t,
      resumedAt: healed.t,
    });
  }
  return out;
}

/** Every collected engine log file under `logsDir` (logs/<host>/<file>), text read whole; files over `maxBytes` are skipped. */
export function readEngineLogs(logsDir: string, maxBytes = 256 * 1024 * 1024): EngineLogFile[] {
  const out: EngineLogFile[] = [];
  let hosts: string[];
  try {
    hosts = readdirSync(logsDir);
  } catch {
    return out;
  }
  for (const host of hosts) {
    const dir = path.join(logsDir, host);
    let files: string[];
    try {
      files = readdirSync(dir).filter((f) => /\.log$/.test(f));
    } catch {
      continue;
    }
    for (const f of files) {
      const p = path.join(dir, f);
      if (statSync(p).size > maxBytes) continue;
      out.push({ host, path: path.join(host, f), text: readFileSync(p, 'utf8') });
    }
  }
  return out;
}

/** The trails of every zombie window (partitions: of `engineHosts` only), read by the engine; [] when the engine reads none or there was no such fault. */
export function zombieTrails(chaos: readonly ChaosRecord[], logsDir: string, engineHosts: ReadonlySet<string>, read: ((w: ZombieWindow, logs: readonly EngineLogFile[]) => ZombieTrail) | undefined): ZombieTrail[] {
  const windows = zombieWindows(chaos, engineHosts);
  if (!read || windows.length === 0) return [];
  const logs = readEngineLogs(logsDir);
  return windows.map((w) => read(w, logs));
}
