/**
 * Finding F-2 (docs/findings/flink-recommit-length-only.md): Flink 2.2.0's S3 committer takes a
 * foreign object of the expected length at its key as its own commit when it re-commits after a
 * restore (`S3Committer.commitAfterRecovery` compares only the object's length).
 *
 * What it does, on loopback only (no rig, no Flink cluster, no harness faults): starts the
 * cached, pinned MinIO (`rig install` put it in the cache) on 127.0.0.1 with a fresh data
 * directory and a user and password of its own; builds the Java program in
 * findings/flink-recommit-length-only/ with Maven (pinned pom: flink-core and
 * flink-s3-fs-hadoop 2.2.0); runs it. The program drives Flink's own S3RecoverableWriter
 * through four cases (the object left as committed, replaced by a same-length foreign object,
 * replaced by a longer foreign object, deleted) and prints one line per case and
 * `RESULT flink_recommit_length_only reproduced=… …`. Flink's own log lines go to stderr.
 *
 *   node findings/flink-recommit-length-only.ts [--port 19950]
 * Exits with the Java program's status (0 when every case ran, whatever Flink did). The kept
 * output beside the write-up was made with `2>&1 | tee docs/findings/flink-recommit-length-only.txt`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { readManifest } from '../rig/install.ts';

const { values } = parseArgs({ options: { port: { type: 'string', default: '19950' } } });
const port = Number(values.port);
const project = path.join(import.meta.dirname, 'flink-recommit-length-only');
const minio = readManifest().components.find((c) => c.name === 'minio');
if (!minio) throw new Error("MinIO is not in the cache: run './clink-qual rig install' first");

/**
 * Runs a command to its end; resolves with its stdout, rejects on a non-zero status. With echo
 * its stdout and stderr pass through; without (Maven) its stderr is kept and shown only on failure.
 */
function run(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; echo?: boolean }): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', opts.echo ? 'inherit' : 'pipe'] });
    let out = '';
    let err = '';
    p.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (opts.echo) process.stdout.write(d);
    });
    p.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}${err ? `:\n${err}` : ''}`))));
  });
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-finding-f2-'));
const user = 'finding-f2';
const pass = `p-${process.pid}-${Date.now()}`;
const server = spawn(minio.path, ['server', path.join(dir, 'data'), '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${port + 1}`, '--quiet'], {
  env: { ...process.env, MINIO_ROOT_USER: user, MINIO_ROOT_PASSWORD: pass, MINIO_UPDATE: 'off' },
  stdio: 'ignore',
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
try {
  await run('mvn', ['-q', '-B', '-Dstyle.color=never', 'package', '-DskipTests'], { cwd: project });
  const cpFile = path.join(project, 'target', 'classpath.txt');
  await run('mvn', ['-q', '-B', '-Dstyle.color=never', 'dependency:build-classpath', `-Dmdep.outputFile=${cpFile}`], { cwd: project });
  const classpath = [path.join(project, 'target', 'classes'), readFileSync(cpFile, 'utf8').trim()].join(path.delimiter);
  let live = false;
  for (let i = 0; i < 120 && !live; i++) {
    try {
      live = (await fetch(`http://127.0.0.1:${port}/minio/health/live`)).ok;
    } catch {}
    if (!live) await sleep(500);
  }
  if (!live) throw new Error(`MinIO did not come up on 127.0.0.1:${port}`);
  const tmp = path.join(dir, 'flink-tmp');
  mkdirSync(tmp);
  await run('java', ['-cp', classpath, 'qual.clink.findings.RecommitLengthOnly'], {
    cwd: project,
    echo: true,
    env: { ...process.env, F2_ENDPOINT: `http://127.0.0.1:${port}`, F2_USER: user, F2_PASSWORD: pass, F2_BUCKET: 'finding-f2', F2_TMP: tmp, F2_MINIO: minio.version, AWS_JAVA_V1_DISABLE_DEPRECATION_ANNOUNCEMENT: 'true' },
  });
} finally {
  server.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
