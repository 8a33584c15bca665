import t from 'tap';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { STORE_DEFECTS, storeDefectsFor } from '../../../reports/store-defects.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

t.test('a defect applies to its store at the versions it names, and to nothing else', async (t) => {
  const pinned = { name: 'minio', version: 'v0.0.0-20260212201848-7aac2a2c5b7c' };
  t.same(storeDefectsFor(pinned).map((d) => d.id), ['F-1']);
  t.same(storeDefectsFor({ name: 'MinIO', version: pinned.version }).map((d) => d.id), ['F-1'], 'the name matches whatever its case');
  t.same(storeDefectsFor({ name: 'minio', version: 'RELEASE.2025-09-07T16-13-09Z' }), [], 'another version');
  t.same(storeDefectsFor({ name: 'seaweedfs', version: pinned.version }), [], 'another store');
  t.same(storeDefectsFor(undefined), [], 'no store recorded');
});

t.test('every registered defect links a docs page that exists and names its reproduction', async (t) => {
  for (const d of STORE_DEFECTS) {
    t.ok(existsSync(path.join(repo, d.doc)), `${d.id}: ${d.doc} exists`);
    t.ok(d.versions.length > 0, `${d.id} names the versions it applies to`);
  }
  t.match(STORE_DEFECTS.find((d) => d.id === 'F-1')!.summary, 'findings/minio-complete-cancel.ts');
});
