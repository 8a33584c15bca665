/**
 * rig/install.ts seaweedfs(): the pinned SeaweedFS build in the cache is found by its sha256 and
 * never rebuilt (a second install does nothing); a changed binary is hashed again, not rebuilt.
 * The build itself (go mod download, go build) is not run here: the cache is a temporary one.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { manifestPath, PINS, readManifest, seaweedfs, seaweedfsDir, sha256File, storeComponent } from '../../../rig/install.ts';

const cache = mkdtempSync(path.join(os.tmpdir(), 'cq-install-seaweedfs-'));
const before = process.env.CLINK_QUAL_CACHE;
process.env.CLINK_QUAL_CACHE = cache;
t.teardown(() => {
  if (before === undefined) delete process.env.CLINK_QUAL_CACHE;
  else process.env.CLINK_QUAL_CACHE = before;
  rmSync(cache, { recursive: true, force: true });
});

t.test('a cached build is recorded with its sha256 and reused as it is', async (t) => {
  t.equal(seaweedfsDir(), path.join(cache, `seaweedfs-${PINS.seaweedfs}`), 'the same cache root as MinIO, one directory per pinned version');
  const bin = path.join(seaweedfsDir(), 'weed');
  mkdirSync(seaweedfsDir(), { recursive: true });
  writeFileSync(bin, 'not really weed\n', { mode: 0o755 });
  const log: string[] = [];
  const first = await seaweedfs(undefined, (l) => log.push(l));
  t.same(first, { name: 'seaweedfs', version: PINS.seaweedfs, path: bin, sha256: await sha256File(bin) });
  t.same(log, [], 'nothing built: the binary was there');
  const second = await seaweedfs(first, (l) => log.push(l));
  t.equal(second, first, 'a second install returns the manifest entry unchanged');
  writeFileSync(bin, 'another build\n');
  const third = await seaweedfs(first, (l) => log.push(l));
  t.not(third.sha256, first.sha256, 'a changed binary is recorded with its new hash');
  t.same(log, [], 'and still not rebuilt');
});

t.test('a manifest entry of another version is not taken for the pinned build', async (t) => {
  const old = { name: 'seaweedfs', version: 'v0.0.0-20200101000000-000000000000', path: path.join(seaweedfsDir(), 'weed'), sha256: await sha256File(path.join(seaweedfsDir(), 'weed')) };
  const c = await seaweedfs(old, () => {});
  t.equal(c.version, PINS.seaweedfs);
  t.not(c, old);
});

t.test('storeComponent: SeaweedFS joins the manifest on first use; a missing MinIO is an install to run', async (t) => {
  writeFileSync(manifestPath(), JSON.stringify({ installedAt: '2026-12-05T00:00:00.000Z', components: [{ name: 'kafka', version: 'k', path: '/x', sha256: 'y' }] }));
  const bin = path.join(seaweedfsDir(), 'weed');
  writeFileSync(bin, 'a cached build\n', { mode: 0o755 });
  const c = await storeComponent('seaweedfs');
  t.equal(c.path, bin);
  const m = readManifest();
  t.same(m.components.map((x) => x.name), ['kafka', 'seaweedfs'], 'added beside what was there');
  t.equal(m.components[1]!.sha256, await sha256File(bin));
  t.same(await storeComponent('seaweedfs'), c, 'found the second time');
  await t.rejects(storeComponent('minio'), /component minio is not in the install manifest/);
});
