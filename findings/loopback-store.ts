/**
 * The S3 store a finding's experiment runs against on loopback (no rig): started on
 * 127.0.0.1 on a fresh data directory, its bucket created once it answers, and stopped and
 * removed after. Shared by findings/minio-complete-cancel.ts (MinIO or SeaweedFS) and
 * findings/minio-bitrot.ts (MinIO).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';

/** The store under test: which server, its binary, its data directory (made fresh by the caller), port and root credentials. */
export interface LoopbackStoreOptions {
  store: 'minio' | 'seaweedfs';
  bin: string;
  dir: string;
  port: number;
  user: string;
  pass: string;
  /** MinIO's drives: 1, a single drive (`dir/data`); 4 or more, one erasure set (`dir/d1` … `dir/dN`). */
  drives?: number;
}

/** MinIO's drive directories under `dir`: `data` for a single drive, `d1` … `dN` for an erasure set. */
export function minioDriveDirs(dir: string, drives: number): string[] {
  return drives === 1 ? [path.join(dir, 'data')] : Array.from({ length: drives }, (_, i) => path.join(dir, `d${i + 1}`));
}

/**
 * MinIO's command line on 127.0.0.1:port over its drives (the `{1...N}` expansion for an
 * erasure set), with the console on port + 1 when the build has one (`consoleAddress`:
 * MinIO before mid-2021 has no embedded console and refuses --console-address).
 */
export function minioServerArgs(o: LoopbackStoreOptions, consoleAddress: boolean): string[] {
  const drives = o.drives ?? 1;
  const data = drives === 1 ? minioDriveDirs(o.dir, 1)[0]! : path.join(o.dir, `d{1...${drives}}`);
  return ['server', data, '--address', `127.0.0.1:${o.port}`, ...(consoleAddress ? ['--console-address', `127.0.0.1:${o.port + 1}`] : []), '--quiet'];
}

/**
 * SeaweedFS's `weed server -s3` on loopback: master, volume, filer and S3 gateway in one
 * process (ports port + 2 … port + 4, S3 on port), its identities in `dir/s3.json`.
 */
export function seaweedfsServerArgs(o: LoopbackStoreOptions): string[] {
  const p = o.port;
  return ['server', `-dir=${path.join(o.dir, 'weed')}`, '-ip=127.0.0.1', '-ip.bind=127.0.0.1', `-master.port=${p + 2}`, `-volume.port=${p + 3}`, `-filer.port=${p + 4}`, '-s3', `-s3.port=${p}`, `-s3.config=${path.join(o.dir, 's3.json')}`];
}

/** Starts the store under test on 127.0.0.1:port over fresh directories under `dir`. */
export function startLoopbackStore(o: LoopbackStoreOptions): ChildProcess {
  if (o.store === 'minio') {
    const drives = o.drives ?? 1;
    for (const d of minioDriveDirs(o.dir, drives)) mkdirSync(d, { recursive: true });
    const consoleAddress = spawnSync(o.bin, ['server', '--help'], { encoding: 'utf8' }).stdout.includes('--console-address');
    return spawn(o.bin, minioServerArgs(o, consoleAddress), {
      env: { ...process.env, MINIO_ROOT_USER: o.user, MINIO_ROOT_PASSWORD: o.pass, MINIO_UPDATE: 'off', MINIO_CI_CD: '1' },
      stdio: 'ignore',
    });
  }
  writeFileSync(
    path.join(o.dir, 's3.json'),
    JSON.stringify({ identities: [{ name: o.user, credentials: [{ accessKey: o.user, secretKey: o.pass }], actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'] }] }),
  );
  mkdirSync(path.join(o.dir, 'weed'));
  return spawn(o.bin, seaweedfsServerArgs(o), { stdio: 'ignore' });
}

/**
 * Creates `Bucket` once the store answers: tries every `intervalMs` up to `tries` times (2
 * minutes by default; a store still starting refuses the connection). Already owning it is
 * success. Returns whether the bucket is there (the experiment's first request says why not).
 */
export async function createBucketWhenUp(s3: Pick<S3Client, 'send'>, Bucket: string, tries = 240, intervalMs = 500): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    try {
      await s3.send(new CreateBucketCommand({ Bucket }));
      return true;
    } catch (e) {
      if ((e as Error).name === 'BucketAlreadyOwnedByYou') return true;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
  return false;
}

/** Stops the store (thawed first, in case the experiment left it SIGSTOPped) and removes its data directory. */
export function stopLoopbackStore(server: ChildProcess, dir: string): void {
  server.kill('SIGCONT');
  server.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
