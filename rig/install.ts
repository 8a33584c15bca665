/**
 * `rig install`: everything the rig needs, installed idempotently into the cache
 * (lib/paths.ts cacheDir(), outside the repo), versions pinned here, and a manifest of
 * what is installed with each part's sha256 (the run's provenance copies it).
 *
 *   - Debian packages openssh-server, iptables, iproute2, faketime, sudo (apt-get, only when missing);
 *   - Apache Kafka (KRaft) as jars from Maven Central, resolved by Maven, run on the JDK;
 *   - MinIO built from source with `go install` at a pinned module version;
 *   - SeaweedFS (the second S3 store a campaign may name, `store: seaweedfs`) built from the
 *     pinned module the Go module proxy serves (`go mod download`, then `go build ./weed`:
 *     `go install` refuses the module because its go.mod has a replace directive);
 *   - Node: the project's pinned Node binary (node_modules/node), which the rig uploads
 *     to engine hosts.
 *
 * A second run finds every part in place (checked by its sha256 in the manifest) and
 * downloads nothing.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { QualError } from '../lib/errors.ts';
import { cacheDir, repoRoot } from '../lib/paths.ts';
import { installFlink } from './install-flink.ts';

export const PINS = {
  kafka: '4.1.1',
  log4j: '2.24.3',
  /** github.com/minio/minio has no semver tags the module proxy serves; this is its last community commit there (2026-02-12). */
  minio: 'v0.0.0-20260212201848-7aac2a2c5b7c',
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

async function debianPackages(log: (l: string) => void): Promise<Component[]> {
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
  return out;
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

async function minio(prev: Component | undefined, log: (l: string) => void): Promise<Component> {
  const dir = path.join(cacheDir(), `minio-${PINS.minio}`);
  const bin = path.join(dir, 'minio');
  if (prev && prev.version === PINS.minio && existsSync(bin) && (await sha256File(bin)) === prev.sha256) return prev;
  if (!existsSync(bin)) {
    if (!which('go')) throw new QualError('PRECONDITION', 'Go is needed to build MinIO from source (go install)');
    log(`building MinIO ${PINS.minio} with go install (a few minutes on 2 cores)`);
    mkdirSync(dir, { recursive: true });
    await sh('go', ['install', `github.com/minio/minio@${PINS.minio}`], { env: { GOBIN: dir, CGO_ENABLED: '0', GOFLAGS: '-trimpath', PATH: `${process.env.PATH}:/usr/local/go/bin` }, log });
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

/** Installs what is missing and rewrites the manifest. Returns it with what was done. */
/**
 * Installs (or checks) every part the rig needs. SeaweedFS, the second store, is built only
 * when asked (`stores` names it: `rig install --store seaweedfs`, or a rig brought up on it,
 * storeComponent) or when an earlier install built it: its cold build takes several minutes
 * and most runs never use it.
 */
export async function install(log: (l: string) => void = () => {}, opts: { stores?: readonly string[] } = {}): Promise<{ manifest: Manifest; changed: string[] }> {
  mkdirSync(cacheDir(), { recursive: true });
  let prev: Manifest | undefined;
  try {
    prev = readManifest();
  } catch {
    prev = undefined;
  }
  const old = (n: string) => prev?.components.find((c) => c.name === n);
  const components: Component[] = [];
  components.push(...(await debianPackages(log)));
  components.push(await kafka(old('kafka'), log));
  components.push(await minio(old('minio'), log));
  if (old('seaweedfs') || opts.stores?.includes('seaweedfs')) components.push(await seaweedfs(old('seaweedfs'), log));
  components.push(await node(old('node')));
  // Apache Flink for the Flink engine plug (engine/flink/): jars, the S3 plugin, the job.
  components.push(...(await installFlink(old, log)));
  const changed = components.filter((c) => JSON.stringify(c) !== JSON.stringify(old(c.name))).map((c) => c.name);
  const manifest: Manifest = { installedAt: changed.length || !prev ? new Date().toISOString() : prev.installedAt, components };
  writeFileSync(manifestPath(), JSON.stringify(manifest, null, 2) + '\n');
  return { manifest, changed };
}
