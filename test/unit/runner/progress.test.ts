/** The operator's progress line: a failed heal is shown, not folded into the healed count. */
import t from 'tap';
import { Progress } from '../../../campaigns/runner/progress.ts';
import { zeroCounters } from '../../../lib/evidence.ts';

function capture() {
  const lines: string[] = [];
  const out = { isTTY: false, columns: 200, write: (s: string) => (lines.push(s), true) } as unknown as NodeJS.WriteStream;
  return { lines, progress: new Progress(out) };
}

t.test('heal failures appear in the progress line', async (t) => {
  const { lines, progress } = capture();
  progress.update({ phase: 'soak', produced: 10, committed: 5, checkpoints: 2, landed: 3, healed: 2, healFailed: 1, faultsPlanned: 4, counters: zeroCounters() });
  t.equal(lines.length, 1);
  t.match(lines[0], /faults 3\/4 landed 2 healed 1 HEAL FAILED \|/);
});

t.test('no heal failure: the line does not mention one', async (t) => {
  const { lines, progress } = capture();
  progress.update({ phase: 'soak', produced: 10, committed: 5, checkpoints: 2, landed: 3, healed: 3, healFailed: 0, faultsPlanned: 4, counters: zeroCounters() });
  t.notMatch(lines[0], /HEAL FAILED/);
});
