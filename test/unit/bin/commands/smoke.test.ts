/**
 * `smoke --engine NAME`: each engine's own smoke campaign, named in its file; bad engines and
 * an engine beside --campaign are refused (254) before anything is installed or brought up.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { SMOKE_CAMPAIGNS, smokeCampaign } from '../../../../bin/commands/smoke.ts';
import { loadCampaign } from '../../../../campaigns/load.ts';
import { ENGINE_NAMES } from '../../../../engine/index.ts';
import { QualError } from '../../../../lib/errors.ts';
import { repoRoot } from '../../../../lib/paths.ts';

t.test('every engine has a smoke campaign, and that campaign names the engine', async (t) => {
  for (const engine of ENGINE_NAMES) {
    const file = smokeCampaign(engine, undefined);
    t.equal(file, SMOKE_CAMPAIGNS[engine]);
    const c = loadCampaign(path.join(repoRoot, file));
    t.equal(c.engine.name, engine, `${file} runs ${engine}`);
  }
  t.equal(smokeCampaign(undefined, undefined), 'campaigns/quick.yaml', 'the default is the bundled engine');
  t.equal(smokeCampaign(undefined, 'campaigns/unknowns.yaml'), 'campaigns/unknowns.yaml');
});

t.test("flink's smoke campaign schedules every mandatory point and both recovery points", async (t) => {
  const c = loadCampaign(path.join(repoRoot, SMOKE_CAMPAIGNS.flink!));
  const points = new Set<string>();
  for (const f of c.faults) if (f.kind === 'protocol-point') for (const p of f.points ?? []) points.add(p);
  for (const comp of c.compositions ?? []) for (const s of comp.steps) if (s.kind === 'protocol-point' && s.point) points.add(s.point);
  for (const p of ['sink.before-prepare', 'sink.after-prepare', 'coordinator.before-complete-record', 'coordinator.after-complete-record', 'sink.before-commit', 'sink.after-commit', 'sink.recover.before-commit', 'sink.recover.after-commit']) t.ok(points.has(p), p);
});

t.test('bad engine, or an engine beside --campaign: 254 before anything is touched', async (t) => {
  t.throws(() => smokeCampaign('spark', undefined), QualError);
  t.throws(() => smokeCampaign('flink', 'campaigns/quick.yaml'), /--engine and --campaign together/);
  const r = spawnSync(path.join(repoRoot, 'clink-qual'), ['smoke', '--engine', 'spark'], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
  t.equal(r.status, 254);
  t.match(r.stderr, /--engine spark: no such engine \(known: clink, flink\)/);
  t.notMatch(r.stderr, /doctor:|rig install:/, 'refused before the doctor and the install');
});

t.test('a --rehearsal that is no finished run: 254 before the doctor and the install', async (t) => {
  const r = spawnSync(path.join(repoRoot, 'clink-qual'), ['smoke', '--campaign', 'campaigns/qual03.yaml', '--rehearsal', 'test/fixtures/run-aborted'], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
  t.equal(r.status, 254);
  t.match(r.stderr, /the run has no verdict\.json, so it did not finish/);
  t.notMatch(r.stderr, /doctor:|rig install:/, 'refused before the doctor and the install');
});
