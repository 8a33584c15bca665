/**
 * The rig's state file (<stateDir>/rig.json), written by `rig up` and read by every later
 * command and by the integration tests. Credentials sit in their own 0600 file.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { QualError } from '../lib/errors.ts';
import { stateDir } from '../lib/paths.ts';
import type { RigState, StoreCredentials } from './types.ts';

export function rigStatePath(): string {
  return path.join(stateDir(), 'rig.json');
}

/** The live rig's state, or a PRECONDITION error telling the user to run `rig up`. */
export function readRigState(): RigState {
  const p = rigStatePath();
  if (!existsSync(p)) throw new QualError('PRECONDITION', `no rig is up (${p} is missing). Run 'clink-qual rig up' first.`);
  return JSON.parse(readFileSync(p, 'utf8')) as RigState;
}

export function readStoreCredentials(state: RigState): StoreCredentials {
  return JSON.parse(readFileSync(state.store.credentialsFile, 'utf8')) as StoreCredentials;
}
