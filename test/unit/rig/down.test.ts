/**
 * rig/down.ts: what `rig down` removes. Each store's data and the uploaded components outlive
 * a plain down (so a stored run can be verified again after `rig up`); --purge removes
 * everything, the store's credentials included.
 */
import path from 'node:path';
import t from 'tap';
import { KEPT_ON_DOWN, runtimeFilesToRemove } from '../../../rig/down.ts';
import { STORE_DATA_DIRS } from '../../../rig/store.ts';

const root = '/var/lib/cq';
const files = { rigState: `${root}/rig.json`, credentials: `${root}/store-credentials.json`, ssh: `${root}/ssh` };
const hosts = {
  store: ['opt', 'bin', STORE_DATA_DIRS.minio, 'minio-data-d4', STORE_DATA_DIRS.seaweedfs, 'services', 'etc'],
  'worker-1': ['opt', 'bin', 'services', 'state', 'etc'],
};

t.test('down keeps the store data, its credentials and the components; removes the rest', async (t) => {
  const removed = runtimeFilesToRemove(root, false, hosts, files);
  t.same(KEPT_ON_DOWN, ['opt', 'bin', 'minio-data', 'seaweedfs-data', 'minio-data-d4']);
  t.notOk(removed.includes(path.join(root, 'hosts', 'store', STORE_DATA_DIRS.minio)), "MinIO's data is kept");
  t.notOk(removed.includes(path.join(root, 'hosts', 'store', 'minio-data-d4')), "MinIO's four-drive layout's data is kept too");
  t.notOk(removed.includes(path.join(root, 'hosts', 'store', STORE_DATA_DIRS.seaweedfs)), "SeaweedFS's data is kept");
  t.notOk(removed.includes(files.credentials), 'the credentials that open it are kept');
  t.notOk(removed.some((p) => /\/(opt|bin)$/.test(p)), 'uploaded components kept');
  t.same(
    removed.sort(),
    [files.rigState, files.ssh, `${root}/teardown.jsonl`, `${root}/hosts/store/services`, `${root}/hosts/store/etc`, `${root}/hosts/worker-1/services`, `${root}/hosts/worker-1/state`, `${root}/hosts/worker-1/etc`].sort(),
  );
});

t.test('down --purge removes the hosts tree (store data included) and the credentials', async (t) => {
  const removed = runtimeFilesToRemove(root, true, hosts, files);
  t.ok(removed.includes(path.join(root, 'hosts')), 'the whole hosts tree');
  t.ok(removed.includes(files.credentials), 'the store credentials');
  t.ok(removed.includes(files.rigState) && removed.includes(files.ssh));
});

/**
 * rigDown on an inventory rig, with the SSH layer and the local rig's clearing replaced by
 * recorders: each host's timers, rules, services and files are cleared over SSH, and the
 * local rig (cq-* namespaces, found by name) is never cleared from an inventory's state.
 */
t.test("an inventory's rig down clears its hosts over SSH and never the local rig", async (t) => {
  const { mkdtempSync, rmSync, writeFileSync, existsSync } = await import('node:fs');
  const os = await import('node:os');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-down-inventory-'));
  const saved = process.env.CLINK_QUAL_STATE;
  process.env.CLINK_QUAL_STATE = dir;
  t.teardown(() => {
    if (saved === undefined) delete process.env.CLINK_QUAL_STATE;
    else process.env.CLINK_QUAL_STATE = saved;
    rmSync(dir, { recursive: true, force: true });
  });
  const spec = (name: string, role: string, dataDir: string) => ({ name, address: '10.9.0.1', roles: [role], dataDir, ssh: { user: 'admin', sudo: true, port: 22, privateKeyPath: '/k', knownHostsPath: '/kh' } });
  const hostsOf = [spec('app-1', 'worker', '/opt/cqb-app-1'), spec('s3', 'store', '/srv/cqb/s3/store')];
  const commands: string[] = [];
  let localCleared = 0;
  class FakeRemote {
    host: { name: string };
    constructor(h: { name: string }) {
      this.host = h;
    }
    async exec(cmd: string) {
      commands.push(`${this.host.name}: ${cmd}`);
      return { code: 0, stdout: '0\n', stderr: '' };
    }
    async close() {}
  }
  const { rigDown } = await t.mockImport<typeof import('../../../rig/down.ts')>('../../../rig/down.ts', {
    '../../../rig/ssh.ts': { SshRemote: FakeRemote, closeAllRemotes: async () => {} },
    '../../../rig/local.ts': {
      ...(await import('../../../rig/local.ts')),
      clearLocal: async () => {
        localCleared++;
        return { killed: 0, namespaces: 0, links: 0, rules: 0 };
      },
      // The machine's own rig (up during CI) is not this test's.
      localLeftovers: () => ({ namespaces: [], links: [], pids: [], mounts: [] }),
    },
  });
  writeFileSync(path.join(dir, 'rig.json'), JSON.stringify({ kind: 'inventory', hosts: hostsOf }));
  const r = await rigDown({});
  t.same(r.hostsStopped.sort(), ['app-1', 's3']);
  t.equal(localCleared, 0, 'the local rig was not cleared');
  t.notOk(existsSync(path.join(dir, 'rig.json')), 'rig.json removed');
  for (const h of hostsOf) {
    const mine = commands.filter((c) => c.startsWith(`${h.name}: `)).map((c) => c.slice(h.name.length + 2));
    t.match(mine[0], /pgrep -f -- '\[c\]link-qual-deadman:'/, `${h.name}: dead-man timers stopped first`);
    t.ok(mine.some((c) => c.includes('iptables -w 5 -S')), `${h.name}: tagged rules removed`);
    t.ok(mine.some((c) => c.includes(`${h.dataDir}/services`)), `${h.name}: services stopped`);
    const files = mine.find((c) => c.startsWith('shopt -s dotglob nullglob; cd -- '));
    t.ok(files?.includes(`'${h.dataDir}'`) && files.includes("'opt'|'bin'"), `${h.name}: files but the kept ones removed from its dataDir`);
  }

  commands.length = 0;
  const inv = path.join(dir, 'hosts.yaml');
  writeFileSync(inv, `hosts:\n${hostsOf.map((h, i) => `  - { name: ${h.name}, address: 10.9.0.${i + 1}, roles: [${h.roles[0]}], ssh: { user: admin, sudo: true, key: k, knownHosts: kh }, dataDir: ${h.dataDir} }\n`).join('')}`.replace('[store] }', '[store] }').replace(/roles: \[worker\]/, 'roles: [worker, coordinator, broker]'));
  const p = await rigDown({ purge: true, inventory: inv });
  t.same(p.hostsStopped.sort(), ['app-1', 's3'], 'without rig.json, --inventory names the hosts');
  t.equal(localCleared, 0, 'and the local rig is still not cleared');
  t.ok(commands.some((c) => c.startsWith('s3: ') && c.includes("D='/srv/cqb/s3/store'")), '--purge removes the whole dataDir');

  writeFileSync(path.join(dir, 'rig.json'), JSON.stringify({ kind: 'local', hosts: [] }));
  await t.rejects(rigDown({ inventory: inv }), { code: 'BAD_ARGUMENTS' }, 'a local rig is not taken down as an inventory');

  // An inventory re-deployed over the local rig's own hosts (rig up, then rig up --inventory from the same state directory): its journal holds the namespaces.
  writeFileSync(path.join(dir, 'rig.json'), JSON.stringify({ kind: 'inventory', hosts: hostsOf }));
  writeFileSync(path.join(dir, 'teardown.jsonl'), JSON.stringify({ kind: 'netns', name: 'cq-app-1' }) + '\n');
  await rigDown({});
  if (process.platform === 'linux' && process.getuid?.() === 0) t.equal(localCleared, 1, "an inventory whose state directory made the local rig clears it (its namespaces and state filesystems)");
});

t.test('clearsLocalRig: the local rig always; an inventory only when its own journal made namespaces', async (t) => {
  const { clearsLocalRig } = await import('../../../rig/down.ts');
  t.equal(clearsLocalRig(false, []), true);
  t.equal(clearsLocalRig(true, []), false, 'a fresh inventory state directory leaves cq-* namespaces alone');
  t.equal(clearsLocalRig(true, [{ kind: 'pid', pid: 1, startTime: '1', what: 'x' }]), false);
  t.equal(clearsLocalRig(true, [{ kind: 'netns', name: 'cq-worker-1' }]), true, "an inventory over the local rig's hosts frees them");
});
