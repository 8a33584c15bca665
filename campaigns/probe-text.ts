/**
 * A valid campaign's YAML text with some of its sections replaced: the starting point of the
 * input probes (issue 29 item 3), shared by their unit tests
 * (test/unit/bin/commands/campaign-plan.bounds.test.ts) and their benchmark
 * (bench/input-probes.ts), so both probe the same campaign.
 */

/** The sections a probe may replace, each as whole YAML lines (`faults:\n  - ...`), or the description's text. */
export interface ProbeCampaignParts {
  workload?: string;
  gate?: string;
  engine?: string;
  faults?: string;
  compositions?: string;
  schedule?: string;
  rig?: string;
  description?: string;
}

/** A valid campaign's text (a 300 s local soak of 2 worker kills) with its sections replaced by `parts`. */
export function campaignText(parts: ProbeCampaignParts = {}): string {
  return [
    'name: probe',
    ...(parts.description !== undefined ? [`description: "${parts.description}"`] : []),
    'seed: "s"',
    parts.rig ?? 'rig: { kind: local }',
    parts.engine ?? 'engine: { name: clink, mutant: none }',
    parts.workload ?? 'workload: { rate: 300, partitions: 4, keys: 50000, checkpointIntervalS: 6, soakS: 300 }',
    parts.gate ?? 'gate: { deadlineS: 60, fault: worker-kill }',
    parts.faults ?? 'faults:\n  - { kind: worker-kill, count: 2 }',
    parts.compositions ?? 'compositions: []',
    parts.schedule ?? 'schedule: { startAfterS: 10, spacingS: 15 }',
    'deadlines: { recoveryS: 60, drainS: 45, recountS: 30, sampleStuckS: 45 }',
    'oracle: { sampleIntervalS: 5 }',
    '',
  ].join('\n');
}
