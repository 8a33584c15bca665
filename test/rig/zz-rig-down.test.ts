/**
 * Runs last (file name): `rig down` leaves nothing of the rig running (no cq-* namespace or
 * link, no process under the state directory, no rig.json) but keeps the store's data and
 * its credentials, a second `rig down` succeeds too, a `rig up` killed half-way is cleared by
 * the next `rig up`, the rig is left up for whatever runs after, and a PASSed run from
 * earlier in the suite still recounts as it did (`verify RUN_DIR` after `rig down` and
 * `rig up`: its objects were kept).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { repoRoot, stateDir } from '../../lib/paths.ts';
import { poll } from '../../lib/retry.ts';
import { processesUnder } from '../helpers/procs.ts';

const cliPath = path.join(repoRoot, 'bin', 'clink-qual.ts');
const cli = (...args: string[]) => spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', timeout: 600_000 });

function leftovers() {
  const ns = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout.split('\n').map((l) => l.split(' ')[0]!).filter((n) => n.startsWith('cq-'));
  const links = spawnSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' }).stdout.split('\n').map((l) => /^\d+:\s+([^:@\s]+)/.exec(l)?.[1] ?? '').filter((n) => n.startsWith('cq-'));
  const procs = processesUnder([stateDir()], { skip: [process.pid], width: 100 });
  const rules = spawnSync('iptables', ['-S'], { encoding: 'utf8' }).stdout.split('\n').filter((l) => l.includes('clink-qual'));
  return { ns, links, procs, rules };
}

t.test('rig down leaves nothing, and is idempotent', async (t) => {
  const t0 = Date.now();
  const r = cli('rig', 'down');
  t.equal(r.status, 0, `rig down exit 0 (${Date.now() - t0} ms): ${r.stdout.trim().split('\n').pop()} ${r.stderr}`);
  const left = leftovers();
  t.same(left.ns, [], 'no cq-* namespace');
  t.same(left.links, [], 'no cq-* link');
  t.same(left.procs, [], 'no process under the state directory');
  t.same(left.rules, [], 'no clink-qual rule in the root namespace');
  t.notOk(existsSync(path.join(stateDir(), 'rig.json')), 'rig.json removed');
  t.ok(existsSync(path.join(stateDir(), 'store-credentials.json')), "the store's credentials kept with its data (only --purge removes them)");
  const again = cli('rig', 'down');
  t.equal(again.status, 0, 'a second rig down succeeds with nothing up');
  const st = cli('rig', 'status');
  t.equal(st.status, 2, 'rig status says no rig is up');
  t.match(st.stderr, /no rig is up/);
});

t.test('a rig up killed half-way is cleared by the next rig up, which leaves the rig up', async (t) => {
  const child = spawn(process.execPath, [cliPath, 'rig', 'up'], { stdio: 'ignore' });
  await poll(() => leftovers().ns.includes('cq-store'), { deadlineMs: 60_000, intervalMs: 100 });
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  const half = leftovers();
  t.ok(half.ns.length > 0, `the killed run left namespaces behind (${half.ns.length})`);
  t.ok(existsSync(path.join(stateDir(), 'teardown.jsonl')), 'and its teardown journal');
  const t0 = Date.now();
  const r = cli('rig', 'up');
  t.equal(r.status, 0, `rig up exit 0 (${Date.now() - t0} ms): ${r.stdout.trim().split('\n').pop()} ${r.stderr}`);
  t.match(r.stdout, /clearing a rig left by an earlier run/);
  const st = cli('rig', 'status', '--json');
  const s = JSON.parse(st.stdout);
  t.equal(s.kind, 'local');
  t.equal(s.kafka.healthy, true, 'kafka healthy');
  t.equal(s.store.healthy && s.store.bucketPresent, true, 'store healthy with its bucket');
  t.equal(leftovers().ns.length, 8, 'exactly 8 host namespaces');
});

/**
 * The newest run of this suite that PASSed with a recount on the local rig (campaign-quick's or
 * the kill table's control), or undefined. Not the bare-host inventory test's run: its objects
 * were on the bare hosts' own store, which that test removes with its hosts.
 */
function newestPassedRun(): string | undefined {
  const runs = path.join(repoRoot, 'runs');
  if (!existsSync(runs)) return undefined;
  const dirs = readdirSync(runs)
    .map((d) => path.join(runs, d))
    .filter((d) => d !== path.join(runs, 'latest') && existsSync(path.join(d, 'recount.json')) && existsSync(path.join(d, 'verdict.json')))
    .filter((d) => JSON.parse(readFileSync(path.join(d, 'verdict.json'), 'utf8')).verdict === 'PASS')
    .filter((d) => existsSync(path.join(d, 'provenance.json')) && JSON.parse(readFileSync(path.join(d, 'provenance.json'), 'utf8')).rig?.kind === 'local');
  const ended = (d: string) => String(JSON.parse(readFileSync(path.join(d, 'verdict.json'), 'utf8')).endedAt ?? '');
  return dirs.sort((a, b) => ended(a).localeCompare(ended(b))).pop();
}

const keptRun = newestPassedRun();

t.test("a run's objects outlive rig down: verify after rig down and rig up recounts what the run recounted", { skip: keptRun ? false : 'no PASSed run with a recount in runs/ (run the whole suite)' }, async (t) => {
  const out = mkdtempSync(path.join(os.tmpdir(), 'cq-kept-'));
  t.teardown(() => rmSync(out, { recursive: true, force: true }));
  const r = cli('verify', keptRun!, '--out', path.join(out, 'recount.json'));
  t.equal(r.status, 0, `verify ${path.basename(keptRun!)} exit 0: ${r.stdout.trim().split('\n').pop()} ${r.stderr}`);
  const before = JSON.parse(readFileSync(path.join(keptRun!, 'recount.json'), 'utf8'));
  const after = JSON.parse(readFileSync(path.join(out, 'recount.json'), 'utf8'));
  t.ok(before.objects > 0, `the run had ${before.objects} objects`);
  t.equal(after.objects, before.objects, 'the same objects');
  t.equal(after.distinctEvents, before.distinctEvents, 'the same distinct events');
  t.same(after.counters, before.counters, 'the same counters');
});
