/**
 * rig/store.ts: which store a rig runs and how each is named and started: the service,
 * data directory and health path per store, MinIO for a rig.json from before the choice,
 * SeaweedFS's command line and identities file, and MinIO's drive layouts (one drive, or four
 * erasure-coded): their directories, command line and environment.
 */
import { spawnSync } from 'node:child_process';
import t from 'tap';
import {
  describeStoreLayout,
  MINIO_DRIVE_LAYOUTS,
  MINIO_MULTI_DRIVE_ENV,
  minioCommand,
  minioDataArg,
  minioDataDir,
  minioDriveDirs,
  minioEnv,
  seaweedfsCommand,
  seaweedfsIdentities,
  storeDrivesOf,
  storeKindOf,
  storeKindOfService,
  storeServiceOf,
  STORE_CONSOLE_PORT,
  STORE_DATA_DIRS,
  STORE_HEALTH_PATHS,
  STORE_PORT,
  STORE_SERVICES,
} from '../../../rig/store.ts';
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

t.test("MinIO's drive layouts: one drive in minio-data, four erasure-coded in minio-data-d4/1 … 4 through MinIO's ellipsis", async (t) => {
  t.same(MINIO_DRIVE_LAYOUTS, [1, 4]);
  t.equal(minioDataDir(1), STORE_DATA_DIRS.minio, 'one drive: the directory every rig used before layouts');
  t.equal(minioDataDir(4), 'minio-data-d4');
  t.same(minioDriveDirs('/h/store', 1), ['/h/store/minio-data']);
  t.same(minioDriveDirs('/h/store', 4), ['/h/store/minio-data-d4/1', '/h/store/minio-data-d4/2', '/h/store/minio-data-d4/3', '/h/store/minio-data-d4/4']);
  t.equal(minioDataArg('/h/store', 1), '/h/store/minio-data');
  t.equal(minioDataArg('/h/store', 4), '/h/store/minio-data-d4/{1...4}');
  t.equal(storeDrivesOf({}), 1, 'a rig.json without store.drives runs one drive');
  t.equal(storeDrivesOf({ drives: 4 }), 4);
  t.equal(describeStoreLayout('minio', 1), 'minio (single drive)');
  t.equal(describeStoreLayout('minio', 4), 'minio (erasure-coded, 4 drives)');
  t.equal(describeStoreLayout('seaweedfs'), 'seaweedfs');
});

t.test("MinIO's command line hands the ellipsis to MinIO unexpanded; the four-drive environment lets drives share the root disk", async (t) => {
  const one = minioCommand('/h/opt/minio-v0/minio', '10.0.0.9', '/h/store', 1);
  const four = minioCommand('/h/opt/minio-v0/minio', '10.0.0.9', '/h/store', 4);
  t.equal(one, `'/h/opt/minio-v0/minio' server '/h/store/minio-data' --address 10.0.0.9:${STORE_PORT} --console-address 10.0.0.9:${STORE_CONSOLE_PORT} --quiet`);
  // What the shell passes MinIO: its arguments, each on a line, through a real bash.
  const args = spawnSync('bash', ['-c', four.replace(/^'[^']*'/, "printf '%s\\n'")], { encoding: 'utf8' }).stdout.split('\n');
  t.same(args.slice(0, 2), ['server', '/h/store/minio-data-d4/{1...4}'], 'one argument, the braces kept');
  const creds = { accessKeyId: 'cqa', secretAccessKey: 's' };
  t.notOk('MINIO_ROOTDRIVE_THRESHOLD_SIZE' in minioEnv(creds, 1), 'a single drive needs no root-drive setting');
  t.same(minioEnv(creds, 4), { ...minioEnv(creds, 1), ...MINIO_MULTI_DRIVE_ENV });
  t.same(MINIO_MULTI_DRIVE_ENV, { MINIO_ROOTDRIVE_THRESHOLD_SIZE: '1B' });
});
