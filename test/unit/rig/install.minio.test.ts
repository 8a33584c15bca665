/**
 * rig/install.ts minio(): the MinIO part of `rig install`, against a fake `go`
 * (test/helpers/fake-tools.ts) in a temporary cache. When the ./clink-qual wrapper started
 * the build in the background (CLINK_QUAL_MINIO_BUILD_ID), install waits for that build and
 * adopts its binary; its failure is an error carrying its log, not a second build.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { QualError } from '../../../lib/errors.ts';
import { finishedBuildSeconds, MINIO_BUILD_SCRIPT, minio, minioDir, PINS, sha256File } from '../../../rig/install.ts';
import { fakeTools } from '../../helpers/fake-tools.ts';

const tools = fakeTools();
const saved = { ...process.env };
t.teardown(() => {
  for (const k of ['PATH', 'FAKE_TOOLS_DIR', 'CLINK_QUAL_CACHE', 'CLINK_QUAL_MINIO_BUILD_ID']) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  tools.remove();
});
Object.assign(process.env, tools.env({ PATH: saved.PATH }));

/** A fresh cache for one test (CLINK_QUAL_CACHE), no adopted build. */
function freshCache(t: { teardown(fn: () => void): void }): void {
  const cache = mkdtempSync(path.join(os.tmpdir(), 'cq-install-minio-'));
  process.env.CLINK_QUAL_CACHE = cache;
  delete process.env.CLINK_QUAL_MINIO_BUILD_ID;
  t.teardown(() => rmSync(cache, { recursive: true, force: true }));
}

/** What the wrapper does on a first run: rig/build-minio.sh --start; returns the build id. */
function startInBackground(extra: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync('bash', [MINIO_BUILD_SCRIPT, '--start'], { env: { ...process.env, ...extra }, encoding: 'utf8' });
  if (r.status !== 0 || !r.stdout.trim()) throw new Error(`--start: ${r.status} ${r.stdout}${r.stderr}`);
  return r.stdout.trim();
}

async function until(cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

t.test('install waits for the background build and adopts its binary: one go install in all', async (t) => {
  freshCache(t);
  const hold = tools.file('hold-adopt');
  const started = tools.file('started-adopt');
  writeFileSync(hold, '');
  const n = tools.calls('go').length;
  const id = startInBackground({ FAKE_GO_HOLD: hold, FAKE_GO_STARTED: started });
  await until(() => existsSync(started));
  process.env.CLINK_QUAL_MINIO_BUILD_ID = id;
  const log: string[] = [];
  let settled = false;
  const adopting = minio(undefined, (l) => log.push(l)).finally(() => (settled = true));
  await new Promise((r) => setTimeout(r, 1_000));
  t.notOk(settled, 'install is still waiting while the background build runs');
  rmSync(hold);
  const c = await adopting;
  const bin = path.join(minioDir(), 'minio');
  t.same(c, { name: 'minio', version: PINS.minio, path: bin, sha256: await sha256File(bin) });
  t.equal(tools.calls('go').length - n, 1, 'the background build was the only one');
  t.same(log, [
    `waiting for the MinIO build ./clink-qual started in the background (${id}; its log: ${minioDir()}/build.log)`,
    `waiting for the MinIO build under way (its log: ${minioDir()}/build.log)`,
  ]);
});

t.test('a failed background build is an error with its log; the next install (no adoption) builds anew', async (t) => {
  freshCache(t);
  const n = tools.calls('go').length;
  const id = startInBackground({ FAKE_GO_FAIL: 'verifying module: checksum mismatch' });
  await until(() => existsSync(path.join(minioDir(), 'build.failed')));
  process.env.CLINK_QUAL_MINIO_BUILD_ID = id;
  const err = await minio(undefined, () => {}).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err instanceof QualError && err.code === 'INSTALL_FAILED', 'INSTALL_FAILED');
  const msg = (err as Error).message;
  t.match(msg, `the MinIO build ./clink-qual started in the background (${id}) failed; its log, ${minioDir()}/build.log, ends:`);
  t.match(msg, 'go: verifying module: checksum mismatch', "the log's last lines are in the error");
  t.match(msg, `${id}: go install exited 1`);
  t.match(msg, 'Run the command again');
  t.equal(tools.calls('go').length - n, 1, 'install did not build a second time');
  delete process.env.CLINK_QUAL_MINIO_BUILD_ID;
  const log: string[] = [];
  const c = await minio(undefined, (l) => log.push(l));
  t.equal(tools.calls('go').length - n, 2, 'run again, install builds it itself');
  t.match(log[0], `building MinIO ${PINS.minio} with go install`);
  t.equal(c.sha256, await sha256File(path.join(minioDir(), 'minio')));
});

t.test('an adopted build that left its binary is taken as it is; a manifest entry that matches is kept without running anything', async (t) => {
  freshCache(t);
  const n = tools.calls('go').length;
  const id = startInBackground();
  await until(() => finishedBuildSeconds(path.join(minioDir(), 'build.log'), id) !== undefined);
  process.env.CLINK_QUAL_MINIO_BUILD_ID = id;
  const log: string[] = [];
  const c = await minio(undefined, (l) => log.push(l));
  t.equal(log.length, 1, 'the binary was there: no wait, no build');
  t.match(log[0], new RegExp(`^built in the background by \\./clink-qual \\(${id}\\) in [0-9]+ s, before this part began$`), 'only a note of the build that made it');
  t.equal(await minio(c, (l) => log.push(l)), c, 'a second install returns the manifest entry unchanged');
  t.equal(tools.calls('go').length - n, 1);
});

t.test("finishedBuildSeconds: a build's time from its own log; nothing for another build's, a failed one or none", async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-build-log-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const log = path.join(dir, 'build.log');
  const id = 'build-20261205T071805Z-5508';
  // The lines rig/build-minio.sh wrote in a real background build (go's own output between them).
  writeFileSync(
    log,
    `${id}: go install github.com/minio/minio@${PINS.minio} (started 2026-12-05T07:18:06Z)\n` +
      `go: downloading github.com/minio/minio v0.0.0-20260212201848-7aac2a2c5b7c\n` +
      `${id}: built /tmp/h2-cache/minio-${PINS.minio}/minio (2026-12-05T07:18:54Z)\n`,
  );
  t.equal(finishedBuildSeconds(log, id), 48);
  t.equal(finishedBuildSeconds(log, 'build-20261205T071805Z-5509'), undefined, "another build's log");
  t.equal(finishedBuildSeconds(log, 'build-.*'), undefined, 'the id is a name, not a pattern');
  writeFileSync(log, `${id}: go install github.com/minio/minio@${PINS.minio} (started 2026-12-05T07:18:06Z)\n${id}: go install exited 1 (2026-12-05T07:18:09Z)\n`);
  t.equal(finishedBuildSeconds(log, id), undefined, 'a failed build');
  t.equal(finishedBuildSeconds(path.join(dir, 'none.log'), id), undefined, 'no log');
});
