/**
 * JSON Lines, as the harness's evidence and journals are written: one JSON value a line,
 * appended. A writer killed mid-append leaves a torn last line; readers skip a line that
 * does not parse (and may be told which), and blank lines.
 *
 * A published run (`clink-qual publish`) stores its large files gzipped as `X.gz`; every
 * reader here reads `X.gz` where `X` is absent, so a published folder reads like the run.
 */
import { existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

/** The file's text, or its gzipped `file.gz`'s when the file is absent; undefined when neither exists. */
export function readTextOrGz(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  try {
    return gunzipSync(readFileSync(file + '.gz')).toString('utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** Whether the file, or its gzipped `file.gz`, exists. */
export function existsOrGz(file: string): boolean {
  return existsSync(file) || existsSync(file + '.gz');
}

/** The values of the text's lines; onBad gets the 1-based number of each line that does not parse. */
export function parseJsonl<T>(text: string, onBad?: (lineNo: number) => void): T[] {
  const out: T[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      onBad?.(i + 1);
    }
  }
  return out;
}

/** parseJsonl of a file (or of its `file.gz` when it is absent); [] when neither exists. */
export function readJsonl<T>(file: string, onBad?: (lineNo: number) => void): T[] {
  const text = readTextOrGz(file);
  return text === undefined ? [] : parseJsonl<T>(text, onBad);
}
