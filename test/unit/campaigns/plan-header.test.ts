/** `campaign plan --json`'s header (campaigns/plan-header.ts): what the timeline is the timeline of. */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { loadCampaign } from '../../../campaigns/load.ts';
import { applyOverrides } from '../../../campaigns/overrides.ts';
import { planCampaign } from '../../../campaigns/plan.ts';
import { formatPlanWithHeader, harnessRevision, planHeader } from '../../../campaigns/plan-header.ts';
import { repoRoot } from '../../../lib/paths.ts';

const load = (name: string) => loadCampaign(path.join(repoRoot, `campaigns/${name}.yaml`));

t.test('the header of a campaign as the file gives it', async (t) => {
  const c = load('qual03');
  const plan = planCampaign(c);
  const h = planHeader(c, plan, 'abc');
  t.equal(h.campaign, c.name);
  t.equal(h.seed, c.seed);
  t.same(h.engine, c.engine);
  t.equal(h.soakS, c.workload.soakS);
  t.equal(h.rate, c.workload.rate);
  t.equal(h.faultCount, plan.length);
  t.equal(h.compositionCount, c.compositions.reduce((n, k) => n + k.count, 0));
  t.equal(h.expectedWallS, c.gate.deadlineS + c.workload.soakS + c.deadlines.drainS + c.deadlines.recountS);
  t.equal(h.revision, 'abc');
  t.same(h.overrides, {});
});

t.test('overrides show in the header, and the JSON is {header, faults}', async (t) => {
  const c = applyOverrides(load('quick'), { seed: 'q9', rate: 42 });
  const plan = planCampaign(c);
  const doc = JSON.parse(formatPlanWithHeader(c, plan, 'r')) as { header: ReturnType<typeof planHeader>; faults: unknown };
  t.equal(doc.header.seed, 'q9');
  t.equal(doc.header.rate, 42);
  t.same(doc.header.overrides, { seed: { old: 'quick-1', new: 'q9' }, rate: { old: 300, new: 42 } });
  t.same(doc.faults, plan);
});

t.test("the harness's revision is this checkout's HEAD (with -dirty when it has changes); unknown outside git", async (t) => {
  const head = spawnSync('git', ['-C', repoRoot, 'rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
  t.match(harnessRevision(), new RegExp(`^${head}(-dirty)?$`));
  t.equal(harnessRevision('/'), 'unknown');
});
