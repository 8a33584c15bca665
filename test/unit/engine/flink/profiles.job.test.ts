/**
 * The Flink job's own test, without the rig: `mvn -q -B test` on a temporary copy of
 * engine/flink/job (its pom and src/, never its target/), which runs WideProfileTest: the
 * wide profile's keyed part and FileSink (ExactlyOnceJob.toFileSink) in a local MiniCluster
 * with RocksDB keyed state, unaligned checkpoints, region failover and DefaultRollingPolicy,
 * a forced task failure, and every record committed exactly once, byte for byte. Maven's
 * downloads are cached in ~/.m2, outside the repo. Skipped, saying so, where `mvn` or
 * `java` is missing. About 75 s on the shared 2-core machine (2026-12-05), the build included.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { copyMavenProject, has, runMaven } from '../../../helpers/maven.ts';
import { repoRoot } from '../../../../lib/paths.ts';

const JOB = path.join(repoRoot, 'engine', 'flink', 'job');
const REPORT = 'target/surefire-reports/TEST-qual.clink.flink.WideProfileTest.xml';

t.test('WideProfileTest passes in a MiniCluster: RocksDB, unaligned checkpoints, DefaultRollingPolicy, a restore, exactly once', { skip: !has('mvn') || !has('java') ? 'mvn or java is not installed' : false }, async (t) => {
  const { dir, remove } = copyMavenProject(JOB, 'clink-qual-flink-job-');
  t.teardown(remove);
  const started = Date.now();
  const r = await runMaven(dir, 'test');
  t.comment(`mvn -q -B test: ${Math.round((Date.now() - started) / 1000)} s`);
  t.equal(r.code, 0, `mvn test exits 0; output tail:\n${r.output.slice(-4000)}`);
  const reportFile = path.join(dir, REPORT);
  t.ok(existsSync(reportFile), 'the test ran (its surefire report exists)');
  if (!existsSync(reportFile)) return;
  const xml = readFileSync(reportFile, 'utf8');
  const attr = (name: string) => Number(new RegExp(`<testsuite[^>]* ${name}="(\\d+)"`).exec(xml)?.[1] ?? NaN);
  t.equal(attr('failures'), 0, 'no failures');
  t.equal(attr('errors'), 0, 'no errors');
  t.equal(attr('skipped'), 0, 'nothing skipped');
  t.equal(attr('tests'), 2, 'both cases ran');
  for (const c of ['eventKeyIsTheKeyField', 'everyRecordCommittedOnceAfterARestore']) t.match(xml, new RegExp(`<testcase name="${c}[("]`), `${c} ran`);
  const summary = /clink-qual wide profile test: [^\n]*/.exec(r.output)?.[0];
  t.ok(summary, 'the test printed what it saw');
  if (summary) t.comment(summary);
});
