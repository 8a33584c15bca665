/** The inventory parser: valid files parse; malformed ones name file, line and field. No rig needed. */
import t from 'tap';
import { QualError } from '../../../lib/errors.ts';
import { dataDirProblem, parseInventory } from '../../../rig/inventory.ts';

const host = (name: string, role: string, port = '22') => `  - name: ${name}
    address: 10.0.0.${name.length}
    roles: [${role}]
    ssh:
      user: root
      port: ${port}
      key: keys/id_ed25519
      knownHosts: /etc/ssh/known
    dataDir: /opt/cq-${name}
`;
const valid = `hosts:\n${host('w1', 'worker')}${host('coord', 'coordinator')}${host('b1', 'broker')}${host('s1', 'store')}`;

function errorOf(text: string): QualError {
  try {
    parseInventory(text, '/tmp/x/inventory.yaml');
  } catch (err) {
    return err as QualError;
  }
  throw new Error('expected an error');
}

t.test('a valid inventory parses, relative paths resolved against the file', async (t) => {
  const hosts = parseInventory(valid, '/tmp/x/inventory.yaml');
  t.equal(hosts.length, 4);
  t.same(hosts[0]!.roles, ['worker']);
  t.equal(hosts[0]!.ssh.privateKeyPath, '/tmp/x/keys/id_ed25519');
  t.equal(hosts[0]!.ssh.knownHostsPath, '/etc/ssh/known');
  t.equal(hosts[0]!.ssh.port, 22);
});

t.test('a non-integer port names file, line and field', async (t) => {
  const text = `hosts:\n${host('w1', 'worker')}${host('coord', 'coordinator')}${host('b1', 'broker', '"22x"')}${host('s1', 'store')}`;
  const err = errorOf(text);
  t.equal(err.code, 'BAD_INPUT_FILE');
  const line = text.split('\n').findIndex((l) => l.includes('"22x"')) + 1;
  t.equal(err.message, `inventory.yaml:${line}: hosts[2].ssh.port: must be an integer`);
});

t.test('missing fields, unknown fields, bad roles, duplicates: each named with its line', async (t) => {
  const text = `hosts:
  - name: w1
    address: 10.0.0.1
    roles: [worker, chef]
    ssh: { user: root, key: k, knownHosts: kh, colour: blue }
    dataDir: relative/path
  - name: w1
    roles: [coordinator]
    ssh: { user: root, key: k, knownHosts: kh }
    dataDir: /d
`;
  const err = errorOf(text);
  const lines = err.message.split('\n');
  t.ok(lines.includes('inventory.yaml:4: hosts[0].roles[1]: must be one of: worker, coordinator, broker, store'), err.message);
  t.ok(lines.includes('inventory.yaml:5: hosts[0].ssh.colour: unknown field (expected one of: user, port, key, knownHosts, sudo)'), err.message);
  t.ok(lines.some((l) => l.startsWith('inventory.yaml:6: hosts[0].dataDir: must be an absolute path')), err.message);
  t.ok(lines.includes('inventory.yaml:7: hosts[1].address: is required'), err.message);
});

t.test('ssh.sudo: a non-root user with passwordless sudo; root needs none', async (t) => {
  const admin = valid.replace('user: root\n      port: 22\n      key: keys/id_ed25519', 'user: admin\n      sudo: true\n      port: 22\n      key: keys/id_ed25519');
  t.not(admin, valid, 'the first host now logs in as admin');
  const hosts = parseInventory(admin, '/tmp/x/inventory.yaml');
  t.equal(hosts[0]!.ssh.user, 'admin');
  t.equal(hosts[0]!.ssh.sudo, true, 'sudo: true is kept');
  t.equal(hosts[1]!.ssh.user, 'root');
  t.equal(hosts[1]!.ssh.sudo, undefined, 'a root login has no sudo');
  const rootSudo = parseInventory(valid.replace('user: root', 'user: root\n      sudo: false'), '/tmp/x/inventory.yaml');
  t.equal(rootSudo[0]!.ssh.sudo, undefined, 'root with sudo: false logs in as root');
});

t.test('ssh.sudo: a non-root user without it, or a sudo that is not a boolean, is refused with its line', async (t) => {
  const lineOf = (text: string, needle: string) => text.split('\n').findIndex((l) => l.includes(needle)) + 1;
  const noSudo = valid.replace('user: root', 'user: admin');
  t.equal(errorOf(noSudo).message, `inventory.yaml:${lineOf(noSudo, 'user: admin')}: hosts[0].ssh.user: admin is not root: add sudo: true (the user needs passwordless sudo; the rig runs iptables, signals and services as root), or log in as root`);
  const sudoOff = valid.replace('user: root', 'user: admin\n      sudo: false');
  t.equal(errorOf(sudoOff).message, `inventory.yaml:${lineOf(sudoOff, 'sudo: false')}: hosts[0].ssh.sudo: must be true for user admin: the rig runs iptables, signals and services as root (passwordless sudo), or log in as root`);
  const sudoWord = valid.replace('user: root', 'user: admin\n      sudo: "yes"');
  t.equal(errorOf(sudoWord).message, `inventory.yaml:${lineOf(sudoWord, 'sudo: "yes"')}: hosts[0].ssh.sudo: must be true or false`);
});

t.test('role counts are checked', async (t) => {
  const text = `hosts:\n${host('w1', 'worker')}${host('coord', 'coordinator')}${host('b1', 'broker')}${host('b2', 'broker')}${host('s1', 'store')}`;
  const err = errorOf(text);
  t.match(err.message, /inventory\.yaml:2: hosts: needs 1 or at least 3 host\(s\) with role broker \(found 2\)/);
});

t.test('YAML syntax errors name the line', async (t) => {
  const err = errorOf('hosts:\n  - name: [unclosed\n');
  t.equal(err.code, 'BAD_INPUT_FILE');
  t.match(err.message, /^inventory\.yaml:\d+: \(yaml\): /);
});

/** The valid inventory with the first worker's address or dataDir replaced (a YAML double-quoted string). */
const withValue = (field: 'address' | 'dataDir', value: string) =>
  valid.replace(field === 'address' ? 'address: 10.0.0.2\n' : 'dataDir: /opt/cq-w1\n', `${field}: ${JSON.stringify(value)}\n`);

t.test('address: an IPv4 or IPv6 literal or a host name, nothing that a shell or iptables would read as more', async (t) => {
  for (const ok of ['10.231.0.11', '192.168.1.1', '::1', 'fe80::1', '2001:db8::7', 'broker-1', 'worker1.rig.example.com', 'h']) {
    const hosts = parseInventory(withValue('address', ok), '/tmp/x/inventory.yaml');
    t.equal(hosts[0]!.address, ok, ok);
  }
  for (const bad of ['-j', '-jACCEPT', '--dport', '10.0.0.1 -j ACCEPT', '10.0.0.1;reboot', '$(reboot)', '10.0.0.256', '1.2.3', '999.1.1.1', '-host', 'host-', 'a..b', 'under_score', '10.0.0.1/24', 'x'.repeat(254)]) {
    const err = errorOf(withValue('address', bad));
    t.equal(err.code, 'BAD_INPUT_FILE', bad);
    t.match(err.message, /inventory\.yaml:3: hosts\[0\]\.address: must be an IPv4 or IPv6 address or a host name/, bad);
  }
});

t.test('dataDir: an absolute path of safe characters only', async (t) => {
  for (const ok of ['/opt/cq', '/var/lib/clink-qual', '/srv/cq_1/data.d']) {
    t.equal(parseInventory(withValue('dataDir', ok), '/tmp/x/inventory.yaml')[0]!.dataDir, ok, ok);
  }
  // '/' and '/opt/../etc' are refused as system directories (the next test)
  for (const bad of ['opt/cq', 'etc', '/opt/cq/', '/opt/$(reboot)', '/opt/a;b', '/opt/a b', '/opt/`id`', '/opt/x/../cq', '/opt/./x', '/opt//x', '/opt/*', '/opt/a\\b']) {
    const err = errorOf(withValue('dataDir', bad));
    t.equal(err.code, 'BAD_INPUT_FILE', bad);
    t.match(err.message, /inventory\.yaml:\d+: hosts\[0\]\.dataDir: must be an absolute path of letters, digits/, bad);
  }
});

t.test('a system directory as dataDir is refused at the field, however it is spelled', async (t) => {
  const cases: [string, string][] = [
    ['/', '/'],
    ['/etc', '/etc'],
    ['/usr', '/usr'],
    ['/var', '/var'],
    ['/proc', '/proc'],
    ['/sys', '/sys'],
    ['/dev', '/dev'],
    ['/boot', '/boot'],
    ['/bin', '/bin'],
    ['/sbin', '/sbin'],
    ['/lib', '/lib'],
    ['/root', '/root'],
    ['/home', '/home'],
    ['/usr/local', '/usr/local'],
    ['/var/lib', '/var/lib'],
    // the same directories written with trailing slashes, doubled slashes, '.' or '..'
    ['/etc/', '/etc'],
    ['/var//', '/var'],
    ['//etc', '/etc'],
    ['/opt/../etc', '/etc'],
    ['/usr/local/..', '/usr'],
    ['/home/qa/../..', '/'],
    ['/./root', '/root'],
    ['/opt/cq/../../usr/lib/', '/usr/lib'],
  ];
  for (const [dir, seen] of cases) {
    const err = errorOf(withValue('dataDir', dir));
    t.equal(err.code, 'BAD_INPUT_FILE', dir);
    t.equal(err.message, `inventory.yaml:10: hosts[0].dataDir: is the system directory ${seen}: the rig deletes and recreates things under its dataDir; use a folder of its own (e.g. /opt/clink-qual or /srv/clink)`, dir);
  }
  for (const [dir, tree] of [['/proc/cq', '/proc'], ['/sys/fs/cq', '/sys'], ['/dev/shm/cq', '/dev'], ['/etc/clink-qual', '/etc'], ['/boot/cq', '/boot'], ['/usr/lib/cq', '/usr/lib'], ['/opt/../etc/cq', '/etc']] as const) {
    const err = errorOf(withValue('dataDir', dir));
    t.equal(err.message, `inventory.yaml:10: hosts[0].dataDir: is inside the system directory ${tree}: the rig writes and deletes things under its dataDir; use a folder of its own (e.g. /opt/clink-qual or /srv/clink)`, dir);
  }
  for (const ok of ['/home/qa/clink', '/var/lib/clink-qual', '/srv/clink', '/opt/clink-qual', '/usr/local/clink-qual', '/mnt/data/cq', '/etcetera/cq']) {
    t.equal(parseInventory(withValue('dataDir', ok), '/tmp/x/inventory.yaml')[0]!.dataDir, ok, `${ok}: a folder of its own inside (or beside) a system directory is fine`);
  }
  t.equal(dataDirProblem('/opt/cq'), null);
  t.match(dataDirProblem('/opt/cq/') ?? '', /^must be an absolute path/, 'a trailing slash on a folder that is not a system one: refused as written');
});

t.test('two hosts sharing an address and a dataDir, or with one dataDir inside the other, are refused at the field', async (t) => {
  // w1, b1 and s1 share the address 10.0.0.2: one dataDir for two of them would mix their data.
  const same = valid.replace('dataDir: /opt/cq-b1', 'dataDir: /opt/cq-w1');
  const err = errorOf(same);
  const line = same.split('\n').findIndex((l, i, all) => l.includes('dataDir: /opt/cq-w1') && all.slice(0, i).some((x) => x.includes('dataDir: /opt/cq-w1'))) + 1;
  t.equal(err.message, `inventory.yaml:${line}: hosts[2].dataDir: hosts[0] has the same address (10.0.0.2) and dataDir (/opt/cq-w1): each host needs a dataDir of its own`);
  const nested = errorOf(valid.replace('dataDir: /opt/cq-s1', 'dataDir: /opt/cq-w1/store'));
  t.match(nested.message, /^inventory\.yaml:\d+: hosts\[3\]\.dataDir: hosts\[0\] has the same address \(10\.0\.0\.2\) and its dataDir \(\/opt\/cq-w1\) and this one \(\/opt\/cq-w1\/store\) lie one inside the other/);
  // The same dataDir at different addresses (separate machines) is the usual case and fine; so is a sibling folder.
  const coordDir = parseInventory(valid.replace('dataDir: /opt/cq-coord', 'dataDir: /opt/cq-w1'), '/tmp/x/inventory.yaml');
  t.equal(coordDir[1]!.dataDir, '/opt/cq-w1', 'coord (10.0.0.5) may use the dataDir w1 (10.0.0.2) uses');
  t.equal(parseInventory(valid.replace('dataDir: /opt/cq-s1', 'dataDir: /opt/cq-w1x'), '/tmp/x/inventory.yaml')[3]!.dataDir, '/opt/cq-w1x', 'a name that only starts like another is not inside it');
});
