import t from 'tap';
import { verdictLine } from '../../../../bin/commands/campaign-run.ts';

t.test("the verdict's first line: the recount's figure, or that the run ended before its recount", async (t) => {
  const v = { verdict: 'ABORTED', produced: 401480, committedDistinct: 0, pendingUploads: 37 };
  t.equal(verdictLine(v, false), 'ABORTED: 401480 events produced, no recount (the run ended before it); 37 multipart uploads left pending');
  t.equal(verdictLine({ ...v, verdict: 'PASS', committedDistinct: 401480 }, true), 'PASS: 401480 of 401480 events committed (recount); 37 multipart uploads left pending');
});
