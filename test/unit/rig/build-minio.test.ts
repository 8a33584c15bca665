/**
 * rig/build-minio.sh, the one build command of the pinned MinIO, run for real against a fake
 * `go` (test/helpers/fake-tools.ts) in temporary caches: it reads the same pin and cache as
 * rig/install.ts; it builds once, and a second build waits for the first under its lock and
 * then builds nothing; a failed build leaves a marker naming it, which --adopt of that build
 * answers with exit 3; a killed build leaves no lock behind; --start builds in the background.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { MINIO_BUILD_SCRIPT, minioDir, PINS } from '../../../rig/install.ts';
import { fakeTools } from '../../helpers/fake-tools.ts';

const tools = fakeTools();
t.teardown(() => tools.remove());

/** Runs the script; resolves with its exit code and output. `detached` gives it its own process group. */
function script(args: string[], env: NodeJS.ProcessEnv, opts: { detached?: boolean; onSpawn?: (pid: number) => void } = {}): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [MINIO_BUILD_SCRIPT, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: opts.detached });
    if (child.pid !== undefined) opts.onSpawn?.(child.pid);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

/** Resolves once `cond` holds (polled), or rejects after `ms`. */
async function until(cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A fresh cache, its MinIO directory and the environment that points the script at it. */
function freshCache(t: Test, extra: NodeJS.ProcessEnv = {}): { cache: string; dir: string; env: NodeJS.ProcessEnv } {
  const cache = mkdtempSync(path.join(os.tmpdir(), 'cq-build-minio-'));
  t.teardown(() => rmSync(cache, { recursive: true, force: true }));
  return { cache, dir: path.join(cache, `minio-${PINS.minio}`), env: tools.env(process.env, { CLINK_QUAL_CACHE: cache, ...extra }) };
}

/** The go calls recorded since `before`. */
const goCallsSince = (before: number) => tools.calls('go').slice(before);

t.test('the script builds where rig/install.ts looks, from the same pin, in the default cache too', async (t) => {
  const { cache, env } = freshCache(t);
  const before = process.env.CLINK_QUAL_CACHE;
  process.env.CLINK_QUAL_CACHE = cache;
  t.teardown(() => {
    if (before === undefined) delete process.env.CLINK_QUAL_CACHE;
    else process.env.CLINK_QUAL_CACHE = before;
  });
  t.equal((await script(['--where'], env)).out.trim(), minioDir());
  // Without CLINK_QUAL_CACHE both fall back on ~/.cache/clink-qual (HOME decides both).
  const home = path.join(cache, 'home');
  const homeBefore = process.env.HOME;
  delete process.env.CLINK_QUAL_CACHE;
  process.env.HOME = home;
  const expected = minioDir();
  process.env.HOME = homeBefore;
  const noCache: NodeJS.ProcessEnv = { ...env, HOME: home };
  delete noCache.CLINK_QUAL_CACHE;
  t.equal((await script(['--where'], noCache)).out.trim(), expected);
  t.equal(expected, path.join(home, '.cache', 'clink-qual', `minio-${PINS.minio}`));
});

t.test('a build runs go install once, with the pinned module, and leaves the binary and its log', async (t) => {
  const { dir, env } = freshCache(t);
  const n = tools.calls('go').length;
  const r = await script([], env);
  t.equal(r.code, 0, r.out);
  t.same(goCallsSince(n), [`go install github.com/minio/minio@${PINS.minio} CGO_ENABLED=0 GOFLAGS=-trimpath`]);
  t.equal(readFileSync(path.join(dir, 'minio'), 'utf8'), `a fake build of github.com/minio/minio@${PINS.minio}\n`);
  t.notOk(existsSync(path.join(dir, 'bin.tmp')), 'the build directory is gone');
  const log = readFileSync(path.join(dir, 'build.log'), 'utf8');
  t.match(log, `go install github.com/minio/minio@${PINS.minio}`);
  t.match(log, 'fake go: building');
  t.match(log, /: built .*\/minio/);
  const again = await script([], env);
  t.equal(again.code, 0);
  t.same(goCallsSince(n).length, 1, 'a second run finds the binary and builds nothing');
});

t.test('as root the compile runs 5 nice steps ahead of its caller; otherwise at the caller\'s own', async (t) => {
  const niceFile = tools.file('go-nice');
  const { env } = freshCache(t, { FAKE_GO_NICE_FILE: niceFile });
  const own = Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[19 - 3]);
  const r = await script([], env);
  t.equal(r.code, 0, r.out);
  const got = Number(readFileSync(niceFile, 'utf8').trim());
  const root = process.getuid?.() === 0;
  t.equal(got, root ? Math.max(-20, own - 5) : own, `go ran at nice ${got}, this test at ${own}${root ? ' (root)' : ''}`);
});

t.test('two builds at once: the second waits for the first under the lock, then builds nothing', async (t) => {
  const hold = tools.file('hold-concurrent');
  const started = tools.file('started-concurrent');
  writeFileSync(hold, '');
  const { dir, env } = freshCache(t, { FAKE_GO_HOLD: hold, FAKE_GO_STARTED: started });
  const n = tools.calls('go').length;
  const first = script([], env);
  await until(() => existsSync(started));
  let secondDone = false;
  const second = script([], env).then((r) => ((secondDone = true), r));
  await until(() => secondDone || goCallsSince(n).length > 1, 1_500).catch(() => {});
  t.notOk(secondDone, 'the second build is still waiting while the first runs');
  rmSync(hold);
  const [a, b] = await Promise.all([first, second]);
  t.equal(a.code, 0, a.out);
  t.equal(b.code, 0, b.out);
  t.match(b.out, `waiting for the MinIO build under way (its log: ${dir}/build.log)`);
  t.equal(goCallsSince(n).length, 1, 'one go install for both');
  t.ok(existsSync(path.join(dir, 'minio')));
});

t.test('a failed build leaves its marker and log; --adopt of that build exits 3, of another builds anew', async (t) => {
  const { dir, env } = freshCache(t);
  const n = tools.calls('go').length;
  const failed = await script(['--id', 'build-test-1'], { ...env, FAKE_GO_FAIL: 'cannot reach proxy.golang.org' });
  t.equal(failed.code, 1);
  t.notOk(existsSync(path.join(dir, 'minio')), 'no binary');
  t.notOk(existsSync(path.join(dir, 'bin.tmp')));
  t.match(readFileSync(path.join(dir, 'build.failed'), 'utf8'), /^id build-test-1\nexit 1\nat \d{4}-/);
  const log = readFileSync(path.join(dir, 'build.log'), 'utf8');
  t.match(log, 'go: cannot reach proxy.golang.org');
  t.match(log, 'build-test-1: go install exited 1');
  const adopted = await script(['--adopt', 'build-test-1'], env);
  t.equal(adopted.code, 3, 'the adopted build failed: that is the answer');
  t.equal(goCallsSince(n).length, 1, 'and no second build was started');
  const other = await script(['--adopt', 'build-test-2'], env);
  t.equal(other.code, 0, 'the marker of another build is no answer for this one: it builds');
  t.equal(goCallsSince(n).length, 2);
  t.notOk(existsSync(path.join(dir, 'build.failed')), 'the marker is gone with the failure');
  t.ok(existsSync(path.join(dir, 'minio')));
});

t.test('a build killed midway leaves no lock: the next one builds at once', async (t) => {
  const hold = tools.file('hold-killed');
  const started = tools.file('started-killed');
  writeFileSync(hold, '');
  const { dir, env } = freshCache(t, { FAKE_GO_HOLD: hold, FAKE_GO_STARTED: started });
  const n = tools.calls('go').length;
  let pid = 0;
  const killed = script([], env, { detached: true, onSpawn: (p) => (pid = p) });
  await until(() => existsSync(started));
  process.kill(-pid, 'SIGKILL'); // the script and its go, as a crash or kill -9 would
  t.equal((await killed).code, null);
  t.ok(existsSync(path.join(dir, 'bin.tmp')) || !existsSync(path.join(dir, 'minio')), 'no binary from the killed build');
  rmSync(hold);
  const t0 = Date.now();
  const next = await script([], env);
  t.equal(next.code, 0, next.out);
  t.notMatch(next.out, 'waiting for the MinIO build', 'nothing held the lock');
  t.ok(Date.now() - t0 < 10_000);
  t.equal(goCallsSince(n).length, 2);
  t.ok(existsSync(path.join(dir, 'minio')));
  t.notOk(existsSync(path.join(dir, 'bin.tmp')), "the killed build's leftovers are cleared");
});

t.test('--start builds in the background and prints its id; nothing when the binary is there', async (t) => {
  const hold = tools.file('hold-start');
  writeFileSync(hold, '');
  const { dir, env } = freshCache(t, { FAKE_GO_HOLD: hold });
  const r = await script(['--start'], env);
  t.equal(r.code, 0);
  const id = r.out.trim();
  t.match(id, /^build-\d{8}T\d{6}Z-\d+$/, 'one line: the build id');
  await until(() => existsSync(path.join(dir, 'build.log')) && readFileSync(path.join(dir, 'build.log'), 'utf8').includes('fake go: building'));
  t.match(readFileSync(path.join(dir, 'build.log'), 'utf8'), `${id}: go install`, 'the log names the build');
  t.notOk(existsSync(path.join(dir, 'minio')), '--start returned while the build runs');
  rmSync(hold);
  await until(() => existsSync(path.join(dir, 'minio')));
  t.equal((await script(['--start'], env)).out, '', 'the binary is there: no build, no id');
});
