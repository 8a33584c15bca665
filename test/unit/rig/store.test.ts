/**
 * rig/store.ts: which store a rig runs and how each is named and started: the service,
 * data directory and health path per store, MinIO for a rig.json from before the choice,
 * and SeaweedFS's command line and identities file.
 */
import t from 'tap';
import { seaweedfsCommand, seaweedfsIdentities, storeKindOf, storeKindOfService, storeServiceOf, STORE_DATA_DIRS, STORE_HEALTH_PATHS, STORE_PORT, STORE_SERVICES } from '../../../rig/store.ts';
import { STORE_KINDS } from '../../../rig/types.ts';

t.test('a rig.json without store.kind runs MinIO; a named store is its own', async (t) => {
  t.equal(storeKindOf({}), 'minio');
  t.equal(storeServiceOf({}), 'minio');
  t.equal(storeKindOf({ kind: 'seaweedfs' }), 'seaweedfs');
  t.equal(storeServiceOf({ kind: 'seaweedfs' }), 'seaweedfs');
});

t.test('each store has its own service, data directory and health path', async (t) => {
  t.same(STORE_KINDS, ['minio', 'seaweedfs']);
  for (const k of STORE_KINDS) t.equal(storeKindOfService(STORE_SERVICES[k]), k, `${STORE_SERVICES[k]} is ${k}'s service`);
  t.equal(storeKindOfService('kafka'), undefined, 'another service is no store');
  t.not(STORE_DATA_DIRS.minio, STORE_DATA_DIRS.seaweedfs, 'switching stores leaves the other one\'s data where it was');
  t.same(STORE_HEALTH_PATHS, { minio: '/minio/health/live', seaweedfs: '/healthz' });
});

t.test("SeaweedFS's command line: every server bound to the host's address, the S3 gateway on the store port", async (t) => {
  const cmd = seaweedfsCommand('/d/opt/seaweedfs-v0/weed', '10.231.0.9', '/d/seaweedfs-data', '/d/etc/seaweedfs-s3.json');
  t.match(cmd, /^'\/d\/opt\/seaweedfs-v0\/weed' server /);
  for (const a of ["-dir='/d/seaweedfs-data'", '-ip=10.231.0.9', '-ip.bind=10.231.0.9', '-s3', `-s3.port=${STORE_PORT}`, "-s3.config='/d/etc/seaweedfs-s3.json'", '-s3.port.iceberg=0', '-s3.port.lance=0'])
    t.ok(cmd.split(' ').includes(a), a);
  const loop = seaweedfsCommand('weed', '127.0.0.1', '/tmp/w', '/tmp/s3.json', { s3: 29700, master: 29702, volume: 29703, filer: 29704 });
  t.ok(['-s3.port=29700', '-master.port=29702', '-volume.port=29703', '-filer.port=29704'].every((a) => loop.split(' ').includes(a)), 'ports can be moved (loopback trials)');
});

t.test("SeaweedFS's identities file carries the rig's credentials as one admin identity", async (t) => {
  const id = JSON.parse(seaweedfsIdentities({ accessKeyId: 'cqabc', secretAccessKey: 's3cr3t' }));
  t.same(id.identities[0].credentials, [{ accessKey: 'cqabc', secretKey: 's3cr3t' }]);
  t.ok(id.identities[0].actions.includes('Admin'));
});
