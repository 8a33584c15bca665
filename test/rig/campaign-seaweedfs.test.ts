/**
 * The quick campaign on the second store, through the real CLI: campaigns/quick-seaweedfs.yaml
 * (quick.yaml with `store: seaweedfs`) switches the live rig's store to the pinned SeaweedFS
 * S3 gateway and must PASS (exit 0) with its store outages landed on weed's process (SIGSTOP,
 * state T, a request timing out) and recovered, the decisive composition in order, the store
 * recorded in provenance.json and named in the report, and F-1 (MinIO's) not carried.
 * Afterwards the rig is switched back to the store it ran before, for the tests after this one.
 *
 * Slow (a cold SeaweedFS build of several minutes on first use, then a 7-minute campaign): it
 * runs only with CLINK_QUAL_SEAWEEDFS=1, e.g.
 * `CLINK_QUAL_SEAWEEDFS=1 ./clink-qual test test/rig/campaign-seaweedfs.test.ts`; CI's suite
 * leaves it out to stay within its 90 minutes.
 */
import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Provenance } from '../../lib/evidence.ts';
import { PINS } from '../../rig/install.ts';
import { closeAllRemotes } from '../../rig/ssh.ts';
import { readRigState } from '../../rig/state.ts';
import { storeKindOf } from '../../rig/store.ts';
import { switchStore } from '../../rig/up.ts';
import { assertDecisiveComposition, leftovers, runPassingCampaign } from '../helpers/campaign.ts';

if (process.env.CLINK_QUAL_SEAWEEDFS !== '1') {
  t.plan(0, 'skipped: set CLINK_QUAL_SEAWEEDFS=1 to run the quick campaign on SeaweedFS (docs/stores.md)');
} else {
  const before = storeKindOf(readRigState().store);
  t.teardown(async () => {
    await switchStore(readRigState(), before, (l) => t.comment(l));
    await closeAllRemotes();
  });
  t.test('quick campaign passes on SeaweedFS', quickOnSeaweedfs);
}

async function quickOnSeaweedfs(t: Test): Promise<void> {
  const runId = `ci-quick-seaweedfs-${Date.now()}`;
  const { runDir, chaos, recovered } = runPassingCampaign(t, 'campaigns/quick-seaweedfs.yaml', runId, 25 * 60_000);
  t.equal(storeKindOf(readRigState().store), 'seaweedfs', 'rig.json names the store the campaign switched to');

  const provenance = JSON.parse(readFileSync(path.join(runDir, 'provenance.json'), 'utf8')) as Provenance;
  t.same(provenance.store, { name: 'seaweedfs', version: PINS.seaweedfs });
  t.equal(provenance.storeSettings, undefined, "no MinIO setting recorded for SeaweedFS");

  const outages = chaos.filter((c) => c.kind === 'store-outage' && c.phase === 'landed');
  t.ok(outages.length > 0, 'store outages landed');
  for (const o of outages) {
    const ev = o.evidence as { state?: string; requestTimedOutMs?: number; pid?: number };
    t.equal(ev.state, 'T', `${o.faultId}: weed (pid ${ev.pid}) stopped`);
    t.ok(typeof ev.requestTimedOutMs === 'number', `${o.faultId}: a request to it timed out`);
  }
  for (const o of outages) t.ok(recovered.has(o.faultId), `${o.faultId} recovered`);
  assertDecisiveComposition(t, chaos, 'SeaweedFS');

  const report = readFileSync(path.join(runDir, 'report.md'), 'utf8');
  t.match(report, `| Store | seaweedfs ${PINS.seaweedfs} on the store host`);
  t.match(report, `against seaweedfs ${PINS.seaweedfs}`);
  t.notMatch(report, 'F-1', "MinIO's F-1 is not SeaweedFS's");
  t.same((await leftovers()).filter((h) => h.rules || h.stopped.length), [], 'no rule or stopped process left');
}

