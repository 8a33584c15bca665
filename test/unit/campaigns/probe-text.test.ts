import t from 'tap';
import { parseCampaign } from '../../../campaigns/load.ts';
import { campaignText } from '../../../campaigns/probe-text.ts';

t.test('the probes\' campaign is valid as it stands: a 300 s local soak with 2 worker kills', async (t) => {
  const c = parseCampaign(campaignText(), 'probe.yaml');
  t.equal(c.name, 'probe');
  t.same(c.rig, { kind: 'local' });
  t.equal(c.workload.soakS, 300);
  t.same(c.faults.map((f) => [f.kind, f.count]), [['worker-kill', 2]]);
  t.equal(c.description, undefined, 'no description unless one is given');
});

t.test('each part replaces its whole section, and only that one', async (t) => {
  const c = parseCampaign(
    campaignText({
      faults: 'faults:\n  - { kind: partition, count: 1, durationS: 10 }',
      gate: 'gate: { deadlineS: 90, fault: worker-kill }',
      description: 'a probe',
    }),
    'probe.yaml',
  );
  t.same(c.faults.map((f) => f.kind), ['partition']);
  t.equal(c.gate.deadlineS, 90);
  t.equal(c.description, 'a probe');
  t.equal(c.workload.rate, 300, 'the workload kept its default');
});
