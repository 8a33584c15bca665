/**
 * `rig up --inventory` runs doctor's checks first and stops on a failure, naming host and
 * fix, before anything is touched: through rigUp with the SSH layer replaced by a fake that
 * answers read-only probes and records every command (no host, no rig).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import type { ExecResult, Remote } from '../../../rig/remote.ts';
import type { HostSpec } from '../../../rig/types.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-up-inventory-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const inventory = path.join(dir, 'hosts.yaml');
const host = (name: string, role: string, i: number) => `  - { name: ${name}, address: 10.9.0.${i}, roles: [${role}], ssh: { user: root, key: id, knownHosts: known }, dataDir: /srv/clink }\n`;
writeFileSync(inventory, `hosts:\n${host('app-a', 'worker', 1)}${host('ctl', 'coordinator', 2)}${host('kafka-a', 'broker', 3)}${host('s3', 'store', 4)}`);

const ok = (stdout: string): ExecResult => ({ code: 0, stdout, stderr: '' });
const STAT = 'statistic match options:\n --mode mode\n[!] --probability p\n';
const COMMENT = 'comment match options:\n--comment COMMENT\n';

/** rigUp with a fake SSH layer; `javaOn` says which hosts have Java 17. */
async function rigUpWith(t: Test, javaOn: (h: HostSpec) => boolean) {
  const commands: string[] = [];
  let connected = 0;
  const remoteFor = (h: HostSpec): Remote & { connect(): Promise<void> } =>
    ({
      host: h,
      async connect() {
        connected++;
      },
      async exec(cmd: string) {
        commands.push(`${h.name}: ${cmd}`);
        if (cmd === 'true') return ok('');
        if (cmd.startsWith('date ')) return ok(`${BigInt(Date.now()) * 1_000_000n}\n`);
        if (cmd.startsWith('java ')) return ok(javaOn(h) ? 'openjdk version "17.0.15" 2025-04-15\n' : 'bash: line 1: java: command not found\n');
        if (cmd.startsWith('iptables ')) return ok(`${STAT}@@clink-qual-doctor@@\n${COMMENT}`);
        if (cmd.startsWith('d=')) return ok(`/srv/clink\n     Avail\n${100 * 1024 ** 3}\n`);
        if (cmd.startsWith('ss ')) return ok('@@clink-qual-doctor@@\n');
        throw new Error(`not a doctor command: ${cmd}`);
      },
    }) as unknown as Remote & { connect(): Promise<void> };
  const { rigUp } = await t.mockImport<typeof import('../../../rig/up.ts')>('../../../rig/up.ts', {
    '../../../rig/ssh.ts': { ...(await import('../../../rig/ssh.ts')), remoteFor, closeAllRemotes: async () => {} },
    '../../../rig/install.ts': { ...(await import('../../../rig/install.ts')), readManifest: () => ({ components: [] }), component: () => { throw new Error('deploy reached'); }, storeComponent: async () => { throw new Error('deploy reached'); }, node: async () => { throw new Error('deploy reached'); } },
  });
  const result = await rigUp({ inventory, store: 'minio' }).then(
    () => null,
    (e: unknown) => e as Error & { code?: string },
  );
  return { result, commands, connected: () => connected };
}

t.test('a host without Java: refused naming it and the fix, before anything is touched', async (t) => {
  const r = await rigUpWith(t, (h) => h.name !== 'kafka-a');
  t.ok(r.result, 'rig up failed');
  t.equal(r.result!.code, 'PRECONDITION');
  t.match(r.result!.message, /^inventory hosts\.yaml: 1 check\(s\) failed on 1 host\(s\); nothing was touched:\n  kafka-a java: no java found .* -- fix: install openjdk-17-jre-headless \(Java 17 or later, for Kafka\)$/);
  t.equal(r.connected(), 0, 'deployServices never started (it connects every host first)');
  t.ok(r.commands.length > 0, 'the checks ran');
  t.notOk(r.commands.some((c) => /iptables -[ADIFX] |-j |mkdir|rm -|pkill|kill /.test(c)), 'only read-only commands');
});

t.test('every check passing: rig up goes on to deploy (here: the fake cache refuses, past the checks)', async (t) => {
  const r = await rigUpWith(t, () => true);
  t.match(r.result?.message ?? '', /deploy reached/, 'rig up went past doctor into deployServices');
});
