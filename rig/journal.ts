/**
 * The teardown journal (<stateDir>/teardown.jsonl): every local resource the rig creates
 * is appended here, synchronously, the moment it exists (namespace, link, process), so a
 * run killed at any instant leaves a list that the next `rig up` or `rig down` walks.
 * Processes are recorded with their start time (/proc/<pid>/stat field 22), so a recycled
 * PID is never killed by mistake.
 */
import { appendFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { readJsonl } from '../lib/jsonl.ts';
import { stateDir } from '../lib/paths.ts';

export type JournalEntry =
  | { kind: 'netns'; name: string }
  | { kind: 'link'; name: string }
  | { kind: 'mount'; path: string }
  | { kind: 'pid'; pid: number; startTime: string; what: string };

export function journalPath(): string {
  return path.join(stateDir(), 'teardown.jsonl');
}

export function record(entry: JournalEntry): void {
  mkdirSync(stateDir(), { recursive: true });
  appendFileSync(journalPath(), JSON.stringify(entry) + '\n');
}

export function readJournal(): JournalEntry[] {
  // A torn last line from a killed run is skipped.
  return readJsonl<JournalEntry>(journalPath());
}

export function clearJournal(): void {
  rmSync(journalPath(), { force: true });
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks), or null if the process is gone. */
export function procStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[19] ?? null; // fields from 3 on; 22 - 3 = 19
  } catch {
    return null;
  }
}

export function recordPid(pid: number, what: string): void {
  record({ kind: 'pid', pid, startTime: procStartTime(pid) ?? '', what });
}
