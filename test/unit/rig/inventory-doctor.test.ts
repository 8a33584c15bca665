/**
 * doctor --inventory's checks: each parser against outputs captured on a real machine
 * (test/fixtures/inventory-doctor/: `java -version`, `iptables -m statistic --help`,
 * `iptables -m comment --help`, an unknown match, `df -B1 --output=avail /tmp`, `ss -ltnH`,
 * `ss -ltnpH`), the needs of each host from its roles, and one host's checks run through a
 * fake Remote that answers with those outputs. No SSH, no rig.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { QualError } from '../../../lib/errors.ts';
import {
  assertInventoryReady, bestClockSample, checkHost, CLOCK_BOUND_MS, clockOffset, DISK_NEEDS, hostNeeds, judgeClock, judgeDisk, judgeFaketime, judgeIptables, judgeJava, judgePorts, judgeSudo, parseCmdlines, parseDfAvail, parseListeners,
  renderInventoryDoctor, rigPorts, type InventoryNeeds,
} from '../../../rig/inventory-doctor.ts';
import type { ExecResult, Remote } from '../../../rig/remote.ts';
import type { HostSpec } from '../../../rig/types.ts';
import { ENGINE_HOST_NEEDS } from '../../../engine/host-needs.ts';

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/inventory-doctor');
const fx = (name: string) => readFileSync(path.join(dir, name), 'utf8');

t.test('java: the captured `java -version` passes; none, or one older than 17, fails with the package to install', async (t) => {
  const ok = judgeJava(fx('java-version-17.txt'), 'Kafka');
  t.equal(ok.ok, true);
  t.match(ok.detail, /^Java 17 \(openjdk version "17\.0\.15" 2025-04-15\) for Kafka$/);
  const missing = judgeJava(fx('java-missing.txt').replace('nosuchjava', 'java'), 'Kafka and Flink');
  t.equal(missing.ok, false);
  t.match(missing.detail, /^no java found \(bash: line 1: java: command not found\)/);
  t.equal(missing.fix, 'install openjdk-17-jre-headless (Java 17 or later, for Kafka and Flink)');
  // Not captured here (this machine has 17 only): Java 11's first line, as OpenJDK 11 prints it.
  const old = judgeJava('openjdk version "11.0.22" 2024-01-16\nOpenJDK Runtime Environment (build 11.0.22+7-post-Debian-1deb11u1)\n', 'Flink');
  t.equal(old.ok, false);
  t.match(old.detail, /^Java 11 .*Flink needs 17 or later$/);
});

t.test('iptables: the statistic and comment matches from their captured help; an unknown match fails', async (t) => {
  const ok = judgeIptables(fx('iptables-statistic-help.txt'), fx('iptables-comment-help.txt'));
  t.same(ok, { ok: true, detail: 'iptables with the statistic and comment matches' });
  const noStat = judgeIptables(fx('iptables-no-such-match.txt'), fx('iptables-comment-help.txt'));
  t.equal(noStat.ok, false);
  t.match(noStat.detail, /^iptables lacks the statistic match \(iptables v1\.8\.9 \(nf_tables\): Couldn't load match `statisticx':No such file or directory\)$/);
  t.match(noStat.fix, /xt_statistic/);
  const none = judgeIptables('bash: line 1: iptables: command not found\n', 'bash: line 1: iptables: command not found\n');
  t.equal(none.ok, false);
  t.match(none.detail, /lacks the statistic and comment matches/);
  t.equal(none.fix, 'install iptables');
  t.equal(judgeIptables(fx('iptables-comment-help.txt'), fx('iptables-statistic-help.txt')).ok, false, 'each help must be the right match');
});

t.test('faketime: the library path, or the package to install', async (t) => {
  t.equal(judgeFaketime('/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1\n').ok, true);
  const no = judgeFaketime('');
  t.equal(no.ok, false);
  t.equal(no.fix, 'install libfaketime (apt-get install libfaketime)');
});

t.test('disk: the captured df output, against what the roles need', async (t) => {
  const captured = fx('df-avail-tmp.txt');
  const avail = parseDfAvail(captured);
  t.ok(avail !== undefined && avail > 0, `parsed ${avail}`);
  t.equal(parseDfAvail('      Avail\n1234\n'), 1234);
  t.equal(parseDfAvail('df: /nope: No such file or directory\n'), undefined);
  t.equal(parseDfAvail(''), undefined);
  const ok = judgeDisk('     Avail\n3221225472\n', '/srv/clink', '/srv/clink', DISK_NEEDS.store, ['store']);
  t.same(ok, { ok: true, detail: '3.0 GiB free in /srv/clink; store needs 2.0 GiB' });
  const low = judgeDisk('     Avail\n1073741824\n', '/srv/clink', '/srv', DISK_NEEDS.store + DISK_NEEDS.broker, ['broker', 'store']);
  t.equal(low.ok, false);
  t.equal(low.detail, '1.0 GiB free in /srv/clink (not there yet: measured at /srv); broker + store need 3.5 GiB');
  t.equal(low.fix, 'free 2.5 GiB in /srv/clink, or put dataDir on a larger filesystem');
  t.equal(judgeDisk('df: oops\n', '/srv/clink', '/srv/clink', 1, ['worker']).ok, false);
});

t.test('clock: the offset against the midpoint of the round trip, refused beyond the bound', async (t) => {
  // The host said 1,000,000,000.250 s while the operations host read 1,000,000,000.000 to .100.
  t.same(clockOffset('1000000000250000000\n', 1_000_000_000_000, 1_000_000_000_100), { offsetMs: 200, uncertaintyMs: 50 });
  t.equal(clockOffset('bash: date: command not found', 0, 1), undefined);
  const fine = judgeClock('1000000000250000000', 1_000_000_000_000, 1_000_000_000_100);
  t.same(fine, { ok: true, detail: `200 ms ahead of the operations host (±50 ms); bound ${CLOCK_BOUND_MS} ms` });
  const behind = judgeClock('999999998000000000', 1_000_000_000_000, 1_000_000_000_020);
  t.equal(behind.ok, false);
  t.equal(behind.detail, `2010 ms behind the operations host (±10 ms); bound ${CLOCK_BOUND_MS} ms`);
  t.match(behind.fix, /chrony/);
  t.equal(judgeClock('1000000000510000000', 1_000_000_000_000, 1_000_000_000_000).ok, false, 'just over the bound');
  t.equal(judgeClock('1000000000500000000', 1_000_000_000_000, 1_000_000_000_000).ok, true, 'at the bound');
  // Measured on this machine through a loaded local sshd: 946 ms "ahead" of itself, round trip 1,894 ms.
  const slow = judgeClock('1000000000946000000', 1_000_000_000_000 - 947, 1_000_000_000_000 + 947);
  t.equal(slow.ok, true, 'a slow round trip cannot refuse a clock that may be right');
  t.match(slow.detail, /±947 ms\); bound 500 ms; measured too loosely/);
  t.equal(judgeClock('1000000003000000000', 1_000_000_000_000 - 900, 1_000_000_000_000 + 900).ok, false, '3 s off is certain even at ±900 ms');
  t.same(bestClockSample([{ sentMs: 0, receivedMs: 900 }, { sentMs: 1000, receivedMs: 1040 }, { sentMs: 2000, receivedMs: 2300 }]), { sentMs: 1000, receivedMs: 1040 });
  t.equal(bestClockSample([]), undefined);
  // This machine's own clock, read as the check reads it: within a few ms of itself.
  const sent = Date.now();
  const own = judgeClock(`${BigInt(Date.now()) * 1_000_000n}`, sent, Date.now());
  t.equal(own.ok, true, own.detail);
});

t.test('ports: listeners from the captured ss output; a needed port held by another process fails, by the rig itself passes', async (t) => {
  const plain = parseListeners(fx('ss-ltnH.txt'));
  t.ok(plain.length >= 4, 'every line of ss -ltnH');
  t.same(plain[0], { address: '0.0.0.0', port: 2024, pids: [] });
  t.ok(plain.some((l) => l.address === '[::1]' && l.port === 19100), 'IPv6 addresses keep their brackets');
  const withPids = parseListeners(fx('ss-ltnpH.txt'));
  t.same(withPids.find((l) => l.port === 19100 && l.address === '127.0.0.1'), { address: '127.0.0.1', port: 19100, pids: [20041] });

  const ss = fx('ss-ltnpH.txt');
  const needs = [
    { role: 'store' as const, port: 19100, what: 'the S3 API' },
    { role: 'store' as const, port: 9092, what: 'Kafka clients' },
  ];
  const ours = parseCmdlines('20041\t/srv/clink/opt/minio-v1/minio server /srv/clink/minio-data --address 127.0.0.1:19100 \n');
  t.same(judgePorts(ss, ours, needs, '/srv/clink'), { ok: true, detail: "free (or the rig's own): 19100, 9092" });
  const foreign = parseCmdlines('20041\t/usr/local/bin/minio server /data \n');
  const taken = judgePorts(ss, foreign, needs, '/srv/clink');
  t.equal(taken.ok, false);
  t.equal(taken.detail, '19100 (the S3 API) is taken by pid 20041 "/usr/local/bin/minio server /data"');
  t.equal(taken.fix, "free port 19100 (stop what listens there: ss -ltnp 'sport = :19100')");
  const unnamed = judgePorts(ss, ours, [{ role: 'broker', port: 2024, what: 'Kafka clients' }], '/srv/clink');
  t.equal(unnamed.detail, '2024 (Kafka clients) is taken by a process ss cannot name', 'no pid (another user, no root): not the rig\'s');
  t.same(parseCmdlines('12\tjava -cp x\nnot a pid\tx\n'), new Map([[12, 'java -cp x']]));
});

const spec = (name: string, roles: HostSpec['roles'], dataDir = '/srv/clink'): HostSpec => ({ name, address: '10.9.0.1', roles, dataDir, ssh: { user: 'root', port: 22, privateKeyPath: '/k', knownHostsPath: '/kh' } });

t.test("each host's needs from its roles, the store and the engines", async (t) => {
  const flink: InventoryNeeds = { store: 'minio', engines: [ENGINE_HOST_NEEDS.flink!], clockSteps: true };
  const clink: InventoryNeeds = { store: 'seaweedfs', engines: [ENGINE_HOST_NEEDS.clink!], clockSteps: false };
  t.same(hostNeeds(spec('b', ['broker']), clink), { javaFor: ['Kafka'], diskBytes: DISK_NEEDS.broker, faketime: false, ports: rigPorts('seaweedfs').filter((p) => p.role === 'broker'), diskFull: false });
  t.same(hostNeeds(spec('w', ['worker']), clink).javaFor, [], 'a Clink worker runs on the uploaded Node: no Java');
  t.same(hostNeeds(spec('w', ['worker']), flink).javaFor, ['Flink']);
  t.equal(hostNeeds(spec('w', ['worker']), flink).faketime, true, 'clock steps: libfaketime on engine hosts');
  t.equal(hostNeeds(spec('s', ['store']), flink).faketime, false, 'never on the store');
  t.same(hostNeeds(spec('c', ['coordinator']), flink).ports.map((p) => p.port), [8081, 6123, 6124, 2181]);
  t.same(hostNeeds(spec('c', ['coordinator']), clink).ports.map((p) => p.port), [7070]);
  t.same(hostNeeds(spec('s', ['store']), clink).ports.map((p) => p.port), [9000, 9333, 19333, 8080, 18080, 8888, 18888]);
  t.same(hostNeeds(spec('s', ['store']), flink).ports.map((p) => p.port), [9000, 9001]);
  t.same(hostNeeds(spec('bs', ['broker', 'store']), clink).diskBytes, DISK_NEEDS.broker + DISK_NEEDS.store, 'several roles: the sum');
});

/** A Remote that answers each read-only command with a captured output (or as told). */
function fakeRemote(host: HostSpec, answers: Partial<Record<'date' | 'java' | 'iptables' | 'ls' | 'df' | 'ss' | 'mounts', string>>, opts: { unreachable?: string } = {}): Remote & { commands: string[] } {
  const commands: string[] = [];
  const ok = (stdout: string): ExecResult => ({ code: 0, stdout, stderr: '' });
  return {
    host,
    commands,
    async exec(cmd: string) {
      if (opts.unreachable) throw new QualError('HOST_UNREACHABLE', opts.unreachable);
      commands.push(cmd);
      if (cmd === 'true') return ok('');
      if (cmd.startsWith('date ')) return ok(answers.date ?? `${BigInt(Date.now()) * 1_000_000n}\n`);
      if (cmd.startsWith('java ')) return ok(answers.java ?? fx('java-version-17.txt'));
      if (cmd.startsWith('iptables ')) return ok(answers.iptables ?? `${fx('iptables-statistic-help.txt')}@@clink-qual-doctor@@\n${fx('iptables-comment-help.txt')}`);
      if (cmd.startsWith('ls ')) return ok(answers.ls ?? '');
      if (cmd.startsWith('d=') && cmd.includes('findmnt')) return ok(answers.mounts ?? fx('mount-probe-local-rig-state.txt'));
      if (cmd.startsWith('d=')) return ok(answers.df ?? `${host.dataDir}\n${fx('df-avail-tmp.txt')}`);
      if (cmd.startsWith('ss ')) return ok(answers.ss ?? `${fx('ss-ltnH.txt')}@@clink-qual-doctor@@\n`);
      throw new Error(`unexpected command ${cmd}`);
    },
    upload: () => Promise.reject(new Error('doctor must not upload')),
    writeFile: () => Promise.reject(new Error('doctor must not write')),
    readFile: () => Promise.reject(new Error('not used')),
    download: () => Promise.reject(new Error('not used')),
    close: async () => {},
  };
}

t.test('one host checked through a Remote: read-only commands, one result a check', async (t) => {
  const needs: InventoryNeeds = { store: 'minio', engines: [ENGINE_HOST_NEEDS.flink!], clockSteps: true };
  const r = fakeRemote(spec('worker-a', ['worker']), { ls: '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1\n' });
  const checks = await checkHost(r, needs);
  t.same(checks.map((c) => [c.check, c.ok]), [['clock', true], ['java', true], ['iptables', true], ['faketime', true], ['disk', true], ['ports', true]]);
  t.notOk(r.commands.some((c) => /iptables -[AIDFX]|mkdir|rm |kill|>/.test(c.replace(/2>&1|2>\/dev\/null|< \/proc/g, ''))), 'no command changes anything');

  const bad = fakeRemote(spec('broker-a', ['broker']), { java: 'bash: line 1: java: command not found\n', df: `/srv\n      Avail\n${512 * 1024 * 1024}\n`, ss: `LISTEN 0 50 0.0.0.0:9092 0.0.0.0:* users:(("nc",pid=77,fd=3))\n@@clink-qual-doctor@@\n77\tnc -l 9092 \n` });
  const report = { ok: false, checks: await checkHost(bad, needs) };
  const text = renderInventoryDoctor(report);
  t.match(text, /^FAIL broker-a java: no java found .* -- fix: install openjdk-17-jre-headless \(Java 17 or later, for Kafka\)$/m);
  t.match(text, /^FAIL broker-a disk: 0\.5 GiB free in \/srv\/clink \(not there yet: measured at \/srv\); broker needs 1\.5 GiB -- fix: free 1\.0 GiB in \/srv\/clink/m);
  t.match(text, /^FAIL broker-a ports: 9092 \(Kafka clients\) is taken by pid 77 "nc -l 9092" -- fix: free port 9092/m);
  t.match(text, /^PASS broker-a iptables: /m);
  t.notMatch(text, /faketime/, 'a broker needs no libfaketime');
  t.throws(() => assertInventoryReady(report, '/x/hosts.yaml'), /inventory hosts\.yaml: 3 check\(s\) failed on 1 host\(s\); nothing was touched:\n  broker-a java: .* -- fix: install openjdk-17-jre-headless/);

  const gone = await checkHost(fakeRemote(spec('store-a', ['store']), {}, { unreachable: 'store-a (10.9.0.1:22) did not answer within 10000 ms' }), needs);
  t.equal(gone.length, 1);
  t.equal(gone[0]!.check, 'ssh');
  t.match(gone[0]!.fix, /pin its host key in \/kh/);
});

t.test("disk-full targets: the state directory's own filesystem, checked only where the campaign fills", async (t) => {
  const needs: InventoryNeeds = { store: 'minio', engines: [ENGINE_HOST_NEEDS.clink!], clockSteps: false, diskFullTargets: ['worker-a'] };
  t.equal(hostNeeds(spec('worker-a', ['worker']), needs).diskFull, true);
  t.equal(hostNeeds(spec('worker-b', ['worker']), needs).diskFull, false);
  t.equal(hostNeeds(spec('worker-b', ['worker']), { ...needs, diskFullTargets: ['*'] }).diskFull, true, "'*': every worker");
  t.equal(hostNeeds(spec('c', ['coordinator']), { ...needs, diskFullTargets: ['*'] }).diskFull, false);

  const onRoot = await checkHost(fakeRemote(spec('worker-a', ['worker']), { mounts: fx('mount-probe-srv-on-root.txt') }), needs);
  const line = renderInventoryDoctor({ ok: false, checks: onRoot.filter((c) => c.check === 'disk-full') });
  t.equal(line, "FAIL worker-a disk-full: the campaign fills /srv/clink/state here, and it is on the root filesystem (/): filling it would fill the machine's own disk; mount a filesystem of its own at /srv/clink/state or above it -- fix: mount a filesystem of its own (at most 1 GiB) at /srv/clink/state, or target disk-full elsewhere");
  const own = await checkHost(fakeRemote(spec('worker-a', ['worker']), {}), needs);
  t.same(own.filter((c) => c.check === 'disk-full').map((c) => c.ok), [true]);
  const other = await checkHost(fakeRemote(spec('worker-b', ['worker']), { mounts: fx('mount-probe-srv-on-root.txt') }), needs);
  t.same(other.filter((c) => c.check === 'disk-full'), [], 'a host no disk-full fault fills is not asked');
});


t.test('a sudo login: sudo checked first (id -u through sudo says 0), and a refused sudo is one failed check with its fix', async (t) => {
  const needs: InventoryNeeds = { store: 'minio', engines: [], clockSteps: false };
  const admin = { ...spec('broker-a', ['broker']), ssh: { user: 'admin', port: 22, privateKeyPath: '/k', knownHostsPath: '/kh', sudo: true } };
  const withId = (uid: string): Remote & { commands: string[] } => {
    const base = fakeRemote(admin, {});
    return { ...base, exec: async (cmd: string, o?: object) => (cmd === 'id -u' ? (base.commands.push(cmd), { code: 0, stdout: `${uid}\n`, stderr: '' }) : base.exec(cmd, o)) };
  };
  const root = withId('0');
  const checks = await checkHost(root, needs);
  t.same(checks.map((c) => [c.check, c.ok]), [['sudo', true], ['clock', true], ['java', true], ['iptables', true], ['disk', true], ['ports', true]]);
  t.equal(root.commands[0], 'id -u', "sudo's first command says who ran it");
  t.match(checks[0]!.detail, /^admin runs commands as root through sudo -n/);

  const notRoot = await checkHost(withId('1001'), needs);
  t.same(notRoot[0], { host: 'broker-a', check: 'sudo', ok: false, detail: 'sudo -n ran the command as uid 1001, not root', fix: judgeSudo('1001', 'admin').fix });
  t.match(notRoot[0]!.fix, /echo 'admin ALL=\(ALL\) NOPASSWD:ALL' > \/etc\/sudoers\.d\/clink-qual/);

  const refusing: Remote = {
    ...fakeRemote(admin, {}),
    exec: async () => {
      throw new QualError('PRECONDITION', 'broker-a (10.9.0.1): sudo refused: a password is required for admin (...)', { host: 'broker-a', sudoRefused: true });
    },
  };
  const refused = await checkHost(refusing, needs);
  t.equal(refused.length, 1, 'nothing else is checked: every later command would go through the same sudo');
  t.same([refused[0]!.check, refused[0]!.ok], ['sudo', false]);
  t.match(refused[0]!.detail, /sudo refused: a password is required/);

  t.same(judgeSudo('0\n', 'ubuntu').ok, true);
  t.same(judgeSudo('', 'ubuntu').ok, false);
});
