/**
 * Finding F-2 (docs/findings/flink-recommit-length-only.md): runs the loopback reproduction
 * findings/flink-recommit-length-only.ts (Flink 2.2.0's own S3RecoverableWriter against the
 * cached MinIO on 127.0.0.1) and checks what the write-up states: the re-commit after recovery
 * accepts a same-length foreign object, while the controls behave (Flink's own object
 * accepted, a longer foreign object refused for conflicting lengths, a missing object refused),
 * and an ETag check from the checkpointed parts tells Flink's object from both foreign ones.
 * When the pins move to a Flink that checks more than the length, this fails, and the
 * write-up is due for an update.
 *
 * Needs Java 17, Maven (Maven Central or the jars in ~/.m2) and `rig install`'s cached MinIO;
 * takes about 2 minutes; no rig. It runs only with CLINK_QUAL_FINDINGS=1, e.g.
 * `CLINK_QUAL_FINDINGS=1 node_modules/.bin/tap test/unit/findings/flink-recommit-length-only.test.ts`.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { checkoutNode } from '../../../rig/doctor.ts';

if (process.env.CLINK_QUAL_FINDINGS !== '1') {
  t.plan(0, 'skipped: set CLINK_QUAL_FINDINGS=1 to run the F-2 reproduction (needs Java, Maven and the cached MinIO; about 2 minutes)');
} else {
  // The checkout's Node 24 (it runs .ts files), whichever Node runs tap.
  const script = path.join(import.meta.dirname, '..', '..', '..', 'findings', 'flink-recommit-length-only.ts');
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const p = spawn(checkoutNode(), [script, '--port', '19960'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  t.equal(code, 0, `the reproduction ran to its end${code === 0 ? '' : `; stderr:\n${stderr.slice(-3000)}`}`);

  const result = stdout.split('\n').find((l) => l.startsWith('RESULT flink_recommit_length_only '));
  const fields = Object.fromEntries((result ?? '').split(' ').slice(2).map((kv) => kv.split('=') as [string, string]));
  /** The reproduction's line for one case. */
  const caseLine = (name: string) => stdout.split('\n').find((l) => l.startsWith(`case ${name}: `)) ?? '';

  t.test('the finding: a same-length foreign object is accepted as the re-commit', async (t) => {
    t.ok(result, 'a RESULT line');
    t.equal(fields.reproduced, 'true');
    t.equal(fields.foreign_same_length, 'accepted');
    t.match(caseLine('foreign-same-length'), /commitAfterRecovery accepted \(no exception\).*NOT Flink's bytes/, "the foreign bytes stay as the committed file");
    t.equal(fields.flink_s3_fs_hadoop, '2.2.0');
  });

  t.test('the controls behave as a correct committer', async (t) => {
    t.equal(fields.controls_as_expected, 'true');
    t.equal(fields.original, 'accepted', "Flink's own object is accepted");
    t.match(caseLine('original'), /Flink's own bytes/);
    t.equal(fields.foreign_other_length, 'threw');
    t.match(caseLine('foreign-other-length'), /threw IOException: Inconsistent result for object .*conflicting lengths/);
    t.equal(fields.absent, 'threw');
    t.match(caseLine('absent'), /threw IOException: Recovering commit failed for object .*Object does not exist/);
  });

  t.test('an ETag check from the checkpointed parts tells them apart', async (t) => {
    t.match(caseLine('original'), /from the checkpointed parts: match \(accept\)/);
    t.match(caseLine('foreign-same-length'), /from the checkpointed parts: mismatch \(refuse\)/);
    t.match(caseLine('foreign-other-length'), /from the checkpointed parts: mismatch \(refuse\)/);
  });
}
