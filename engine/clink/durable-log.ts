/**
 * An append-only log of JSON records that survives SIGKILL at any instant, and a full disk.
 *
 * Each record is one line: `<crc32 as 8 hex digits> <json>\n`, appended and fsynced before
 * the append resolves. A kill can leave at most a torn tail: a last line without its
 * newline, or whose checksum does not match. Opening for append cuts such a tail, so the
 * next record starts on a line of its own.
 *
 * A failed append (ENOSPC, EIO) can leave part of the record written. The append then
 * truncates the file back to where the record began before it reports the failure, so the
 * log never holds a torn line with good records after it. Should one be found anyway (a
 * log written by something else, a corrupted disk), opening refuses with
 * DurableLogCorruptError: resuming from the prefix would silently drop durable records
 * and reuse their epoch and checkpoint ids. (MUTANT torn-log-append keeps the partial bytes
 * and reads only the prefix, which is exactly that.)
 *
 * A last line that is complete (it ends in its newline) but fails its checksum is not a
 * torn append either: an append is one write of the whole line, so a kill leaves a prefix
 * of it, and a prefix ends in the newline only when it is the whole line. Such a line is a
 * record corrupted at rest (a flipped bit, a torn sector), possibly one that was fsynced and
 * acted on (the checkpoint it completed was committed); dropping it would restore an older
 * checkpoint and replay what its commits made visible. Opening refuses it too
 * (DurableLogCorruptError, `atRest`). The format is unchanged; only logs holding such a
 * line, which were opened as their prefix before, are now refused. (MUTANT unchecked-log
 * reads each record without its checksum, so a corrupted record is restored from as is.)
 */
import { closeSync, fstatSync, fsyncSync, openSync, readFileSync, existsSync, ftruncateSync, writeSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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
  /** Good records found after the first bad line: non-zero means corruption, not a torn tail. */
  recordsAfterTear: number;
  /** The first bad line is complete (newline-terminated): a record corrupted at rest, not a torn append. */
  badLineComplete: boolean;
}

/** A torn or corrupt line with good records after it: the log cannot be trusted as a prefix. */
export class DurableLogCorruptError extends Error {
  /** The bad line is complete and the last one: corrupted at rest rather than followed by good records. */
  readonly atRest: boolean;
  constructor(file: string, goodBytes: number, recordsAfterTear: number) {
    super(
      recordsAfterTear > 0
        ? `${file}: a corrupt line at byte ${goodBytes} is followed by ${recordsAfterTear} good records; refusing to resume from a truncated history`
        : `${file}: the complete line at byte ${goodBytes} fails its checksum (a record corrupted at rest, not a torn append); refusing to resume without it`,
    );
    this.name = 'DurableLogCorruptError';
    this.atRest = recordsAfterTear === 0;
  }
}

/** An append that failed; the partial bytes were cut again (`truncatedTo`), unless cutting failed too. */
export class DurableLogAppendError extends Error {
  readonly code: string | undefined;
  constructor(file: string, cause: NodeJS.ErrnoException, truncatedTo: number | null) {
    super(`${file}: append failed (${cause.code ?? cause.message})${truncatedTo === null ? '; the partial record could not be cut' : `; cut back to ${truncatedTo} bytes`}`);
    this.name = 'DurableLogAppendError';
    this.code = cause.code;
  }
}

/**
 * Parses log content, stopping at the first incomplete or corrupt line. With `unchecked`
 * (MUTANT unchecked-log) a line's checksum is not verified: any line whose JSON parses is a record.
 */
export function parseLog<T = unknown>(buf: Buffer | string, opts: { unchecked?: boolean } = {}): ParsedLog<T> {
  const b = typeof buf === 'string' ? Buffer.from(buf) : buf;
  const decode = opts.unchecked ? decodeLineUnchecked : decodeLine;
  const records: T[] = [];
  let pos = 0;
  while (pos < b.length) {
    const nl = b.indexOf(0x0a, pos);
    if (nl < 0) break; // torn: no newline
    const line = b.subarray(pos, nl).toString('utf8');
    const rec = decode<T>(line);
    if (rec === undefined) break;
    records.push(rec);
    pos = nl + 1;
  }
  let recordsAfterTear = 0;
  if (pos < b.length) {
    for (const line of b.subarray(pos).toString('utf8').split('\n').slice(1)) if (decode(line) !== undefined) recordsAfterTear++;
  }
  return { records, goodBytes: pos, tornBytes: b.length - pos, recordsAfterTear, badLineComplete: pos < b.length && b.indexOf(0x0a, pos) >= 0 };
}

/** MUTANT unchecked-log: one line → its record, trusting it: the checksum is skipped, only the JSON must parse. */
function decodeLineUnchecked<T = unknown>(line: string): T | undefined {
  if (line.length < 10 || line[8] !== ' ') return undefined;
  try {
    return JSON.parse(line.slice(9)) as T;
  } catch {
    return undefined;
  }
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

export interface DurableLogOptions {
  /** MUTANT torn-log-append: keep a failed append's partial bytes, and read a torn log as its prefix. */
  tornAppends?: boolean;
  /** MUTANT unchecked-log: read records without verifying their checksums. */
  uncheckedRecords?: boolean;
}

export class DurableLog<T = unknown> {
  readonly file: string;
  readonly #opts: DurableLogOptions;
  #fd: number;
  #size: number;

  private constructor(file: string, fd: number, size: number, opts: DurableLogOptions) {
    this.file = file;
    this.#fd = fd;
    this.#size = size;
    this.#opts = opts;
  }

  /**
   * Opens (creating) the log, drops a torn tail, and returns it with its good records.
   * Throws DurableLogCorruptError when good records follow a bad line, or when the last line
   * is complete but fails its checksum (corrupted at rest).
   */
  static open<T>(file: string, opts: DurableLogOptions = {}): { log: DurableLog<T>; records: T[]; tornBytes: number } {
    mkdirSync(path.dirname(file), { recursive: true });
    const content = existsSync(file) ? readFileSync(file) : Buffer.alloc(0);
    const parsed = parseLog<T>(content, { unchecked: opts.uncheckedRecords });
    if (!opts.tornAppends && (parsed.recordsAfterTear > 0 || (parsed.badLineComplete && !opts.uncheckedRecords))) throw new DurableLogCorruptError(file, parsed.goodBytes, parsed.recordsAfterTear);
    const fd = openSync(file, 'a+');
    if (parsed.tornBytes > 0) {
      ftruncateSync(fd, parsed.goodBytes);
      fsyncSync(fd);
    }
    return { log: new DurableLog<T>(file, fd, parsed.goodBytes, opts), records: parsed.records, tornBytes: parsed.tornBytes };
  }

  /**
   * Appends one record and fsyncs it. On failure the partial record is cut again and
   * DurableLogAppendError is thrown: the record is not durable, and the log is as before.
   */
  append(record: T): void {
    const buf = Buffer.from(encodeRecord(record));
    let off = 0;
    try {
      while (off < buf.length) off += writeSync(this.#fd, buf, off, buf.length - off);
      fsyncSync(this.#fd);
      this.#size += buf.length;
    } catch (err) {
      if (this.#opts.tornAppends) {
        // MUTANT torn-log-append: the partial bytes stay; the next record is appended after them.
        this.#size += off;
        throw err;
      }
      let truncatedTo: number | null = this.#size;
      try {
        ftruncateSync(this.#fd, this.#size);
        fsyncSync(this.#fd);
      } catch {
        truncatedTo = null;
      }
      throw new DurableLogAppendError(this.file, err as NodeJS.ErrnoException, truncatedTo);
    }
  }

  close(): void {
    closeSync(this.#fd);
  }
}

/** Writes a file atomically (temp file, fsync, rename); a failed write leaves no temp file behind. */
export function writeFileAtomic(file: string, content: string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w');
  try {
    const buf = Buffer.from(content);
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, file);
}

/**
 * Appends one line and fsyncs (for evidence files like fired.jsonl and the journal). A
 * failed append is cut back to where it began, so a later line never follows a torn one.
 */
export function appendLineDurable(file: string, line: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const fd = openSync(file, 'a');
  const start = fstatSync(fd).size;
  try {
    const buf = Buffer.from(line.endsWith('\n') ? line : `${line}\n`);
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
  } catch (err) {
    try {
      ftruncateSync(fd, start);
    } catch {
      /* reported below with the write's own error */
    }
    throw err;
  } finally {
    closeSync(fd);
  }
}

export { writeFileSync };
