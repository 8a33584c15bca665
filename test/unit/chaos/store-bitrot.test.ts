/**
 * The pure parts of the store-bitrot fault (chaos/store-bitrot.ts): MinIO's drives and
 * multipart directories found from listings, the object and the bit each variant rots,
 * and the refusals before anything is touched. The paths against MinIO itself need the rig.
 */
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BITROT_HASH_BYTES, BLOCK_BYTES, JUDGED_AGE_MS, chooseBitrotObject, driveRoots, keyOfShaDir, multipartShaDir, newestStagedPart, planBitrot, storeBitrot } from '../../../chaos/store-bitrot.ts';
import type { FaultContext } from '../../../chaos/fault.ts';
import type { RigState } from '../../../rig/types.ts';
import { localRemote } from '../../helpers/local-remote.ts';

t.test('driveRoots: one drive or several, from the .minio.sys directories found', async (t) => {
  t.same(driveRoots('/d/minio-data/.minio.sys\n'), ['/d/minio-data']);
  t.same(driveRoots('/d/minio-data/d3/.minio.sys\n/d/minio-data/d1/.minio.sys\n/d/minio-data/d2/.minio.sys\n/d/minio-data/d4/.minio.sys\n'), ['/d/minio-data/d1', '/d/minio-data/d2', '/d/minio-data/d3', '/d/minio-data/d4']);
  t.same(driveRoots(''), []);
  t.same(driveRoots('/d/minio-data/x/.minio.sysnot\n'), []);
});

t.test("multipartShaDir is MinIO's sha256 of bucket/key (checked against sha256sum); keyOfShaDir finds the object", async (t) => {
  const key = 'run-1/subtask=0/epoch=1/chk=3.jsonl';
  t.equal(multipartShaDir('clink-qual', key), '726ddbb2b76e8af6af62a57bd3589cd2c5bf7c92b7069c2fac624e068ea891b7');
  t.equal(keyOfShaDir(['run-1/a', key, 'run-1/b'], 'clink-qual', '726ddbb2b76e8af6af62a57bd3589cd2c5bf7c92b7069c2fac624e068ea891b7'), key);
  t.equal(keyOfShaDir(['run-1/a'], 'clink-qual', '726ddbb2b76e8af6af62a57bd3589cd2c5bf7c92b7069c2fac624e068ea891b7'), null);
});

t.test('chooseBitrotObject: committed = the newest judged (old enough) object; read = the newest; never an empty one', async (t) => {
  const now = Date.parse('2026-12-04T10:10:00.000Z');
  const at = (msAgo: number) => new Date(now - msAgo).toISOString();
  const objs = [
    { key: 'p/old', size: 10, lastModified: at(JUDGED_AGE_MS * 3) },
    { key: 'p/judged', size: 10, lastModified: at(JUDGED_AGE_MS + 1) },
    { key: 'p/empty', size: 0, lastModified: at(JUDGED_AGE_MS * 2) },
    { key: 'p/fresh', size: 10, lastModified: at(1000) },
  ];
  t.equal(chooseBitrotObject(objs, 'committed', now)?.key, 'p/judged');
  t.equal(chooseBitrotObject(objs, 'read', now)?.key, 'p/fresh');
  t.equal(chooseBitrotObject([objs[3]!], 'committed', now), null, 'nothing judged yet');
  t.equal(chooseBitrotObject([], 'read', now), null);
});

t.test("planBitrot: one bit in the first block's data, after MinIO's 32-byte hash; stable for the fault id", async (t) => {
  for (const id of ['f1', 'f2', 'f3', 'f4', 'f5', 'f6']) {
    const p = planBitrot(5 * 1024 * 1024 + 64, id)!;
    t.ok(p.offset >= BITROT_HASH_BYTES && p.offset < BITROT_HASH_BYTES + BLOCK_BYTES, `${id}: in the first block's data`);
    t.ok([1, 2, 4, 8, 16, 32, 64, 128].includes(p.mask), `${id}: one bit`);
    t.same(planBitrot(5 * 1024 * 1024 + 64, id), p);
  }
  const small = planBitrot(40, 'f1')!;
  t.ok(small.offset >= 32 && small.offset < 40);
  t.ok(planBitrot(10, 'f1')!.offset < 10, 'a file shorter than the hash: anywhere in it');
  t.equal(planBitrot(0, 'f1'), null);
  for (const id of ['f1', 'f2', 'f3']) {
    const m = planBitrot(1000, id, 'xl.meta')!;
    t.ok(m.offset >= 500 && m.offset < 1000, `${id}: an inlined object's xl.meta rots in its second half`);
  }
});

t.test('newestStagedPart: the newest part file under .minio.sys/multipart, with its multipart directory', async (t) => {
  const sha = 'a'.repeat(64);
  const sha2 = 'b'.repeat(64);
  const lines = [
    `1733300000.5 5242880 /d/minio-data/.minio.sys/multipart/${sha}/0f1e-uuid/9a8b-dd/part.1`,
    `1733300009.25 1234 /d/minio-data/.minio.sys/multipart/${sha2}/1111-uuid/2222-dd/part.2`,
    `1733300010.0 99 /d/minio-data/.minio.sys/tmp/xyz/part.1`,
    'garbage',
  ].join('\n');
  t.same(newestStagedPart(lines), { file: `/d/minio-data/.minio.sys/multipart/${sha2}/1111-uuid/2222-dd/part.2`, size: 1234, shaDir: sha2 }, 'not the tmp file, which is no staged upload');
  t.equal(newestStagedPart(''), null);
});

t.test('refusals before anything is touched: no variant, no drive', async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'store-bitrot-'));
  const rig = { hosts: [{ name: 'store', address: '127.0.0.1', roles: ['store'], dataDir }], store: { host: 'store', bucket: 'clink-qual', endpoint: 'http://127.0.0.1:1', region: 'us-east-1' } } as unknown as RigState;
  const ctx = { rig, remote: () => localRemote(dataDir, 'store'), credentials: { accessKeyId: 'a', secretAccessKey: 'b' }, prefix: 'p/', log: () => {} } as unknown as FaultContext;
  await t.rejects(storeBitrot.inject({ id: 'f1', kind: 'store-bitrot', atS: 0, variant: 'torn' }, ctx), { name: 'FaultNotLanded', message: /needs a variant, one of committed, staged, read/ });
  await t.rejects(storeBitrot.inject({ id: 'f1', kind: 'store-bitrot', atS: 0, variant: 'committed' }, ctx), { name: 'FaultNotLanded', message: /no MinIO drive/ });
});

