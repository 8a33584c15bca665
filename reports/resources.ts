/**
 * The report's "Resources" section, from resources.jsonl (campaigns/runner/resources.ts):
 * peak controller RSS, peak RSS and CPU per rig role and service, peak store and broker
 * disk, the oracle's lag behind the bucket, growth per million events (least squares of
 * each series against the events produced), the exhaustion check the verdict warns on, and
 * the run's time outside the soak (reports/run-time.ts).
 */
import { exhaustionChecks, growthPerMillionEvents, peakProcesses, resourceSeries, type Series } from '../lib/resource-trend.ts';
import { soakStart, type RunEvidence } from './evidence.ts';
import { fmtDuration, fmtInt, median, plural, table } from './format.ts';
import { runTimeSection } from './run-time.ts';
import { fmtSignedClock } from './timeline-svg.ts';

const MiB = 1048576;
export const fmtMiB = (b: number | undefined) => (b === undefined || !Number.isFinite(b) ? 'n/a' : `${fmtInt(b / MiB, b < 10 * MiB ? 1 : 0)} MiB`);
const fmtGrowth = (b: number | undefined) => (b === undefined ? 'n/a' : `${b >= 0 ? '+' : '−'}${fmtMiB(Math.abs(b))}`);

function peakOf(s: Series): { value: number; tMs: number } | undefined {
  let best: { value: number; tMs: number } | undefined;
  for (const p of s.points) if (!best || p.value > best.value) best = { value: p.value, tMs: p.tMs };
  return best;
}

export function resourcesSection(ev: RunEvidence): string[] {
  const out = ['## Resources', ''];
  const rs = ev.resources;
  if (!rs.length) return [...out, 'Not available: `resources.jsonl` is not in the run directory (the run predates resource sampling, or it stopped before the first sample).', '', ...runTimeSection(ev)];
  const origin = soakStart(ev)?.ms;
  const when = (ms: number) => (origin !== undefined ? `at ${fmtSignedClock((ms - origin) / 1000)} from the soak's start` : `at ${new Date(ms).toISOString()}`);
  const durations = rs.map((r) => r.durationS);
  const errs = rs.reduce((n, r) => n + r.errors.length, 0);
  const interval = ev.campaign?.oracle.sampleIntervalS;
  out.push(
    `The harness sampled every rig process (RSS from /proc/<pid>/status, CPU from /proc/<pid>/stat, one command per host per sample over its SSH connection), its own controller process, the store's and the brokers' data directories (du) and the oracle's lag behind the bucket${interval !== undefined ? `, every ${fmtDuration(interval)}` : ''}: ${plural(rs.length, 'sample')}, each taking ${fmtDuration(median(durations))} at the median and ${fmtDuration(Math.max(...durations))} at most. ${errs ? `${plural(errs, 'reading')} could not be taken (recorded in the sample, never fatal), e.g. \`${rs.flatMap((r) => r.errors)[0]!.replace(/`/g, "'")}\`.` : 'Every reading was taken.'}`,
    '',
  );
  const series = resourceSeries(rs);
  const rows: unknown[][] = [];
  for (const s of series) {
    const p = peakOf(s);
    rows.push([s.label, fmtMiB(p?.value), p ? when(p.tMs) : '', fmtMiB(s.points[s.points.length - 1]?.value), fmtGrowth(growthPerMillionEvents(s.points))]);
  }
  out.push(table(['Series', 'Peak', 'When', 'At the end', 'Growth per million events'], rows), '');
  out.push('Growth per million events is the least-squares slope of the series against the events produced, over every sample.', '');
  const peaks = peakProcesses(rs);
  if (peaks.length) {
    out.push('Peak of a single process, per rig role:', '');
    out.push(table(['Role', 'Service', 'Peak RSS', 'Where, when', 'Peak CPU (% of a core)'], peaks.map((p) => [p.role, p.service, fmtMiB(p.rssBytes), `${p.host}, ${when(Date.parse(p.t))}`, p.cpuPct !== undefined ? fmtInt(p.cpuPct, 1) : 'n/a'])), '');
  }
  const ctlCpu = Math.max(0, ...rs.map((r) => r.controller.cpuPct ?? 0));
  const heap = Math.max(...rs.map((r) => r.controller.heapUsedBytes));
  out.push(`The controller (generator, chaos controller, oracle) peaked at ${fmtMiB(Math.max(...rs.map((r) => r.controller.rssBytes)))} RSS (${fmtMiB(heap)} of JavaScript heap in use) and ${fmtInt(ctlCpu, 1)} % of a core.`, '');
  const lags = rs.filter((r) => r.oracleLag);
  if (lags.length) {
    const maxUnjudged = lags.reduce((a, r) => (r.oracleLag!.unjudged > a.oracleLag!.unjudged ? r : a));
    const ages = lags.map((r) => r.oracleLag!.lastSampleAgeS).filter((a): a is number => a !== undefined);
    out.push(
      `The oracle's lag behind the bucket (objects a listing of the prefix found that the oracle had not judged yet): at most ${plural(maxUnjudged.oracleLag!.unjudged, 'object')} (${when(Date.parse(maxUnjudged.t))}, of ${fmtInt(maxUnjudged.oracleLag!.listed)} listed), ${fmtInt(median(lags.map((r) => r.oracleLag!.unjudged)))} at the median${ages.length ? `; its last sample was at most ${fmtDuration(Math.max(...ages))} old` : ''}.`,
      '',
    );
  }
  const checks = exhaustionChecks(rs, origin);
  if (checks.length) {
    out.push(`Exhaustion check: each trend (least squares over time${origin !== undefined ? ', from the soak\'s start' : ''}) projected from the last sample over twice the campaign's length (${fmtDuration(checks[0]!.horizonS)}); a trend that reaches its limit within it is a warning in the verdict, not a failure.`, '');
    out.push(
      table(
        ['Resource', 'At the end', 'Trend per hour', 'Limit', 'Reaches it in', 'Within the horizon'],
        checks.map((c) => [
          c.what,
          fmtMiB(c.last),
          fmtGrowth(c.slopePerS * 3600),
          c.kind === 'memory' ? `MemTotal ${fmtMiB(c.limit)}` : `${fmtMiB(c.limit - c.last)} free`,
          c.secondsToLimit !== undefined ? fmtDuration(c.secondsToLimit) : 'never (not growing)',
          c.exhausts ? '**yes**' : 'no',
        ]),
      ),
      '',
    );
  }
  out.push(...runTimeSection(ev));
  return out;
}
