/**
 * Fault primitives against the real rig: a partition blocks TCP both ways and healing
 * restores it; random drop drops a measurable share; SIGSTOP of MinIO makes S3 calls time
 * out and SIGCONT restores them; a broker restart keeps the topic's data. Every test heals
 * what it did, also when it fails (t.teardown).
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { Admin, Consumer, Producer, stringDeserializers, stringSerializers } from '@platformatic/kafka';
import { HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { healAll, healPacketLoss, healPartition, packetLoss, partition, pauseService, restartBroker, resumeService, tcpConnectFrom, dropCounters } from '../../rig/faults.ts';
import { closeAllRemotes, remoteFor } from '../../rig/ssh.ts';
import { readRigState, readStoreCredentials } from '../../rig/state.ts';
import { servicePid } from '../../rig/process.ts';

const state = readRigState();
const host = (name: string) => remoteFor(state.hosts.find((h) => h.name === name)!);
// A run killed mid-fault leaves it in place: heal first, as the harness does on abort.
await healAll(state);
t.teardown(async () => {
  await healAll(state);
  await closeAllRemotes();
});

t.test('a partition between worker-1 and the coordinator blocks TCP both ways; healing restores it', async (t) => {
  const w = host('worker-1');
  const c = host('coordinator');
  t.teardown(() => healPartition(w, c.host.address, 'tpart', { b: c }).catch(() => {}));
  t.equal(await tcpConnectFrom(w, c.host.address, 22), true, 'before: worker-1 reaches the coordinator');
  const ev = await partition(w, c.host.address, 'tpart', { b: c });
  t.equal(ev.aToB, false, 'worker-1 -> coordinator blocked');
  t.equal(ev.bToA, false, 'coordinator -> worker-1 blocked');
  t.equal(await tcpConnectFrom(w, host('worker-2').host.address, 22), true, 'worker-1 still reaches worker-2 (only the peer is cut off)');
  t.match((await w.exec('iptables -S')).stdout, /clink-qual:tpart/, 'rules tagged with the fault id');
  t.equal((await w.exec('echo still-controlled')).stdout.trim(), 'still-controlled', 'the operations host still reaches worker-1 over SSH');
  const healed = await healPartition(w, c.host.address, 'tpart', { b: c });
  t.equal(healed.removedRules, 2, 'two rules removed');
  t.equal(healed.aToB, true, 'worker-1 -> coordinator restored');
  t.equal(healed.bToA, true, 'coordinator -> worker-1 restored');
  t.notMatch((await w.exec('iptables -S')).stdout, /clink-qual/, 'no tagged rule left');
});

t.test('random drop drops a measurable share of packets, SSH exempted', async (t) => {
  const w = host('worker-2');
  t.teardown(() => healPacketLoss(w, 'tloss').catch(() => {}));
  const ev = await packetLoss(w, 0.3, 'tloss', { probes: 400 });
  const dropped = ev.dropped.input + ev.dropped.output;
  t.ok(dropped > 0, `drop counter rose (${dropped} of ${ev.probesSent} probes)`);
  const share = ev.dropped.output / ev.probesSent;
  t.ok(share > 0.15 && share < 0.45, `about 30% of probes dropped on the way out (${(share * 100).toFixed(1)}%)`);
  const answers: string[] = [];
  for (let i = 0; i < 10; i++) answers.push((await w.exec(`echo ${i}`)).stdout.trim());
  t.same(answers, ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'], '10 SSH commands answered in order under 30% loss (SSH exempted)');
  const before = await dropCounters(w, 'tloss');
  await w.exec(`for i in $(seq 200); do echo x > /dev/udp/10.231.0.1/9; done 2>/dev/null; true`);
  const after = await dropCounters(w, 'tloss');
  t.ok(after.output > before.output, `counter keeps rising with traffic (${before.output} -> ${after.output})`);
  const healed = await healPacketLoss(w, 'tloss');
  t.equal(healed.removedRules, 4, 'four rules removed');
  t.notMatch((await w.exec('iptables -S')).stdout, /clink-qual/, 'no tagged rule left');
});

t.test('SIGSTOP of MinIO makes S3 calls time out; SIGCONT restores them', async (t) => {
  const s = host('store');
  t.teardown(() => resumeService(s, 'minio').catch(() => {}));
  const creds = readStoreCredentials(state);
  const s3 = new S3Client({ endpoint: state.store.endpoint, region: state.store.region, forcePathStyle: true, credentials: creds, maxAttempts: 1, requestHandler: { requestTimeout: 2000, connectionTimeout: 2000 } });
  t.teardown(() => s3.destroy());
  await s3.send(new HeadBucketCommand({ Bucket: state.store.bucket }), { abortSignal: AbortSignal.timeout(10_000) });
  const ev = await pauseService(s, 'minio');
  t.equal(ev.state, 'T', 'the process is stopped');
  t.ok(ev.requestTimedOutMs! >= 1900, `health request timed out (${ev.requestTimedOutMs} ms)`);
  const t0 = Date.now();
  const r = await s3.send(new HeadBucketCommand({ Bucket: state.store.bucket }), { abortSignal: AbortSignal.timeout(2000) }).then(
    () => 'answered',
    (e: Error) => e.name,
  );
  t.not(r, 'answered', `an S3 call does not answer while paused (${r} after ${Date.now() - t0} ms)`);
  t.ok(Date.now() - t0 >= 1900, 'it failed by timing out');
  const res = await resumeService(s, 'minio');
  t.equal(res.pid, ev.pid, 'same process resumed');
  t.ok(res.answeredAfterMs !== undefined, `store answers again (${res.answeredAfterMs} ms)`);
  const head = await s3.send(new HeadBucketCommand({ Bucket: state.store.bucket }), { abortSignal: AbortSignal.timeout(5000) });
  t.equal(head.$metadata.httpStatusCode, 200, 'an S3 call answers 200 after SIGCONT');
});

t.test('a broker restart keeps the topic data', async (t) => {
  const bootstrap = state.kafka.bootstrap.split(',');
  const topic = `rig-restart-${randomBytes(3).toString('hex')}`;
  const admin = new Admin({ clientId: 'rig-test', bootstrapBrokers: bootstrap });
  t.teardown(() => admin.close());
  await admin.createTopics({ topics: [topic], partitions: 4, replicas: 3 });
  const producer = new Producer({ clientId: 'rig-test', bootstrapBrokers: bootstrap, serializers: stringSerializers, acks: -1, idempotent: true });
  t.teardown(() => producer.close());
  await producer.send({ messages: Array.from({ length: 1000 }, (_, i) => ({ topic, key: `k${i}`, value: `v${i}`, partition: i % 4 })) });
  const b = host('broker-2');
  const ev = await restartBroker(b, state);
  t.ok(ev.portClosed, `port 9092 was closed while down (${ev.downMs} ms)`);
  t.not(ev.newPid, ev.oldPid, `a new process (${ev.oldPid} -> ${ev.newPid}), ready after ${ev.readyAfterMs} ms`);
  t.equal(await servicePid(b, 'kafka'), ev.newPid, 'the service records the new pid');
  await producer.send({ messages: Array.from({ length: 1000 }, (_, i) => ({ topic, key: `k${i}`, value: `w${i}`, partition: i % 4 })) });
  const consumer = new Consumer({ clientId: 'rig-test', groupId: `g-${topic}`, bootstrapBrokers: bootstrap, deserializers: stringDeserializers });
  t.teardown(() => consumer.close(true));
  const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false, maxWaitTime: 500 });
  const seen = new Set<string>();
  const timer = setTimeout(() => stream.destroy(new Error('timed out reading back')), 120_000);
  for await (const m of stream) {
    seen.add(m.value);
    if (seen.size >= 2000) break;
  }
  clearTimeout(timer);
  t.equal(seen.size, 2000, 'all 2,000 records (before and after the restart) read back');
  await admin.deleteTopics({ topics: [topic] });
});
