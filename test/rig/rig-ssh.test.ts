/**
 * SSH to the rig's hosts: a wrong or unknown host key is refused before any command runs;
 * an unreachable inventory host is named within the deadline; and the inventory code path,
 * pointed at the local rig's own hosts, re-deploys every service.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { repoRoot } from '../../lib/paths.ts';
import { SshRemote } from '../../rig/ssh.ts';
import { readRigState } from '../../rig/state.ts';
import type { HostSpec } from '../../rig/types.ts';

const state = readRigState();
const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-ssh-test-'));
const cli = (...args: string[]) => spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'clink-qual.ts'), ...args], { encoding: 'utf8', timeout: 300_000 });

t.test('a wrong or unknown host key is refused (HOST_KEY_MISMATCH) before any command runs', async (t) => {
  const w = state.hosts.find((h) => h.name === 'worker-1')!;
  const keyFile = path.join(tmp, 'other');
  spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyFile]);
  const otherPub = spawnSync('cat', [`${keyFile}.pub`], { encoding: 'utf8' }).stdout.trim().split(/\s+/);
  const wrongKh = path.join(tmp, 'known_hosts_wrong');
  writeFileSync(wrongKh, `${w.address} ${otherPub[0]} ${otherPub[1]}\n`);
  const emptyKh = path.join(tmp, 'known_hosts_empty');
  writeFileSync(emptyKh, '');
  for (const [what, kh] of [['changed', wrongKh], ['unknown', emptyKh]] as const) {
    const marker = path.join(tmp, `ran-${what}`);
    const r = new SshRemote({ ...w, ssh: { ...w.ssh, knownHostsPath: kh } });
    const err = await r.exec(`touch ${marker}`).then(
      () => null,
      (e: Error & { code?: string }) => e,
    );
    await r.close();
    t.equal(err?.code, 'HOST_KEY_MISMATCH', `${what} key: HOST_KEY_MISMATCH`);
    t.match(err?.message, /worker-1 \(10\.231\.0\.11\) presented host key SHA256:/, 'the message names the host and the fingerprint');
    t.notOk(existsSync(marker), `${what} key: the command never ran`);
  }
  const good = new SshRemote(w);
  t.equal((await good.exec('echo ok')).stdout.trim(), 'ok', 'the pinned key is accepted');
  await good.close();
});

function inventoryYaml(hosts: HostSpec[]): string {
  return (
    'hosts:\n' +
    hosts
      .map(
        (h) => `  - name: ${h.name}
    address: ${h.address}
    roles: [${h.roles.join(', ')}]
    ssh:
      user: ${h.ssh.user}
      port: ${h.ssh.port}
      key: ${h.ssh.privateKeyPath}
      knownHosts: ${h.ssh.knownHostsPath}
    dataDir: ${h.dataDir}
`,
      )
      .join('')
  );
}

t.test('an unreachable inventory host is named, within the SSH deadline', async (t) => {
  const hosts = state.hosts.map((h) => (h.name === 'store' ? { ...h, address: '10.231.0.250' } : h));
  const file = path.join(tmp, 'unreachable.yaml');
  writeFileSync(file, inventoryYaml(hosts));
  const t0 = Date.now();
  const r = cli('rig', 'up', '--inventory', file);
  const took = Date.now() - t0;
  t.equal(r.status, 2, 'exit code 2 (environment)');
  t.match(r.stderr, /store \(10\.231\.0\.250:22\) is unreachable over SSH/, `the host is named: ${r.stderr.trim()}`);
  t.ok(took < 30_000, `within the deadline (${took} ms)`);
  t.ok(existsSync(path.join(path.dirname(state.hosts[0]!.ssh.knownHostsPath), '..', 'rig.json')), 'the running rig was left alone');
});

t.test('rig up --inventory on the local hosts re-deploys the services through the same code path', async (t) => {
  const file = path.join(tmp, 'inventory.yaml');
  writeFileSync(file, inventoryYaml(state.hosts));
  const r = cli('rig', 'up', '--inventory', file);
  t.equal(r.status, 0, `rig up --inventory succeeded: ${r.stdout.split('\n').slice(-3).join(' | ')} ${r.stderr}`);
  t.match(r.stdout, /ssh: 8 hosts reachable, host keys verified/);
  t.match(r.stdout, /kafka jars unchanged/, 'jars already there: skipped by sha256');
  const after = readRigState();
  t.equal(after.kind, 'inventory');
  t.same(after.hosts.map((h) => h.name), state.hosts.map((h) => h.name));
  const s = cli('rig', 'status', '--json');
  const st = JSON.parse(s.stdout);
  t.equal(st.kafka.healthy, true, 'kafka healthy after the re-deploy');
  t.equal(st.store.bucketPresent, true, 'bucket present after the re-deploy');
});
