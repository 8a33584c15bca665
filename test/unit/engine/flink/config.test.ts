/**
 * The Flink plug's pure parts: the cluster config it writes, the entry-point commands, the
 * slot count, the job's sources hash that decides a rebuild, and the honesty of its fault
 * point declarations (no point claimed, every mandatory one explained).
 */
import t from 'tap';
import { parse } from 'yaml';
import { FLINK_PORTS, FLINK_RESTART_DELAY, JAVA17_OPENS, flinkConfigYaml, log4jProperties, serviceCommand, slotsPerWorker, submitCommand, zooCfg, type FlinkClusterSpec } from '../../../../engine/flink/config.ts';
import { FLINK_FAULT_POINTS, FLINK_FAULT_POINT_MAP, FLINK_NOT_APPLICABLE_POINTS } from '../../../../engine/flink/fault-points.ts';
import { flinkEngine, sinkOpenLineMatches } from '../../../../engine/flink/plug.ts';
import { FLINK_JOB_PROFILES, describeFlinkJobProfile, flinkDurableDirs, flinkJobProfile, flinkJobProfileArgs } from '../../../../engine/flink/profiles.ts';
import type { Engine } from '../../../../engine/engine.ts';
import { loadEngine } from '../../../../engine/index.ts';
import { flinkLibVersion, flinkRuntimePom, jobSourceHash, jobSources, mavenSourceHash, mavenSources } from '../../../../rig/install-flink.ts';

const spec: FlinkClusterSpec = {
  coordinatorAddress: '10.231.0.20',
  hostAddress: '10.231.0.11',
  role: 'worker',
  slotsPerTaskManager: 2,
  parallelism: 4,
  profile: flinkJobProfile('simple'),
  checkpointDir: 'file:///var/lib/x/coordinator/state/flink/checkpoints',
  haStorageDir: 'file:///var/lib/x/coordinator/state/flink/ha',
  tmpDir: '/var/lib/x/worker-1/flink/tmp',
  s3: { endpoint: 'http://10.231.0.40:9000', accessKey: 'AK', secretKey: 'S"K:#x' },
};

t.test('config.yaml parses as YAML with the settings the plug relies on', async (t) => {
  const c = parse(flinkConfigYaml(spec)) as Record<string, unknown>;
  t.equal(c['jobmanager.rpc.address'], '10.231.0.20');
  t.equal(c['taskmanager.host'], '10.231.0.11', 'a worker binds its own address');
  t.equal(c['jobmanager.bind-host'], '10.231.0.20');
  t.equal(c['taskmanager.numberOfTaskSlots'], 2);
  t.equal(c['parallelism.default'], 4);
  t.equal(c['execution.checkpointing.dir'], spec.checkpointDir);
  t.equal(c['s3.path.style.access'], true);
  t.equal(c['s3.endpoint'], 'http://10.231.0.40:9000');
  t.equal(c['s3.secret-key'], 'S"K:#x', 'a secret with YAML-special characters survives quoting');
  t.equal(c['high-availability.type'], 'zookeeper');
  t.equal(c['high-availability.zookeeper.quorum'], `10.231.0.20:${FLINK_PORTS.zookeeper}`);
  t.equal(c['high-availability.storageDir'], spec.haStorageDir);
  t.equal(c['taskmanager.memory.jvm-overhead.min'], c['taskmanager.memory.jvm-overhead.max'], 'fixed JVM overhead (TaskManagerRunner started without scripts requires it)');
  t.ok(c['taskmanager.cpu.cores'], 'cpu cores set');
  t.equal(c['jobmanager.execution.failover-strategy'], 'full', 'every subtask restores on any failure, so a recovery-only point fires wherever it is armed');
  t.equal(c['restart-strategy.fixed-delay.delay'], FLINK_RESTART_DELAY);
  t.equal(c['taskmanager.rpc.port'], 0, 'a new RPC address per TaskManager start: a restarted one never meets the dead incarnation\'s association');
});

t.test('the simple profile: heap state, aligned checkpoints inlined up to 1 MiB, no managed memory, full failover', async (t) => {
  const c = parse(flinkConfigYaml(spec)) as Record<string, unknown>;
  t.equal(c['state.backend.type'], 'hashmap');
  t.equal(c['execution.checkpointing.unaligned.enabled'], false);
  t.equal(c['execution.checkpointing.data-inline-threshold'], '1mb');
  t.equal(c['taskmanager.memory.managed.size'], '0m', 'the heap backend uses no managed memory');
  t.equal(c['jobmanager.execution.failover-strategy'], 'full');
  t.same(flinkJobProfileArgs(flinkJobProfile('simple')), ['--profile', 'simple'], 'the job is told its profile and nothing else');
  t.same(
    flinkDurableDirs(flinkJobProfile('simple'), { stateDir: '/s/flink', bucket: 'b', prefix: 'runs/r1/', ha: true }),
    { checkpointDir: 'file:///s/flink/checkpoints', haStorageDir: 'file:///s/flink/ha' },
    "checkpoints and HA storage on the coordinator's state directory",
  );
});

t.test('the wide profile: RocksDB, unaligned checkpoints on S3, managed memory, region failover, DefaultRollingPolicy', async (t) => {
  const wide = flinkJobProfile('wide');
  const dirs = flinkDurableDirs(wide, { stateDir: '/s/flink', bucket: 'clink-qual', prefix: 'runs/r1/', ha: true });
  t.same(dirs, { checkpointDir: 's3://clink-qual/runs/r1-flink/checkpoints', haStorageDir: 's3://clink-qual/runs/r1-flink/ha' }, 'beside the run prefix, not under it');
  t.notOk(dirs.checkpointDir.replace('s3://clink-qual/', '').startsWith('runs/r1/'), "the oracle's listing of the run prefix does not see checkpoint files");
  t.equal(flinkDurableDirs(wide, { stateDir: '/s', bucket: 'b', prefix: 'p/', ha: false }).haStorageDir, null, 'no HA storage without HA');
  const c = parse(flinkConfigYaml({ ...spec, profile: wide, ...dirs })) as Record<string, unknown>;
  t.equal(c['state.backend.type'], 'rocksdb');
  t.equal(c['execution.checkpointing.unaligned.enabled'], true);
  t.equal(c['execution.checkpointing.dir'], 's3://clink-qual/runs/r1-flink/checkpoints');
  t.equal(c['high-availability.storageDir'], 's3://clink-qual/runs/r1-flink/ha');
  t.equal(c['execution.checkpointing.data-inline-threshold'], '20kb', "Flink's default: TaskManagers write their keyed state to S3 as files");
  t.equal(c['taskmanager.memory.managed.size'], '128m', "RocksDB's memory comes from managed memory");
  t.equal(c['jobmanager.execution.failover-strategy'], 'region');
  t.equal(c['s3.endpoint'], spec.s3.endpoint, 'the same S3 filesystem settings serve the checkpoints');
  t.same(flinkJobProfileArgs(wide), ['--profile', 'wide', '--part-size-bytes', '1048576', '--rollover-interval-ms', '30000', '--inactivity-interval-ms', '10000', '--bucket-check-interval-ms', '1000']);
  // The JVM flags do not move: managed memory is native, outside the heap and direct memory.
  const l = { java: 'java', lib: '/d/flink/lib', conf: '/d/flink/conf' };
  t.match(serviceCommand('flink-taskmanager', l), /-Xmx384m .*-XX:MaxDirectMemorySize=192m/);
});

t.test("each profile's description is read from its settings", async (t) => {
  t.same([...FLINK_JOB_PROFILES], ['simple', 'wide'], 'simple first: the default');
  const simple = describeFlinkJobProfile(flinkJobProfile('simple'), { ha: true, restartDelay: '2 s' });
  t.match(simple, 'one chained vertex');
  t.match(simple, 'OnCheckpointRollingPolicy');
  t.match(simple, "on the coordinator host's local disk");
  t.match(simple, 'full failover');
  t.notMatch(simple, /RocksDB|unaligned|region/);
  const wide = describeFlinkJobProfile(flinkJobProfile('wide'), { ha: true, restartDelay: '2 s' });
  t.match(wide, '"wide" profile');
  t.match(wide, "keyBy on the event's key");
  t.match(wide, 'RocksDB keyed state');
  t.match(wide, 'emits every line unchanged');
  t.match(wide, 'DefaultRollingPolicy');
  t.match(wide, 'at 1 MiB, after 30 s open or 10 s without a record');
  t.match(wide, 'checkpoints are unaligned');
  t.match(wide, "completed checkpoints and ZooKeeper HA's storage are on S3");
  t.match(wide, 'region failover');
  t.match(wide, 'one region');
  t.notMatch(wide, /local disk|full failover/);
  t.match(describeFlinkJobProfile(flinkJobProfile('wide'), { ha: false, restartDelay: '2 s' }), /completed checkpoints are on S3.*without high availability/);
});

t.test("the sink-open line confirms the sink only when it names the deployed profile's profile and rolling policy", async (t) => {
  const wideLine = 'clink-qual flink sink open: family=flink_filesink_s3 output=s3://b/p/ fs=X writer=Y profile=wide rolling=DefaultRollingPolicy partSizeBytes=1048576 rolloverMs=30000 inactivityMs=10000 bucketCheckMs=1000 stateBackend=rocksdb unaligned=true keyedState=Z subtask=0/4 attempt=0 mutant=none';
  const simpleLine = 'clink-qual flink sink open: family=flink_filesink_s3 output=s3://b/p/ fs=X writer=Y profile=simple rolling=OnCheckpointRollingPolicy stateBackend=hashmap unaligned=false subtask=0/4 attempt=0 mutant=none';
  t.ok(sinkOpenLineMatches(wideLine, flinkJobProfile('wide')));
  t.notOk(sinkOpenLineMatches(wideLine, flinkJobProfile('simple')), 'a wide job does not confirm the simple profile');
  t.ok(sinkOpenLineMatches(simpleLine, flinkJobProfile('simple')));
  t.notOk(sinkOpenLineMatches(simpleLine, flinkJobProfile('wide')));
  t.notOk(sinkOpenLineMatches(wideLine.replace('rolling=DefaultRollingPolicy', 'rolling=OnCheckpointRollingPolicy'), flinkJobProfile('wide')), 'the wide profile with the wrong rolling policy does not confirm');
  t.notOk(sinkOpenLineMatches(wideLine.replace('profile=wide', 'profile=widest'), flinkJobProfile('wide')), 'whole fields, not substrings');
  const old = 'clink-qual flink sink open: family=flink_filesink_s3 output=s3://b/p/ fs=X writer=Y rolling=OnCheckpointRollingPolicy subtask=0/4 attempt=0 mutant=none';
  t.notOk(sinkOpenLineMatches(old, flinkJobProfile('simple')), 'a job built before profiles (no profile= field) does not confirm');
});

t.test('the plug takes its profile from its options: provenance name, description, cadence, durable files', async (t) => {
  const simple = flinkEngine();
  t.equal(simple.jobProfile, 'simple', 'the default');
  t.same(simple.jobProfiles, ['simple', 'wide']);
  t.match(simple.commitCadence, 'OnCheckpointRollingPolicy');
  t.match(simple.restoreRecommit, 'full failover');
  t.equal(simple.durableFiles({ dataDir: '/d', name: 'coordinator' }, 'coordinator').length, 2, "the simple profile's checkpoint metadata and HA handles on the coordinator's disk");
  const wide = flinkEngine({ profile: 'wide' });
  t.equal(wide.jobProfile, 'wide');
  t.match(wide.profile, 'RocksDB keyed state');
  t.match(wide.commitCadence, 'DefaultRollingPolicy');
  t.match(wide.commitCadence, 'spans checkpoints');
  t.match(wide.restoreRecommit, 'region failover');
  t.match(wide.restoreRecommit, 'restores every subtask');
  t.same(wide.durableFiles({ dataDir: '/d', name: 'coordinator' }, 'coordinator'), [], 'checkpoints on S3: no file on a host disk that a restore reads');
  t.throws(() => flinkEngine({ profile: 'narrow' }), /unknown job profile 'narrow' \(known: simple, wide\)/);
  t.equal(loadEngine('flink', { profile: 'wide' }).jobProfile, 'wide', 'loadEngine passes the profile to the plug');
  t.throws(() => loadEngine('clink', { profile: 'wide' }), /engine clink has no job profile 'wide' \(it deploys one job and has no profiles\)/);
});

t.test('without HA no ZooKeeper keys are written', async (t) => {
  const c = parse(flinkConfigYaml({ ...spec, haStorageDir: null })) as Record<string, unknown>;
  t.equal(c['high-availability.type'], undefined);
  t.equal(c['high-availability.zookeeper.quorum'], undefined);
});

t.test('slots: the subtasks dealt over the workers, adding up to the parallelism exactly', async (t) => {
  t.same(slotsPerWorker(4, 3), [2, 1, 1], 'every TaskManager holds a subtask; the job needs all three');
  t.same(slotsPerWorker(6, 3), [2, 2, 2]);
  t.same(slotsPerWorker(4, 1), [4]);
  for (const [p, w] of [[4, 3], [8, 3], [5, 4], [3, 3]]) {
    const s = slotsPerWorker(p!, w!);
    t.equal(s.reduce((a, b) => a + b, 0), p, `${p} subtasks: no spare slot over ${w} workers`);
    t.ok(s.every((n) => n >= 1), 'no worker without a slot');
  }
});

/** Megabytes of a Flink memory size ("1024m", "1g"). */
function mb(v: unknown): number {
  const m = /^(\d+)([mg])$/.exec(String(v));
  if (!m) throw new Error(`not a memory size: ${String(v)}`);
  return Number(m[1]) * (m[2] === 'g' ? 1024 : 1);
}

t.test("the JVM flags are the ones Flink's memory model derives from config.yaml", async (t) => {
  const c = parse(flinkConfigYaml(spec)) as Record<string, unknown>;
  const l = { java: 'java', lib: '/d/flink/lib', conf: '/d/flink/conf' };
  const flag = (cmd: string, name: string) => {
    const m = new RegExp(`-${name}(\\d+)m`).exec(cmd);
    return m ? Number(m[1]) : undefined;
  };
  // JobManager (Flink's JobManagerProcessUtils; defaults: metaspace 256m, off-heap 128m,
  // overhead 10% of the process clamped to 192m..1g).
  const process = mb(c['jobmanager.memory.process.size']);
  const overhead = Math.min(1024, Math.max(192, process * 0.1));
  const jmHeap = process - 256 - overhead - 128;
  const jm = serviceCommand('flink-jobmanager', l);
  t.equal(flag(jm, 'Xmx'), jmHeap, `JobManager -Xmx = ${process} - 256 - ${overhead} - 128`);
  t.equal(flag(jm, 'Xms'), jmHeap);
  t.equal(flag(jm, 'XX:MaxMetaspaceSize='), 256);
  // TaskManager: heap = framework + task heap; direct = framework + task off-heap + network.
  const tm = serviceCommand('flink-taskmanager', l);
  t.equal(flag(tm, 'Xmx'), mb(c['taskmanager.memory.framework.heap.size']) + mb(c['taskmanager.memory.task.heap.size']));
  t.equal(flag(tm, 'XX:MaxDirectMemorySize='), mb(c['taskmanager.memory.framework.off-heap.size']) + mb(c['taskmanager.memory.task.off-heap.size']) + mb(c['taskmanager.memory.network.max']));
  t.equal(flag(tm, 'XX:MaxMetaspaceSize='), mb(c['taskmanager.memory.jvm-metaspace.size']));
});

t.test('service and submit commands name the entry points and carry the Java 17 openings', async (t) => {
  const l = { java: 'java', lib: '/d/flink/lib', conf: '/d/flink/conf' };
  const jm = serviceCommand('flink-jobmanager', l);
  t.match(jm, /org\.apache\.flink\.runtime\.entrypoint\.StandaloneSessionClusterEntrypoint --configDir '\/d\/flink\/conf'$/);
  t.match(serviceCommand('flink-taskmanager', l), /org\.apache\.flink\.runtime\.taskexecutor\.TaskManagerRunner/);
  t.match(serviceCommand('flink-zookeeper', l, { zooCfg: '/d/zoo.cfg' }), /FlinkZooKeeperQuorumPeer --zkConfigFile '\/d\/zoo.cfg' --peerId 1$/);
  t.throws(() => serviceCommand('flink-zookeeper', l), 'ZooKeeper without a zoo.cfg is refused');
  const agent = { jar: '/d/flink/agent/a.jar', faultsDir: '/d/flink/faults', host: 'worker-1', role: 'worker' as const };
  const tm = serviceCommand('flink-taskmanager', l, { agent });
  t.match(tm, /'-javaagent:\/d\/flink\/agent\/a\.jar=dir=\/d\/flink\/faults,host=worker-1,role=worker' .*TaskManagerRunner/, 'the agent precedes the main class');
  t.notMatch(serviceCommand('flink-zookeeper', l, { zooCfg: '/d/zoo.cfg', agent }), /javaagent/, 'no agent in ZooKeeper');
  t.throws(() => serviceCommand('flink-taskmanager', l, { agent: { ...agent, faultsDir: '/d/a,b' } }), /comma/, 'a comma would split the agent arguments');
  t.match(serviceCommand('flink-taskmanager', l, { agent: { ...agent, mutant: 'commit-at-prepare' } }), /'-javaagent:\/d\/flink\/agent\/a\.jar=dir=\/d\/flink\/faults,host=worker-1,role=worker,mutant=commit-at-prepare' /, 'a mutant is passed to the agent');
  t.notMatch(tm, /mutant=/, 'the correct engine: no mutant argument');
  t.throws(() => serviceCommand('flink-taskmanager', l, { agent: { ...agent, mutant: 'a,dir=/x' } }), /comma/, 'a mutant name cannot smuggle other agent arguments');
  for (const o of JAVA17_OPENS) t.ok(jm.includes(o), `JobManager has ${o}`);
  const sub = submitCommand(l, '/d/job.jar', ['--topic', "it's"]);
  t.match(sub, /CliFrontend run -d -c qual\.clink\.flink\.ExactlyOnceJob '\/d\/job\.jar' '--topic' 'it'\\''s'$/, 'arguments are shell-quoted');
});

t.test('log4j keeps config.yaml properties out of the logs (Flink masks s3.secret-key but not s3.access-key)', async (t) => {
  const l = log4jProperties();
  t.match(l, /logger\.globalconfig\.name = org\.apache\.flink\.configuration\.GlobalConfiguration\nlogger\.globalconfig\.level = WARN/);
  t.match(l, /rootLogger\.level = INFO/, 'the sink open line (INFO) still reaches the log');
});

t.test('zoo.cfg: one server on the coordinator, no admin server', async (t) => {
  const z = zooCfg('10.231.0.20', '/s/zk');
  t.match(z, /clientPortAddress=10\.231\.0\.20/);
  t.match(z, /dataDir=\/s\/zk/);
  t.match(z, /admin\.enableServer=false/);
});

t.test('the runtime pom pins Flink and the Kafka connector', async (t) => {
  const pom = flinkRuntimePom();
  t.match(pom, /<artifactId>flink-runtime<\/artifactId><version>2\.2\.0<\/version>/);
  t.match(pom, /<artifactId>flink-connector-kafka<\/artifactId><version>5\.0\.0-2\.2<\/version>/);
  t.match(pom, /flink-rpc-akka-loader/);
  t.match(pom, /<artifactId>flink-statebackend-rocksdb<\/artifactId><version>2\.2\.0<\/version>/, "the wide profile's RocksDB state backend, pinned with Flink");
  t.match(flinkLibVersion(), /^2\.2\.0\+pom-[0-9a-f]{12}$/, "the lib component's version names the pom, so a lib cached from another pom is fetched again");
});

t.test('the agent sources: pom and src/main, not the tests', async (t) => {
  const files = mavenSources('agent');
  t.ok(files.some((f) => f.endsWith('agent/pom.xml')));
  t.ok(files.some((f) => f.endsWith('FaultPointAgent.java')));
  t.notOk(files.some((f) => f.includes('/src/test/')), 'tests do not change the jar');
  t.ok(mavenSources('agent', { withTests: true }).some((f) => f.endsWith('FaultPointAgentIT.java')));
  t.match(mavenSourceHash('agent'), /^[0-9a-f]{64}$/);
});

t.test('the job sources hash covers the pom and the Java sources', async (t) => {
  const files = jobSources();
  t.ok(files.some((f) => f.endsWith('pom.xml')));
  t.ok(files.some((f) => f.endsWith('ExactlyOnceJob.java')));
  t.notOk(files.some((f) => f.includes('/src/test/')), 'the MiniCluster test does not change the jar (nor is it built by rig install)');
  t.ok(mavenSources('job', { withTests: true }).some((f) => f.endsWith('WideProfileTest.java')));
  t.match(jobSourceHash(), /^[0-9a-f]{64}$/);
  t.equal(jobSourceHash(), jobSourceHash(), 'stable');
});

t.test('the plug declares the agent\'s protocol points, every mandatory one among them', async (t) => {
  const e = flinkEngine();
  t.same([...e.faultPoints].sort(), [...FLINK_FAULT_POINTS].sort());
  t.equal(e.faultPoints.length, 8, 'six mandatory points and two inside recovery');
  t.equal(e.mandatoryFaultPoints.length, 6, 'the six mandatory points');
  for (const p of e.mandatoryFaultPoints) t.ok(e.faultPoints.includes(p), `${p} is injected`);
  t.same(FLINK_NOT_APPLICABLE_POINTS, {}, 'none reported not applicable');
  t.same(e.recoveryFaultPoints, ['sink.recover.before-commit', 'sink.recover.after-commit']);
  for (const p of e.faultPoints) t.match(FLINK_FAULT_POINT_MAP[p]?.at ?? '', /FileWriter\.prepareCommit|FileCommitter\.commit|CheckpointCoordinator\.addCompletedCheckpointToStoreAndSubsumeOldest/, `${p} names its Flink method`);
  await t.rejects(e.armFaultPoint('no.such.point'), /unknown fault point/);
  await t.rejects(e.armFaultPoint('sink.before-commit'), /deploy\(\) was not called/, 'arming needs a deployed cluster');
  t.same(await e.firedFaultPoints(), [], 'nothing fired before deploy');
  t.equal((e as Engine).startedUploads, undefined, 'no upload journal');
  t.type(e.pendingUploads, 'function', 'pending uploads counted its own way');
  t.equal(loadEngine('flink').name, 'flink', 'registered next to clink');
});
