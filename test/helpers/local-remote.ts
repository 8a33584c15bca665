/**
 * A Remote for unit tests that runs on this machine: exec is `bash -c` here, download and
 * readFile copy/read local files. Only the transport differs from the rig's SSH Remote; the
 * commands are the real ones.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import type { ExecResult, Remote } from '../../rig/remote.ts';
import type { HostSpec } from '../../rig/types.ts';

export function localRemote(dataDir: string, name = 'local'): Remote {
  const host = { name, address: '127.0.0.1', roles: ['worker'], ssh: {}, dataDir } as unknown as HostSpec;
  const unused = () => Promise.reject(new Error('not available on the local test Remote'));
  return {
    host,
    exec: (cmd, opts) =>
      new Promise<ExecResult>((resolve, reject) =>
        execFile('bash', ['-c', cmd], { timeout: opts?.timeoutMs ?? 60_000 }, (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
          if (code !== 0 && opts?.check !== false) reject(new Error(`exit ${code}: ${stderr}`));
          else resolve({ code, stdout, stderr });
        }),
      ),
    download: async (remotePath, localPath) => copyFileSync(remotePath, localPath),
    readFile: async (remotePath) => readFileSync(remotePath),
    upload: unused,
    writeFile: unused,
    close: async () => {},
  };
}
