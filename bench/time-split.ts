/**
 * Where the time goes at a side's maximum (bench/engine-sustained.ts prints it for each
 * side's top passing rung):
 *  - CPU per process while the producer ran: the rig's processes (Kafka brokers, the store,
 *    Clink's coordinator and workers) from two resource samples (campaigns/runner/
 *    resources.ts: /proc/<pid>/stat over each host's SSH remote) taken when the producer
 *    started and when it stopped, and this process from the samples' own process.cpuUsage(),
 *    which counts all its threads (the producer's, the watcher, and on the baseline side the
 *    baseline's thread: the caller says what ran); as % of one core over that window. On the local rig
 *    every host shares this machine's cores, so the total says how busy the machine was.
 *  - Clink's own split, from what it logs and records: each subtask's last timing line
 *    (engine/clink/subtask-timing.ts: idle, sink.prepare = the S3 uploads, sink.commit =
 *    CompleteMultipartUpload, Kafka fetches and their wall time, the prefetcher's full-queue
 *    waits), and the checkpoint barrier from the coordinator's checkpoints.log: barrier
 *    record → completed-checkpoint record per checkpoint (every subtask's prepare and the
 *    snapshot round trip, the durable append included).
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import type { ResourceSample } from '../lib/evidence.ts';
import { parseLog } from '../engine/clink/durable-log.ts';
import { parseTimingLine, type TimingFigures } from '../engine/clink/subtask-timing.ts';

export interface CpuRow {
  /** host/service, or "controller" for this process. */
  what: string;
  /** CPU seconds over the window. */
  cpuS: number;
  /** % of one core over the window. */
  pct: number;
}

/**
 * CPU per process between two samples (the same host/service/pid in both), busiest first;
 * this process last, labelled with what it ran over the window (`controller`).
 */
export function cpuBetween(before: ResourceSample, after: ResourceSample, controller = 'producer + watcher'): { windowS: number; rows: CpuRow[] } {
  const windowS = (Date.parse(after.t) - Date.parse(before.t)) / 1000;
  const rows: CpuRow[] = [];
  if (!(windowS > 0)) return { windowS: 0, rows };
  const prev = new Map(before.processes.map((p) => [`${p.host}/${p.service}/${p.pid}`, p.cpuS]));
  for (const p of after.processes) {
    const b = prev.get(`${p.host}/${p.service}/${p.pid}`);
    if (b === undefined) continue;
    const cpuS = Math.max(0, p.cpuS - b);
    rows.push({ what: `${p.host}/${p.service}`, cpuS, pct: (cpuS / windowS) * 100 });
  }
  rows.sort((a, b) => b.cpuS - a.cpuS || a.what.localeCompare(b.what));
  const c = Math.max(0, after.controller.cpuS - before.controller.cpuS);
  rows.push({ what: `controller (${controller})`, cpuS: c, pct: (c / windowS) * 100 });
  return { windowS, rows };
}

/** Barrier → completed record, ms, per checkpoint of the coordinator's checkpoints.log (the completed ones, in order). */
export function barrierDurations(checkpointLog: string | Buffer): number[] {
  const barrierAt = new Map<string, number>();
  const out: number[] = [];
  for (const r of parseLog<{ t: string; id?: number; epoch?: number; at?: string }>(checkpointLog).records) {
    const key = `${r.epoch}/${r.id}`;
    if (r.t === 'barrier' && r.at) barrierAt.set(key, Date.parse(r.at));
    else if (r.t === 'complete' && r.at && barrierAt.has(key)) out.push(Date.parse(r.at) - barrierAt.get(key)!);
  }
  return out;
}

/** Each subtask's last timing line (the highest epoch's) among log lines. */
export function lastTimings(lines: Iterable<string>): TimingFigures[] {
  const last = new Map<number, TimingFigures>();
  for (const l of lines) {
    const f = parseTimingLine(l);
    if (!f) continue;
    const prev = last.get(f.subtask);
    if (!prev || f.epoch >= prev.epoch) last.set(f.subtask, f);
  }
  return [...last.values()].sort((a, b) => a.subtask - b.subtask);
}

export interface EngineSplit {
  subtasks: TimingFigures[];
  /** Barrier → completed record, ms, per checkpoint. */
  barriersMs: number[];
}

/** Clink's split from its collected logs (engine.collectLogs: <dir>/<host>/out.log, <dir>/<host>/checkpoints.log). */
export function readEngineSplit(logsDir: string): EngineSplit {
  const lines: string[] = [];
  const barriersMs: number[] = [];
  const hosts = existsSync(logsDir) ? readdirSync(logsDir, { withFileTypes: true }).filter((d) => d.isDirectory()) : [];
  for (const h of hosts) {
    const out = path.join(logsDir, h.name, 'out.log');
    if (existsSync(out)) lines.push(...readFileSync(out, 'utf8').split('\n'));
    const ckpt = path.join(logsDir, h.name, 'checkpoints.log');
    if (existsSync(ckpt)) barriersMs.push(...barrierDurations(readFileSync(ckpt)));
  }
  return { subtasks: lastTimings(lines), barriersMs };
}

function pad(rows: string[][], leftColumns = 1): string {
  const w = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => '  ' + r.map((c, i) => (i < leftColumns ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  ').trimEnd()).join('\n');
}

/** The CPU table. */
export function cpuTable(cpu: { windowS: number; rows: CpuRow[] }): string {
  if (!cpu.rows.length) return '  (no CPU samples)';
  const total = cpu.rows.reduce((a, r) => a + r.cpuS, 0);
  return pad([
    ['process', 'CPU s', '% of a core'],
    ...cpu.rows.map((r) => [r.what, r.cpuS.toFixed(1), r.pct.toFixed(0)]),
    ['total', total.toFixed(1), ((total / cpu.windowS) * 100).toFixed(0)],
  ]);
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[(s.length - 1) >> 1]! : NaN;
};

/** Clink's split as a table: per subtask the shares of its reading time, then the barrier. */
export function splitTable(s: EngineSplit): string {
  const lines: string[] = [];
  if (s.subtasks.length) {
    const share = (ms: number, of: number) => (of > 0 ? `${((ms / of) * 100).toFixed(0)} %` : 'n/a');
    lines.push(
      pad([
        ['subtask', 'reading s', 'records/s', 'idle', 'prepare (S3 uploads)', 'commit (S3 complete)', 'other (records → sink)', 'fetches', 'ms/fetch', 'fetch queue full'],
        ...s.subtasks.map((f) => {
          const other = Math.max(0, f.readingMs - f.idleMs - f.prepareMs - f.commitMs);
          return [
            String(f.subtask),
            (f.readingMs / 1000).toFixed(1),
            f.readingMs > 0 ? String(Math.round(f.records / (f.readingMs / 1000))) : 'n/a',
            share(f.idleMs, f.readingMs),
            `${share(f.prepareMs, f.readingMs)} (${f.prepares}× ${f.prepares ? Math.round(f.prepareMs / f.prepares) : 0} ms)`,
            `${share(f.commitMs, f.readingMs)} (${f.commits}× ${f.commits ? Math.round(f.commitMs / f.commits) : 0} ms)`,
            share(other, f.readingMs),
            String(f.fetches),
            f.fetches ? (f.fetchMs / f.fetches).toFixed(1) : 'n/a',
            share(f.queueFullMs, f.readingMs),
          ];
        }),
      ]),
    );
  } else lines.push('  (no timing lines from the subtasks)');
  const b = s.barriersMs;
  lines.push(b.length ? `  checkpoint barrier → completed record: ${b.length} checkpoints, median ${Math.round(median(b))} ms, max ${Math.round(Math.max(...b))} ms` : '  checkpoint barrier: no completed checkpoint in the log');
  return lines.join('\n');
}
