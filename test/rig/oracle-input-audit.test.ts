/**
 * The input audit tailing the topic while the generator produces, as a campaign runs it: a
 * broker is restarted mid-way (the auditor's stream breaks or stalls and is re-opened from
 * its next offsets), and once the input stops the audit is complete and clean, with every
 * record read exactly once and only the last of them left to read after the stop. Against
 * the live rig's Kafka.
 */
import t from 'tap';
import { Admin } from '@platformatic/kafka';
import { EventProducer, ensureTopic } from '../../oracle/producer.ts';
import { InputAuditor } from '../../oracle/input-audit.ts';
import { healAll, restartBroker } from '../../rig/faults.ts';
import { closeAllRemotes, remoteFor } from '../../rig/ssh.ts';
import { readRigState } from '../../rig/state.ts';

const state = readRigState();
const bootstrap = state.kafka.bootstrap;
const spec = { seed: 'input-audit-tail-test', partitions: 4, keys: 500 };
const topic = `audit-tail-${process.pid}-${Date.now().toString(36)}`;
const admin = new Admin({ clientId: 'audit-tail-test', bootstrapBrokers: bootstrap.split(',') });
await ensureTopic(bootstrap, topic, spec.partitions, Math.min(3, state.kafka.brokers.length));
t.teardown(async () => {
  await healAll(state).catch(() => {});
  await admin.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin.close();
  await closeAllRemotes();
});

const TOTAL = 80_000;

t.test('the tail reads through a broker restart: complete, clean, each record once', async (t) => {
  const errors: string[] = [];
  const auditor = new InputAuditor({ ...spec, bootstrap, topic, onError: (e) => errors.push(e.message) });
  t.teardown(() => auditor.stop());
  auditor.start();
  const producer = await EventProducer.open({ ...spec, bootstrap, topic, total: TOTAL, rate: 8000, batchMax: 500 });
  producer.start();
  await new Promise((r) => setTimeout(r, 2000));
  const before = auditor.tally.read;
  t.ok(before > 0, `the tail judged records while they were produced (${before} after 2 s)`);
  const broker = state.kafka.brokers[0]!.host;
  const ev = await restartBroker(remoteFor(state.hosts.find((h) => h.name === broker)!), state);
  t.not(ev.newPid, ev.oldPid, `${broker} restarted (down ${ev.downMs} ms, ready after ${ev.readyAfterMs} ms)`);
  await producer.done;
  await producer.stop();
  t.equal(producer.total, TOTAL, 'the producer got everything acknowledged');
  const audit = await auditor.finish(120_000);
  t.equal(audit.records, TOTAL, `every record read once (errors that re-opened the stream: ${errors.length}; re-opened ${auditor.reopened} times)`);
  t.strictSame([audit.duplicates, audit.holes, audit.mismatched, audit.misplaced], [0, 0, 0, 0]);
  t.ok(audit.clean, audit.findings.join('; '));
  t.strictSame(
    audit.perPartition.map((p) => p.endOffset),
    producer.produced(),
    'the end offsets the audit judged against are what the producer had acknowledged',
  );
  t.ok(audit.tail, 'the audit says it tailed');
  t.ok(audit.tail!.leftAtFinish < TOTAL, `only part was left to read at the end (${audit.tail!.leftAtFinish} of ${TOTAL}, ${audit.tail!.finishMs} ms)`);
});
