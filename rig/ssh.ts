/**
 * The Remote implementation over SSH (ssh2), used for every host, local namespaces
 * included.
 *
 * - Host keys are pinned: the `hostVerifier` accepts a key only when the host's
 *   known-hosts file pins exactly that key for its address (and port). An unknown or
 *   changed key fails the handshake with HOST_KEY_MISMATCH before anything is sent (key
 *   exchange precedes authentication, so no command, file or credential leaves).
 * - A host that does not answer within `readyTimeout` (10 s) is HOST_UNREACHABLE, naming it.
 * - One connection per host, opened lazily on first use, reopened after it drops; channels
 *   on it are limited (sshd's MaxSessions defaults to 10) by a small semaphore.
 * - Commands run as `bash -c <cmd>`; a command past its timeout is signalled and its
 *   channel closed.
 * - A sudo login (inventory `ssh: { user: admin, sudo: true }`) runs every command as
 *   `sudo -n bash -c <cmd>`: root runs it, as with a root login, and a sudo that wants a
 *   password fails at once (a PRECONDITION naming the fix) instead of waiting for one. So
 *   everything above this layer (services, iptables, signals, the dead-man timers, doctor's
 *   `ss -p`) is the same for both logins, and nothing needs a root login. SFTP cannot go
 *   through sudo: it runs as the login user, so files are moved through a staging
 *   directory of the user's own (putFile), and reads of files go through `sudo cat`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, type ClientChannel, type SFTPWrapper } from 'ssh2';
import { QualError } from '../lib/errors.ts';
import { sha256File } from './install.ts';
import { isPinned, knownKeysFor } from './known-hosts.ts';
import { shQuote } from './process.ts';
import type { ExecOptions, ExecResult, Remote } from './remote.ts';
import type { HostSpec } from './types.ts';

export const SSH_READY_TIMEOUT_MS = 10_000;
const MAX_CHANNELS = 8;

class Semaphore {
  #free: number;
  #waiters: (() => void)[] = [];
  constructor(n: number) {
    this.#free = n;
  }
  async acquire(): Promise<() => void> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((r) => this.#waiters.push(r));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiters.shift();
      if (next) next();
      else this.#free++;
    };
  }
}

/**
 * The command line sshd runs for `cmd`: `bash -c <cmd>`, behind `sudo -n` for a sudo login
 * (root runs it; -n: never prompt, fail when sudo wants a password).
 */
export function remoteCommandLine(cmd: string, sudo: boolean): string {
  return `${sudo ? 'sudo -n ' : ''}bash -c ${shQuote(cmd)}`;
}

/**
 * For a sudo login, why sudo refused to run a command (from its exit code and standard
 * error), or null when it ran it. Refused: no sudo on the host, a password or a terminal
 * wanted, the user not in sudoers. sudo's own warnings (`unable to resolve host`) are not a refusal.
 */
export function sudoRefusal(code: number | null, stderr: string): string | null {
  if (code === 127 && /\bsudo: (command )?not found/.test(stderr)) return 'sudo is not installed';
  if (code !== 1) return null;
  const m = /^sudo: (a password is required|a terminal is required.*|.*is not in the sudoers file.*|.*is not allowed to (run|execute).*|sorry, you must have a tty.*)$/m.exec(stderr);
  return m ? `sudo refused: ${m[1]!.trim()}` : null;
}

/**
 * The directory a sudo login's SFTP writes into before a file is moved into place:
 * `<dataDir>/.upload-<user>`, created by root and owned by the user (0700). It sits in dataDir
 * so that the move is a rename on the same filesystem (atomic, no second copy) and so that
 * it goes with the rig's other files (`rig down`). Chowning dataDir itself to the user was
 * the other way: but every command runs as root and creates root-owned folders in it, and the
 * services must run as root (iptables, faketime, signals), so SFTP would still meet folders
 * it cannot write; staging keeps every file the rig leaves root-owned, as a root login does.
 */
export function uploadStagingDir(host: Pick<HostSpec, 'dataDir' | 'ssh'>): string {
  return `${host.dataDir}/.upload-${host.ssh.user}`;
}

interface RawResult {
  code: number | null;
  signal?: string;
  stdout: Buffer;
  stderr: string;
}

function fingerprint(blob: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
}

export class SshRemote implements Remote {
  readonly host: HostSpec;
  readonly readyTimeoutMs: number;
  #client: Promise<Client> | null = null;
  #sftp: Promise<SFTPWrapper> | null = null;
  #channels = new Semaphore(MAX_CHANNELS);

  constructor(host: HostSpec, opts: { readyTimeoutMs?: number } = {}) {
    this.host = host;
    this.readyTimeoutMs = opts.readyTimeoutMs ?? SSH_READY_TIMEOUT_MS;
  }

  /** Opens (or reuses) the connection. Throws HOST_KEY_MISMATCH or HOST_UNREACHABLE. */
  connect(): Promise<Client> {
    if (this.#client) return this.#client;
    const { host } = this;
    const p = new Promise<Client>((resolve, reject) => {
      let privateKey: Buffer;
      try {
        privateKey = readFileSync(host.ssh.privateKeyPath);
      } catch (err) {
        reject(new QualError('PRECONDITION', `${host.name}: cannot read SSH key ${host.ssh.privateKeyPath}: ${(err as Error).message}`));
        return;
      }
      const c = new Client();
      let keyProblem: QualError | null = null;
      let settled = false;
      c.on('ready', () => {
        settled = true;
        // Without this, Nagle's algorithm and delayed ACKs add ~40 ms to each of a command's round trips.
        c.setNoDelay(true);
        resolve(c);
      });
      c.on('error', (err: Error & { level?: string; code?: string }) => {
        if (settled) return;
        settled = true;
        if (keyProblem) reject(keyProblem);
        else if (err.level === 'client-authentication')
          reject(new QualError('PRECONDITION', `${host.name} (${host.address}): SSH login as ${host.ssh.user} with key ${host.ssh.privateKeyPath} was refused`, { host: host.name }));
        else
          reject(
            new QualError('HOST_UNREACHABLE', `${host.name} (${host.address}:${host.ssh.port}) is unreachable over SSH: ${err.code ?? err.message}`, { host: host.name, address: host.address }, { cause: err }),
          );
      });
      c.on('close', () => {
        if (this.#client === p) {
          this.#client = null;
          this.#sftp = null;
        }
        if (!settled) {
          settled = true;
          reject(keyProblem ?? new QualError('HOST_UNREACHABLE', `${host.name} (${host.address}:${host.ssh.port}) closed the SSH connection during the handshake`, { host: host.name }));
        }
      });
      c.connect({
        host: host.address,
        port: host.ssh.port,
        username: host.ssh.user,
        privateKey,
        readyTimeout: this.readyTimeoutMs,
        // AES-GCM runs in OpenSSL (node:crypto); it moves uploads several times faster than chacha20.
        algorithms: { cipher: ['aes128-gcm@openssh.com', 'aes256-gcm@openssh.com', 'aes128-ctr', 'aes256-ctr'] },
        keepaliveInterval: 5_000,
        keepaliveCountMax: 4,
        hostVerifier: (key: Buffer) => {
          if (isPinned(host.ssh.knownHostsPath, host.address, host.ssh.port, key)) return true;
          const pinned = knownKeysFor(host.ssh.knownHostsPath, host.address, host.ssh.port);
          keyProblem = new QualError(
            'HOST_KEY_MISMATCH',
            pinned.length
              ? `${host.name} (${host.address}) presented host key ${fingerprint(key)}, which differs from the key pinned in ${host.ssh.knownHostsPath}: refusing to connect`
              : `${host.name} (${host.address}) presented host key ${fingerprint(key)}, which is not in ${host.ssh.knownHostsPath}: refusing to connect`,
            { host: host.name, fingerprint: fingerprint(key) },
          );
          return false;
        },
      });
    });
    this.#client = p;
    p.catch(() => {
      if (this.#client === p) this.#client = null;
    });
    return p;
  }

  /** Whether commands run through sudo (a sudo login). */
  get sudo(): boolean {
    return this.host.ssh.sudo === true && this.host.ssh.user !== 'root';
  }

  async exec(cmd: string, opts: ExecOptions = {}): Promise<ExecResult> {
    const r = await this.#run(cmd, opts);
    const result: ExecResult = { code: r.code, ...(r.signal ? { signal: r.signal } : {}), stdout: r.stdout.toString(), stderr: r.stderr };
    if ((opts.check ?? true) && result.code !== 0) {
      throw new QualError(
        'REMOTE_COMMAND_FAILED',
        `${this.host.name}: command exited ${result.code ?? result.signal ?? 'without status'}: ${cmd.slice(0, 300)}${result.stderr ? `\n${result.stderr.trim().slice(-2000)}` : ''}`,
        { host: this.host.name, code: result.code },
      );
    }
    return result;
  }

  /** Runs the command (through sudo for a sudo login) and returns its standard output as bytes; a refused sudo throws a PRECONDITION whatever `check` says (nothing ran). */
  async #run(cmd: string, opts: ExecOptions = {}): Promise<RawResult> {
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const client = await this.connect();
    const release = await this.#channels.acquire();
    try {
      const result = await new Promise<RawResult>((resolve, reject) => {
        client.exec(remoteCommandLine(cmd, this.sudo), (err: Error | undefined, stream: ClientChannel) => {
          if (err) {
            reject(new QualError('HOST_UNREACHABLE', `${this.host.name}: cannot open an SSH channel: ${err.message}`, { host: this.host.name }, { cause: err }));
            return;
          }
          const out: Buffer[] = [];
          const errOut: Buffer[] = [];
          let code: number | null = null;
          let signal: string | undefined;
          const timer = setTimeout(() => {
            try {
              stream.signal('KILL');
            } catch {
              /* best effort */
            }
            stream.close();
            reject(new QualError('REMOTE_COMMAND_FAILED', `${this.host.name}: command timed out after ${timeoutMs} ms: ${cmd.slice(0, 200)}`, { host: this.host.name }));
          }, timeoutMs);
          stream.on('data', (d: Buffer) => out.push(d));
          stream.stderr.on('data', (d: Buffer) => errOut.push(d));
          stream.on('exit', (c: number | null, s?: string) => {
            code = c;
            if (s) signal = s;
          });
          stream.on('close', () => {
            clearTimeout(timer);
            resolve({ code, ...(signal ? { signal } : {}), stdout: Buffer.concat(out), stderr: Buffer.concat(errOut).toString() });
          });
          if (opts.input !== undefined) stream.end(opts.input);
          else stream.end();
        });
      });
      const refused = this.sudo ? sudoRefusal(result.code, result.stderr) : null;
      if (refused) {
        throw new QualError(
          'PRECONDITION',
          `${this.host.name} (${this.host.address}): ${refused} for ${this.host.ssh.user} (ssh.sudo: true needs passwordless sudo: a line '${this.host.ssh.user} ALL=(ALL) NOPASSWD:ALL' in /etc/sudoers.d/, and the sudo package)`,
          { host: this.host.name, sudoRefused: true },
        );
      }
      return result;
    } finally {
      release();
    }
  }

  #sftpSession(): Promise<SFTPWrapper> {
    if (this.#sftp) return this.#sftp;
    const p = (async () => {
      const client = await this.connect();
      await this.#channels.acquire(); // held for the session's life
      return await new Promise<SFTPWrapper>((resolve, reject) => {
        client.sftp((err: Error | undefined, sftp: SFTPWrapper) => (err ? reject(new QualError('HOST_UNREACHABLE', `${this.host.name}: SFTP: ${err.message}`)) : resolve(sftp)));
      });
    })();
    this.#sftp = p;
    p.catch(() => {
      if (this.#sftp === p) this.#sftp = null;
    });
    return p;
  }

  /** sha256 of a remote file, or null when it does not exist. */
  async remoteSha256(remotePath: string): Promise<string | null> {
    const r = await this.exec(`sha256sum -- ${shQuote(remotePath)} 2>/dev/null | cut -d' ' -f1`, { check: false });
    const h = r.stdout.trim();
    return /^[0-9a-f]{64}$/.test(h) ? h : null;
  }

  async upload(localPath: string, remotePath: string, opts: { mode?: number; sha256?: string } = {}): Promise<{ copied: boolean }> {
    const local = opts.sha256 ?? (await sha256File(localPath));
    const r = await this.exec(`mkdir -p ${shQuote(path.posix.dirname(remotePath))} && { sha256sum -- ${shQuote(remotePath)} 2>/dev/null | cut -d' ' -f1; true; }`);
    if (r.stdout.trim() === local) return { copied: false };
    await this.putFile(localPath, remotePath, opts.mode);
    return { copied: true };
  }

  #staging: Promise<string> | null = null;

  /** A sudo login's staging directory (uploadStagingDir), made once per connection by root and handed to the user. */
  #stagingDir(): Promise<string> {
    if (this.#staging) return this.#staging;
    const dir = uploadStagingDir(this.host);
    const p = this.exec(`install -d -m 0700 -o ${shQuote(this.host.ssh.user)} -- ${shQuote(dir)}`).then(() => dir);
    this.#staging = p;
    p.catch(() => {
      if (this.#staging === p) this.#staging = null;
    });
    return p;
  }

  /**
   * Copies a file over SFTP without checking first (the parent directory must exist): to a
   * temporary name, chmod, then an atomic rename. For a sudo login the temporary file is in
   * the user's staging directory, and root gives it to root and renames it into place.
   */
  async putFile(localPath: string, remotePath: string, mode?: number): Promise<void> {
    const m = mode ?? statSync(localPath).mode & 0o777;
    if (this.sudo) {
      const staged = `${await this.#stagingDir()}/${path.posix.basename(remotePath)}.part-${randomBytes(4).toString('hex')}`;
      await this.#sftpPut(localPath, staged, remotePath, m);
      const q = shQuote(staged);
      await this.exec(`chown 0:0 -- ${q} && chmod ${m.toString(8)} -- ${q} && mv -f -- ${q} ${shQuote(remotePath)} || { rm -f -- ${q}; false; }`);
      return;
    }
    const tmp = `${remotePath}.part-${randomBytes(4).toString('hex')}`;
    await this.#sftpPut(localPath, tmp, remotePath, m);
    const sftp = await this.#sftpSession();
    await new Promise<void>((resolve, reject) =>
      sftp.ext_openssh_rename(tmp, remotePath, (err) => (err ? reject(new QualError('REMOTE_COMMAND_FAILED', `${this.host.name}: rename of ${localPath} to ${remotePath} failed: ${err.message}`)) : resolve())),
    );
  }

  /** SFTP of localPath to tmp (as the login user), chmod'ed to m; `remotePath` is for the messages. */
  async #sftpPut(localPath: string, tmp: string, remotePath: string, m: number): Promise<void> {
    const sftp = await this.#sftpSession();
    const fail = (what: string) => (err: Error) => new QualError('REMOTE_COMMAND_FAILED', `${this.host.name}: ${what} of ${localPath} to ${remotePath} failed: ${err.message}`);
    await new Promise<void>((resolve, reject) =>
      sftp.fastPut(localPath, tmp, { concurrency: 16, chunkSize: 256 * 1024, mode: m }, (err) => (err ? reject(fail('upload')(err)) : resolve())),
    );
    await new Promise<void>((resolve, reject) => sftp.chmod(tmp, m, (err) => (err ? reject(fail('chmod')(err)) : resolve())));
  }

  async writeFile(remotePath: string, content: string | Buffer, opts: { mode?: number } = {}): Promise<void> {
    const tmp = `${remotePath}.part-${randomBytes(4).toString('hex')}`;
    const mode = (opts.mode ?? 0o644).toString(8);
    await this.exec(
      `mkdir -p ${shQuote(path.posix.dirname(remotePath))} && (umask 077; cat > ${shQuote(tmp)}) && chmod ${mode} ${shQuote(tmp)} && mv -f ${shQuote(tmp)} ${shQuote(remotePath)}`,
      { input: content },
    );
  }

  /** A file's bytes through `sudo cat` (a sudo login's SFTP cannot read root's files). */
  async #sudoCat(remotePath: string): Promise<Buffer> {
    const r = await this.#run(`cat -- ${shQuote(remotePath)}`, { timeoutMs: 300_000 });
    if (r.code !== 0) throw new QualError('REMOTE_COMMAND_FAILED', `${this.host.name}: cannot read ${remotePath}: ${r.stderr.trim().split('\n').pop() || `cat exited ${r.code}`}`);
    return r.stdout;
  }

  async readFile(remotePath: string): Promise<Buffer> {
    if (this.sudo) return this.#sudoCat(remotePath);
    const sftp = await this.#sftpSession();
    return await new Promise<Buffer>((resolve, reject) =>
      sftp.readFile(remotePath, (err: Error | undefined, data: Buffer) =>
        err ? reject(new QualError('REMOTE_COMMAND_FAILED', `${this.host.name}: cannot read ${remotePath}: ${err.message}`)) : resolve(data),
      ),
    );
  }

  async download(remotePath: string, localPath: string): Promise<void> {
    mkdirSync(path.dirname(localPath), { recursive: true });
    if (this.sudo) {
      writeFileSync(localPath, await this.#sudoCat(remotePath));
      return;
    }
    const sftp = await this.#sftpSession();
    await new Promise<void>((resolve, reject) =>
      sftp.fastGet(remotePath, localPath, (err) => (err ? reject(new QualError('REMOTE_COMMAND_FAILED', `${this.host.name}: cannot download ${remotePath}: ${err.message}`)) : resolve())),
    );
  }

  async close(): Promise<void> {
    const p = this.#client;
    this.#client = null;
    this.#sftp = null;
    this.#staging = null;
    if (!p) return;
    try {
      const c = await p;
      await new Promise<void>((resolve) => {
        c.once('close', () => resolve());
        c.end();
        setTimeout(resolve, 2000).unref();
      });
    } catch {
      /* never connected */
    }
  }
}

const pool = new Map<string, SshRemote>();

/** The pooled Remote for a host (by name; a changed address, user or key makes a new one). Connects lazily. */
export function remoteFor(host: HostSpec): SshRemote {
  const key = `${host.name}|${host.address}|${host.ssh.port}|${host.ssh.user}|${host.ssh.sudo === true}|${host.ssh.privateKeyPath}|${host.ssh.knownHostsPath}`;
  let r = pool.get(key);
  if (!r) {
    r = new SshRemote(host);
    pool.set(key, r);
  }
  return r;
}

/** Closes every pooled connection (call before a command exits, or the sockets keep Node alive). */
export async function closeAllRemotes(): Promise<void> {
  const all = [...pool.values()];
  pool.clear();
  await Promise.all(all.map((r) => r.close()));
}
