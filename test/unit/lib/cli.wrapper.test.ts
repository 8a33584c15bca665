/**
 * The ./clink-qual wrapper's first run of a command that installs the rig's parts (smoke,
 * rig install, test without --unit): it starts MinIO's build (rig/build-minio.sh --start) in
 * the background before npm ci, says so in one line, and hands the build's id to the CLI
 * (CLINK_QUAL_MINIO_BUILD_ID), which `rig install` adopts; any other command, and any later
 * run, starts nothing. Run on copies of the wrapper in temporary directories (a probe CLI,
 * a package npm ci installs without the network) with a fake go (test/helpers/fake-tools.ts),
 * never on this checkout's own wrapper.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { repoRoot } from '../../../lib/paths.ts';
import { PINS } from '../../../rig/install.ts';
import { fakeTools } from '../../helpers/fake-tools.ts';

const tools = fakeTools();
const root = mkdtempSync(path.join(os.tmpdir(), 'cq-wrapper-minio-'));
t.teardown(() => {
  tools.remove();
  rmSync(root, { recursive: true, force: true });
});

/** A fresh checkout-like probe: the wrapper, the build script and its pin, a CLI that prints its arguments and the build id it was handed. */
function probe(name: string): string {
  const d = path.join(root, name);
  mkdirSync(path.join(d, 'bin'), { recursive: true });
  mkdirSync(path.join(d, 'rig'));
  cpSync(path.join(repoRoot, 'clink-qual'), path.join(d, 'clink-qual'));
  for (const f of ['build-minio.sh', 'minio.pin']) cpSync(path.join(repoRoot, 'rig', f), path.join(d, 'rig', f));
  writeFileSync(path.join(d, 'bin', 'clink-qual.ts'), "console.log('ran', process.argv.slice(2).join(' '), 'build=' + (process.env.CLINK_QUAL_MINIO_BUILD_ID ?? ''))\n");
  const pkg = { name: 'cq-wrapper-probe', version: '1.0.0', scripts: { test: 'node bin/clink-qual.ts test' } };
  writeFileSync(path.join(d, 'package.json'), JSON.stringify(pkg));
  writeFileSync(path.join(d, 'package-lock.json'), JSON.stringify({ name: pkg.name, version: pkg.version, lockfileVersion: 3, requires: true, packages: { '': pkg } }));
  return d;
}

const cache = path.join(root, 'cache');
const minioBin = path.join(cache, `minio-${PINS.minio}`, 'minio');

/** Runs a probe's wrapper through `env -i` (tap's loader hooks stay out of the probe's plain-JS CLI). */
function wrapper(dir: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env = tools.env({ PATH: process.env.PATH }, { HOME: os.homedir(), TMPDIR: os.tmpdir(), CLINK_QUAL_CACHE: cache });
  const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  const r = spawnSync('env', ['-i', ...vars, path.join(dir, 'clink-qual'), ...args], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  // The CLI's line is the last (npm test prints its own header first).
  return { status: r.status, stdout: r.stdout.trim().split('\n').at(-1) ?? '', stderr: r.stderr };
}

async function until(cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

t.test('a first run of a command that does not install starts no build, nor does a later rig install', async (t) => {
  for (const args of [['rig', 'up'], ['test', '--unit'], ['smoke', '--help']]) {
    const d = probe(args.join('-'));
    const r = wrapper(d, args);
    t.equal(r.status, 0, r.stderr);
    t.equal(r.stdout.trim(), `ran ${args.join(' ')} build=`, `${args.join(' ')}: no build id`);
    t.notMatch(r.stderr, /MinIO/);
  }
  // The probe's packages bring no Node; one in node_modules/.bin makes its install complete.
  mkdirSync(path.join(root, 'rig-up', 'node_modules', '.bin'), { recursive: true });
  symlinkSync(process.execPath, path.join(root, 'rig-up', 'node_modules', '.bin', 'node'));
  const later = wrapper(path.join(root, 'rig-up'), ['rig', 'install']);
  t.equal(later.stdout.trim(), 'ran rig install build=', 'node_modules are in place: no first run, no background build');
  t.same(tools.calls('go'), []);
  t.notOk(existsSync(path.join(cache, `minio-${PINS.minio}`, 'build.log')));
});

t.test("a first run of rig install starts MinIO's build before npm ci and hands its id to the CLI", async (t) => {
  const d = probe('install');
  const r = wrapper(d, ['rig', 'install']);
  t.equal(r.status, 0, r.stderr);
  const id = /build=(\S+)$/.exec(r.stdout.trim())?.[1];
  t.match(id, /^build-\d{8}T\d{6}Z-\d+$/, 'the CLI got the build id');
  const lines = r.stderr.trim().split('\n');
  t.same(lines.length, 2, `two lines on stderr: ${r.stderr}`);
  t.equal(lines[0], `clink-qual: first run: building MinIO in the background meanwhile (log: ${path.join(cache, `minio-${PINS.minio}`)}/build.log)`);
  t.match(lines[1], /^clink-qual: first run: installing the npm packages/);
  await until(() => existsSync(minioBin));
  t.same(tools.calls('go'), [`go install github.com/minio/minio@${PINS.minio} CGO_ENABLED=0 GOFLAGS=-trimpath`]);
  const smoke = wrapper(probe('smoke'), ['smoke']);
  t.equal(smoke.stdout.trim(), 'ran smoke build=', 'the binary is in the cache: a first smoke starts no build');
});
