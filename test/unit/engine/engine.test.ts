import t from 'tap';
import { engineDescription } from '../../../engine/engine.ts';
import { loadEngine, ENGINE_NAMES } from '../../../engine/index.ts';
import { flinkEngine } from '../../../engine/flink/plug.ts';

t.test('each plug describes itself into provenance: version, mechanism, commit check, points', async (t) => {
  t.same([...ENGINE_NAMES].sort(), ['clink', 'flink']);
  const clink = engineDescription(loadEngine('clink'));
  t.match(clink.commitCheck, "ETag, size and its own token", "Clink's check, in its own words");
  t.match(clink.sinkMechanism, 'each whole part as soon as it is buffered', "Clink's own words since it uploads parts during the interval");
  t.match(clink.sinkMechanism, 'the rest at the barrier');
  const flink = engineDescription(loadEngine('flink'));
  t.match(flink.version, /^2\.\d+\.\d+$/);
  t.match(flink.commitCheck, 'only the size is checked');
  t.match(flink.sinkMechanism, 'FileSink');
  t.ok(flink.faultPointInjection && Object.keys(flink.faultPointInjection).length > 0, 'how each point is injected');
});

t.test('each plug declares its commit cadence, what a restore re-commits, and the job it deploys', async (t) => {
  const clink = engineDescription(loadEngine('clink'));
  t.match(clink.commitCadence, 'at most one object per completed checkpoint');
  t.match(clink.restoreRecommit, 'every restore');
  t.match(clink.profile, 'completed-checkpoint log');
  const flink = engineDescription(loadEngine('flink'));
  t.match(flink.commitCadence, 'OnCheckpointRollingPolicy');
  t.match(flink.restoreRecommit, "Flink's committer commits every committable restored with it again");
  t.match(flink.profile, 'one chained vertex');
  t.match(flink.profile, 'OnCheckpointRollingPolicy');
  t.match(flink.profile, "on the coordinator host's local disk");
  t.match(flink.profile, 'full failover');
  t.match(flink.profile, 'ZooKeeper high availability');
  t.match(engineDescription(flinkEngine({ noHa: true })).profile, 'without high availability', 'the profile follows the options the plug runs with');
});

t.test('the job profile deployed is recorded by name, and its description follows it', async (t) => {
  t.equal(engineDescription(loadEngine('clink')).jobProfile, undefined, 'a plug with one job records no profile name');
  const simple = engineDescription(loadEngine('flink'));
  t.equal(simple.jobProfile, 'simple', "flink's default");
  const wide = engineDescription(loadEngine('flink', { profile: 'wide' }));
  t.equal(wide.jobProfile, 'wide');
  t.match(wide.profile, 'RocksDB keyed state');
  t.match(wide.profile, 'region failover');
  t.match(wide.commitCadence, 'DefaultRollingPolicy');
  t.notSame(wide.profile, simple.profile);
});

t.test('a plug that says nothing adds nothing', async (t) => {
  const bare = { ...loadEngine('clink'), commitCheck: undefined, commitCadence: undefined, restoreRecommit: undefined, profile: undefined, version: undefined, sinkMechanism: undefined, faultPointInjection: undefined, faultPointsNotApplicable: {} };
  t.same(engineDescription(bare as never), {});
});
