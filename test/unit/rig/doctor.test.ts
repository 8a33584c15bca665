/**
 * doctor's pure parts (Java version, meminfo, ip output, the subnet clash, the manifest
 * against files in a temp dir, the rig state, smoke's downgrades), and one run of
 * `./clink-qual doctor --json` on this machine, whose structure is asserted.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { sha256Dir, sha256File } from '../../../rig/install.ts';
import {
  checkManifestFiles, checkoutNode, cidrOverlap, forSmoke, parseIpAddr, parseIpRoute, parseJavaMajor, parseMemAvailable, rigStateFrom, subnetClashes,
} from '../../../rig/doctor.ts';
import { repoRoot } from '../../../lib/paths.ts';

t.test('Java versions', async (t) => {
  t.equal(parseJavaMajor('openjdk version "17.0.13" 2024-10-15\nOpenJDK Runtime Environment'), 17);
  t.equal(parseJavaMajor('java version "1.8.0_392"'), 8);
  t.equal(parseJavaMajor('openjdk version "21" 2023-09-19'), 21);
  t.equal(parseJavaMajor('bash: java: command not found'), undefined);
});

t.test('MemAvailable', async (t) => {
  t.equal(parseMemAvailable('MemTotal:       24684000 kB\nMemFree:  100 kB\nMemAvailable:   2048 kB\n'), 2048 * 1024);
  t.equal(parseMemAvailable('MemTotal: 1 kB\n'), undefined);
});

t.test('subnet clash from ip output', async (t) => {
  const addr = [
    '1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever',
    '2: eth0    inet 10.231.0.77/16 brd 10.231.255.255 scope global eth0\\       valid_lft forever',
    '9: cq-br0    inet 10.231.0.1/24 brd 10.231.0.255 scope global cq-br0',
    '3: wg0    inet 192.168.4.2/24 scope global wg0',
  ].join('\n');
  const route = [
    'default via 192.168.4.1 dev wg0',
    '10.231.0.0/24 dev cq-br0 proto kernel scope link src 10.231.0.1',
    '10.0.0.0/8 via 192.168.4.1 dev wg0',
    'blackhole 10.231.0.128/25',
    '172.17.0.0/16 dev docker0 proto kernel scope link src 172.17.0.1 linkdown',
  ].join('\n');
  const nets = [...parseIpAddr(addr), ...parseIpRoute(route)];
  t.same(parseIpAddr(addr).map((n) => n.dev), ['lo', 'eth0', 'cq-br0', 'wg0']);
  const clashes = subnetClashes(nets).map((c) => `${c.source} ${c.cidr} ${c.dev}`);
  t.same(clashes, ['address 10.231.0.77/16 eth0', 'route 10.0.0.0/8 wg0', 'route 10.231.0.128/25 '], 'the rig bridge is not a clash; a wider or narrower overlap is');
  t.same(subnetClashes(parseIpAddr('2: eth0    inet 10.232.0.5/24 scope global eth0')), [], 'a neighbouring /24 does not clash');
  t.ok(cidrOverlap('10.231.0.5', '10.231.0.0/24'), 'a bare address is a /32');
  t.notOk(cidrOverlap('10.231.1.0/24', '10.231.0.0/24'));
  t.notOk(cidrOverlap('garbage', '10.231.0.0/24'));
});

t.test('the manifest against files on disk', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-doctor-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const bin = path.join(dir, 'minio');
  writeFileSync(bin, 'binary bytes');
  const libs = path.join(dir, 'libs');
  mkdirSync(libs);
  writeFileSync(path.join(libs, 'a.jar'), 'a');
  writeFileSync(path.join(libs, 'b.jar'), 'b');
  const manifest = {
    installedAt: '2026-01-01T00:00:00Z',
    components: [
      { name: 'minio', version: '1', path: bin, sha256: await sha256File(bin) },
      { name: 'kafka', version: '1', path: libs, sha256: await sha256Dir(libs) },
      { name: 'gone', version: '1', path: path.join(dir, 'nope'), sha256: 'ab' },
      { name: 'apt', version: '1', path: 'sshd', sha256: '' },
    ],
  };
  t.same((await checkManifestFiles(manifest)).map((c) => `${c.name}:${c.status}`), ['minio:ok', 'kafka:ok', 'gone:missing', 'apt:unpinned']);
  writeFileSync(bin, 'tampered');
  writeFileSync(path.join(libs, 'c.jar'), 'c');
  t.same((await checkManifestFiles(manifest)).map((c) => `${c.name}:${c.status}`).slice(0, 2), ['minio:mismatch', 'kafka:mismatch'], 'a changed file and an extra jar are caught');
});

t.test("the node entry is checked against this checkout's binary, not the path of the checkout that installed last", async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-doctor-node-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const here = path.join(dir, 'here-node');
  writeFileSync(here, 'node bytes');
  const manifest = {
    installedAt: '2026-01-01T00:00:00Z',
    components: [{ name: 'node', version: '24', path: '/removed/clone/node_modules/node/bin/node', sha256: await sha256File(here) }],
  };
  t.same(await checkManifestFiles(manifest, here), [{ name: 'node', path: here, status: 'ok' }], "the removed clone's path does not matter");
  writeFileSync(here, 'other node');
  t.same((await checkManifestFiles(manifest, here)).map((c) => c.status), ['mismatch'], "a different binary here is still caught");
  t.same((await checkManifestFiles(manifest, path.join(dir, 'absent'))).map((c) => c.status), ['missing']);
  t.equal(checkoutNode('/x'), '/x/node_modules/node/bin/node');
});

t.test('rig state and smoke downgrades', async (t) => {
  t.equal(rigStateFrom(false, [], []), 'down');
  t.equal(rigStateFrom(true, ['cq-store'], ['cq-br0']), 'up');
  t.equal(rigStateFrom(false, [], ['cq-br0']), 'leftovers');
  t.equal(rigStateFrom(true, [], []), 'leftovers');
  const r = forSmoke({
    ok: false,
    checks: [
      { name: 'cache', status: 'fail', detail: 'nothing installed yet', fix: 'rig install' },
      { name: 'root', status: 'ok', detail: 'root' },
    ],
  });
  t.equal(r.ok, true, 'a missing cache does not stop smoke');
  t.equal(r.checks[0]!.status, 'warn');
  const r2 = forSmoke({ ok: false, checks: [{ name: 'java', status: 'fail', detail: 'java not found' }] });
  t.equal(r2.ok, false, 'a missing JDK still stops smoke');
});

t.test('./clink-qual doctor --json on this machine', async (t) => {
  const r = spawnSync(path.join(repoRoot, 'clink-qual'), ['doctor', '--json'], { encoding: 'utf8', timeout: 60_000 });
  t.ok(r.status === 0 || r.status === 1, `exit 0 or 1 (got ${r.status}): ${r.stderr}`);
  const out = JSON.parse(r.stdout) as { ok: boolean; checks: { name: string; status: string; detail: string; fix?: string }[] };
  t.same(out.checks.map((c) => c.name), ['root', 'netns', 'iptables', 'java', 'go', 'mvn', 'disk', 'memory', 'subnet', 'cache', 'rig']);
  for (const c of out.checks) {
    t.ok(['ok', 'warn', 'fail'].includes(c.status), `${c.name} status ${c.status}`);
    t.ok(c.detail.length > 0, `${c.name} has a detail`);
    if (c.status === 'fail') t.ok(c.fix, `${c.name} fails with a fix`);
  }
  t.equal(out.ok, out.checks.every((c) => c.status !== 'fail'));
  t.equal(r.status, out.ok ? 0 : 1, 'the exit code follows ok');
});

t.test('./clink-qual doctor with a cache whose file no longer matches: FAIL with its fix, exit 1', async (t) => {
  const cache = mkdtempSync(path.join(os.tmpdir(), 'cq-doctor-cache-'));
  t.teardown(() => rmSync(cache, { recursive: true, force: true }));
  const bin = path.join(cache, 'minio');
  writeFileSync(bin, 'the bytes installed');
  const manifest = { installedAt: '2026-01-01T00:00:00Z', components: [{ name: 'minio', version: '1', path: bin, sha256: await sha256File(bin) }] };
  writeFileSync(path.join(cache, 'manifest.json'), JSON.stringify(manifest));
  writeFileSync(bin, 'the bytes changed since');
  const r = spawnSync(path.join(repoRoot, 'clink-qual'), ['doctor'], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, CLINK_QUAL_CACHE: cache } });
  t.equal(r.status, 1);
  t.match(r.stdout, /^FAIL  cache +minio mismatch \(.*\) -- fix: run 'clink-qual rig install'/m);
  const lines = r.stdout.trim().split('\n');
  t.equal(lines.length, 12, 'one line a check, then the rig lock');
  t.match(lines[lines.length - 1], /^rig lock: (free|held by pid \d+ )/, "the last line says who holds the rig");
});
