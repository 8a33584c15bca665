import t from 'tap';
import { zombiesSection } from '../../../reports/zombies.ts';
import type { ZombieTrail } from '../../../lib/evidence.ts';

const fenced: ZombieTrail = {
  faultId: 'f002',
  kind: 'protocol-point',
  host: 'worker-1',
  pid: 31843,
  point: 'sink.after-prepare',
  stoppedAt: '2026-12-04T22:19:43.900Z',
  resumedAt: '2026-12-04T22:19:56.050Z',
  declaredLost: { at: '2026-12-04T22:19:50.131Z', host: 'coordinator', line: '2026-12-04T22:19:50.131Z clink coordinator: worker worker-1 lost (no heartbeat for 6244 ms)' },
  replacedBy: { at: '2026-12-04T22:19:50.433Z', host: 'coordinator', line: '2026-12-04T22:19:50.433Z clink coordinator: epoch 24: deploying from checkpoint 58' },
  attempts: [{ at: '2026-12-04T22:19:56.900Z', host: 'coordinator', line: '2026-12-04T22:19:56.900Z clink coordinator: ignored a snapshot of checkpoint 61 (epoch 23, subtask 0) from worker worker-1: the current epoch is 25' }],
  fences: [
    { at: '2026-12-04T22:19:56.900Z', host: 'coordinator', line: '2026-12-04T22:19:56.900Z clink coordinator: ignored a snapshot of checkpoint 61 (epoch 23, subtask 0) from worker worker-1: the current epoch is 25' },
    { at: '2026-12-04T22:19:56.987Z', host: 'worker-1', line: '2026-12-04T22:19:56.987Z clink worker worker-1: epoch 25: deploy subtasks [0,3] (cancelled 2 of epoch 23)' },
  ],
  token: { before: 'epoch 23', after: 'epoch 24' },
  outcome: 'fenced',
};

t.test('no zombies: no section', async (t) => {
  t.same(zombiesSection(undefined), []);
  t.same(zombiesSection([]), []);
});

t.test('a fenced zombie: the table row, the lines that show it, each fence once', async (t) => {
  const md = zombiesSection([fenced, { ...fenced, faultId: 'f004', point: undefined as unknown as string, declaredLost: null, replacedBy: null, attempts: [], fences: [], token: { before: null, after: null }, outcome: 'not-lost' }]).join('\n');
  t.match(md, /### Zombies/);
  t.match(md, /\| f002 \| worker-1 pid 31843 at `sink\.after-prepare` \| stopped 12 s \| declared lost, replaced, and its late attempts fenced \| epoch 23 → epoch 24 \|/);
  t.match(md, /\*\*f002\*\* \(worker-1 pid 31843, stopped from 22:19:43\.900 to 22:19:56\.050\):/);
  t.match(md, /Each process below was held stopped while the job went on, then resumed\./);
  t.notMatch(md, /cut off/, 'no partition, no cut');
  t.match(md, /- declared lost: 22:19:50\.131 coordinator: `clink coordinator: worker worker-1 lost/);
  t.match(md, /- tried: .*ignored a snapshot of checkpoint 61/);
  t.match(md, /- fenced: .*cancelled 2 of epoch 23/);
  t.equal(md.match(/ignored a snapshot of checkpoint 61/g)?.length, 1, 'an attempt that is its own fence is quoted once');
  t.match(md, /\| f004 \| .* never declared lost/);
});

// As Flink's reader makes it of flink-qual03's f001 (worker-3 cut off 20 s): no PID, not
// declared lost, its own fence while cut off.
const cut: ZombieTrail = {
  faultId: 'f001',
  kind: 'partition',
  host: 'worker-3',
  stoppedAt: '2026-12-05T06:56:27.149Z',
  resumedAt: '2026-12-05T06:56:47.414Z',
  declaredLost: null,
  replacedBy: null,
  attempts: [],
  fences: [{ at: '2026-12-05T06:56:41.455Z', host: 'worker-3', line: '2026-12-05T06:56:41.455Z INFO  org.apache.flink.runtime.taskexecutor.TaskExecutor           [] - JobManager for job c10af0e22d0718c45ec69ba2714a741a with leader id 8486116f42a22116c5e48cf956484de3 lost leadership.' }],
  token: { before: 'attempt #1', after: null },
  outcome: 'not-lost',
};

t.test('a partition: the host cut off from the coordinator, not stopped; the engine\'s process on it, no PID made up', async (t) => {
  const md = zombiesSection([cut]).join('\n');
  t.match(md, /Each process below was cut off from the coordinator while it ran on .*, then reconnected\./);
  t.match(md, /while cut off and after/);
  t.match(md, /\| f001 \| the engine's process on worker-3 \| cut off 20 s \| never declared lost: the cut did not outlast the engine's lease or heartbeat \| attempt #1 → \? \|/);
  t.match(md, /\*\*f001\*\* \(the engine's process on worker-3, cut off from the coordinator from 06:56:27\.149 to 06:56:47\.414\):/);
  t.match(md, /- fenced: 06:56:41\.455 worker-3: .*lost leadership/);
  t.notMatch(md, /held stopped|stopped \d+ s|stopped from|pid \d/, 'neither "stopped" nor a PID');
  const both = zombiesSection([fenced, cut]).join('\n');
  t.match(both, /held stopped while the job went on, then resumed, or cut off from the coordinator/);
  t.match(both, /\(after the resume; while cut off and after\)/);
  t.match(zombiesSection([{ ...cut, declaredLost: fenced.declaredLost, outcome: 'no-attempt' }]).join('\n'), /it tried nothing its logs name, cut off or after/);
});
