/**
 * smoke's `rig install` asks for the parts of its campaign's engine and store only: the Clink
 * smoke installs none of Flink's, a Flink smoke installs Flink's before its rig comes up, and
 * one on SeaweedFS builds that store first (bin/commands/smoke.ts smokeInstallAsk).
 */
import path from 'node:path';
import t from 'tap';
import { SMOKE_CAMPAIGNS, smokeInstallAsk } from '../../../../bin/commands/smoke.ts';
import { repoRoot } from '../../../../lib/paths.ts';
import { installPlan } from '../../../../rig/install-plan.ts';

const file = (f: string) => path.join(repoRoot, f);

t.test("each engine's smoke asks for its own engine's parts, on the store its campaign resolves to (MinIO)", async (t) => {
  t.same(smokeInstallAsk(file(SMOKE_CAMPAIGNS.clink!)), { engines: ['clink'], stores: ['minio'] });
  t.same(smokeInstallAsk(file(SMOKE_CAMPAIGNS.flink!)), { engines: ['flink'], stores: ['minio'] });
});

t.test("a fresh machine's Clink smoke installs no optional part; the Flink smoke installs Flink's", async (t) => {
  t.same(installPlan(smokeInstallAsk(file(SMOKE_CAMPAIGNS.clink!)), []), { flink: false, seaweedfs: false });
  t.same(installPlan(smokeInstallAsk(file(SMOKE_CAMPAIGNS.flink!)), []), { flink: true, seaweedfs: false });
});

t.test('a campaign on SeaweedFS asks for that store too', async (t) => {
  t.same(smokeInstallAsk(file('campaigns/quick-seaweedfs.yaml')), { engines: ['clink'], stores: ['seaweedfs'] });
  t.same(smokeInstallAsk(file('campaigns/flink-quick-seaweedfs.yaml')), { engines: ['flink'], stores: ['seaweedfs'] });
});
