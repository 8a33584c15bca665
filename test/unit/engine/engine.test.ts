import t from 'tap';
import { engineDescription } from '../../../engine/engine.ts';
import { loadEngine, ENGINE_NAMES } from '../../../engine/index.ts';

t.test('each plug describes itself into provenance: version, mechanism, commit check, points', async (t) => {
  t.same([...ENGINE_NAMES].sort(), ['clink', 'flink']);
  const clink = engineDescription(loadEngine('clink'));
  t.match(clink.commitCheck, "ETag, size and its own token", "Clink's check, in its own words");
  t.notOk(clink.sinkMechanism, "Clink leaves the mechanism to the report's default");
  const flink = engineDescription(loadEngine('flink'));
  t.match(flink.version, /^2\.\d+\.\d+$/);
  t.match(flink.commitCheck, 'only the size is checked');
  t.match(flink.sinkMechanism, 'FileSink');
  t.ok(flink.faultPointInjection && Object.keys(flink.faultPointInjection).length > 0, 'how each point is injected');
});

t.test('a plug that says nothing adds nothing', async (t) => {
  const bare = { ...loadEngine('clink'), commitCheck: undefined, version: undefined, sinkMechanism: undefined, faultPointInjection: undefined, faultPointsNotApplicable: {} };
  t.same(engineDescription(bare as never), {});
});
