/**
 * rig/down.ts: what `rig down` removes. Each store's data and the uploaded components outlive
 * a plain down (so a stored run can be verified again after `rig up`); --purge removes
 * everything, the store's credentials included.
 */
import path from 'node:path';
import t from 'tap';
import { KEPT_ON_DOWN, runtimeFilesToRemove } from '../../../rig/down.ts';
import { STORE_DATA_DIRS } from '../../../rig/store.ts';

const root = '/var/lib/cq';
const files = { rigState: `${root}/rig.json`, credentials: `${root}/store-credentials.json`, ssh: `${root}/ssh` };
const hosts = {
  store: ['opt', 'bin', STORE_DATA_DIRS.minio, 'minio-data-d4', STORE_DATA_DIRS.seaweedfs, 'services', 'etc'],
  'worker-1': ['opt', 'bin', 'services', 'state', 'etc'],
};

t.test('down keeps the store data, its credentials and the components; removes the rest', async (t) => {
  const removed = runtimeFilesToRemove(root, false, hosts, files);
  t.same(KEPT_ON_DOWN, ['opt', 'bin', 'minio-data', 'seaweedfs-data', 'minio-data-d4']);
  t.notOk(removed.includes(path.join(root, 'hosts', 'store', STORE_DATA_DIRS.minio)), "MinIO's data is kept");
  t.notOk(removed.includes(path.join(root, 'hosts', 'store', 'minio-data-d4')), "MinIO's four-drive layout's data is kept too");
  t.notOk(removed.includes(path.join(root, 'hosts', 'store', STORE_DATA_DIRS.seaweedfs)), "SeaweedFS's data is kept");
  t.notOk(removed.includes(files.credentials), 'the credentials that open it are kept');
  t.notOk(removed.some((p) => /\/(opt|bin)$/.test(p)), 'uploaded components kept');
  t.same(
    removed.sort(),
    [files.rigState, files.ssh, `${root}/teardown.jsonl`, `${root}/hosts/store/services`, `${root}/hosts/store/etc`, `${root}/hosts/worker-1/services`, `${root}/hosts/worker-1/state`, `${root}/hosts/worker-1/etc`].sort(),
  );
});

t.test('down --purge removes the hosts tree (store data included) and the credentials', async (t) => {
  const removed = runtimeFilesToRemove(root, true, hosts, files);
  t.ok(removed.includes(path.join(root, 'hosts')), 'the whole hosts tree');
  t.ok(removed.includes(files.credentials), 'the store credentials');
  t.ok(removed.includes(files.rigState) && removed.includes(files.ssh));
});
