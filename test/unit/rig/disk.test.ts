/**
 * The disk-full fault's guard on real machines: whether a directory sits on a filesystem of
 * its own, decided from findmnt outputs captured on this machine (test/fixtures/inventory-doctor/:
 * the local rig's per-host state tmpfs, /tmp and a missing dir under /srv on the root
 * filesystem, /dev/shm with two stacked mounts), and the probe command that reads them.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { mountProbeCommand, ownFilesystemRefusal, ownFilesystemRefusalFrom } from '../../../rig/disk.ts';

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/inventory-doctor');
const fx = (name: string) => readFileSync(path.join(dir, name), 'utf8');
const rootAll = { '/': '/\n', '/var': '/\n', '/home': '/\n' };

t.test('from captured findmnt -n -o TARGET -T outputs', async (t) => {
  t.equal(ownFilesystemRefusal('/var/lib/clink-qual/hosts/worker-1/state', fx('findmnt-local-rig-state.txt'), rootAll), null, "the local rig's state tmpfs is its own");
  t.equal(ownFilesystemRefusal('/dev/shm/cq', fx('findmnt-dev-shm.txt'), rootAll), null, 'stacked mounts: the first line names the mount');
  t.equal(
    ownFilesystemRefusal('/tmp/cq', fx('findmnt-tmp.txt'), rootAll),
    "/tmp/cq is on the root filesystem (/): filling it would fill the machine's own disk; mount a filesystem of its own at /tmp/cq or above it",
  );
  t.equal(ownFilesystemRefusal('/var/lib/clink-qual/hosts/worker-1', fx('findmnt-local-rig-host.txt'), rootAll)?.startsWith('/var/lib/clink-qual/hosts/worker-1 is on the root filesystem'), true, "the local rig's host dir itself is on /");
});

t.test('a separate /var or /home is the machine\'s own disk too; a data disk is not', async (t) => {
  const split = { '/': '/\n', '/var': '/var\n', '/home': '/home\n' };
  t.equal(
    ownFilesystemRefusal('/var/lib/cq/state', '/var\n', split),
    "/var/lib/cq/state is on the filesystem mounted at /var, which holds /var: filling it would fill the machine's own disk; mount a filesystem of its own at /var/lib/cq/state or above it",
  );
  t.match(ownFilesystemRefusal('/home/qa/cq/state', '/home\n', split), /mounted at \/home, which holds \/home/);
  t.equal(ownFilesystemRefusal('/srv/clink/state', '/srv/clink\n', split), null);
  t.equal(ownFilesystemRefusal('/srv/clink/state', '/srv/clink/state\n', split), null);
  t.match(ownFilesystemRefusal('/srv/clink/state', 'findmnt: command not found\n', split), /^cannot tell which filesystem holds \/srv\/clink\/state/);
  t.match(ownFilesystemRefusal('/srv/clink/state', '', split), /^cannot tell/);
});

t.test('the probe: read-only, quoted, its whole output decided at once (captured runs)', async (t) => {
  const cmd = mountProbeCommand("/srv/it's/state");
  t.match(cmd, /^d='\/srv\/it'\\''s\/state'; while \[ ! -e "\$d" \]/, 'the directory is shell-quoted');
  t.notMatch(cmd.replace(/2>(&1|\/dev\/null)/g, ''), /mkdir|rm |mount |>/, 'reads only (no redirection but of its own stderr)');
  t.equal(ownFilesystemRefusalFrom('/var/lib/clink-qual/hosts/worker-1/state', fx('mount-probe-local-rig-state.txt')), null);
  t.equal(ownFilesystemRefusalFrom('/dev/shm/x', fx('mount-probe-dev-shm.txt')), null);
  t.match(ownFilesystemRefusalFrom('/srv/clink/state', fx('mount-probe-srv-on-root.txt')), /^\/srv\/clink\/state is on the root filesystem/);
});
