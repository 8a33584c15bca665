/**
 * An append-only log of JSON records that survives SIGKILL at any instant.
 *
 * Each record is one line: `<crc32 as 8 hex digits> <json>\n`, appended and fsynced before
 * the append resolves. A kill can leave at most a torn tail: a last line without its
 * newline, or whose checksum does not match. Reading stops at the first such line and
 * ignores it and everything after it; opening for append first truncates the file back to
 * the end of the last good record, so the next record starts on a line of its own.
 */
import { closeSync, fsyncSync, openSync, readFileSync, existsSync, ftruncateSync, writeSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';

export function encodeRecord(record: unknown): string {
  const json = JSON.stringify(record);
  return `${crc32(json).toString(16).padStart(8, '0')} ${json}\n`;
}

export interface ParsedLog<T> {
  records: T[];
  /** Byte length of the good prefix. */
  goodBytes: number;
  /** Bytes after the good prefix (a torn or corrupt tail), ignored. */
  tornBytes: number;
}

/** Parses log content, stopping at the first incomplete or corrupt line. */
export function parseLog<T = unknown>(buf: Buffer | string): ParsedLog<T> {
  const b = typeof buf === 'string' ? Buffer.from(buf) : buf;
  const records: T[] = [];
  let pos = 0;
  while (pos < b.length) {
    const nl = b.indexOf(0x0a, pos);
    if (nl < 0) break; // torn: no newline
    const line = b.subarray(pos, nl).toString('utf8');
    const rec = decodeLine<T>(line);
    if (rec === undefined) break;
    records.push(rec);
    pos = nl + 1;
  }
  return { records, goodBytes: pos, tornBytes: b.length - pos };
}

/** One line (without its newline) → its record, or undefined if it fails its checksum. */
export function decodeLine<T = unknown>(line: string): T | undefined {
  if (line.length < 10 || line[8] !== ' ') return undefined;
  const sum = line.slice(0, 8);
  const json = line.slice(9);
  if (crc32(json).toString(16).padStart(8, '0') !== sum) return undefined;
  try {
    return JSON.parse(json) as T;
  } catch {
    return undefined;
  }
}

export class DurableLog<T = unknown> {
  readonly file: string;
  #fd: number;

  private constructor(file: string, fd: number) {
    this.file = file;
    this.#fd = fd;
  }

  /** Opens (creating) the log, drops a torn tail, and returns it with its good records. */
  static open<T>(file: string): { log: DurableLog<T>; records: T[]; tornBytes: number } {
    mkdirSync(path.dirname(file), { recursive: true });
    const content = existsSync(file) ? readFileSync(file) : Buffer.alloc(0);
    const parsed = parseLog<T>(content);
    const fd = openSync(file, 'a+');
    if (parsed.tornBytes > 0) {
      ftruncateSync(fd, parsed.goodBytes);
      fsyncSync(fd);
    }
    return { log: new DurableLog<T>(file, fd), records: parsed.records, tornBytes: parsed.tornBytes };
  }

  /** Appends one record and fsyncs it. */
  append(record: T): void {
    const buf = Buffer.from(encodeRecord(record));
    let off = 0;
    while (off < buf.length) off += writeSync(this.#fd, buf, off, buf.length - off);
    fsyncSync(this.#fd);
  }

  close(): void {
    closeSync(this.#fd);
  }
}

/** Writes a file atomically (temp file, fsync, rename). */
export function writeFileAtomic(file: string, content: string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

/** Appends one line and fsyncs (for evidence files like fired.jsonl and the journal). */
export function appendLineDurable(file: string, line: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const fd = openSync(file, 'a');
  try {
    writeSync(fd, line.endsWith('\n') ? line : `${line}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export { writeFileSync };
