/**
 * Where clink-qual keeps things outside the repository.
 *
 * - cacheDir: installed components (Kafka jars, the MinIO binary, the manifest). Survives
 *   across runs and checkouts; `rig install` is idempotent against it.
 * - stateDir: the local rig's live state (host trees, keys, known-hosts, state.json).
 *   `rig down` empties it.
 *
 * Both can be moved with environment variables, which tests and CI may set.
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function cacheDir(): string {
  return process.env.CLINK_QUAL_CACHE ?? path.join(os.homedir(), '.cache', 'clink-qual');
}

export function stateDir(): string {
  return process.env.CLINK_QUAL_STATE ?? '/var/lib/clink-qual';
}

export function runsDir(): string {
  return process.env.CLINK_QUAL_RUNS ?? path.join(repoRoot, 'runs');
}
