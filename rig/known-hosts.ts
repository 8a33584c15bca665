/**
 * Pinned host keys, in OpenSSH known_hosts format. The rig writes one for `local` and reads
 * the user's for `inventory`. A host is matched by its address (`addr`, or `[addr]:port`
 * when the port is not 22), in plain or hashed (`|1|salt|hmac`) form; `@revoked` lines
 * refuse a key, `@cert-authority` lines are ignored (not supported: a certificate host key
 * is then an unknown key).
 */
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';

export interface KnownHostKey {
  type: string;
  /** base64 of the public key blob, as in the file. */
  key: string;
  revoked: boolean;
}

export function hostPattern(address: string, port: number): string {
  return port === 22 ? address : `[${address}]:${port}`;
}

function matchesName(field: string, name: string): boolean {
  for (const pat of field.split(',')) {
    if (pat.startsWith('|1|')) {
      const [, , salt, hash] = pat.split('|');
      if (!salt || !hash) continue;
      const h = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64');
      if (h === hash) return true;
    } else if (pat === name) return true;
  }
  return false;
}

/** Every key the file pins for this address and port (empty when the file or the host is missing). */
export function knownKeysFor(knownHostsPath: string, address: string, port: number): KnownHostKey[] {
  if (!existsSync(knownHostsPath)) return [];
  const name = hostPattern(address, port);
  const out: KnownHostKey[] = [];
  for (const raw of readFileSync(knownHostsPath, 'utf8').split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const parts = line.split(/\s+/);
    let revoked = false;
    if (parts[0]!.startsWith('@')) {
      const marker = parts.shift();
      if (marker === '@cert-authority') continue;
      revoked = marker === '@revoked';
    }
    const [names, type, key] = parts;
    if (!names || !type || !key) continue;
    if (matchesName(names, name)) out.push({ type, key, revoked });
  }
  return out;
}

/** True when the presented key blob is pinned for this host and not revoked. */
export function isPinned(knownHostsPath: string, address: string, port: number, keyBlob: Buffer): boolean {
  const b64 = keyBlob.toString('base64');
  const keys = knownKeysFor(knownHostsPath, address, port);
  if (keys.some((k) => k.revoked && k.key === b64)) return false;
  return keys.some((k) => !k.revoked && k.key === b64);
}
