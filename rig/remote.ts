/**
 * How a command reaches a host. The rig implements it over SSH (ssh2) for every host,
 * local namespaces included; nothing above rig/ knows how a host is reached.
 */
import type { HostSpec } from './types.ts';

export interface ExecResult {
  code: number | null;
  signal?: string;
  stdout: string;
  stderr: string;
}

export interface ExecOptions {
  /** Kill the command (and fail) after this many ms. Default 60 s. */
  timeoutMs?: number;
  /** Written to the command's standard input. */
  input?: string | Buffer;
  /** Throw a QualError('REMOTE_COMMAND_FAILED') on a non-zero exit. Default true. */
  check?: boolean;
}

export interface Remote {
  readonly host: HostSpec;
  /** Runs `bash -c cmd` on the host. */
  exec(cmd: string, opts?: ExecOptions): Promise<ExecResult>;
  /** Copies a local file to the host (SFTP), creating parent directories. Skips the copy when the remote file already has the same sha256. */
  upload(localPath: string, remotePath: string, opts?: { mode?: number; /** The local file's sha256 when already known (saves hashing it again). */ sha256?: string }): Promise<{ copied: boolean }>;
  writeFile(remotePath: string, content: string | Buffer, opts?: { mode?: number }): Promise<void>;
  readFile(remotePath: string): Promise<Buffer>;
  /** Copies a remote file to the operations host. */
  download(remotePath: string, localPath: string): Promise<void>;
  close(): Promise<void>;
}
