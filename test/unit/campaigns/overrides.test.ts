/**
 * --seed, --soak, --rate (campaigns/overrides.ts): parsed and checked with messages naming
 * the option, applied before planning, recorded old/new in the resolved campaign, carried
 * by a replay of the stored run; and through the CLI: `campaign plan` with overrides, exit
 * 254 on a bad value, both commands' --help listing them.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadCampaign, parseCampaign } from '../../../campaigns/load.ts';
import { applyOverrides, describeOverrides, parseDuration, parseOverrides } from '../../../campaigns/overrides.ts';
import { formatPlanJson, planCampaign } from '../../../campaigns/plan.ts';
import { loadStoredRun, replaySchedule } from '../../../campaigns/replay.ts';
import { QualError } from '../../../lib/errors.ts';
import { repoRoot } from '../../../lib/paths.ts';

const quick = () => loadCampaign(path.join(repoRoot, 'campaigns/quick.yaml'));
const cli = path.join(repoRoot, 'bin', 'clink-qual.ts');
const run = (args: string[]) => spawnSync(process.execPath, [cli, ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });

/** The error an expression throws (a test failure when it throws none). */
function thrown(f: () => unknown): QualError {
  try {
    f();
  } catch (err) {
    return err as QualError;
  }
  throw new Error('did not throw');
}

t.test('durations: seconds or units, whole seconds from 1 s to 7 days', async (t) => {
  t.equal(parseDuration('300'), 300);
  t.equal(parseDuration('90s'), 90);
  t.equal(parseDuration('5m'), 300);
  t.equal(parseDuration('2h'), 7200);
  t.equal(parseDuration('1h30m'), 5400);
  t.equal(parseDuration('1.5m'), 90);
  t.equal(parseDuration('0.1h'), 360, 'floating-point noise is rounded off');
  t.equal(parseDuration('7d'), 604800);
  t.equal(parseDuration(' 5M '), 300);
  for (const bad of ['', 'abc', '5 m', '-5', '5x', 'm5', '0', '0s', '1.5', '0.5s', '8d', '1e3']) t.throws(() => parseDuration(bad), `rejects ${JSON.stringify(bad)}`);
});

t.test('parsing: each bad value is BAD_ARGUMENTS naming its option', async (t) => {
  t.same(parseOverrides({}), {});
  t.same(parseOverrides({ seed: 'x', soak: '10m', rate: '2.5' }), { seed: 'x', soakS: 600, rate: 2.5 });
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ seed: '' }, /^--seed: /],
    [{ seed: '   ' }, /^--seed: /],
    [{ seed: 'a\nb' }, /^--seed: .*control/],
    [{ seed: true }, /^--seed: /],
    [{ soak: '5 minutes' }, /^--soak: '5 minutes' is not a duration/],
    [{ soak: '0' }, /^--soak: .*from 1 s/],
    [{ soak: '1000000' }, /^--soak: .*604800/],
    [{ rate: 'fast' }, /^--rate: 'fast' is not a number/],
    [{ rate: '0' }, /^--rate: .*more than 0/],
    [{ rate: '-3' }, /^--rate: /],
    [{ rate: '2000000' }, /^--rate: .*1000000/],
  ];
  for (const [values, re] of cases) {
    const e = thrown(() => parseOverrides(values));
    t.ok(e instanceof QualError, JSON.stringify(values));
    t.equal(e.code, 'BAD_ARGUMENTS', JSON.stringify(values));
    t.match(e.message, re, JSON.stringify(values));
  }
});

t.test('applied before planning, recorded old and new; no overrides leaves the campaign as it is', async (t) => {
  const c = quick();
  t.equal(applyOverrides(c, {}), c, 'nothing to apply: the same object');
  const o = applyOverrides(c, { seed: 'quick-7', soakS: 520, rate: 50 });
  t.equal(o.seed, 'quick-7');
  t.equal(o.workload.soakS, 520);
  t.equal(o.workload.rate, 50);
  t.same(o.overrides, {
    seed: { old: 'quick-1', new: 'quick-7' },
    soakS: { old: 260, new: 520 },
    schedule: { spacingS: { old: 15, new: 30 }, jitterS: { old: 3, new: 6 } },
    rate: { old: 300, new: 50 },
  });
  t.equal(c.seed, 'quick-1', 'the input campaign is not changed');
  t.equal(c.workload.soakS, 260);
  t.notSame(planCampaign(o), planCampaign(c), 'another seed, another timeline');
  t.same(o.schedule, { ...c.schedule, spacingS: 30, jitterS: 6 }, 'twice the soak: twice the spacing and the jitter');
  t.same(planCampaign(o), planCampaign({ ...c, seed: 'quick-7', schedule: { ...c.schedule, spacingS: 30, jitterS: 6 } }), 'the timeline of the overridden seed, on the stretched schedule');
  t.ok(Math.max(...planCampaign(o).map((f) => f.atS)) > 260, 'the faults reach into the added soak');
  t.equal(describeOverrides(o.overrides), 'seed "quick-1" → "quick-7", soak 260 s → 520 s, spacing 15 s → 30 s, jitter 3 s → 6 s (stretched with the soak), rate 300 → 50 events/s');
  // Applied twice (a stored campaign overridden again): the old value stays the file's.
  const twice = applyOverrides(o, { seed: 'quick-8' });
  t.same(twice.overrides!.seed, { old: 'quick-1', new: 'quick-8' });
  t.same(twice.overrides!.soakS, { old: 260, new: 520 });
});

t.test('--soak: the schedule must fit; the message names the option and the least soak that fits', async (t) => {
  const c = quick();
  const needed = c.schedule.startAfterS + 16 * c.schedule.spacingS; // quick.yaml: 16 slots
  t.equal(applyOverrides(c, { soakS: needed }).workload.soakS, needed, 'exactly enough fits');
  const e = thrown(() => applyOverrides(c, { soakS: needed - 1 }));
  t.equal(e.code, 'BAD_ARGUMENTS');
  t.match(e.message, new RegExp(`^--soak: .*does not fit in ${needed - 1} s.*give at least ${needed} s`));
});

t.test('a fixed totalEvents: kept under --seed, dropped (and recorded) under --soak or --rate', async (t) => {
  const text = readFileSync(path.join(repoRoot, 'campaigns/quick.yaml'), 'utf8').replace('rate: 300 ', 'totalEvents: 52000 ');
  const c = parseCampaign(text, 'total.yaml');
  t.equal(c.workload.totalEvents, 52000);
  t.equal(c.workload.rate, 200, 'derived: 52000 / 260 s');
  t.equal(applyOverrides(c, { seed: 's' }).workload.totalEvents, 52000);
  t.notOk(applyOverrides(c, { seed: 's' }).overrides!.totalEvents);
  const longer = applyOverrides(c, { soakS: 600 });
  t.equal(longer.workload.rate, 200, 'the rate is kept');
  t.notOk('totalEvents' in longer.workload, 'the total no longer fits the soak: dropped');
  t.same(longer.overrides!.totalEvents, { old: 52000, new: null });
  const faster = applyOverrides(c, { rate: 10 });
  t.equal(faster.workload.rate, 10);
  t.notOk('totalEvents' in faster.workload);
});

t.test('a replay of a run with overrides re-uses them (they are what campaign.resolved.json holds)', async (t) => {
  const o = applyOverrides(quick(), { seed: 'quick-9', soakS: 400, rate: 120 });
  const plan = planCampaign(o);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-overrides-'));
  // What run.ts writes: the campaign spread, plus the run's own fields.
  writeFileSync(path.join(dir, 'campaign.resolved.json'), JSON.stringify({ ...o, runId: 'r1', topic: 'cq-r1', oracle: { ...o.oracle, seed: o.seed, bucket: 'b', prefix: 'runs/r1/' } }));
  writeFileSync(path.join(dir, 'plan.json'), formatPlanJson(plan));
  const r = replaySchedule({ stored: loadStoredRun(dir) });
  t.equal(r.campaign.seed, 'quick-9');
  t.equal(r.campaign.workload.soakS, 400);
  t.equal(r.campaign.workload.rate, 120);
  t.same((r.campaign as typeof o).overrides, o.overrides, 'the record travels with the replayed campaign');
  t.same(r.plan, plan);
});

t.test('CLI: campaign plan applies the overrides; a bad value exits 254 naming the option', async (t) => {
  const r = run(['campaign', 'plan', 'campaigns/quick.yaml', '--seed', 'x', '--soak', '10m', '--json']);
  t.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { header: Record<string, unknown>; faults: unknown[] };
  const expected = applyOverrides(quick(), { seed: 'x', soakS: 600 });
  t.same(out.faults, planCampaign(expected), 'the timeline of the overridden campaign');
  t.equal(out.header.seed, 'x');
  t.equal(out.header.soakS, 600);
  t.same(out.header.overrides, { seed: { old: 'quick-1', new: 'x' }, soakS: { old: 260, new: 600 }, schedule: { spacingS: { old: 15, new: 34 }, jitterS: { old: 3, new: 6 } } });
  const table = run(['campaign', 'plan', 'campaigns/quick.yaml', '--rate', '50']);
  t.equal(table.status, 0);
  t.match(table.stdout, /workload: 50 events\/s/);
  t.match(table.stdout, /^overrides: rate 300 → 50 events\/s$/m);
  for (const [args, re] of [
    [['--soak', 'soon'], /--soak: 'soon' is not a duration/],
    [['--soak', '30'], /--soak: .*does not fit in 30 s/],
    [['--rate', '0'], /--rate: /],
    [['--seed', ''], /--seed: /],
  ] as [string[], RegExp][]) {
    const b = run(['campaign', 'plan', 'campaigns/quick.yaml', ...args]);
    t.equal(b.status, 254, args.join(' '));
    t.match(b.stderr, re);
  }
});

t.test('CLI: both commands list the overrides in --help', async (t) => {
  for (const cmd of [['campaign', 'plan'], ['campaign', 'run']]) {
    const h = run([...cmd, '--help']);
    t.equal(h.status, 0);
    t.match(h.stdout, /--seed S\s/, `${cmd.join(' ')}: --seed`);
    t.match(h.stdout, /--soak DURATION\s/, `${cmd.join(' ')}: --soak`);
    t.match(h.stdout, /--rate N\s/, `${cmd.join(' ')}: --rate`);
  }
});
