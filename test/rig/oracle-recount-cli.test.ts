/**
 * The recount as the campaign runs it: a separate process, `node bin/clink-qual.ts verify`,
 * over a run directory and in standalone mode, agreeing with the incremental judge.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../lib/paths.ts';
import type { Recount } from '../../lib/evidence.ts';
import { IncrementalJudge } from '../../oracle/judge.ts';
import { SPEC, ZERO, cleanObjects, dropBucket, gen, makeBucket, put, s3, storeSettings } from './oracle-fixtures.ts';

const client = s3();
const bucket = `oracle-test-c-${process.pid}-${Date.now().toString(36)}`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'oracle-cli-'));
await makeBucket(client, bucket);
t.teardown(async () => {
  await dropBucket(client, bucket).catch(() => {});
  client.destroy();
  rmSync(dir, { recursive: true, force: true });
});

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const st = storeSettings();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'clink-qual.ts'), 'verify', ...args], {
      cwd: repoRoot,
      env: { ...process.env, AWS_ACCESS_KEY_ID: st.accessKeyId, AWS_SECRET_ACCESS_KEY: st.secretAccessKey },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function runDirFor(prefix: string, produced: number[]): Promise<{ runDir: string; judge: IncrementalJudge }> {
  const st = storeSettings();
  const runDir = mkdtempSync(path.join(dir, 'run-'));
  writeFileSync(path.join(runDir, 'campaign.resolved.json'), JSON.stringify({ name: 'test', oracle: { ...SPEC, bucket, prefix, endpoint: st.endpoint, region: st.region } }));
  writeFileSync(path.join(runDir, 'produced.json'), JSON.stringify({ perPartition: produced }));
  const judge = new IncrementalJudge({ ...SPEC, store: st, bucket, prefix, ledgerPath: path.join(runDir, 'ledger.jsonl') });
  return { runDir, judge };
}

t.test('clean run dir: exit 0, recount.json agrees with the judge', async (t) => {
  const prefix = 'clean/';
  for (const o of cleanObjects(prefix, 500, 100)) await put(client, bucket, o.key, o.body);
  const { runDir, judge } = await runDirFor(prefix, [500, 500, 500]);
  await judge.pass();
  const r = await cli([runDir]);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /CLEAN: every counter is zero/);
  t.notMatch(r.stdout + r.stderr, new RegExp(storeSettings().secretAccessKey), 'the secret is never printed');
  const rc = JSON.parse(readFileSync(path.join(runDir, 'recount.json'), 'utf8')) as Recount;
  t.strictSame(rc.counters, judge.tally.counters([500, 500, 500]));
  t.strictSame(rc.counters, ZERO);
  t.equal(rc.distinctEvents, judge.tally.distinct);
  t.equal(rc.objects, judge.objects);
  judge.close();
});

t.test('dirty run dir: exit 1, the same counters as the judge', async (t) => {
  const prefix = 'dirty/';
  for (const o of cleanObjects(prefix, 100, 25)) await put(client, bucket, o.key, o.body);
  await put(client, bucket, `${prefix}dup.jsonl`, gen.line(0, 3) + '\n' + gen.line(9, 1) + '\n');
  await put(client, bucket, `${prefix}empty.jsonl`, '');
  const { runDir, judge } = await runDirFor(prefix, [100, 100, 99]);
  await judge.pass();
  // Overwritten with the same events in another order: a mutation, and nothing else changes
  // (overwritten with other content, the recount would judge the settled content, the judge
  // the content it saw first).
  const body = cleanObjects(prefix, 100, 25).find((o) => o.key.endsWith('p1/00000025.jsonl'))!.body.trim().split('\n').reverse().join('\n') + '\n';
  await put(client, bucket, `${prefix}p1/00000025.jsonl`, body);
  await judge.pass();
  const want = { duplicates: 1, gaps: 0, foreign: 1, corrupted: 1, mutations: 1, pastProduced: 1 };
  t.strictSame(judge.tally.counters([100, 100, 99]), want);
  const r = await cli([runDir, '--json']);
  t.equal(r.code, 1, r.stderr);
  const rc = JSON.parse(r.stdout) as Recount;
  t.strictSame(rc.counters, want, 'the recount process agrees with the judge');
  judge.close();
});

t.test('standalone mode judges any bucket against a seed', async (t) => {
  const st = storeSettings();
  const args = ['--endpoint', st.endpoint, '--bucket', bucket, '--prefix', 'clean/', '--seed', SPEC.seed, '--partitions', '3', '--keys', String(SPEC.keys), '--produced', '500,500,500', '--json'];
  const r = await cli(args);
  t.equal(r.code, 0, r.stderr);
  t.equal((JSON.parse(r.stdout) as Recount).distinctEvents, 1500);
  const wrongSeed = await cli(args.map((a) => (a === SPEC.seed ? 'another-seed' : a)));
  t.equal(wrongSeed.code, 1, 'a different seed: every line is foreign');
  t.equal((JSON.parse(wrongSeed.stdout) as Recount).counters.foreign, 1500);
});

t.test('bad arguments: 254', async (t) => {
  t.equal((await cli(['--bucket', 'x'])).code, 254);
  t.equal((await cli([path.join(dir, 'no-such-run')])).code, 254);
  const st = storeSettings();
  t.equal((await cli(['--endpoint', st.endpoint, '--bucket', bucket, '--seed', 's', '--partitions', '3', '--keys', '10', '--produced', '1,2'])).code, 254, 'produced must name every partition');
  const help = await cli(['--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /Usage: clink-qual verify/);
});
