/**
 * rig/install-plan.ts: which optional parts one `rig install` runs (Flink's for the Flink
 * engine, SeaweedFS for its store), from what is asked and what an earlier install left in
 * the manifest; and which of an engine's components a manifest lacks (a first use).
 */
import t from 'tap';
import { ENGINE_COMPONENTS, ENGINES_WITH_PARTS, installPlan, missingEngineComponents } from '../../../rig/install-plan.ts';
import { ENGINE_NAMES } from '../../../engine/index.ts';

const RIG_OWN = ['openssh-server', 'iptables', 'kafka', 'minio', 'node'];
const FLINK = ['flink', 'flink-s3-fs-hadoop', 'flink-job', 'flink-agent'];

t.test('a fresh machine asked for nothing, or for Clink: no optional part', async (t) => {
  t.same(installPlan({}, []), { flink: false, seaweedfs: false });
  t.same(installPlan({ engines: ['clink'], stores: ['minio'] }, RIG_OWN), { flink: false, seaweedfs: false }, "Clink's smoke on MinIO: neither Flink nor SeaweedFS");
});

t.test('asked for: the engine flink, the store seaweedfs, or --all', async (t) => {
  t.same(installPlan({ engines: ['flink'] }, []), { flink: true, seaweedfs: false });
  t.same(installPlan({ engines: ['clink', 'flink'] }, RIG_OWN), { flink: true, seaweedfs: false });
  t.same(installPlan({ stores: ['seaweedfs'] }, RIG_OWN), { flink: false, seaweedfs: true });
  t.same(installPlan({ engines: ['flink'], stores: ['seaweedfs'] }, []), { flink: true, seaweedfs: true }, "flink-quick-seaweedfs's smoke");
  t.same(installPlan({ all: true }, []), { flink: true, seaweedfs: true });
  t.same(installPlan({ all: false, engines: [], stores: [] }, RIG_OWN), { flink: false, seaweedfs: false });
});

t.test('installed by an earlier install: kept (checked, rebuilt when edited) by every later one', async (t) => {
  t.same(installPlan({}, [...RIG_OWN, ...FLINK]), { flink: true, seaweedfs: false });
  t.same(installPlan({}, [...RIG_OWN, 'flink-job']), { flink: true, seaweedfs: false }, 'any one of its parts: the rest is completed');
  t.same(installPlan({}, [...RIG_OWN, 'seaweedfs']), { flink: false, seaweedfs: true });
});

t.test("an engine's missing components: all of Flink's on its first use, the lacking ones after a partial install, none for Clink", async (t) => {
  t.same(missingEngineComponents('flink', RIG_OWN), FLINK);
  t.same(missingEngineComponents('flink', [...RIG_OWN, 'flink', 'flink-s3-fs-hadoop']), ['flink-job', 'flink-agent']);
  t.same(missingEngineComponents('flink', [...RIG_OWN, ...FLINK]), []);
  t.same(missingEngineComponents('clink', []), [], 'Clink runs on what every install brings (Node)');
  t.same(missingEngineComponents('toString', []), [], 'a name the table does not own is no engine with parts');
});

t.test('the table covers every engine the harness can drive, and names Flink alone as having parts', async (t) => {
  t.same(Object.keys(ENGINE_COMPONENTS).sort(), [...ENGINE_NAMES].sort());
  t.same(ENGINES_WITH_PARTS, ['flink']);
  t.same(ENGINE_COMPONENTS.flink, FLINK);
});

t.test('staleEngineComponents: an installed part built from the sources whose version the sources no longer give', async (t) => {
  const { staleEngineComponents } = await import('../../../rig/install-plan.ts');
  const installed = [
    { name: 'kafka', version: '4.1.1' },
    { name: 'flink-job', version: 'src-aaaa' },
    { name: 'flink-agent', version: 'src-bbbb' },
  ];
  t.same(staleEngineComponents(installed, { 'flink-job': 'src-aaaa', 'flink-agent': 'src-bbbb' }), [], 'both current');
  t.same(staleEngineComponents(installed, { 'flink-job': 'src-aaaa', 'flink-agent': 'src-cccc' }), ['flink-agent'], 'the agent edited');
  t.same(staleEngineComponents([{ name: 'kafka', version: '4.1.1' }], { 'flink-job': 'src-x' }), [], 'not installed is not stale (missingEngineComponents covers it)');
});
