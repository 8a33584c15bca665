/**
 * campaigns/load.ts: the campaign's `store` (minio or seaweedfs, default minio), and the fault
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
