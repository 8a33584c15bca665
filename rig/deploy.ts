/**
 * Putting files on hosts: a directory mirrored file by file (one remote sha256sum for the
 * whole directory, then only the files that differ), stale files removed so a classpath
 * never picks up an old jar. Local hashes are computed once per process.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { sha256File } from './install.ts';
import { shQuote } from './process.ts';
import type { Remote } from './remote.ts';
import { SshRemote } from './ssh.ts';

const localHashes = new Map<string, Promise<string>>();

export function localSha256(file: string): Promise<string> {
  const st = statSync(file);
  const key = `${file}|${st.size}|${st.mtimeMs}`;
  let h = localHashes.get(key);
  if (!h) {
    h = sha256File(file);
    localHashes.set(key, h);
  }
  return h;
}

async function pool<T>(items: T[], n: number, fn: (t: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: Math.min(n, queue.length) }, async () => {
      for (let t = queue.shift(); t !== undefined; t = queue.shift()) await fn(t);
    }),
  );
}

/** Uploads a file; the remote's own check skips it when the sha256 matches. */
export async function uploadFile(remote: Remote, localPath: string, remotePath: string, mode?: number): Promise<boolean> {
  const sha256 = await localSha256(localPath);
  return (await remote.upload(localPath, remotePath, { ...(mode !== undefined ? { mode } : {}), sha256 })).copied;
}

/** Mirrors the flat directory localDir to remoteDir. Returns how many files were copied and removed. */
export async function uploadDir(remote: Remote, localDir: string, remoteDir: string): Promise<{ copied: number; removed: number; total: number }> {
  const names = readdirSync(localDir).filter((n) => statSync(path.join(localDir, n)).isFile());
  const local = new Map<string, string>();
  await Promise.all(names.map(async (n) => local.set(n, await localSha256(path.join(localDir, n)))));
  const r = await remote.exec(`mkdir -p ${shQuote(remoteDir)} && cd ${shQuote(remoteDir)} && find . -maxdepth 1 -type f -printf '%f\\0' | xargs -0 -r sha256sum`, { timeoutMs: 120_000 });
  const remoteHashes = new Map<string, string>();
  for (const line of r.stdout.split('\n')) {
    const m = /^([0-9a-f]{64})\s+\*?(.+)$/.exec(line);
    if (m) remoteHashes.set(m[2]!, m[1]!);
  }
  const stale = [...remoteHashes.keys()].filter((n) => !local.has(n));
  if (stale.length) await remote.exec(`cd ${shQuote(remoteDir)} && rm -f -- ${stale.map(shQuote).join(' ')}`);
  const todo = names.filter((n) => remoteHashes.get(n) !== local.get(n));
  await pool(todo, 6, async (n) => {
    if (remote instanceof SshRemote) await remote.putFile(path.join(localDir, n), `${remoteDir}/${n}`, 0o644);
    else await remote.upload(path.join(localDir, n), `${remoteDir}/${n}`, { mode: 0o644, sha256: local.get(n)! });
  });
  return { copied: todo.length, removed: stale.length, total: names.length };
}
