/**
 * bench/disk-guard.ts: what a rung puts on the brokers' disks, whether the free space there
 * allows it (with 2 GB kept free), the wait for earlier rungs' topics to go, and the free
 * space read with df, run with bash on this machine as each broker host.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { brokerDisks, diskRefusal, DISK_HEADROOM_BYTES, guardRungDisk, LOG_BYTES_PER_EVENT, OUTPUT_BYTES_PER_EVENT, rungDiskBytes, type BrokerDisk } from '../../../bench/disk-guard.ts';
import { QualError } from '../../../lib/errors.ts';
import type { ExecOptions, Remote } from '../../../rig/remote.ts';
import type { HostSpec, RigState } from '../../../rig/types.ts';

t.test('a rung\'s need: every replica on the local rig\'s one disk, one a host elsewhere; the output too, locally', async (t) => {
  // 1,240,000 events/s for 30 s: 37.2 M events.
  const events = 1_240_000 * 30;
  t.equal(rungDiskBytes(1_240_000, 30_000, { local: true, brokers: 3, output: false }), events * LOG_BYTES_PER_EVENT * 3);
  t.equal(rungDiskBytes(1_240_000, 30_000, { local: false, brokers: 3, output: false }), events * LOG_BYTES_PER_EVENT, 'an inventory broker host holds one replica');
  t.equal(rungDiskBytes(100_000, 88_000, { local: true, brokers: 3, output: true }), 8_800_000 * (LOG_BYTES_PER_EVENT * 3 + OUTPUT_BYTES_PER_EVENT));
  t.equal(rungDiskBytes(100_000, 88_000, { local: false, brokers: 5, output: true }), 8_800_000 * LOG_BYTES_PER_EVENT, "elsewhere the store's disk is another host's");
  t.equal(rungDiskBytes(1000, 1000, { local: true, brokers: 1, output: false }), 1000 * LOG_BYTES_PER_EVENT, 'one broker: one replica');
});

t.test('refused when a disk lacks the need plus the headroom, naming it; allowed at exactly that', async (t) => {
  const need = 13e9;
  const disks: BrokerDisk[] = [
    { host: 'broker-1', dir: '/var/b1', availBytes: need + DISK_HEADROOM_BYTES },
    { host: 'broker-2', dir: '/var/b2', availBytes: need + DISK_HEADROOM_BYTES - 1 },
  ];
  t.equal(diskRefusal('the producer rung at 1240000 events/s', need, disks.slice(0, 1)), null);
  const why = diskRefusal('the producer rung at 1240000 events/s', need, disks);
  t.match(why, /^not enough disk for the producer rung at 1240000 events\/s: it puts about 13\.0 GB where the brokers keep their logs \(\/var\/b2 on broker-2: 15\.1 GB free, and 2\.1 GB are kept free\)/);
  t.match(why, /--duration-s, --producer-duration-s/, 'and what to do about it');
});

t.test('the guard waits for the space (an earlier topic deleted), says so once, and refuses when it never comes', async (t) => {
  const need = 1e9;
  const enough = need + DISK_HEADROOM_BYTES;
  const said: string[] = [];
  let reads = 0;
  await guardRungDisk('a rung', need, async () => [{ host: 'h', dir: '/d', availBytes: ++reads < 3 ? 0 : enough }], { waitMs: 5_000, pollMs: 10, log: (s) => said.push(s) });
  t.equal(reads, 3, 'read until the space was there');
  t.equal(said.length, 1, 'said once that it waits');
  t.match(said[0], /waiting for disk .*not enough disk for a rung/);
  const t0 = Date.now();
  const e = await guardRungDisk('a rung', need, async () => [{ host: 'h', dir: '/d', availBytes: 0 }], { waitMs: 100, pollMs: 20, log: () => {} }).catch((err: unknown) => err);
  t.match((e as Error).message, /^not enough disk for a rung: .*\(waited 0 s for earlier rungs' topics to be deleted\)$/);
  t.ok(e instanceof QualError && e.code === 'PRECONDITION', 'a refusal, said without a stack');
  t.ok(Date.now() - t0 < 2_000);
  let once = 0;
  await guardRungDisk('a rung', need, async () => (once++, [{ host: 'h', dir: '/d', availBytes: enough }]), { log: () => t.fail('no wait when the space is there') });
  t.equal(once, 1);
});

t.test("the brokers' free space, read with df: one disk on the local rig, each broker host's elsewhere", async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-disk-guard-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const host = (name: string, roles: string[]): HostSpec => ({ name, address: '127.0.0.1', roles, dataDir: dir, ssh: { user: 'root', port: 22 } }) as unknown as HostSpec;
  const asked: string[] = [];
  const remote = (name: string): Remote => ({
    host: host(name, []),
    async exec(cmd: string, opts: ExecOptions = {}) {
      asked.push(name);
      const r = spawnSync('bash', ['-c', cmd], { encoding: 'utf8', timeout: opts.timeoutMs ?? 60_000 });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    },
    writeFile: () => Promise.reject(new Error('not here')),
    upload: () => Promise.reject(new Error('not here')),
    readFile: () => Promise.reject(new Error('not here')),
    download: () => Promise.reject(new Error('not here')),
    close: async () => {},
  });
  const hosts = [host('broker-1', ['broker']), host('broker-2', ['broker']), host('store', ['store']), host('broker-3', ['broker'])];
  const local = await brokerDisks({ kind: 'local', hosts } as unknown as RigState, remote);
  const s = statfsSync(dir);
  t.equal(local.length, 1, 'the local rig: one disk for all');
  t.equal(local[0]!.host, 'broker-1');
  t.ok(Math.abs(local[0]!.availBytes - s.bavail * s.bsize) < 512 * 1024 ** 2, `df's free space is the filesystem's (${local[0]!.availBytes} against ${s.bavail * s.bsize})`);
  asked.length = 0;
  const elsewhere = await brokerDisks({ kind: 'inventory', hosts } as unknown as RigState, remote);
  t.same(elsewhere.map((d) => d.host), ['broker-1', 'broker-2', 'broker-3'], 'an inventory rig: each broker host, not the store');
  t.same(asked, ['broker-1', 'broker-2', 'broker-3']);
});
