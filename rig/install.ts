/**
 * `rig install`: everything the rig needs, installed idempotently into the cache
 * (lib/paths.ts cacheDir(), outside the repo), versions pinned here, and a manifest of
 * what is installed with each part's sha256 (the run's provenance copies it).
 *
 *   - Debian packages openssh-server, iptables, iproute2, faketime, sudo (apt-get, only when missing);
 *   - Apache Kafka (KRaft) as jars from Maven Central, resolved by Maven, run on the JDK;
 *   - MinIO built from source with `go install` at a pinned module version (rig/minio.pin),
 *     by rig/build-minio.sh, the one build command: the ./clink-qual wrapper starts it in the
 *     background on a first run, before `npm ci`, and this install then waits for that build
 *     and adopts its binary (CLINK_QUAL_MINIO_BUILD_ID names it);
 *   - SeaweedFS (the second S3 store a campaign may name, `store: seaweedfs`) built from the
 *     pinned module the Go module proxy serves (`go mod download`, then `go build ./weed`:
 *     `go install` refuses the module because its go.mod has a replace directive);
 *   - Node: the project's pinned Node binary (node_modules/node), which the rig uploads
 *     to engine hosts;
 *   - Apache Flink's parts for the Flink engine plug (rig/install-flink.ts), only when asked
 *     (`--engine flink`, `--all`), on a Flink run's first use (installForEngine), or when an
 *     earlier install put them there (rig/install-plan.ts decides): the Clink runs never need them.
 *
 * A second run finds every part in place (checked by its sha256 in the manifest) and
 * downloads nothing. The parts run side by side in three lanes (the Debian packages; Maven's
 * parts, Kafka then Flink, one Maven at a time since its local repository is not safe for
 * two; the Go builds, MinIO then SeaweedFS), and each reports its start, its progress and
 * its time (rig/install-progress.ts).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { QualError } from '../lib/errors.ts';
import { cacheDir, repoRoot } from '../lib/paths.ts';
import { flinkBuiltVersions, installFlink } from './install-flink.ts';
import { installPlan, missingEngineComponents, staleEngineComponents, type InstallAsk } from './install-plan.ts';
import { InstallProgress, type ProgressClock } from './install-progress.ts';
import { APT_PART, type PartsReady } from './parts-ready.ts';

/** The build command of the pinned MinIO; the ./clink-qual wrapper starts it too. */
export const MINIO_BUILD_SCRIPT = path.join(repoRoot, 'rig', 'build-minio.sh');

/** The file that pins MinIO's module version, read here and by rig/build-minio.sh. */
export const MINIO_PIN_FILE = path.join(repoRoot, 'rig', 'minio.pin');

/** A pin file's version: its first line that is neither blank nor a comment (#), as rig/build-minio.sh reads it. */
export function readPinFile(file: string): string {
  const pin = readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '' && !l.startsWith('#'));
  if (!pin) throw new QualError('INTERNAL', `${file} names no version`);
  return pin;
}

export const PINS = {
  kafka: '4.1.1',
  log4j: '2.24.3',
  /** github.com/minio/minio at its last community commit the module proxy serves: rig/minio.pin, which the build script reads too. */
  minio: readPinFile(MINIO_PIN_FILE),
  /** github.com/seaweedfs/seaweedfs as the module proxy serves it: a pseudo-version of its 2026-11-09 commit 7506e5f91cd6. */
  seaweedfs: 'v0.0.0-20261109003541-7506e5f91cd6',
  // faketime brings libfaketime: the controlled wall clock of clock-step faults (rig/clock.ts).
  // sudo: the bare-host inventory test's hosts (test/helpers/bare-hosts.ts) log in as a user with passwordless sudo, as cloud VMs do.
  debianPackages: ['openssh-server', 'iptables', 'iproute2', 'faketime', 'sudo'],
} as const;

export interface Component {
  name: string;
  version: string;
  /** A directory (kafka: its libs) or a file (minio, seaweedfs, node). */
  path: string;
  sha256: string;
}

export interface Manifest {
  installedAt: string;
  components: Component[];
}

export function manifestPath(): string {
  return path.join(cacheDir(), 'manifest.json');
}

export function readManifest(): Manifest {
  const p = manifestPath();
  if (!existsSync(p)) throw new QualError('PRECONDITION', `nothing is installed yet (${p} is missing). Run 'clink-qual rig install'.`);
  return JSON.parse(readFileSync(p, 'utf8')) as Manifest;
}

export function component(manifest: Manifest, name: string): Component {
  const c = manifest.components.find((x) => x.name === name);
  if (!c) throw new QualError('PRECONDITION', `component ${name} is not in the install manifest. Run 'clink-qual rig install'.`);
  return c;
}

export async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** sha256 over the sorted (name, sha256) list of the files in a directory. */
export async function sha256Dir(dir: string): Promise<string> {
  const h = createHash('sha256');
  for (const name of readdirSync(dir).sort()) h.update(`${name} ${await sha256File(path.join(dir, name))}\n`);
  return h.digest('hex');
}

/** Runs an install step; fails with INSTALL_FAILED and the last 4000 characters of its output. */
export function sh(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; log?: (l: string) => void }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const keep = (d: Buffer) => {
      tail = (tail + d.toString()).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err) => reject(new QualError('INSTALL_FAILED', `${cmd}: ${err.message}`)));
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new QualError('INSTALL_FAILED', `${cmd} ${args.join(' ')} exited ${code}:\n${tail}`));
    });
  });
}

function which(bin: string): boolean {
  const dirs = (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/sbin', '/usr/local/go/bin']);
  return dirs.some((d) => existsSync(path.join(d, bin)));
}

/** The Debian packages, installed when their binaries are missing; returns them and what apt-get installed. */
async function debianPackages(log: (l: string) => void): Promise<{ components: Component[]; installed: string[] }> {
  const need: Record<string, string> = { 'openssh-server': 'sshd', iptables: 'iptables', iproute2: 'ip', faketime: 'faketime', sudo: 'sudo' };
  const missing = PINS.debianPackages.filter((p) => !which(need[p]!));
  if (missing.length) {
    if (process.getuid?.() !== 0) throw new QualError('PRECONDITION', `missing packages ${missing.join(', ')}; installing them needs root`);
    log(`apt-get install ${missing.join(' ')}`);
    await sh('apt-get', ['update', '-qq'], { log });
    await sh('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { env: { DEBIAN_FRONTEND: 'noninteractive' }, log });
  }
  const out: Component[] = [];
  for (const p of PINS.debianPackages) {
    const version = await new Promise<string>((resolve) => {
      const c = spawn('dpkg-query', ['-W', '-f=${Version}', p]);
      let s = '';
      c.stdout.on('data', (d: Buffer) => (s += d));
      c.on('close', () => resolve(s.trim() || 'unknown'));
      c.on('error', () => resolve('unknown'));
    });
    const bin = ['/usr/sbin', '/sbin', '/usr/bin', '/bin'].map((d) => path.join(d, need[p]!)).find((f) => existsSync(f));
    out.push({ name: p, version, path: bin ?? need[p]!, sha256: bin ? await sha256File(bin) : '' });
  }
  return { components: out, installed: missing };
}

async function kafka(prev: Component | undefined, log: (l: string) => void): Promise<Component> {
  const dir = path.join(cacheDir(), `kafka-${PINS.kafka}`);
  const libs = path.join(dir, 'libs');
  if (prev && prev.version === PINS.kafka && existsSync(libs) && (await sha256Dir(libs)) === prev.sha256) return prev;
  if (!which('mvn')) throw new QualError('PRECONDITION', 'Maven (mvn) is needed to fetch Apache Kafka from Maven Central');
  if (!which('java')) throw new QualError('PRECONDITION', 'a JDK (java, 17 or later) is needed to run Apache Kafka');
  log(`fetching Apache Kafka ${PINS.kafka} and its dependencies from Maven Central`);
  mkdirSync(dir, { recursive: true });
  const pom = `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>clink-qual</groupId><artifactId>kafka-runtime</artifactId><version>1</version><packaging>pom</packaging>
<dependencies>
<dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>${PINS.kafka}</version></dependency>
<dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>${PINS.log4j}</version></dependency>
<dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>${PINS.log4j}</version></dependency>
</dependencies></project>\n`;
  writeFileSync(path.join(dir, 'pom.xml'), pom);
  const tmp = path.join(dir, 'libs.tmp');
  rmSync(tmp, { recursive: true, force: true });
  await sh('mvn', ['-q', '-B', 'dependency:copy-dependencies', `-DoutputDirectory=${tmp}`, '-DincludeScope=runtime'], { cwd: dir, log });
  rmSync(libs, { recursive: true, force: true });
  renameSync(tmp, libs);
  return { name: 'kafka', version: PINS.kafka, path: libs, sha256: await sha256Dir(libs) };
}

/** The cache directory of the pinned MinIO build (rig/build-minio.sh --where names the same); its binary is `minio` inside it. */
export function minioDir(): string {
  return path.join(cacheDir(), `minio-${PINS.minio}`);
}

/** Runs rig/build-minio.sh with `args`, passing each line it prints to `log`; resolves with its exit code. */
function runMinioBuild(args: string[], log: (l: string) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [MINIO_BUILD_SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let pending = '';
    const lines = (d: Buffer) => {
      pending += d.toString();
      const all = pending.split('\n');
      pending = all.pop() ?? '';
      for (const l of all) if (l.trim()) log(l);
    };
    child.stdout.on('data', lines);
    child.stderr.on('data', lines);
    child.on('error', (err) => reject(new QualError('INSTALL_FAILED', `bash ${MINIO_BUILD_SCRIPT}: ${err.message}`)));
    child.on('close', (code) => {
      if (pending.trim()) log(pending);
      resolve(code ?? 1);
    });
  });
}

/** The last `n` lines of a file, or a note that it is missing. */
function lastLines(file: string, n: number): string {
  if (!existsSync(file)) return `(${file} is missing)`;
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n');
}

/**
 * What the log of build `id` says of it when it has ended well: how long it took, from its
 * first line's start and its last line's end (rig/build-minio.sh writes both); undefined when
 * the log is another build's or does not say.
 */
export function finishedBuildSeconds(buildLog: string, id: string): number | undefined {
  if (!existsSync(buildLog)) return undefined;
  const lines = readFileSync(buildLog, 'utf8').trimEnd().split('\n');
  const name = id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const start = new RegExp(`^${name}: go install .*\\(started (\\S+)\\)$`).exec(lines[0] ?? '')?.[1];
  const end = new RegExp(`^${name}: built .* \\((\\S+)\\)$`).exec(lines.at(-1) ?? '')?.[1];
  if (!start || !end) return undefined;
  return (Date.parse(end) - Date.parse(start)) / 1000;
}

/**
 * MinIO at the pinned version, built by rig/build-minio.sh when its binary is missing. When
 * the ./clink-qual wrapper started that build in the background (CLINK_QUAL_MINIO_BUILD_ID
 * names it), this waits for it and adopts its binary, and its failure is an error with its
 * log rather than a second build; a build under way by another install is waited for too.
 */
export async function minio(prev: Component | undefined, log: (l: string) => void): Promise<Component> {
  const dir = minioDir();
  const bin = path.join(dir, 'minio');
  if (prev && prev.version === PINS.minio && existsSync(bin) && (await sha256File(bin)) === prev.sha256) return prev;
  const adopt = process.env.CLINK_QUAL_MINIO_BUILD_ID;
  const buildLog = path.join(dir, 'build.log');
  if (existsSync(bin) && adopt) {
    const took = finishedBuildSeconds(buildLog, adopt);
    if (took !== undefined) log(`built in the background by ./clink-qual (${adopt}) in ${took} s, before this part began`);
  }
  if (!existsSync(bin)) {
    if (adopt) {
      log(`waiting for the MinIO build ./clink-qual started in the background (${adopt}; its log: ${buildLog})`);
    } else {
      if (!which('go')) throw new QualError('PRECONDITION', 'Go is needed to build MinIO from source (go install)');
      log(`building MinIO ${PINS.minio} with go install (a few minutes on 2 cores; its log: ${buildLog})`);
    }
    const code = await runMinioBuild(adopt ? ['--adopt', adopt] : [], log);
    if (code === 3) {
      throw new QualError(
        'INSTALL_FAILED',
        `the MinIO build ./clink-qual started in the background (${adopt}) failed; its log, ${buildLog}, ends:\n${lastLines(buildLog, 20)}\nRun the command again to build MinIO anew.`,
      );
    }
    if (code !== 0 || !existsSync(bin)) throw new QualError('INSTALL_FAILED', `the MinIO build (rig/build-minio.sh) failed (exit ${code}); its log, ${buildLog}, ends:\n${lastLines(buildLog, 20)}`);
  }
  return { name: 'minio', version: PINS.minio, path: bin, sha256: await sha256File(bin) };
}

/** The go tool's environment for a build: Go's own bin on PATH, no cgo, no local paths in the binary. */
function goEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { CGO_ENABLED: '0', PATH: `${process.env.PATH}:/usr/local/go/bin`, ...extra };
}

/** Runs a command and returns its standard output (for `go mod download -json`). */
function output(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    child.on('error', (e) => reject(new QualError('INSTALL_FAILED', `${cmd}: ${e.message}`)));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new QualError('INSTALL_FAILED', `${cmd} ${args.join(' ')} exited ${code}:\n${err}${out.slice(-2000)}`))));
  });
}

/** The cache directory of the pinned SeaweedFS build; its binary is `weed` inside it. */
export function seaweedfsDir(): string {
  return path.join(cacheDir(), `seaweedfs-${PINS.seaweedfs}`);
}

/**
 * SeaweedFS at the pinned module version, built once into the cache. The module cache's copy
 * of the source is read-only, so the build runs in a writable copy of it (removed after);
 * GOFLAGS=-mod=mod lets go resolve the module's own replace directive there.
 */
export async function seaweedfs(prev: Component | undefined, log: (l: string) => void): Promise<Component> {
  const dir = seaweedfsDir();
  const bin = path.join(dir, 'weed');
  if (prev && prev.version === PINS.seaweedfs && existsSync(bin) && (await sha256File(bin)) === prev.sha256) return prev;
  if (!existsSync(bin)) {
    if (!which('go')) throw new QualError('PRECONDITION', 'Go is needed to build SeaweedFS from source (go mod download, go build)');
    log(`building SeaweedFS ${PINS.seaweedfs} from the Go module proxy (several minutes on 2 cores)`);
    mkdirSync(dir, { recursive: true });
    const module = `github.com/seaweedfs/seaweedfs@${PINS.seaweedfs}`;
    const info = JSON.parse(await output('go', ['mod', 'download', '-json', module], goEnv())) as { Dir?: string; Error?: string };
    if (!info.Dir) throw new QualError('INSTALL_FAILED', `go mod download ${module}: ${info.Error ?? 'no module directory'}`);
    const src = path.join(dir, 'src.tmp');
    rmSync(src, { recursive: true, force: true });
    await sh('cp', ['-r', info.Dir, src], { log });
    await sh('chmod', ['-R', 'u+w', src], { log });
    const tmp = `${bin}.tmp`;
    try {
      await sh('go', ['build', '-trimpath', '-o', tmp, './weed'], { cwd: src, env: goEnv({ GOFLAGS: '-mod=mod -buildvcs=false' }), log });
      renameSync(tmp, bin);
    } finally {
      rmSync(src, { recursive: true, force: true });
      rmSync(tmp, { force: true });
    }
  }
  return { name: 'seaweedfs', version: PINS.seaweedfs, path: bin, sha256: await sha256File(bin) };
}

/**
 * A store's binary from the manifest; SeaweedFS is built (and added to the manifest) on its
 * first use, since `rig install` builds it only when asked.
 */
export async function storeComponent(name: string, log: (l: string) => void = () => {}): Promise<Component> {
  const manifest = readManifest();
  const have = manifest.components.find((c) => c.name === name);
  if (have || name !== 'seaweedfs') return component(manifest, name);
  const built = await seaweedfs(undefined, log);
  const now = readManifest();
  now.components = [...now.components.filter((c) => c.name !== name), built];
  writeFileSync(manifestPath(), JSON.stringify(now, null, 2) + '\n');
  return built;
}

/**
 * The Node binary engine hosts run: this checkout's pinned one. The cache (and its manifest) is
 * shared by every clone on the machine, so a manifest entry may name another clone's binary,
 * gone since; callers pass the manifest's entry only to reuse its hash when it is this one.
 */
export async function node(prev: Component | undefined): Promise<Component> {
  const bin = path.join(repoRoot, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(bin)) throw new QualError('PRECONDITION', `the pinned Node binary is missing (${bin}); run 'npm ci' first`);
  const version = (JSON.parse(readFileSync(path.join(repoRoot, 'node_modules', 'node', 'package.json'), 'utf8')) as { version: string }).version;
  if (prev && prev.version === version && prev.path === bin) return prev;
  return { name: 'node', version, path: bin, sha256: await sha256File(bin) };
}

/** Runs one install part that yields one component, under its name (InstallProgress.part); its notes go to `note`. */
export type ComponentStep = (name: string, run: (note: (l: string) => void) => Promise<Component>) => Promise<Component>;

/**
 * Installs (or checks) every part the rig needs and rewrites the manifest; returns it with
 * the names of the components that changed. The optional parts (rig/install-plan.ts) are
 * installed only when `ask` names them or an earlier install put them there: SeaweedFS, the
 * second store (`stores`: `rig install --store seaweedfs`, or a rig brought up on it,
 * storeComponent), whose cold build takes several minutes, and Flink's four parts (`engines`:
 * `rig install --engine flink`, or a Flink run's first use, installForEngine), about a minute
 * of Maven with warm caches and 170 MiB that Clink runs never read; `all` installs both.
 *
 * The parts run in lanes side by side: the Debian packages; Maven's parts (Kafka, then
 * Flink's, one Maven at a time: two on one local repository are not safe); the Go builds
 * (MinIO, then SeaweedFS); the Node binary. A lane stops at its first failure, the others run
 * on (a build that finishes is cached for the next run), and once all have ended the
 * failure is thrown (several: one error carrying all their messages). Each part's start, progress and time go to `log`, then a summary.
 * `ready` hears of each part as it ends, and of the install's end (rig/parts-ready.ts: smoke's rig up runs beside it).
 */
export async function install(
  log: (l: string) => void = () => {},
  opts: InstallAsk & { clock?: ProgressClock; ready?: PartsReady } = {},
): Promise<{ manifest: Manifest; changed: string[] }> {
  try {
    const r = await installParts(log, opts);
    opts.ready?.end();
    return r;
  } catch (err) {
    opts.ready?.end(err as Error);
    throw err;
  }
}

async function installParts(log: (l: string) => void, opts: InstallAsk & { clock?: ProgressClock; ready?: PartsReady }): Promise<{ manifest: Manifest; changed: string[] }> {
  mkdirSync(cacheDir(), { recursive: true });
  let prev: Manifest | undefined;
  try {
    prev = readManifest();
  } catch {
    prev = undefined;
  }
  const old = (n: string) => prev?.components.find((c) => c.name === n);
  const same = (c: Component) => JSON.stringify(c) === JSON.stringify(old(c.name));
  const progress = new InstallProgress(log, opts.clock);
  // Each part, as it ends, goes to `ready` (a rig up beside this install waits there).
  const step: ComponentStep = (name, run) =>
    progress.part(name, run, (c) => (same(c) ? 'in place' : 'installed')).then((c) => {
      opts.ready?.done(name, c);
      return c;
    });
  const plan = installPlan(opts, prev?.components.map((c) => c.name) ?? []);
  const [apt, maven, goBuilds, nodeBin] = await Promise.allSettled([
    progress
      .part(APT_PART, (note) => debianPackages(note), (r) => (r.installed.length ? `installed ${r.installed.join(', ')}` : 'all present'))
      .then((r) => {
        opts.ready?.done(APT_PART);
        return r;
      }),
    (async () => {
      const k = await step('kafka', (note) => kafka(old('kafka'), note));
      // Apache Flink for the Flink engine plug (engine/flink/): jars, the S3 plugin, the job, the agent.
      return { kafka: k, flink: plan.flink ? await installFlink(old, step) : [] };
    })(),
    (async () => {
      const m = await step('minio', (note) => minio(old('minio'), note));
      return plan.seaweedfs ? [m, await step('seaweedfs', (note) => seaweedfs(old('seaweedfs'), note))] : [m];
    })(),
    step('node', () => node(old('node'))),
  ]);
  log(progress.summary());
  if (apt.status === 'rejected' || maven.status === 'rejected' || goBuilds.status === 'rejected' || nodeBin.status === 'rejected') {
    const errors = [apt, maven, goBuilds, nodeBin].flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
    if (errors.length === 1) throw errors[0];
    throw new QualError(errors[0] instanceof QualError ? errors[0].code : 'INSTALL_FAILED', errors.map((e) => e.message).join('\n\n'));
  }
  const components: Component[] = [...apt.value.components, maven.value.kafka, ...goBuilds.value, nodeBin.value, ...maven.value.flink];
  const changed = components.filter((c) => !same(c)).map((c) => c.name);
  const manifest: Manifest = { installedAt: changed.length || !prev ? new Date().toISOString() : prev.installedAt, components };
  writeFileSync(manifestPath(), JSON.stringify(manifest, null, 2) + '\n');
  return { manifest, changed };
}

/**
 * The manifest with every component `engine` needs (rig/install-plan.ts ENGINE_COMPONENTS):
 * as it is when they are there (Clink needs none beyond the rig's own); otherwise, on the
 * engine's first use, `rig install` for it runs now, with its progress lines on `log`, and its
 * manifest is returned. Nothing installed at all is an error naming the command to run.
 */
export async function installForEngine(engine: string, log: (l: string) => void = () => {}, opts: { clock?: ProgressClock } = {}): Promise<Manifest> {
  const manifest = readManifest();
  const missing = missingEngineComponents(engine, manifest.components.map((c) => c.name));
  if (missing.length) {
    log(`engine ${engine}: first use on this machine, installing its parts (${missing.join(', ')}), as 'clink-qual rig install --engine ${engine}' would`);
    return (await install(log, { engines: [engine], ...opts })).manifest;
  }
  // Parts built from this repository (Flink's job and agent) must be the sources' own: an edited one is rebuilt before the run deploys it.
  const stale = engine === 'flink' ? staleEngineComponents(manifest.components, flinkBuiltVersions()) : [];
  if (!stale.length) return manifest;
  log(`engine ${engine}: ${stale.join(', ')} changed since the last install, rebuilding, as 'clink-qual rig install' would`);
  return (await install(log, { engines: [engine], ...opts })).manifest;
}
