/**
 * The benchmark's JVM producer (bench/jvm-producer.ts, --producer-jvm) against the rig's
 * Kafka: every event it is asked for lands once, in its partition, in order, as exactly the
 * line the Node producers write (JSON.stringify({ p, seq, pad })); every thread of the JVM
 * runs at the nice value it was given; a send still pending when no broker answers is
 * rejected on close; after close() the process is gone.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import t from 'tap';
import { Admin, Consumer, stringDeserializers } from '@platformatic/kafka';
import { testEndpoints } from '../helpers/endpoints.ts';
import { ensureTopic } from '../../oracle/producer.ts';
import { JvmProducer, parseReply, processCpuS, requestLine } from '../../bench/jvm-producer.ts';

const { kafkaBootstrap } = testEndpoints();
const bootstrap = kafkaBootstrap.split(',');
const topic = `bench-jvm-producer-${process.pid}-${Date.now().toString(36)}`;
const admin = new Admin({ clientId: 'bench-jvm-producer-test', bootstrapBrokers: bootstrap });
const brokers = (await admin.metadata({ topics: [] })).brokers.size;
await ensureTopic(kafkaBootstrap, topic, 4, Math.min(3, brokers));
t.teardown(async () => {
  await admin.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin.close();
});

t.test('requests and answers on the wire', async (t) => {
  t.equal(requestLine(7, [[0, 10, 3], [2, 0, 1]]), '7 0:10:3 2:0:1\n');
  t.same(parseReply('clink-bench-reply 7 ok'), { id: 7 });
  t.same(parseReply('clink-bench-reply 0 ready'), { id: 0 });
  t.same(parseReply('clink-bench-reply 8 error org.apache.kafka.common.errors.TimeoutException: late'), { id: 8, error: 'org.apache.kafka.common.errors.TimeoutException: late' });
  t.equal(parseReply('[main] INFO org.apache.kafka... clink-bench-reply 9 ok'), null, "a logger's line is not an answer");
  t.equal(parseReply('clink-bench-reply x ok'), null);
});

/** Each thread's nice value of a process (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNices(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19 - 3]);
  });
}

t.test('every event once, in order, as the Node producers write it; the JVM at its nice value', async (t) => {
  const p = new JvmProducer(bootstrap, topic, 4, 60, undefined, { nice: 7 });
  t.teardown(() => p.close());
  await p.ready();
  const pid = p.pid!;
  const nices = threadNices(pid);
  t.ok(nices.length > 5 && nices.every((n) => n === 7), `all ${nices.length} threads of the JVM at nice 7 (${[...new Set(nices)].join(', ')})`);
  const sends = [1, 4999, 5000, 20_000, 3];
  for (const n of sends) {
    const before = [...p.seq];
    const sent = p.produce(n);
    t.equal(p.produced - before.reduce((a, b) => a + b, 0), n, `${n} numbered before produce() returned`);
    await sent;
  }
  const total = sends.reduce((a, b) => a + b, 0);
  t.same(p.seq, [0, 1, 2, 3].map((q) => Math.floor(total / 4) + (q < total % 4 ? 1 : 0)), 'round-robin over the partitions');
  t.ok((processCpuS(pid) ?? 0) > 0, 'its CPU is readable');
  await p.close();
  t.equal(existsSync(`/proc/${pid}`), false, 'the JVM is gone after close()');
  await t.rejects(p.produce(1), /JVM producer exited/, 'after close: refused');

  const pad = 'x'.repeat(60);
  const consumer = new Consumer({ clientId: 'bench-jvm-producer-read', groupId: `bench-jvm-producer-${process.pid}`, bootstrapBrokers: bootstrap, deserializers: stringDeserializers });
  t.teardown(() => consumer.close(true));
  const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false, maxWaitTime: 500 });
  const next = [0, 0, 0, 0];
  let read = 0;
  let wrong = 0;
  let keyed = 0;
  const deadline = setTimeout(() => stream.destroy(new Error('timed out reading back')), 120_000);
  for await (const m of stream) {
    const want = JSON.stringify({ p: m.partition, seq: next[m.partition]!, pad });
    if (m.value !== want) wrong++;
    if (m.key) keyed++;
    next[m.partition]!++;
    if (++read === total) break;
  }
  clearTimeout(deadline);
  t.equal(read, total, 'every event read back');
  t.equal(wrong, 0, 'each the line {"p","seq","pad"} of its partition, in order, nothing missing or twice');
  t.equal(keyed, 0, 'no key, as the Node producers send');
  t.same(next, p.seq, 'per partition exactly as many as numbered');
});

t.test('a send no broker answers is rejected on close, never left hanging', async (t) => {
  // Port 9 (discard) on loopback: nothing listens.
  const p = new JvmProducer(['127.0.0.1:9'], 'nowhere', 2, 60, undefined, { retries: 1 });
  await p.ready();
  const sent = p.produce(10);
  let settled = false;
  sent.catch(() => undefined).finally(() => (settled = true));
  await new Promise((r) => setTimeout(r, 500));
  t.equal(settled, false, 'not acknowledged: no broker');
  const started = Date.now();
  await p.close();
  t.ok(Date.now() - started < 25_000, `closed in ${Date.now() - started} ms`);
  await t.rejects(sent, /JVM producer/, 'the pending send is rejected');
  t.throws(() => new JvmProducer(bootstrap, topic, 4, 60, [4]), /owned partitions \[4\] not within 0..3/);
});
