/**
 * The generator's producer against real Kafka: produce, lose the producer mid-way (its
 * clients dropped without a goodbye), start a new one, finish; the input audit reads the
 * topic back and finds no duplicate, no hole, every record the event its offset names.
 */
import t from 'tap';
import { Admin } from '@platformatic/kafka';
import { testEndpoints } from '../helpers/endpoints.ts';
import { EventProducer, ensureTopic } from '../../oracle/producer.ts';
import { auditInput } from '../../oracle/input-audit.ts';
import { poll } from '../../lib/retry.ts';

const { kafkaBootstrap } = testEndpoints();
const spec = { seed: 'oracle-producer-test', partitions: 4, keys: 500 };
const topic = `oracle-test-input-${process.pid}-${Date.now().toString(36)}`;
const admin = new Admin({ clientId: 'oracle-test', bootstrapBrokers: kafkaBootstrap.split(',') });
const brokers = (await admin.metadata({ topics: [] })).brokers.size;
await ensureTopic(kafkaBootstrap, topic, spec.partitions, Math.min(3, brokers));
t.teardown(async () => {
  await admin.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin.close();
});

const TOTAL = 30_000;

t.test('a restarted producer resumes from the topic: no duplicate, no hole', async (t) => {
  const first = await EventProducer.open({ ...spec, bootstrap: kafkaBootstrap, topic, total: TOTAL, rate: 20_000, batchMax: 1000 });
  t.strictSame(first.produced(), [0, 0, 0, 0], 'an empty topic starts at seq 0');
  first.start();
  // Abandon it once it has something acknowledged (a freshly started rig may take over a second for the first send).
  await poll(() => first.produced().some((n) => n > 0), { deadlineMs: 30_000, intervalMs: 20 });
  await first.abandon();
  const mid = first.produced().reduce((a, b) => a + b, 0);
  t.ok(mid > 0 && mid < TOTAL, `the first producer got part-way (${mid})`);

  const second = await EventProducer.open({ ...spec, bootstrap: kafkaBootstrap, topic, total: TOTAL });
  const resumeAt = second.produced();
  t.ok(resumeAt.every((n, p) => n >= first.produced()[p]!), `resumes at or past what the first one saw acknowledged (${resumeAt} vs ${first.produced()})`);
  second.start();
  await second.done;
  await second.stop();
  t.equal(second.total, TOTAL);
  t.strictSame(second.produced(), [7500, 7500, 7500, 7500]);

  const audit = await auditInput({ ...spec, bootstrap: kafkaBootstrap, topic });
  t.equal(audit.records, TOTAL);
  t.equal(audit.duplicates, 0);
  t.equal(audit.holes, 0);
  t.equal(audit.mismatched, 0);
  t.equal(audit.misplaced, 0);
  t.ok(audit.clean, audit.findings.join('; '));
});

t.test('the input audit reports anomalies planted in the topic', async (t) => {
  const bad = `${topic}-bad`;
  await ensureTopic(kafkaBootstrap, bad, 1, 1);
  t.teardown(() => admin.deleteTopics({ topics: [bad] }).catch(() => {}));
  const one = { ...spec, partitions: 1 };
  const p = await EventProducer.open({ ...one, bootstrap: kafkaBootstrap, topic: bad, total: 10 });
  p.start();
  await p.done;
  await p.stop();
  // A second producer that does not resume (a broken generator): seq 5..9 again, then garbage.
  const { Producer, stringSerializers } = await import('@platformatic/kafka');
  const raw = new Producer({ clientId: 'oracle-test-raw', bootstrapBrokers: kafkaBootstrap.split(','), serializers: stringSerializers });
  await raw.send({ messages: [...[5, 6, 7, 8, 9].map((s) => ({ topic: bad, partition: 0, key: 'k', value: p.gen.line(0, s) })), { topic: bad, partition: 0, key: 'k', value: 'not an event' }, { topic: bad, partition: 0, key: 'k', value: p.gen.line(0, 20) }] });
  await raw.close();
  const audit = await auditInput({ ...one, bootstrap: kafkaBootstrap, topic: bad });
  t.equal(audit.records, 17);
  t.equal(audit.duplicates, 5);
  t.equal(audit.mismatched, 1);
  t.equal(audit.holes, 10, 'seq 10..19 never appeared below seq 20');
  t.equal(audit.misplaced, 6, 'five repeats and seq 20 are not at their own offset');
  t.notOk(audit.clean);
});
