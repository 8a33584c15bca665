/**
 * JSON Lines, as the harness's evidence and journals are written: one JSON value a line,
 * appended. A writer killed mid-append leaves a torn last line; readers skip a line that
 * does not parse (and may be told which), and blank lines.
 */
import { readFileSync } from 'node:fs';

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

/** parseJsonl of a file; [] when the file does not exist. */
export function readJsonl<T>(file: string, onBad?: (lineNo: number) => void): T[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return parseJsonl<T>(text, onBad);
}
