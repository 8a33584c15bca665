/**
 * The rig's real components, used across the hosts: Kafka (10,000 records with acks=all,
 * read back exactly), the S3 store (a multipart upload, listed by its exact key), and the
 * shape of `rig status --json`.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import t from 'tap';
import { Admin, Consumer, Producer, stringDeserializers, stringSerializers } from '@platformatic/kafka';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { repoRoot } from '../../lib/paths.ts';
import { readRigState, readStoreCredentials } from '../../rig/state.ts';

const state = readRigState();
const bootstrap = state.kafka.bootstrap.split(',');

t.test('10,000 records produced with acks=all are consumed back exactly', async (t) => {
  const topic = `rig-basics-${randomBytes(4).toString('hex')}`;
  const admin = new Admin({ clientId: 'rig-test', bootstrapBrokers: bootstrap });
  t.teardown(() => admin.close());
  const created = await admin.createTopics({ topics: [topic], partitions: 4, replicas: 3 });
  t.equal(created[0]!.partitions, 4, 'topic has 4 partitions');
  const md = await admin.metadata({ topics: [topic], forceUpdate: true });
  const tm = md.topics.get(topic)!;
  t.ok(tm.partitions.every((p) => p.replicas.length === 3), 'every partition has 3 replicas on distinct brokers');

  const producer = new Producer({ clientId: 'rig-test', bootstrapBrokers: bootstrap, serializers: stringSerializers, acks: -1, idempotent: true });
  t.teardown(() => producer.close());
  const N = 10_000;
  for (let i = 0; i < N; i += 500) {
    const messages = Array.from({ length: 500 }, (_, j) => ({ topic, key: `k${(i + j) % 97}`, value: `v${i + j}`, partition: (i + j) % 4 }));
    await producer.send({ messages, acks: -1 });
  }
  const seen = new Set<string>();
  let dup = 0;
  const consumer = new Consumer({ clientId: 'rig-test', groupId: `g-${topic}`, bootstrapBrokers: bootstrap, deserializers: stringDeserializers });
  t.teardown(() => consumer.close(true));
  const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false, maxWaitTime: 500 });
  const deadline = setTimeout(() => stream.destroy(new Error('timed out reading back')), 120_000);
  for await (const m of stream) {
    if (seen.has(m.value)) dup++;
    seen.add(m.value);
    if (seen.size + dup >= N) break;
  }
  clearTimeout(deadline);
  t.equal(dup, 0, 'no record read twice');
  t.equal(seen.size, N, 'every record read back');
  t.ok([...Array(N).keys()].every((i) => seen.has(`v${i}`)), 'exactly the records produced');
  await admin.deleteTopics({ topics: [topic] });
});

t.test('a multipart upload: parts of 5 MiB, completed, and listed by its exact key while pending', async (t) => {
  const creds = readStoreCredentials(state);
  const s3 = new S3Client({ endpoint: state.store.endpoint, region: state.store.region, forcePathStyle: true, credentials: creds });
  t.teardown(() => s3.destroy());
  const Bucket = state.store.bucket;
  const Key = `rig-basics/${randomBytes(4).toString('hex')}.bin`;
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key }));
  t.ok(UploadId, 'upload created');
  const listed = await s3.send(new ListMultipartUploadsCommand({ Bucket, Prefix: Key }));
  t.same(
    (listed.Uploads ?? []).map((u) => [u.Key, u.UploadId]),
    [[Key, UploadId]],
    'ListMultipartUploads with the exact key as prefix shows the pending upload',
  );
  const sizes = [5 * 1024 * 1024, 5 * 1024 * 1024, 1234];
  const parts = [];
  for (const [i, size] of sizes.entries()) {
    const r = await s3.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: i + 1, Body: Buffer.alloc(size, i + 1) }));
    parts.push({ PartNumber: i + 1, ETag: r.ETag });
  }
  const done = await s3.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: parts } }));
  t.match(done.ETag, /-3"?$/, 'multipart ETag ends in -3');
  const head = await s3.send(new HeadObjectCommand({ Bucket, Key }));
  t.equal(head.ContentLength, sizes.reduce((a, b) => a + b, 0), 'object has the summed size');
  const after = await s3.send(new ListMultipartUploadsCommand({ Bucket, Prefix: Key }));
  t.equal((after.Uploads ?? []).length, 0, 'no pending upload for the key after completion');
  const again = await s3.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: parts } })).then(
    () => 'ok',
    (e: Error) => e.name,
  );
  t.equal(again, 'NoSuchUpload', 'a second completion answers NoSuchUpload (MinIO)');
  const body = await (await s3.send(new GetObjectCommand({ Bucket, Key, Range: 'bytes=0-0' }))).Body!.transformToByteArray();
  t.equal(body[0], 1, 'the first part is first');
});

t.test('rig status --json has the documented shape and says healthy', async (t) => {
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'clink-qual.ts'), 'rig', 'status', '--json'], { encoding: 'utf8', timeout: 60_000 });
  t.ok(r.status === 0 || r.status === 2, `exit 0, or 2 when an engine service is down (stderr: ${r.stderr.slice(0, 500)})`);
  const s = JSON.parse(r.stdout);
  t.equal(s.hosts.length, state.hosts.length, 'every host listed');
  for (const h of s.hosts) {
    t.type(h.name, 'string');
    t.ok(Array.isArray(h.roles) && h.roles.length > 0, `${h.name} has roles`);
    t.equal(h.reachable, true, `${h.name} reachable`);
    t.ok(Array.isArray(h.services), `${h.name} lists services`);
    for (const sv of h.services) {
      t.ok(typeof sv.name === 'string' && (sv.pid === null || Number.isInteger(sv.pid)) && typeof sv.healthy === 'boolean', `${h.name} ${sv.name}: name, pid, healthy`);
      if (sv.name === 'kafka' || sv.name === 'minio') t.equal(sv.healthy, true, `${h.name} ${sv.name} healthy`);
    }
  }
  for (const b of state.kafka.brokers) {
    const h = s.hosts.find((x: { name: string }) => x.name === b.host);
    const k = h.services.find((x: { name: string }) => x.name === 'kafka');
    t.ok(k && Number.isInteger(k.pid) && k.pid > 0, `${b.host} runs kafka with a pid`);
  }
  t.same(s.kafka.brokers, [1, 2, 3], 'three brokers registered');
  t.ok(s.kafka.quorum && [1, 2, 3].includes(s.kafka.quorum.leaderId), 'the KRaft quorum has a leader');
  t.equal(s.kafka.quorum.voters.length, 3, 'three voters');
  t.equal(s.store.healthy, true, 'store healthy');
  t.equal(s.store.bucketPresent, true, 'bucket present');
  t.notMatch(r.stdout, readStoreCredentials(state).secretAccessKey, 'the store secret is never printed');
});
