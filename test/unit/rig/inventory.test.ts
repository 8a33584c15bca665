/** The inventory parser: valid files parse; malformed ones name file, line and field. No rig needed. */
import t from 'tap';
import { QualError } from '../../../lib/errors.ts';
import { parseInventory } from '../../../rig/inventory.ts';

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
  t.ok(lines.includes('inventory.yaml:5: hosts[0].ssh.colour: unknown field (expected one of: user, port, key, knownHosts)'), err.message);
  t.ok(lines.some((l) => l.startsWith('inventory.yaml:6: hosts[0].dataDir: must be an absolute path')), err.message);
  t.ok(lines.includes('inventory.yaml:7: hosts[1].address: is required'), err.message);
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
  for (const bad of ['opt/cq', '/opt/cq/', '/', '/opt/$(reboot)', '/opt/a;b', '/opt/a b', '/opt/`id`', '/opt/../etc', '/opt/./x', '/opt//x', '/opt/*', '/opt/a\\b']) {
    const err = errorOf(withValue('dataDir', bad));
    t.equal(err.code, 'BAD_INPUT_FILE', bad);
    t.match(err.message, /inventory\.yaml:\d+: hosts\[0\]\.dataDir: must be an absolute path of letters, digits/, bad);
  }
});

t.test('a system directory as dataDir, or two hosts sharing an address and a dataDir, are refused at the field', async (t) => {
  for (const dir of ['/etc', '/usr', '/var', '/home', '/root', '/proc', '/usr/local']) {
    const err = errorOf(valid.replace('dataDir: /opt/cq-w1', `dataDir: ${dir}`));
    t.equal(err.code, 'BAD_INPUT_FILE');
    t.match(err.message, /^inventory\.yaml:10: hosts\[0\]\.dataDir: must be an absolute path .*not a system directory/, dir);
  }
  t.equal(parseInventory(valid.replace('dataDir: /opt/cq-w1', 'dataDir: /home/qa/clink'), '/tmp/x/inventory.yaml')[0]!.dataDir, '/home/qa/clink', 'a folder inside one is fine');
  // w1, b1 and s1 share the address 10.0.0.2: one dataDir for two of them would mix their data.
  const err = errorOf(valid.replace('dataDir: /opt/cq-b1', 'dataDir: /opt/cq-w1'));
  t.match(err.message, /^inventory\.yaml:\d+: hosts\[2\]\.dataDir: hosts\[0\] has the same address \(10\.0\.0\.2\) and dataDir \(\/opt\/cq-w1\): each host needs a dataDir of its own/);
});
