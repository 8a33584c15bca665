/**
 * The Flink fault-point agent's own tests, without the rig: `mvn -q -B verify` on a
 * temporary copy of engine/flink/agent (its pom and src/, never its target/), which builds
 * the shaded agent jar and runs FaultPointAgentIT (a Flink 2.2 MiniCluster job in child JVMs
 * with the agent attached: every named point halts its JVM where it should, and the
 * mutants' advice that a MiniCluster can reach acts). Maven's downloads are cached in
 * ~/.m2, outside the repo. Skipped, saying so, where `mvn` or `java` is missing. It takes
 * minutes (docs/mutants.md, "The agent's own test", has the figure).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { copyMavenProject, has, runMaven } from '../../../helpers/maven.ts';
import { repoRoot } from '../../../../lib/paths.ts';

const AGENT = path.join(repoRoot, 'engine', 'flink', 'agent');
const REPORT = 'target/failsafe-reports/TEST-qual.clink.flink.agent.FaultPointAgentIT.xml';

/** The test methods FaultPointAgentIT must have run (parameterized ones once per row). */
const EXPECTED_CASES = [
  'haltsAtThePoint',
  'recoveryPointsFireOnlyAfterARestore',
  'recoveryPointsDoNotFireWithoutARestore',
  'runsAndCommitsWhenNothingIsArmed',
  'commitAtPrepareMakesThePartVisibleAtTheBarrier',
  'dropRestoredCommittablesSkipsTheRecoveryCommitOnly',
  'anUnknownMutantStopsTheJvmAtStart',
];

t.test('FaultPointAgentIT passes in a MiniCluster, mutants included', { skip: !has('mvn') || !has('java') ? 'mvn or java is not installed' : false }, async (t) => {
  const { dir, remove } = copyMavenProject(AGENT, 'clink-qual-flink-agent-');
  t.teardown(remove);
  const started = Date.now();
  const r = await runMaven(dir, 'verify');
  const seconds = Math.round((Date.now() - started) / 1000);
  t.comment(`mvn -q -B verify: ${seconds} s`);
  t.equal(r.code, 0, `mvn verify exits 0; output tail:\n${r.output.slice(-4000)}`);
  t.ok(existsSync(path.join(dir, 'target', 'clink-qual-flink-agent.jar')), 'the shaded agent jar was built');
  const reportFile = path.join(dir, REPORT);
  t.ok(existsSync(reportFile), 'the integration test ran (its failsafe report exists)');
  if (!existsSync(reportFile)) return;
  const xml = readFileSync(reportFile, 'utf8');
  const attr = (name: string) => Number(new RegExp(`<testsuite[^>]* ${name}="(\\d+)"`).exec(xml)?.[1] ?? NaN);
  t.equal(attr('failures'), 0, 'no failures');
  t.equal(attr('errors'), 0, 'no errors');
  t.equal(attr('skipped'), 0, 'nothing skipped');
  t.equal(attr('tests'), 13, 'every case ran: 6 points, 2 recovery points, 2 runs without a halt, 3 mutant cases');
  const summary = path.join(dir, 'target/failsafe-reports/qual.clink.flink.agent.FaultPointAgentIT.txt');
  if (attr('failures') + attr('errors') > 0 && existsSync(summary)) t.comment(readFileSync(summary, 'utf8').slice(0, 6000));
  for (const c of EXPECTED_CASES) t.match(xml, new RegExp(`<testcase name="${c}[("]`), `${c} ran`);
});
