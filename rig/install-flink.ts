/**
 * `rig install` for the Flink engine plug (engine/flink/): Apache Flink as jars from Maven
 * Central (flink-dist, the distribution, is not served there), resolved by Maven from a
 * pom of our own, plus the S3 filesystem plugin and the job, built with Maven from
 * engine/flink/job/. Cached under <cacheDir>/flink-<version>/:
 *
 *   lib/                         the cluster's classpath (runtime, streaming, clients, RPC
 *                                loader, files and Kafka connectors, the RocksDB state
 *                                backend, log4j2; ZooKeeper's server comes shaded inside
 *                                flink-shaded-zookeeper-3)
 *   plugins/s3-fs-hadoop/        flink-s3-fs-hadoop, loaded as a plugin (its own classloader)
 *   job/clink-qual-flink-job.jar the job (thin: its dependencies are on lib/)
 *   agent/clink-qual-flink-agent.jar  the fault-point Java agent (ByteBuddy shaded in)
 *
 * Pins: Flink 2.2.0, because Maven Central serves flink-s3-fs-hadoop 2.2.0 but not 2.2.1,
 * and the FileSink's exactly-once RecoverableWriter on S3 needs the Hadoop-based plugin
 * (flink-s3-fs-presto has none). flink-connector-kafka 5.0.0-2.2 is the release for 2.2.
 *
 * Four manifest components, each checked by its sha256 on the next run (nothing is
 * downloaded or rebuilt when all match): flink (the lib directory; its version also names
 * the hash of the pom that resolves it, so an added jar is fetched), flink-s3-fs-hadoop
 * (the plugin jar), flink-job (the jar; its version is the sha256 of the job's sources, so
 * an edited job is rebuilt) and flink-agent (likewise, from engine/flink/agent/).
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { QualError } from '../lib/errors.ts';
import { cacheDir, repoRoot } from '../lib/paths.ts';
import { sh, sha256Dir, sha256File, type Component, type ComponentStep } from './install.ts';

export const FLINK_PINS = {
  flink: '2.2.0',
  kafkaConnector: '5.0.0-2.2',
  log4j: '2.24.3',
} as const;

/**
 * The `flink` component's version: Flink's pin and the hash of the pom that resolves the
 * classpath (flinkRuntimePom), so a cached lib/ assembled from another pom (before the
 * RocksDB state backend was added, say) is fetched again rather than kept.
 */
export function flinkLibVersion(): string {
  return `${FLINK_PINS.flink}+pom-${createHash('sha256').update(flinkRuntimePom()).digest('hex').slice(0, 12)}`;
}

export const FLINK_JOB_JAR = 'clink-qual-flink-job.jar';
export const FLINK_AGENT_JAR = 'clink-qual-flink-agent.jar';

export function flinkHome(): string {
  return path.join(cacheDir(), `flink-${FLINK_PINS.flink}`);
}

function dep(groupId: string, artifactId: string, version: string): string {
  return `<dependency><groupId>${groupId}</groupId><artifactId>${artifactId}</artifactId><version>${version}</version></dependency>`;
}

/** The pom whose runtime dependencies are the cluster's classpath. */
export function flinkRuntimePom(): string {
  const f = FLINK_PINS.flink;
  const deps = [
    dep('org.apache.flink', 'flink-runtime', f),
    dep('org.apache.flink', 'flink-streaming-java', f),
    dep('org.apache.flink', 'flink-clients', f),
    dep('org.apache.flink', 'flink-rpc-akka-loader', f),
    dep('org.apache.flink', 'flink-connector-base', f),
    dep('org.apache.flink', 'flink-connector-files', f),
    // The "wide" job profile's keyed state (engine/flink/profiles.ts): EmbeddedRocksDBStateBackend
    // and, as its runtime dependency, frocksdbjni (RocksDB's JNI build with Linux x86-64 natives).
    dep('org.apache.flink', 'flink-statebackend-rocksdb', f),
    dep('org.apache.flink', 'flink-connector-kafka', FLINK_PINS.kafkaConnector),
    dep('org.apache.logging.log4j', 'log4j-slf4j-impl', FLINK_PINS.log4j),
    dep('org.apache.logging.log4j', 'log4j-core', FLINK_PINS.log4j),
  ];
  return `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>clink-qual</groupId><artifactId>flink-runtime</artifactId><version>1</version><packaging>pom</packaging>
<dependencies>
${deps.join('\n')}
</dependencies></project>\n`;
}

async function flinkLib(prev: Component | undefined, log: (l: string) => void): Promise<Component> {
  const home = flinkHome();
  const lib = path.join(home, 'lib');
  const version = flinkLibVersion();
  if (prev && prev.version === version && prev.path === lib && existsSync(lib) && (await sha256Dir(lib)) === prev.sha256) return prev;
  log(`fetching Apache Flink ${FLINK_PINS.flink} jars (and flink-connector-kafka ${FLINK_PINS.kafkaConnector}) from Maven Central`);
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, 'pom.xml'), flinkRuntimePom());
  const tmp = path.join(home, 'lib.tmp');
  rmSync(tmp, { recursive: true, force: true });
  await sh('mvn', ['-q', '-B', 'dependency:copy-dependencies', `-DoutputDirectory=${tmp}`, '-DincludeScope=runtime'], { cwd: home });
  rmSync(lib, { recursive: true, force: true });
  renameSync(tmp, lib);
  return { name: 'flink', version, path: lib, sha256: await sha256Dir(lib) };
}

async function s3Plugin(prev: Component | undefined, log: (l: string) => void): Promise<Component> {
  const dir = path.join(flinkHome(), 'plugins', 's3-fs-hadoop');
  const jar = path.join(dir, `flink-s3-fs-hadoop-${FLINK_PINS.flink}.jar`);
  if (prev && prev.version === FLINK_PINS.flink && prev.path === jar && existsSync(jar) && (await sha256File(jar)) === prev.sha256) return prev;
  log(`fetching flink-s3-fs-hadoop ${FLINK_PINS.flink} from Maven Central`);
  const tmp = path.join(flinkHome(), 'plugins.tmp');
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  await sh('mvn', ['-q', '-B', 'dependency:copy', `-Dartifact=org.apache.flink:flink-s3-fs-hadoop:${FLINK_PINS.flink}`, `-DoutputDirectory=${tmp}`], { cwd: flinkHome() });
  mkdirSync(dir, { recursive: true });
  renameSync(path.join(tmp, path.basename(jar)), jar);
  rmSync(tmp, { recursive: true, force: true });
  return { name: 'flink-s3-fs-hadoop', version: FLINK_PINS.flink, path: jar, sha256: await sha256File(jar) };
}

/** A Maven project's sources under engine/flink/<project>/, in a stable order: pom.xml and src/main/ (tests do not change the jar). */
export function mavenSources(project: 'job' | 'agent', opts: { withTests?: boolean } = {}): string[] {
  const root = path.join(repoRoot, 'engine', 'flink', project);
  const out: string[] = [path.join(root, 'pom.xml')];
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(p);
    }
  };
  walk(path.join(root, 'src', 'main'));
  if (opts.withTests) walk(path.join(root, 'src', 'test'));
  return out;
}

export function mavenSourceHash(project: 'job' | 'agent'): string {
  const h = createHash('sha256');
  for (const f of mavenSources(project)) h.update(`${path.relative(repoRoot, f)}\n`).update(readFileSync(f));
  return h.digest('hex');
}

/** The job's sources, in a stable order: pom.xml and src/main/ under engine/flink/job/ (its MiniCluster test does not change the jar). */
export function jobSources(): string[] {
  return mavenSources('job');
}

/** The sha256 of the job's sources (jobSources): the flink-job component's version. */
export function jobSourceHash(): string {
  return mavenSourceHash('job');
}

/**
 * A jar built with Maven from a project under engine/flink/ (`version` names its sources), in
 * a copy under the cache so the repository never holds target/; kept when the cached jar
 * still has the version and sha256 the manifest recorded.
 */
async function mavenJar(
  project: 'job' | 'agent',
  p: { name: string; jar: string; version: string; sources: string[]; mvnArgs: string[]; what: string },
  prev: Component | undefined,
  log: (l: string) => void,
): Promise<Component> {
  const out = path.join(flinkHome(), project, p.jar);
  if (prev && prev.version === p.version && prev.path === out && existsSync(out) && (await sha256File(out)) === prev.sha256) return prev;
  log(`building ${p.what} (engine/flink/${project}) with Maven`);
  const build = path.join(flinkHome(), `${project}-build`);
  rmSync(build, { recursive: true, force: true });
  const src = path.join(repoRoot, 'engine', 'flink', project);
  for (const f of p.sources) {
    const dst = path.join(build, path.relative(src, f));
    mkdirSync(path.dirname(dst), { recursive: true });
    copyFileSync(f, dst);
  }
  await sh('mvn', ['-q', '-B', 'package', '-DskipTests', ...p.mvnArgs], { cwd: build });
  const built = path.join(build, 'target', p.jar);
  if (!existsSync(built)) throw new QualError('INSTALL_FAILED', `the ${p.what} build produced no ${built}`);
  mkdirSync(path.dirname(out), { recursive: true });
  copyFileSync(built, out);
  rmSync(build, { recursive: true, force: true });
  return { name: p.name, version: p.version, path: out, sha256: await sha256File(out) };
}

/** The versions the built parts would have from the sources now (the job's and the agent's): an installed one that differs is stale. */
export function flinkBuiltVersions(): Record<string, string> {
  return { 'flink-job': builtVersion('job'), 'flink-agent': builtVersion('agent') };
}

/** A project's built version: `src-` and the start of its sources' sha256. */
function builtVersion(project: 'job' | 'agent'): string {
  return `src-${mavenSourceHash(project).slice(0, 16)}`;
}

/** The Flink job (engine/flink/job); its version is the sha256 of its pom.xml and sources. */
function job(prev: Component | undefined, log: (l: string) => void): Promise<Component> {
  return mavenJar(
    'job',
    {
      name: 'flink-job',
      jar: FLINK_JOB_JAR,
      version: builtVersion('job'),
      sources: jobSources(),
      mvnArgs: [`-Dflink.version=${FLINK_PINS.flink}`, `-Dkafka.connector.version=${FLINK_PINS.kafkaConnector}`],
      what: 'the Flink job',
    },
    prev,
    log,
  );
}

/**
 * The fault-point agent (engine/flink/agent: ByteBuddy, pinned in its pom, shaded into one
 * jar with a Premain-Class), built like the job without its tests; its version is the
 * sha256 of pom.xml and src/main/, so an edited agent (a new mutant's advice included) is
 * rebuilt. Its MiniCluster integration test needs no rig and runs with the unit tests
 * instead (test/unit/engine/flink/fault-points.agent.test.ts: `mvn verify` on a copy of the project).
 */
function agent(prev: Component | undefined, log: (l: string) => void): Promise<Component> {
  return mavenJar(
    'agent',
    {
      name: 'flink-agent',
      jar: FLINK_AGENT_JAR,
      version: builtVersion('agent'),
      sources: mavenSources('agent'),
      mvnArgs: ['-Dmaven.test.skip=true', `-Dflink.version=${FLINK_PINS.flink}`],
      what: 'the Flink fault-point agent',
    },
    prev,
    log,
  );
}

/**
 * Installs (or finds in place) Flink's parts one after the other, each a step of its own (its
 * component's name, so `rig install` shows each one's progress and time); `old` gives the
 * previous manifest's entry by name.
 */
export async function installFlink(old: (name: string) => Component | undefined, step: ComponentStep): Promise<Component[]> {
  return [
    await step('flink', (note) => flinkLib(old('flink'), note)),
    await step('flink-s3-fs-hadoop', (note) => s3Plugin(old('flink-s3-fs-hadoop'), note)),
    await step('flink-job', (note) => job(old('flink-job'), note)),
    await step('flink-agent', (note) => agent(old('flink-agent'), note)),
  ];
}
