/**
 * Every command, registered by a lazy loader so `--help` and dispatch load only the
 * command that runs. One file a command: bin/commands/<words-joined-by-dash>.ts.
 */
import type { CommandEntry } from '../../lib/cli.ts';

export const commands: CommandEntry[] = [
  { name: 'smoke', summary: 'Run the smoke rehearsal (campaigns/quick.yaml) on the local rig, setting up what is missing', load: () => import('./smoke.ts') },
  { name: 'campaign plan', summary: "Print a campaign's seeded fault timeline without touching anything", load: () => import('./campaign-plan.ts') },
  { name: 'campaign run', summary: 'Run a campaign: gate, soak, drain, recount, report', load: () => import('./campaign-run.ts') },
  { name: 'campaign shrink', summary: "Shrink a FAILed run's schedule to a minimal one that still fails with the same counter", load: () => import('./campaign-shrink.ts') },
  { name: 'report', summary: "Write a run's report.md and timeline.svg from its evidence alone", load: () => import('./report.ts') },
  { name: 'publish', summary: "Copy a run's evidence and report into a folder to commit (large files gzipped, logs trimmed)", load: () => import('./publish.ts') },
  { name: 'runs', summary: 'List the stored runs: campaign, engine, seed, revision, verdict, duration, first finding', load: () => import('./runs.ts') },
  { name: 'runs show', summary: "Print one stored run's summary (ID may be 'latest')", load: () => import('./runs-show.ts') },
  { name: 'runs html', summary: "Write runs/index.html and each run's report.html (opens with no server)", load: () => import('./runs-html.ts') },
  { name: 'verify', summary: 'Recount a settled bucket from scratch against a seed (a run dir, or explicit settings)', load: () => import('./verify.ts') },
  { name: 'qualify-mutants', summary: 'Run a campaign once per engine mutant (quick.yaml by default) and expect each to be caught', load: () => import('./qualify-mutants.ts') },
  { name: 'test', summary: 'Type-check, run the unit tests, then the rig tests on the local rig (what CI runs; --unit: no rig)', load: () => import('./test.ts') },
  { name: 'doctor', summary: 'Check (read-only) that this machine can run the local rig, one line a check with its fix', load: () => import('./doctor.ts') },
  { name: 'rig install', summary: 'Install what the rig needs (Kafka, MinIO, sshd, iptables; Flink with --engine flink), cached and pinned', load: () => import('./rig-install.ts') },
  { name: 'rig up', summary: 'Bring up the rig (local namespaces by default, or --inventory FILE)', load: () => import('./rig-up.ts') },
  { name: 'rig status', summary: "Show each host, its services and the cluster's health", load: () => import('./rig-status.ts') },
  { name: 'rig down', summary: "Stop everything the rig started and remove it, but the uploaded components and the store's data and credentials, kept for the next 'rig up' (--purge removes those too)", load: () => import('./rig-down.ts') },
];
