import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCampaign, parseCampaign } from '../../../campaigns/load.ts';
import { MANDATORY_FAULT_POINTS } from '../../../campaigns/types.ts';
import { QualError } from '../../../lib/errors.ts';
import { problems } from '../../helpers/campaign-problems.ts';
import { FAULT_KINDS } from '../../../chaos/kinds.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
process.chdir(repo);
const fx = (name: string) => `test/fixtures/campaigns/${name}`;


t.test('malformed campaigns are rejected with file, line and field', async (t) => {
  const cases: [string, string[]][] = [
    ['bad-type.yaml', ['test/fixtures/campaigns/bad-type.yaml:11: faults[2].durationS: must be a number']],
    ['bad-unknown-field.yaml', ['test/fixtures/campaigns/bad-unknown-field.yaml:9: faults[0].cnt: unknown field (allowed here: kind, count, targets, points, durationS, share, variant, offsetS)']],
    ['bad-missing-field.yaml', ['test/fixtures/campaigns/bad-missing-field.yaml:2: seed: required field is missing']],
    ['bad-missing-duration.yaml', ['test/fixtures/campaigns/bad-missing-duration.yaml:11: faults[2].durationS: required field is missing']],
    [
      'bad-point.yaml',
      [
        `test/fixtures/campaigns/bad-point.yaml:9: faults[0].points[1]: unknown protocol point 'sink.before-prepair' (the engine has: ${[...MANDATORY_FAULT_POINTS, 'sink.recover.before-commit', 'sink.recover.after-commit'].join(', ')})`,
      ],
    ],
    [
      'bad-target.yaml',
      [
        "test/fixtures/campaigns/bad-target.yaml:7: faults[0].targets[1]: 'broker-2' cannot be a worker-kill target (worker-kill targets workers: worker-1, worker-2, worker-3)",
        "test/fixtures/campaigns/bad-target.yaml:11: faults[1].targets[1]: 'worker-9' is not a host of this rig (broker-restart targets brokers: broker-1, broker-2, broker-3)",
      ],
    ],
    ['bad-syntax.yaml', ['test/fixtures/campaigns/bad-syntax.yaml:5: YAML syntax: Flow map in block collection must be sufficiently indented and end with a }']],
    [
      'bad-schedule.yaml',
      ['test/fixtures/campaigns/bad-schedule.yaml:12: schedule.spacingS: the schedule does not fit in the soak: startAfterS 10 s + 6 fault slots × spacingS 20 s = 130 s > workload.soakS 120 s'],
    ],
  ];
  for (const [file, expected] of cases) t.same(problems(() => loadCampaign(fx(file))), expected, file);
});

t.test('the thrown error is a BAD_INPUT_FILE (exit 254) listing every problem in its message', async (t) => {
  try {
    loadCampaign(fx('bad-target.yaml'));
    t.fail('should throw');
  } catch (err) {
    t.ok(err instanceof QualError);
    t.equal((err as QualError).code, 'BAD_INPUT_FILE');
    t.match((err as Error).message, /bad-target\.yaml is not valid \(2 problems\)/);
    t.match((err as Error).message, /bad-target\.yaml:7: faults\[0\]\.targets\[1\]/);
    t.match((err as Error).message, /bad-target\.yaml:11: faults\[1\]\.targets\[1\]/);
  }
});

t.test('all schema problems are reported at once, each on its own line', async (t) => {
  const text = [
    'name: multi', // 1
    'seed: "s"', // 2
    'workload:', // 3
    '  rate: 100', // 4
    '  soakS: 300', // 5
    '  checkpointIntervalS: eight', // 6
    'faults:', // 7
    '  - kind: worker-kill', // 8
    '    durationS: 5', // 9
    '  - kind: fire', // 10
    '  - kind: packet-loss', // 11
    '    share: 1.5', // 12
    '    durationS: 5', // 13
    'schedule: { spacingS: 10 }', // 14
    'colour: blue', // 15
  ].join('\n');
  t.same(problems(() => parseCampaign(text, 'multi.yaml')), [
    'multi.yaml:6: workload.checkpointIntervalS: must be a number',
    'multi.yaml:9: faults[0].durationS: not allowed for kind worker-kill',
    `multi.yaml:10: faults[1].kind: must be one of: ${FAULT_KINDS.join(', ')} (found "fire")`,
    'multi.yaml:12: faults[2].share: must be <= 1',
    'multi.yaml:15: colour: unknown field (allowed here: name, description, seed, rig, store, engine, workload, gate, faults, compositions, schedule, deadlines, oracle, perMutant)',
  ]);
});

t.test('rate or totalEvents, exactly one', async (t) => {
  const base = (w: string) => `name: x\nseed: s\nworkload: { ${w}soakS: 100 }\nfaults: [ { kind: worker-kill } ]\nschedule: { spacingS: 10 }\n`;
  t.same(problems(() => parseCampaign(base(''), 'x.yaml')), ['x.yaml:3: workload: give either rate (events/s) or totalEvents, not both and not neither']);
  t.same(problems(() => parseCampaign(base('rate: 5, totalEvents: 500, '), 'x.yaml')), ['x.yaml:3: workload: give either rate (events/s) or totalEvents, not both and not neither']);
  const c = parseCampaign(base('totalEvents: 1001, '), 'x.yaml');
  t.equal(c.workload.rate, 11, 'rate derived from totalEvents over the soak, rounded up');
  t.equal(c.workload.totalEvents, 1001);
});

t.test('defaults are filled in the resolved campaign', async (t) => {
  const c = parseCampaign('name: d\nseed: s\nworkload: { rate: 10, soakS: 600 }\nfaults:\n  - { kind: worker-kill }\n  - { kind: store-outage, durationS: 5 }\n  - { kind: protocol-point, points: [sink.after-commit] }\nschedule: { spacingS: 30 }\n', 'd.yaml');
  t.same(c.rig, { kind: 'local' });
  t.same(c.engine, { name: 'clink', mutant: 'none' });
  t.same(c.workload, { rate: 10, partitions: 4, keys: 50000, checkpointIntervalS: 8, soakS: 600 });
  t.same(c.gate, { deadlineS: 120, fault: 'worker-kill' });
  t.same(c.schedule, { startAfterS: 10, spacingS: 30, jitterS: 7 });
  t.same(c.deadlines, { recoveryS: 90, drainS: 180, recountS: 120, sampleStuckS: 60 });
  t.same(c.oracle, { sampleIntervalS: 10 });
  t.same(c.compositions, []);
  t.same(c.faults[0], { kind: 'worker-kill', count: 1, targets: ['worker-1', 'worker-2', 'worker-3'] });
  t.same(c.faults[1], { kind: 'store-outage', count: 1, targets: ['store'], durationS: 5 });
  t.same(c.faults[2], { kind: 'protocol-point', count: 1, targets: [], points: ['sink.after-commit'] });
});

t.test("engine.profile: kept when given, checked against the caller's profiles (the engine's), refused for an engine with none", async (t) => {
  const text = (engine: string) => `name: p\nseed: s\nengine: ${engine}\nworkload: { rate: 10, soakS: 600 }\nfaults:\n  - { kind: worker-kill }\nschedule: { spacingS: 30 }\n`;
  t.same(parseCampaign(text('{ name: flink, profile: wide }'), 'p.yaml', { profiles: ['simple', 'wide'] }).engine, { name: 'flink', mutant: 'none', profile: 'wide' });
  t.same(parseCampaign(text('{ name: flink }'), 'p.yaml', { profiles: ['simple', 'wide'] }).engine, { name: 'flink', mutant: 'none' }, 'no profile named: none recorded (the plug runs its default)');
  t.same(parseCampaign(text('{ name: flink, profile: narrow }'), 'p.yaml').engine.profile, 'narrow', 'unchecked without the engine\'s list');
  t.same(problems(() => parseCampaign(text('{ name: flink, profile: narrow }'), 'p.yaml', { profiles: ['simple', 'wide'] })), ["p.yaml:3: engine.profile: unknown job profile 'narrow' (the engine flink has: simple, wide)"]);
  t.same(problems(() => parseCampaign(text('{ name: clink, profile: wide }'), 'p.yaml', { profiles: [] })), ['p.yaml:3: engine.profile: the engine clink deploys one job and has no profiles: remove engine.profile']);
  t.same(problems(() => loadCampaign(fx('bad-profile-clink.yaml'), { profiles: [] })), [`${fx('bad-profile-clink.yaml')}:7: engine.profile: the engine clink deploys one job and has no profiles: remove engine.profile`], 'the line of the field in a block mapping');
  t.same(problems(() => parseCampaign(text("{ name: flink, profile: '' }"), 'p.yaml')), ['p.yaml:3: engine.profile: must NOT have fewer than 1 characters'], 'the schema refuses an empty name');
});

t.test("the allowed protocol points come from the caller (the engine's list)", async (t) => {
  const got = problems(() => loadCampaign('campaigns/quick.yaml', { faultPoints: [...MANDATORY_FAULT_POINTS] }));
  t.equal(got.length, 2);
  t.match(got[0]!, /^campaigns\/quick\.yaml:\d+: compositions\[1\]\.steps\[0\]\.point: unknown protocol point 'sink\.recover\.before-commit'/);
  t.match(got[1]!, /^campaigns\/quick\.yaml:\d+: compositions\[2\]\.steps\[0\]\.point: unknown protocol point 'sink\.recover\.after-commit'/);
});

t.test('inventory rigs: the file must exist, targets are checked by role', async (t) => {
  const text = 'name: inv\nseed: s\nrig: { kind: inventory, file: no-such-inventory.yaml }\nworkload: { rate: 1, soakS: 100 }\nfaults: [ { kind: worker-kill, targets: [worker-7] } ]\nschedule: { spacingS: 10 }\n';
  const got = problems(() => parseCampaign(text, 'inv.yaml'));
  t.equal(got.length, 1);
  t.match(got[0]!, /^inv\.yaml:3: rig\.file: inventory file not found: /);
  t.same(problems(() => parseCampaign('name: inv\nseed: s\nrig: { kind: inventory }\nworkload: { rate: 1, soakS: 100 }\nfaults: [ { kind: worker-kill } ]\nschedule: { spacingS: 10 }\n', 'inv.yaml')), [
    'inv.yaml:3: rig.file: required field is missing',
  ]);
});

t.test("inventory rigs: targets are the inventory's hosts and roles, not the standard names", async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-load-inventory-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const host = (name: string, role: string, address: string, dataDir = '/srv/clink') =>
    `  - name: ${name}\n    address: ${address}\n    roles: [${role}]\n    ssh: { user: root, key: id, knownHosts: known }\n    dataDir: ${dataDir}\n`;
  const hosts = [host('app-a', 'worker', '10.9.0.1'), host('app-b', 'worker', '10.9.0.2'), host('ctl', 'coordinator', '10.9.0.3'), host('kafka-a', 'broker', '10.9.0.4'), host('s3', 'store', '10.9.0.5')];
  const writeInventory = (text: string) => writeFileSync(path.join(dir, 'hosts.yaml'), text);
  const campaign = (faults: string) => `name: inv\nseed: s\nrig: { kind: inventory, file: hosts.yaml }\nworkload: { rate: 1, soakS: 100 }\nfaults:\n${faults}schedule: { spacingS: 10 }\n`;
  const file = path.join(dir, 'inv.yaml');

  writeInventory(`hosts:\n${hosts.join('')}`);
  const ok = parseCampaign(campaign('  - { kind: worker-kill }\n  - { kind: partition, targets: [kafka-a], durationS: 5 }\n  - { kind: store-outage, durationS: 5 }\n'), file);
  t.same(ok.rig, { kind: 'inventory', file: path.join(dir, 'hosts.yaml') });
  t.same(ok.faults.map((f) => f.targets), [['app-a', 'app-b'], ['kafka-a'], ['s3']], "accepted: names of the inventory's own, default targets its hosts of the fault's roles");

  t.same(problems(() => parseCampaign(campaign('  - { kind: worker-kill, targets: [worker-1] }\n  - { kind: broker-restart, targets: [app-a] }\n'), file)), [
    `${file}:6: faults[0].targets[0]: 'worker-1' is not a host of this rig (worker-kill targets workers: app-a, app-b)`,
    `${file}:7: faults[1].targets[0]: 'app-a' cannot be a broker-restart target (broker-restart targets brokers: kafka-a)`,
  ], 'a standard name the inventory lacks is refused, and a host of the wrong role');
  t.same(problems(() => parseCampaign(campaign('  - { kind: worker-kill, targets: [App_A] }\n'), file)), [
    `${file}:6: faults[0].targets[0]: "App_A" is not a host name (lower-case letters, digits and dashes, at most 31: worker-N, broker-N, coordinator, store, or an inventory's name)`,
  ]);

  // The inventory's own refusals reach the campaign at rig.file, each naming the inventory's file, line and field.
  writeInventory(`hosts:\n${hosts.slice(0, 4).join('')}${host('s3', 'store', '10.9.0.4')}`);
  t.same(problems(() => parseCampaign(campaign('  - { kind: worker-kill }\n'), file)), [
    `${file}:3: rig.file: the inventory is not valid: hosts.yaml:26: hosts[4].dataDir: hosts[3] has the same address (10.9.0.4) and dataDir (/srv/clink): each host needs a dataDir of its own`,
  ], 'two hosts sharing an address and a dataDir');
  writeInventory(`hosts:\n${hosts.slice(0, 4).join('')}${host('s3', 'store', '10.9.0.5', '/var/')}`);
  t.same(problems(() => parseCampaign(campaign('  - { kind: worker-kill }\n'), file)), [
    `${file}:3: rig.file: the inventory is not valid: hosts.yaml:26: hosts[4].dataDir: is the system directory /var: the rig deletes and recreates things under its dataDir; use a folder of its own (e.g. /opt/clink-qual or /srv/clink)`,
  ], 'a system directory as dataDir');

  // On the local rig an inventory's name is no host: the standard names stand.
  t.same(problems(() => parseCampaign(campaign('  - { kind: worker-kill, targets: [app-a] }\n').replace('{ kind: inventory, file: hosts.yaml }', '{ kind: local }'), file)), [
    `${file}:6: faults[0].targets[0]: 'app-a' is not a host of this rig (worker-kill targets workers: worker-1, worker-2, worker-3)`,
  ]);
});

t.test('a file that cannot be read is a BAD_INPUT_FILE too', async (t) => {
  t.same(problems(() => loadCampaign('campaigns/no-such.yaml')).length, 1);
  t.match(problems(() => loadCampaign('campaigns/no-such.yaml'))[0], /cannot read campaign campaigns\/no-such\.yaml/);
});

t.test('the new fault kinds: what each needs and refuses', async (t) => {
  const base = ['name: k', 'seed: "s"', 'workload: { rate: 10, soakS: 300 }', 'schedule: { spacingS: 10 }', 'faults:'];
  const load = (...lines: string[]) => parseCampaign([...base, ...lines].join('\n'), 'k.yaml');
  t.same(problems(() => load('  - { kind: store-tamper }')), ['k.yaml:6: faults[0].variant: required field is missing']);
  t.same(problems(() => load('  - { kind: store-tamper, variant: scribble }')), ['k.yaml:6: faults[0].variant: must be one of: foreign-put, overwrite, delete (found "scribble")']);
  t.same(problems(() => load('  - { kind: clock-step, durationS: 5 }')), ['k.yaml:6: faults[0].offsetS: required field is missing']);
  t.match(problems(() => load('  - { kind: clock-step, durationS: 5, offsetS: 0 }')), [/^k\.yaml:6: faults\[0\]\.offsetS: /]);
  t.same(problems(() => load('  - { kind: process-pause }')), ['k.yaml:6: faults[0].durationS: required field is missing']);
  t.same(problems(() => load('  - { kind: disk-full, durationS: 5, targets: [broker-1] }')), [
    "k.yaml:6: faults[0].targets[0]: 'broker-1' cannot be a disk-full target (disk-full targets workers or the coordinator: worker-1, worker-2, worker-3, coordinator)",
  ]);
  t.same(problems(() => load('  - { kind: worker-kill, offsetS: 5 }')), ['k.yaml:6: faults[0].offsetS: not allowed for kind worker-kill']);
  const ok = load('  - { kind: clock-step, durationS: 5, offsetS: -120, targets: [coordinator] }', '  - { kind: store-tamper, variant: delete }', '  - { kind: process-pause, durationS: 12 }', '  - { kind: disk-full, durationS: 12 }');
  t.same(
    ok.faults.map((f) => [f.kind, f.targets, f.offsetS, f.variant, f.durationS]),
    [
      ['clock-step', ['coordinator'], -120, undefined, 5],
      ['store-tamper', ['store'], undefined, 'delete', undefined],
      ['process-pause', ['worker-1', 'worker-2', 'worker-3'], undefined, undefined, 12],
      ['disk-full', ['worker-1', 'worker-2', 'worker-3'], undefined, undefined, 12],
    ],
    'defaults: pause and disk-full pick among the workers, a tamper acts on the store',
  );
});

t.test('campaigns/unknowns.yaml schedules every new kind', async (t) => {
  const c = loadCampaign('campaigns/unknowns.yaml');
  const kinds = new Set([...c.faults.map((f) => f.kind), ...c.compositions.flatMap((x) => x.steps.map((s) => s.kind))]);
  for (const k of ['process-pause', 'store-tamper', 'disk-full', 'clock-step'] as const) t.ok(kinds.has(k), k);
});

t.test("a composition's last: a boolean, resolved only when set", async (t) => {
  const base = (last: string) =>
    `name: x\nseed: s\nworkload: { rate: 5, soakS: 100 }\nfaults: [ { kind: worker-kill } ]\ncompositions:\n  - name: c\n${last}    steps: [ { kind: worker-kill } ]\nschedule: { spacingS: 10 }\n`;
  t.equal(parseCampaign(base('    last: true\n'), 'x.yaml').compositions[0]!.last, true);
  t.notOk('last' in parseCampaign(base(''), 'x.yaml').compositions[0]!, 'absent when not set');
  const p = problems(() => parseCampaign(base('    last: soon\n'), 'x.yaml'));
  t.equal(p.length, 1);
  t.match(p[0]!, /^x\.yaml:7: compositions\[0\]\.last: /, 'file, line and field');
});
