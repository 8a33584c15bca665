/**
 * Reading an input file with bounds: only a regular file (a symlink is followed, then what
 * it names must be regular: /dev/zero, a FIFO, a socket or a directory is refused), and at
 * most a given number of bytes (a campaign, an inventory, a run directory's JSON evidence).
 *
 * The file is opened with O_NONBLOCK, so opening a FIFO returns at once instead of waiting
 * for a writer; `fstat` on the open descriptor then says what it is, so nothing can swap
 * the file between the check and the read. The read stops once past the cap, so a file
 * that grows after the fstat (or reports size 0, like /proc files) is still refused.
 *
 * Problems are QualError('BAD_INPUT_FILE') (exit 254) naming the file and what is wrong.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { QualError } from './errors.ts';

/** The cap on a campaign file (and an inventory): a campaign of QUAL-03's size is about 5 KB. */
export const MAX_CAMPAIGN_BYTES = 1024 * 1024;
/** The cap on one JSON evidence file of a run directory (verdict.json, provenance.json, plan.json...). */
export const MAX_RUN_JSON_BYTES = 64 * 1024 * 1024;

/** What a non-regular file is, in words. */
function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * Opens `file` for reading if it is a regular file (symlinks followed), runs `use` on the
 * descriptor and its stats, and closes it. `what` names the file in messages ("campaign").
 */
function withRegularFile<T>(file: string, what: string, use: (fd: number, st: Stats) => T): T {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw new QualError('BAD_INPUT_FILE', `cannot read ${what} ${file}: ${(err as Error).message}`, undefined, { cause: err });
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new QualError('BAD_INPUT_FILE', `${what} ${file} is ${kindOf(st)}: only a regular file is read`);
    return use(fd, st);
  } finally {
    closeSync(fd);
  }
}

/**
 * The text of a regular file of at most `maxBytes` bytes (UTF-8). Throws
 * QualError('BAD_INPUT_FILE') when it cannot be opened, is not a regular file, or is larger.
 */
export function readBoundedText(file: string, opts: { maxBytes: number; what: string }): string {
  return withRegularFile(file, opts.what, (fd, st) => {
    const tooBig = (size: string) => new QualError('BAD_INPUT_FILE', `${opts.what} ${file} is ${size}: at most ${opts.maxBytes} bytes are read`);
    if (st.size > opts.maxBytes) throw tooBig(`${st.size} bytes`);
    return readChunks(fd, opts.maxBytes, () => tooBig(`more than ${opts.maxBytes} bytes`));
  });
}

/** Reads fd to its end in 64 KiB chunks; past `maxBytes` (when given), throws what `tooBig` makes. */
function readChunks(fd: number, maxBytes: number | undefined, tooBig: () => Error): string {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const buf = Buffer.alloc(64 * 1024);
    const got = readSync(fd, buf, 0, buf.length, null);
    if (got === 0) break;
    total += got;
    // A file that grew after the fstat (or reports size 0, as /proc files do) is still bounded.
    if (maxBytes !== undefined && total > maxBytes) throw tooBig();
    chunks.push(got === buf.length ? buf : buf.subarray(0, got));
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

/**
 * The text of a regular file, without a size cap (JSON Lines evidence such as samples and
 * the ledger may be large). Throws QualError('BAD_INPUT_FILE') when it cannot be opened or
 * is not a regular file (a FIFO would hang the reader, /dev/zero would never end).
 */
export function readRegularText(file: string, what: string): string {
  return withRegularFile(file, what, (fd) => readChunks(fd, undefined, () => new Error('unbounded')));
}

/**
 * The parsed JSON of a regular file of at most `maxBytes` bytes. Throws
 * QualError('BAD_INPUT_FILE') naming the file on a read problem or a JSON syntax error.
 */
export function readBoundedJson(file: string, opts: { maxBytes: number; what: string }): unknown {
  const text = readBoundedText(file, opts);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new QualError('BAD_INPUT_FILE', `${opts.what} ${file} is not JSON: ${(err as Error).message}`, undefined, { cause: err });
  }
}
