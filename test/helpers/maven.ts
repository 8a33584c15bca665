/** Helpers for unit tests that build and run a Maven project of this repo (the Flink job, the fault-point agent) in a temporary copy. */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Whether a tool answers `<cmd> -version` (mvn, java). */
export function has(cmd: string): boolean {
  return spawnSync(cmd, ['-version'], { stdio: 'ignore' }).status === 0;
}

/** A temporary copy of a Maven project's pom.xml and src/ (never its target/), and a function that removes it. */
export function copyMavenProject(projectDir: string, prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  cpSync(path.join(projectDir, 'pom.xml'), path.join(dir, 'pom.xml'));
  cpSync(path.join(projectDir, 'src'), path.join(dir, 'src'), { recursive: true });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs `mvn -q -B <goal>` in cwd; resolves with its exit code and its output (stdout and stderr). */
export function runMaven(cwd: string, goal: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn('mvn', ['-q', '-B', goal], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    p.stdout.on('data', (d: Buffer) => (output += d.toString()));
    p.stderr.on('data', (d: Buffer) => (output += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, output }));
  });
}
