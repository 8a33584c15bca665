/**
 * rig/install.ts install(): the parts run side by side in lanes, each with its start, its end
 * and its time, and a summary; Maven's parts one at a time; a failing lane lets the others
 * finish before its error is thrown; Flink's parts only when asked (or already installed), and
 * installForEngine asks for them on Flink's first use only. Run with fake go, mvn, java and apt-get
 * (test/helpers/fake-tools.ts) in a temporary cache: nothing is fetched or built.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { QualError } from '../../../lib/errors.ts';
import { install, installForEngine, manifestPath, PINS, readManifest } from '../../../rig/install.ts';
import { flinkBuiltVersions } from '../../../rig/install-flink.ts';
import { APT_PART, PartsReady } from '../../../rig/parts-ready.ts';
import { fakeTools } from '../../helpers/fake-tools.ts';

const tools = fakeTools();
const saved = { ...process.env };
const STEERING = ['FAKE_GO_AWAIT', 'FAKE_GO_STARTED', 'FAKE_MVN_AWAIT', 'FAKE_MVN_STARTED', 'FAKE_GO_FAIL'];
t.teardown(() => {
  for (const k of ['PATH', 'FAKE_TOOLS_DIR', 'CLINK_QUAL_CACHE', 'CLINK_QUAL_MINIO_BUILD_ID', ...STEERING]) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  tools.remove();
});
Object.assign(process.env, tools.env({ PATH: saved.PATH }));
delete process.env.CLINK_QUAL_MINIO_BUILD_ID;

function freshCache(t: { teardown(fn: () => void): void }): string {
  const cache = mkdtempSync(path.join(os.tmpdir(), 'cq-install-lanes-'));
  process.env.CLINK_QUAL_CACHE = cache;
  for (const k of STEERING) delete process.env[k];
  t.teardown(() => rmSync(cache, { recursive: true, force: true }));
  return cache;
}

const FLINK_PARTS = ['flink', 'flink-s3-fs-hadoop', 'flink-job', 'flink-agent'];
const PARTS = ['apt packages', 'kafka', 'minio', 'node', ...FLINK_PARTS];

t.test('the Maven lane and the Go lane run at once; each part starts, ends with its time; a summary closes', async (t) => {
  freshCache(t);
  // go waits until mvn has started and mvn until go has: only lanes that overlap get through.
  Object.assign(process.env, {
    FAKE_GO_STARTED: tools.file('go-started'),
    FAKE_MVN_AWAIT: tools.file('go-started'),
    FAKE_MVN_STARTED: tools.file('mvn-started'),
    FAKE_GO_AWAIT: tools.file('mvn-started'),
  });
  const lines: string[] = [];
  const { manifest, changed } = await install((l) => lines.push(l), { engines: ['flink'] });
  t.same(tools.calls().filter((l) => /timed out|overlap/.test(l)), [], 'no tool waited in vain; never two Maven at once');
  t.same(
    manifest.components.map((c) => c.name),
    [...PINS.debianPackages, 'kafka', 'minio', 'node', 'flink', 'flink-s3-fs-hadoop', 'flink-job', 'flink-agent'],
    'the manifest keeps its order whatever order the parts end in',
  );
  t.same(changed, manifest.components.map((c) => c.name), 'a first install: every component is new');
  for (const part of PARTS) {
    t.ok(lines.includes(`${part}: start`), `${part} says when it starts`);
    const end = lines.filter((l) => l.startsWith(`${part}: `) && / \(\d+\.\d s\)$/.test(l));
    t.equal(end.length, 1, `${part} ends once, with its time`);
    if (part !== 'apt packages') t.match(end[0], new RegExp(`^${part}: installed \\(`));
  }
  t.ok(lines.indexOf('minio: start') < lines.findIndex((l) => /^kafka: installed/.test(l)), 'minio started before kafka ended');
  t.ok(lines.includes(`kafka: fetching Apache Kafka 4.1.1 and its dependencies from Maven Central`), "a part's notes come under its name");
  t.match(lines.at(-1), new RegExp(`^done in \\d+\\.\\d s: ${PARTS.map((p) => `${p} \\d+\\.\\d s`).join(', ')}$`));
  t.ok(existsSync(manifestPath()));

  const mvn = tools.calls('mvn').length;
  const go = tools.calls('go').length;
  const again: string[] = [];
  const second = await install((l) => again.push(l));
  t.same(second.changed, [], 'a second install changes nothing');
  t.equal(tools.calls('mvn').length, mvn, 'and runs no Maven');
  t.equal(tools.calls('go').length, go, 'and no go');
  for (const part of PARTS.filter((p) => p !== 'apt packages')) t.ok(again.some((l) => new RegExp(`^${part}: in place \\(\\d+\\.\\d s\\)$`).test(l)), `${part}: in place`);
});

t.test('ready: each part as it ends, before the install ends; what install did not finish fails its waiters', async (t) => {
  freshCache(t);
  // go (MinIO's build) waits until the test has seen Kafka, Node and the Debian packages ready.
  process.env.FAKE_GO_AWAIT = tools.file('others-seen');
  const ready = new PartsReady();
  let ended = false;
  const installing = install(() => {}, { ready }).finally(() => (ended = true));
  const kafka = await ready.component('kafka');
  const node = await ready.component('node');
  t.equal(await ready.wait(APT_PART), undefined, 'the Debian packages: ready, with no component');
  t.notOk(ended, 'all three while MinIO still builds');
  writeFileSync(tools.file('others-seen'), '');
  const minio = await ready.component('minio');
  const { manifest } = await installing;
  t.same([kafka, node, minio], ['kafka', 'node', 'minio'].map((n) => manifest.components.find((c) => c.name === n)), "the components are the manifest's");
  t.same(tools.calls().filter((l) => /timed out/.test(l)), [], 'go did not wait in vain');
  await t.rejects(ready.wait('seaweedfs'), /rig install ended without seaweedfs/, 'a part not asked for: an error, once the install ended');

  freshCache(t);
  process.env.FAKE_GO_FAIL = 'no route to proxy.golang.org';
  const failing = new PartsReady();
  const waiting = failing.component('minio');
  await t.rejects(install(() => {}, { ready: failing }));
  await t.rejects(waiting, /go: no route to proxy\.golang\.org/, "a waiter for the failed part gets the install's error");
  t.ok(await failing.component('kafka'), 'a part that ended before the failure stays ready');
});

t.test('a failing lane: the other lanes finish, then its error is thrown; the summary names the failed part', async (t) => {
  freshCache(t);
  process.env.FAKE_GO_FAIL = 'no route to proxy.golang.org';
  const lines: string[] = [];
  const err = await install((l) => lines.push(l), { engines: ['flink'] }).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err instanceof QualError && err.code === 'INSTALL_FAILED', 'INSTALL_FAILED');
  t.match((err as Error).message, 'go: no route to proxy.golang.org');
  t.ok(lines.some((l) => /^minio: failed \(\d+\.\d s\)$/.test(l)));
  t.ok(lines.some((l) => /^flink-agent: installed \(/.test(l)), 'the Maven lane ran to its end');
  t.match(lines.at(-1), /^failed after \d+\.\d s: .*minio \d+\.\d s \(failed\)/);
  t.notOk(existsSync(manifestPath()), 'no manifest from a failed install');
});

t.test("a plain install leaves Flink out; --engine flink adds it; later plain installs keep it checked", async (t) => {
  freshCache(t);
  const lines: string[] = [];
  const before = tools.calls('mvn').length;
  const first = await install((l) => lines.push(l));
  t.same(first.manifest.components.map((c) => c.name), [...PINS.debianPackages, 'kafka', 'minio', 'node'], 'only what every run needs');
  const mvnCalls = tools.calls('mvn').slice(before);
  t.equal(mvnCalls.length, 1, "one Maven run: Kafka's");
  t.match(mvnCalls[0], /\(in kafka-/, 'in the Kafka directory; none fetches Flink\'s jars or builds its job or agent');
  for (const part of FLINK_PARTS) t.notOk(lines.includes(`${part}: start`), `${part} does not run`);
  t.match(lines.at(-1), /^done in \d+\.\d s: apt packages \d+\.\d s, kafka \d+\.\d s, minio \d+\.\d s, node \d+\.\d s$/, 'the summary names only the parts that ran');

  const withFlink = await install(() => {}, { engines: ['flink'] });
  t.same(withFlink.changed, FLINK_PARTS, 'asked for: Flink\'s four parts installed, nothing else changed');
  const mvn = tools.calls('mvn').length;
  const again: string[] = [];
  const later = await install((l) => again.push(l));
  t.same(later.manifest.components.map((c) => c.name), withFlink.manifest.components.map((c) => c.name), 'a later plain install keeps Flink in the manifest');
  t.same(later.changed, []);
  t.equal(tools.calls('mvn').length, mvn, 'found in place: no Maven');
  for (const part of FLINK_PARTS) t.ok(again.some((l) => new RegExp(`^${part}: in place \\(`).test(l)), `${part} checked: in place`);
});

t.test('--all installs the optional parts: Flink and SeaweedFS', async (t) => {
  freshCache(t);
  const lines: string[] = [];
  // The fake go knows only `go install`, so SeaweedFS's go mod download fails: that it was tried is what shows it was asked for.
  const err = await install((l) => lines.push(l), { all: true }).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err instanceof QualError, 'seaweedfs was built (and failed on the fake go)');
  t.ok(lines.includes('seaweedfs: start'), 'seaweedfs ran');
  for (const part of FLINK_PARTS) t.ok(lines.some((l) => new RegExp(`^${part}: installed \\(`).test(l)), `${part} installed`);
});

t.test("installForEngine: Flink's parts on its first use, then nothing; Clink needs none; nothing installed is an error", async (t) => {
  freshCache(t);
  await t.rejects(installForEngine('flink'), /nothing is installed yet/, 'no manifest: an error naming rig install');
  await install(() => {});
  const mvn = tools.calls('mvn').length;
  const clink = await installForEngine('clink');
  t.equal(tools.calls('mvn').length, mvn, 'Clink: nothing installed');
  t.notOk(clink.components.some((c) => c.name.startsWith('flink')), 'and no Flink component in its manifest');
  const lines: string[] = [];
  const flink = await installForEngine('flink', (l) => lines.push(l));
  t.match(lines[0], /^engine flink: first use on this machine, installing its parts \(flink, flink-s3-fs-hadoop, flink-job, flink-agent\)/);
  for (const part of FLINK_PARTS) {
    t.ok(lines.includes(`${part}: start`), `${part}: the same progress lines as rig install`);
    t.ok(flink.components.some((c) => c.name === part), `${part} in the manifest returned`);
  }
  t.same(readManifest().components.map((c) => c.name), flink.components.map((c) => c.name), 'and written');
  const calls = tools.calls('mvn').length;
  const quiet: string[] = [];
  const second = await installForEngine('flink', (l) => quiet.push(l));
  t.same(quiet, [], 'the second use installs nothing and says nothing');
  t.equal(tools.calls('mvn').length, calls, 'no Maven');
  t.same(second, flink);

  // The agent's sources changed since (the manifest names an older version): the run rebuilds it before deploying.
  const m = readManifest();
  writeFileSync(manifestPath(), JSON.stringify({ ...m, components: m.components.map((c) => (c.name === 'flink-agent' ? { ...c, version: 'src-0000000000000000' } : c)) }));
  const rebuilt: string[] = [];
  const third = await installForEngine('flink', (l) => rebuilt.push(l));
  t.match(rebuilt[0], /^engine flink: flink-agent changed since the last install, rebuilding/);
  t.ok(tools.calls('mvn').length > calls, 'Maven ran again');
  t.equal(third.components.find((c) => c.name === 'flink-agent')?.version, flinkBuiltVersions()['flink-agent'], "the agent is the sources' own again");
});
