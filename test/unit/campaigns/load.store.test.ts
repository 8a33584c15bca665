/**
 * campaigns/load.ts: the campaign's `store` (minio or seaweedfs, default minio; MinIO's drive
 * layout, `{ kind: minio, drives: 4 }`, refused for seaweedfs and for counts but 1 or 4), and the fault
 * kinds refused on a store whose files they do not know (store-bitrot works on MinIO's own
 * files only), through the loader and through `campaign plan` (exit 254, FILE:LINE: FIELD).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCampaign, parseCampaign } from '../../../campaigns/load.ts';
import { FAULT_SPECS } from '../../../chaos/kinds.ts';
import { problems } from '../../helpers/campaign-problems.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const cli = path.join(repo, 'bin', 'clink-qual.ts');

/** A small valid campaign with a `store` line (or none) and the given fault lines. */
function text(store: string | undefined, ...faults: string[]): string {
  return ['name: s', 'seed: "s"', ...(store !== undefined ? [`store: ${store}`] : []), 'workload: { rate: 10, soakS: 300 }', 'schedule: { spacingS: 10 }', 'faults:', ...faults].join('\n') + '\n';
}

t.test('store: minio by default, seaweedfs when named', async (t) => {
  t.equal(parseCampaign(text(undefined, '  - { kind: worker-kill }'), 's.yaml').store, 'minio', 'no store line: MinIO');
  t.equal(parseCampaign(text('minio', '  - { kind: worker-kill }'), 's.yaml').store, 'minio');
  t.equal(parseCampaign(text('seaweedfs', '  - { kind: worker-kill }'), 's.yaml').store, 'seaweedfs');
  t.equal(loadCampaign(path.join(repo, 'campaigns', 'quick.yaml')).store, 'minio', 'the shipped quick campaign stays on MinIO');
});

t.test('an unknown store is refused at its line', async (t) => {
  t.same(problems(() => parseCampaign(text('ceph', '  - { kind: worker-kill }'), 's.yaml')), ['s.yaml:3: store: must be one of: minio, seaweedfs (found "ceph")']);
});

t.test('store-bitrot is refused on seaweedfs, naming the fault; the other store faults are not', async (t) => {
  t.same(FAULT_SPECS['store-bitrot'].stores, ['minio'], 'the kind declares the one store whose files it knows');
  t.same(problems(() => parseCampaign(text('seaweedfs', '  - { kind: worker-kill }', '  - { kind: store-bitrot, variant: committed }'), 's.yaml')), [
    "s.yaml:8: faults[1].kind: store-bitrot works on minio's own files only, and this campaign's store is seaweedfs (the top-level 'store')",
  ]);
  const inComposition = [
    'name: s',
    'seed: "s"',
    'store: seaweedfs',
    'workload: { rate: 10, soakS: 300 }',
    'schedule: { spacingS: 10 }',
    'faults: []',
    'compositions:',
    '  - name: rot-then-kill',
    '    steps:',
    '      - { kind: store-bitrot, variant: staged, afterS: 0 }',
    '      - { kind: worker-kill, afterS: 5 }',
  ].join('\n');
  t.same(problems(() => parseCampaign(inComposition, 'c.yaml')), [
    "c.yaml:10: compositions[0].steps[0].kind: store-bitrot works on minio's own files only, and this campaign's store is seaweedfs (the top-level 'store')",
  ]);
  t.equal(parseCampaign(text('minio', '  - { kind: store-bitrot, variant: committed }'), 's.yaml').faults[0]!.kind, 'store-bitrot', 'accepted on MinIO');
  const ok = parseCampaign(text('seaweedfs', '  - { kind: store-outage, durationS: 10 }', '  - { kind: store-tamper, variant: overwrite }', '  - { kind: partition, durationS: 10, targets: [store] }'), 's.yaml');
  t.same(ok.faults.map((f) => f.kind), ['store-outage', 'store-tamper', 'partition'], 'outage, tamper and a partition of the store work on both');
});

t.test('campaign plan refuses store-bitrot on seaweedfs with exit 254 and FILE:LINE: FIELD', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-store-plan-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'rot.yaml');
  writeFileSync(file, text('seaweedfs', '  - { kind: store-bitrot, variant: read, durationS: 10 }'));
  const r = spawnSync(process.execPath, [cli, 'campaign', 'plan', file], { cwd: repo, encoding: 'utf8', timeout: 60_000 });
  t.equal(r.status, 254, r.stderr);
  t.match(r.stderr, /rot\.yaml:7: faults\[0\]\.kind: store-bitrot works on minio's own files only, and this campaign's store is seaweedfs/);
  const fine = path.join(dir, 'outage.yaml');
  writeFileSync(fine, text('seaweedfs', '  - { kind: store-outage, durationS: 10 }'));
  const p = spawnSync(process.execPath, [cli, 'campaign', 'plan', fine], { cwd: repo, encoding: 'utf8', timeout: 60_000 });
  t.equal(p.status, 0, p.stderr);
  t.match(p.stdout.split('\n')[0], /^campaign s \(.*outage\.yaml\), seed "s", store seaweedfs$/, "the plan's first line names the store");
});

t.test("store's drive layout: the plain name is one drive; { kind: minio, drives: 4 } is four erasure-coded", async (t) => {
  const fault = '  - { kind: worker-kill }';
  t.equal(parseCampaign(text(undefined, fault), 's.yaml').storeDrives, 1, 'no store line: one drive');
  t.equal(parseCampaign(text('minio', fault), 's.yaml').storeDrives, 1, 'the plain string form is still accepted: one drive');
  const four = parseCampaign(text('{ kind: minio, drives: 4 }', fault), 's.yaml');
  t.same([four.store, four.storeDrives], ['minio', 4], 'the kind stays the store every check reads');
  t.same([parseCampaign(text('{ kind: minio, drives: 1 }', fault), 's.yaml').storeDrives, parseCampaign(text('{ kind: minio }', fault), 's.yaml').storeDrives], [1, 1]);
  t.same([parseCampaign(text('{ kind: seaweedfs }', fault), 's.yaml').store, parseCampaign(text('{ kind: seaweedfs }', fault), 's.yaml').storeDrives], ['seaweedfs', 1]);
  const erasure = loadCampaign(path.join(repo, 'campaigns', 'corruption-erasure.yaml'));
  t.same([erasure.store, erasure.storeDrives], ['minio', 4], 'corruption-erasure.yaml runs on the four drives');
  t.same(erasure.faults.filter((f) => f.kind === 'store-bitrot').map((f) => f.variant), ['committed', 'staged', 'read'], "corruption.yaml's three store-bitrot variants");
  t.equal(erasure.engine.mutant, 'none', 'the control: the correct engine');
  t.ok(erasure.workload.soakS <= 600, 'short: a soak of at most 10 minutes');
  t.equal(loadCampaign(path.join(repo, 'campaigns', 'corruption.yaml')).storeDrives, 1, 'corruption.yaml stays on one drive');
});

t.test('drives is refused for seaweedfs and for any count but 1 or 4, at its line; a bad shape is named', async (t) => {
  const fault = '  - { kind: worker-kill }';
  t.same(problems(() => parseCampaign(text('{ kind: seaweedfs, drives: 4 }', fault), 's.yaml')), [
    "s.yaml:3: store.drives: seaweedfs keeps its data in one directory: drives is MinIO's drive layout only (remove it, or use kind: minio)",
  ]);
  t.same(problems(() => parseCampaign(text('{ kind: seaweedfs, drives: 1 }', fault), 's.yaml')), [
    "s.yaml:3: store.drives: seaweedfs keeps its data in one directory: drives is MinIO's drive layout only (remove it, or use kind: minio)",
  ], 'even drives 1: it names a layout seaweedfs does not have');
  for (const n of [2, 3, 6, 8])
    t.same(problems(() => parseCampaign(text(`{ kind: minio, drives: ${n} }`, fault), 's.yaml')), [
      `s.yaml:3: store.drives: MinIO runs here on 1 drive (single-drive mode) or 4 drives (erasure-coded, 2 data + 2 parity shards on the store host), not ${n}`,
    ]);
  t.same(problems(() => parseCampaign(text('{ kind: minio, drives: 0 }', fault), 's.yaml')), ['s.yaml:3: store.drives: must be >= 1']);
  t.same(problems(() => parseCampaign(text('{ kind: ceph }', fault), 's.yaml')), ['s.yaml:3: store.kind: must be one of: minio, seaweedfs (found "ceph")']);
  t.same(problems(() => parseCampaign(text('{ kind: minio, disks: 4 }', fault), 's.yaml')), ['s.yaml:3: store.disks: unknown field (allowed here: kind, drives)']);
  t.same(problems(() => parseCampaign(text('[minio]', fault), 's.yaml')), ['s.yaml:3: store: must be a store name (minio, seaweedfs) or a mapping { kind: minio, drives: 4 }']);
  const multiline = ['name: s', 'seed: "s"', 'store:', '  kind: minio', '  drives: 3', 'workload: { rate: 10, soakS: 300 }', 'schedule: { spacingS: 10 }', 'faults:', fault].join('\n');
  t.match(problems(() => parseCampaign(multiline, 'm.yaml')), [/^m\.yaml:5: store\.drives: MinIO runs here on 1 drive/], "the drives line, not the store's");
});

t.test('campaign plan names the drive layout on its first line', async (t) => {
  for (const [file, words] of [
    ['corruption-erasure.yaml', 'store minio (erasure-coded, 4 drives)'],
    ['corruption.yaml', 'store minio (single drive)'],
  ] as const) {
    const r = spawnSync(process.execPath, [cli, 'campaign', 'plan', path.join('campaigns', file)], { cwd: repo, encoding: 'utf8', timeout: 60_000 });
    t.equal(r.status, 0, r.stderr);
    t.ok(r.stdout.split('\n')[0]!.endsWith(words), `${file}: ${r.stdout.split('\n')[0]}`);
  }
});
