/**
 * A run's folder, written as the run goes, so a crash or an abort keeps the history.
 * JSON files are replaced atomically; JSONL files are appended line by line.
 */
import { appendFileSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export class RunDir {
  readonly dir: string;
  constructor(dir: string) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true });
  }
  path(name: string): string {
    return path.join(this.dir, name);
  }
  writeJson(name: string, value: unknown): void {
    const p = this.path(name);
    writeFileSync(p + '.tmp', JSON.stringify(value, null, 2) + '\n');
    renameSync(p + '.tmp', p);
  }
  writeText(name: string, text: string): void {
    writeFileSync(this.path(name), text);
  }
  append(name: string, value: unknown): void {
    appendFileSync(this.path(name), JSON.stringify(value) + '\n');
  }
}

/** A run id: <campaign>-<UTC yyyymmddThhmmss>-<4 hex>. */
export function newRunId(campaign: string, now = new Date()): string {
  const ts = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  const rand = Math.floor(Math.random() * 0x10000).toString(16).padStart(4, '0');
  return `${campaign.replace(/[^A-Za-z0-9_-]/g, '-')}-${ts}-${rand}`;
}
