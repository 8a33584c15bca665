#!/usr/bin/env node
/**
 * The headless browser the runs page is tested in: Debian's `chromium` package, installed
 * with apt-get when /usr/bin/chromium is missing (idempotent: a second call installs
 * nothing). Only the tests need it; `runs html` itself needs no browser.
 *
 * CLINK_QUAL_CHROMIUM names another Chromium binary to use instead (then nothing is installed).
 *
 *   node rig/install-browser.ts     # install if missing, print the binary's path and version
 */
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { QualError } from '../lib/errors.ts';

export const DEBIAN_CHROMIUM = '/usr/bin/chromium';

function apt(args: string[], log: (l: string) => void): { ok: boolean; tail: string } {
  log(`apt-get ${args.join(' ')}`);
  // DPkg::Lock::Timeout: wait for another apt-get (rig install, a doctor) instead of failing on its lock.
  const r = spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=600', ...args], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`;
  return { ok: r.status === 0, tail: out.split('\n').slice(-15).join('\n') };
}

/** The Chromium binary to drive: CLINK_QUAL_CHROMIUM, else Debian's, installed first when missing (root only). */
export function ensureChromium(log: (l: string) => void = (l) => console.error(l)): string {
  const given = process.env.CLINK_QUAL_CHROMIUM;
  if (given) {
    if (!existsSync(given)) throw new QualError('PRECONDITION', `CLINK_QUAL_CHROMIUM=${given}: no such file`);
    return given;
  }
  if (existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  if (process.getuid?.() !== 0) {
    throw new QualError('PRECONDITION', `${DEBIAN_CHROMIUM} is missing and installing it needs root: apt-get install -y chromium (or set CLINK_QUAL_CHROMIUM)`);
  }
  // Install from the lists already on the machine; when they are stale or absent, update them once and retry.
  let r = apt(['install', '-y', '-qq', '--no-install-recommends', 'chromium'], log);
  if (!r.ok) {
    const u = apt(['update', '-qq'], log);
    if (!u.ok) throw new QualError('INSTALL_FAILED', `apt-get update failed:\n${u.tail}`);
    r = apt(['install', '-y', '-qq', '--no-install-recommends', 'chromium'], log);
  }
  if (!r.ok || !existsSync(DEBIAN_CHROMIUM)) throw new QualError('INSTALL_FAILED', `apt-get install chromium failed:\n${r.tail}`);
  return DEBIAN_CHROMIUM;
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const bin = ensureChromium();
  const v = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  console.log(`${bin}: ${(v.stdout || v.stderr || '').trim()}`);
}
