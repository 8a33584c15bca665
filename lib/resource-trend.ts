/**
 * What resources.jsonl (lib/evidence.ts ResourceSample) says, as pure functions the report
 * and the verdict share: peaks, least-squares trends, growth per million events, and the
 * exhaustion check.
 *
 * Exhaustion, as the verdict warns of it: a trend is fitted (least squares over time) to
 *   - memory: the summed RSS of the sampled processes on one machine (the controller
 *     included when it runs there), against that machine's MemTotal;
 *   - disk: the summed size of the sampled data directories on one filesystem, against the
 *     filesystem's free space at the last sample (only growth counts);
 * and projected from the last sample forward by twice the campaign's length (the span the
 * samples cover). A series that would reach its limit within that horizon is a warning.
 * The fit uses the samples from `fitFromMs` on (the soak's start) when at least three lie
 * there, so start-up growth (JVM heaps filling, caches warming) does not dominate it.
 */
import type { ResourceSample } from './evidence.ts';

export interface Fit {
  slope: number;
  intercept: number;
  n: number;
}

/** Least-squares line y = intercept + slope·x; undefined with fewer than 2 distinct x. */
export function leastSquares(xs: readonly number[], ys: readonly number[]): Fit | undefined {
  const n = Math.min(xs.length, ys.length);
  if (n < 2) return undefined;
  let sx = 0;
  let sy = 0;
  for (let i = 0; i < n; i++) {
    sx += xs[i]!;
    sy += ys[i]!;
  }
  const mx = sx / n;
  const my = sy / n;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    sxx += (xs[i]! - mx) ** 2;
    sxy += (xs[i]! - mx) * (ys[i]! - my);
  }
  if (sxx === 0) return undefined;
  const slope = sxy / sxx;
  return { slope, intercept: my - slope * mx, n };
}

export interface SeriesPoint {
  tMs: number;
  produced: number;
  value: number;
}

export interface Series {
  key: string;
  label: string;
  kind: 'memory' | 'disk';
  points: SeriesPoint[];
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Roles in the order the report lists them. */
export const RESOURCE_ROLES = ['worker', 'coordinator', 'broker', 'store'] as const;

/** The series the report draws and tabulates: controller RSS, RSS summed per role, store and broker disk. */
export function resourceSeries(samples: readonly ResourceSample[]): Series[] {
  const pt = (s: ResourceSample, value: number): SeriesPoint => ({ tMs: Date.parse(s.t), produced: s.produced, value });
  const out: Series[] = [{ key: 'controller', label: 'controller RSS', kind: 'memory', points: samples.map((s) => pt(s, s.controller.rssBytes)) }];
  const roles = [...new Set(samples.flatMap((s) => s.processes.map((p) => p.role)))].sort(
    (a, b) => (RESOURCE_ROLES as readonly string[]).indexOf(a) - (RESOURCE_ROLES as readonly string[]).indexOf(b),
  );
  for (const role of roles) {
    out.push({
      key: `rss:${role}`,
      label: `${role} RSS (summed)`,
      kind: 'memory',
      points: samples.filter((s) => s.processes.some((p) => p.role === role)).map((s) => pt(s, sum(s.processes.filter((p) => p.role === role).map((p) => p.rssBytes)))),
    });
  }
  for (const what of ['store', 'broker'] as const) {
    const pts = samples.filter((s) => s.disks.some((d) => d.what === what)).map((s) => pt(s, sum(s.disks.filter((d) => d.what === what).map((d) => d.bytes))));
    if (pts.length) out.push({ key: `disk:${what}`, label: `${what} disk${what === 'broker' ? ' (all brokers)' : ''}`, kind: 'disk', points: pts });
  }
  return out;
}

/** Growth of a series per million events produced (least squares of value against produced events), or undefined. */
export function growthPerMillionEvents(points: readonly SeriesPoint[]): number | undefined {
  const fit = leastSquares(
    points.map((p) => p.produced),
    points.map((p) => p.value),
  );
  return fit ? fit.slope * 1e6 : undefined;
}

export interface PeakProcess {
  role: string;
  service: string;
  host: string;
  rssBytes: number;
  t: string;
  /** Highest CPU share seen for any process of this role/service (% of one core). */
  cpuPct?: number;
}

/** The highest single-process RSS per role and service, where and when. */
export function peakProcesses(samples: readonly ResourceSample[]): PeakProcess[] {
  const peaks = new Map<string, PeakProcess>();
  for (const s of samples)
    for (const p of s.processes) {
      const k = `${p.role}/${p.service}`;
      const cur = peaks.get(k);
      const cpu = Math.max(cur?.cpuPct ?? 0, p.cpuPct ?? 0);
      if (!cur || p.rssBytes > cur.rssBytes) peaks.set(k, { role: p.role, service: p.service, host: p.host, rssBytes: p.rssBytes, t: s.t, ...(cpu > 0 ? { cpuPct: cpu } : {}) });
      else if (cpu > 0) cur.cpuPct = cpu;
    }
  const order = RESOURCE_ROLES as readonly string[];
  return [...peaks.values()].sort((a, b) => order.indexOf(a.role) - order.indexOf(b.role) || (a.service < b.service ? -1 : 1));
}

export interface Exhaustion {
  what: string;
  kind: 'memory' | 'disk';
  /** Bytes per second, from the fit. */
  slopePerS: number;
  last: number;
  limit: number;
  /** Seconds from the last sample until the trend reaches the limit (undefined: never, slope ≤ 0). */
  secondsToLimit?: number;
  horizonS: number;
  exhausts: boolean;
}

function fitOver(points: SeriesPoint[], fitFromMs: number | undefined): Fit | undefined {
  const late = fitFromMs !== undefined ? points.filter((p) => p.tMs >= fitFromMs) : points;
  const use = late.length >= 3 ? late : points;
  const t0 = use[0]?.tMs ?? 0;
  return leastSquares(
    use.map((p) => (p.tMs - t0) / 1000),
    use.map((p) => p.value),
  );
}

/** Every memory (per machine) and disk (per filesystem) trend, projected over twice the campaign's length. */
export function exhaustionChecks(samples: readonly ResourceSample[], fitFromMs?: number): Exhaustion[] {
  if (samples.length < 3) return [];
  const firstMs = Date.parse(samples[0]!.t);
  const lastS = samples[samples.length - 1]!;
  const horizonS = (2 * (Date.parse(lastS.t) - firstMs)) / 1000;
  const out: Exhaustion[] = [];
  const judge = (what: string, kind: 'memory' | 'disk', points: SeriesPoint[], limit: number, headroom: number) => {
    const fit = fitOver(points, fitFromMs);
    if (!fit || !points.length) return;
    const last = points[points.length - 1]!.value;
    const secondsToLimit = fit.slope > 0 ? Math.max(0, headroom / fit.slope) : undefined;
    out.push({ what, kind, slopePerS: fit.slope, last, limit, ...(secondsToLimit !== undefined ? { secondsToLimit } : {}), horizonS, exhausts: secondsToLimit !== undefined && secondsToLimit <= horizonS });
  };
  // Memory, per machine: the processes on its hosts, and the controller when it runs there.
  for (const m of lastS.machines) {
    const hosts = new Set(m.hosts);
    const withController = lastS.controller.machine === m.machine;
    const pts = samples.map((s) => ({
      tMs: Date.parse(s.t),
      produced: s.produced,
      value: sum(s.processes.filter((p) => hosts.has(p.host)).map((p) => p.rssBytes)) + (withController ? s.controller.rssBytes : 0),
    }));
    const last = pts[pts.length - 1]!.value;
    judge(`memory of machine ${m.machine.slice(0, 8)} (${m.hosts.length} hosts${withController ? ' and the controller' : ''})`, 'memory', pts, m.memTotalBytes, m.memTotalBytes - last);
  }
  // Disk, per filesystem of a machine.
  const fss = new Map<string, { machine: string; fs: string }>();
  for (const d of lastS.disks) fss.set(`${d.machine ?? d.host}|${d.fs}`, { machine: d.machine ?? d.host, fs: d.fs });
  for (const [k, f] of fss) {
    const on = (s: ResourceSample) => s.disks.filter((d) => `${d.machine ?? d.host}|${d.fs}` === k);
    const pts = samples.filter((s) => on(s).length).map((s) => ({ tMs: Date.parse(s.t), produced: s.produced, value: sum(on(s).map((d) => d.bytes)) }));
    const free = Math.min(...on(lastS).map((d) => d.fsFreeBytes));
    const whats = [...new Set(on(lastS).map((d) => d.what))].join(' and ');
    judge(`${whats} disk on ${f.fs} (machine ${f.machine.slice(0, 8)})`, 'disk', pts, (pts[pts.length - 1]?.value ?? 0) + free, free);
  }
  return out;
}
