/**
 * reports/state-corruption.ts on a fixture run (run-pass, copied) given the chaos records of
 * three state-corruption faults as chaos/state-corruption.ts writes them (a Flink handle's
 * flipped reader offset whose JobManager ran the job again, a torn handle whose JobManager
 * stopped, a Clink log record whose coordinator ran on): the section names each file, byte
 * and number, and what the process did; without state-corruption faults there is no section.
 */
import t from 'tap';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import type { ChaosRecord } from '../../../lib/evidence.ts';
import { renderReport } from '../../../reports/report.ts';
import { bytesWords, reactionWords } from '../../../reports/state-corruption.ts';
import { copyFixtureRun } from '../../helpers/fixture-run.ts';

const HANDLE = '/h/coordinator/state/flink/ha/clink-qual/completedCheckpoint6be96664c541';


const records: ChaosRecord[] = [
  {
    t: '2026-08-21T10:20:00.000Z', faultId: 's1', kind: 'state-corruption', phase: 'landed',
    evidence: { host: 'coordinator', role: 'coordinator', variant: 'bitflip', file: HANDLE, what: "ZooKeeper HA's completed-checkpoint handle", fileBytes: 16949, record: { start: 0, end: 16949 }, offset: 4773, length: 1, aimedAt: "a source reader's Kafka offset of t partition 0: 4986", before: '7a', after: '7b', killedPid: 100, restartedPid: 101 },
  },
  { t: '2026-08-21T10:20:31.000Z', faultId: 's1', kind: 'state-corruption', phase: 'healed', evidence: { host: 'coordinator', role: 'coordinator', reaction: 'running', pid: 101, restored: true, watchedS: 31.2 } },
  {
    t: '2026-08-21T10:22:00.000Z', faultId: 's2', kind: 'state-corruption', phase: 'landed',
    evidence: { host: 'coordinator', role: 'coordinator', variant: 'torn', file: HANDLE, what: "ZooKeeper HA's completed-checkpoint handle", fileBytes: 16949, record: { start: 0, end: 16949 }, offset: 12853, length: 4096, before: 'ab'.repeat(4096), after: '00'.repeat(4096), killedPid: 101, restartedPid: 102 },
  },
  {
    t: '2026-08-21T10:22:40.000Z', faultId: 's2', kind: 'state-corruption', phase: 'healed',
    evidence: { host: 'coordinator', role: 'coordinator', reaction: 'stopped', watchedS: 38.5, lastLines: ['INFO something', 'ERROR Fatal error occurred in the cluster entrypoint | Failed to initialize high-availability completed checkpoint store', '\tat org.apache.flink.runtime.Foo.bar(Foo.java:1)', 'WARNING: System::setSecurityManager will be removed in a future release'], errorLines: ['ERROR org.apache.flink.runtime.entrypoint.ClusterEntrypoint [] - Fatal error occurred in the cluster entrypoint.', 'Caused by: org.apache.flink.util.FlinkException: Could not retrieve checkpoint 28 from state handle under /0000000000000000028. This indicates that the retrieved state handle is broken.', 'Caused by: java.io.StreamCorruptedException: invalid type code: 00'], repaired: { file: HANDLE, offset: 12853, bytes: 'ab' }, restartedPid: 103 },
  },
  {
    t: '2026-08-21T10:24:00.000Z', faultId: 's3', kind: 'state-corruption', phase: 'landed',
    evidence: { host: 'coordinator', role: 'coordinator', variant: 'bitflip', file: '/h/state/clink/checkpoints.log', what: 'the completed-checkpoint log (crc32 per record)', offset: 812, before: '35', after: '34', killedPid: 5, restartedPid: 6 },
  },
  { t: '2026-08-21T10:24:10.000Z', faultId: 's3', kind: 'state-corruption', phase: 'healed', evidence: { host: 'coordinator', role: 'coordinator', reaction: 'running', pid: 6 } },
];

t.test('the section names file, byte, the number aimed at, and what each process did when started again', async (t) => {
  const dir = copyFixtureRun(t, 'run-pass');
  t.notMatch(renderReport(dir), '### State corruption', 'no state-corruption fault: no section');
  appendFileSync(path.join(dir, 'chaos.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const md = renderReport(dir);
  t.match(md, '### State corruption');
  const row = (id: string) => md.split('\n').find((l) => l.startsWith(`| ${id} |`)) ?? '';
  t.match(row('s1'), /bitflip/);
  t.match(row('s1'), /completedCheckpoint6be96664c541/);
  t.match(row('s1'), /byte 4773 \(a source reader's Kafka offset of t partition 0: 4986\): 7a → 7b/);
  t.match(row('s1'), /ran on: the job running again 31 s after its start/);
  t.match(row('s2'), /torn/);
  t.match(row('s2'), /\*\*stopped\*\* 39 s after its start/);
  t.match(row('s2'), /in its words: `Caused by: org.apache.flink.util.FlinkException: Could not retrieve checkpoint 28 .*` … `Caused by: java.io.StreamCorruptedException: invalid type code: 00`/, 'the error lines, not the JVM\'s shutdown warnings after them');
  t.notMatch(row('s2'), /setSecurityManager/);
  t.match(row('s2'), /original bytes written back and the process started again \(PID 103\)/);
  t.match(row('s2'), /abababab… \(4096 bytes\) → 0000/, 'a tear shortened, its length said');
  t.match(row('s3'), /ran on \(still up at the end of the watch\)/);
  t.notMatch(row('s3'), /job running again/, 'a plug that cannot tell: nothing said of the job');
});

t.test('words for each reaction the heal records', async (t) => {
  const healed = (evidence: Record<string, unknown>): ChaosRecord => ({ t: 'x', faultId: 'f', kind: 'state-corruption', phase: 'healed', evidence });
  t.equal(reactionWords(undefined), 'not healed');
  t.match(reactionWords(healed({ reaction: 'running', pid: 1, restored: false, watchedS: 180 })), /\*\*up, but the job not running\*\* 3 min after its start/);
  t.match(reactionWords(healed({ reaction: 'stopped', lastLines: [] })), /^\*\*stopped\*\*$/);
  t.match(reactionWords(healed({ reaction: 'stopped', lastLines: ['    at a (x.js:1)', '    at b (y.js:2)'] })), /its last lines recorded are the frames of a stack trace/, 'frames only (runs before the heal left them out)');
  t.match(reactionWords(healed({ reaction: 'stopped', lastLines: ['Error: checkpoints.log: a corrupt line at byte 13510', '    at a (x.js:1)'] })), /its last line: `Error: checkpoints.log: a corrupt line at byte 13510`/);
  t.equal(bytesWords({ offset: 3, before: '00', after: '01' }), 'byte 3: 00 → 01');
});
