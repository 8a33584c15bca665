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
  t.match(md, /\| f002 \| worker-1 pid 31843 at `sink\.after-prepare` \| 12 s \| declared lost, replaced, and its late attempts fenced \| epoch 23 → epoch 24 \|/);
  t.match(md, /- declared lost: 22:19:50\.131 coordinator: `clink coordinator: worker worker-1 lost/);
  t.match(md, /- tried: .*ignored a snapshot of checkpoint 61/);
  t.match(md, /- fenced: .*cancelled 2 of epoch 23/);
  t.equal(md.match(/ignored a snapshot of checkpoint 61/g)?.length, 1, 'an attempt that is its own fence is quoted once');
  t.match(md, /\| f004 \| .* never declared lost/);
});
