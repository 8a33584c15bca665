/** Small formatting helpers shared by the report's renderers (deterministic: no locale, no clock). */

/** 7477200 → "7,477,200"; non-integers keep up to `digits` decimals. */
export function fmtInt(n: number | undefined, digits = 0): string {
  if (n === undefined || !Number.isFinite(n)) return 'n/a';
  const neg = n < 0;
  const fixed = Math.abs(n).toFixed(digits);
  const [int, frac] = fixed.split('.');
  const grouped = int!.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${neg ? '-' : ''}${grouped}${frac && Number(frac) !== 0 ? '.' + frac.replace(/0+$/, '') : ''}`;
}

/** Seconds → "2 h", "7 min 15 s", "45 s", "1.5 s". */
export function fmtDuration(s: number | undefined): string {
  if (s === undefined || !Number.isFinite(s)) return 'n/a';
  if (s < 10 && s !== Math.round(s)) return `${fmtInt(s, 1)} s`;
  const r = Math.round(s);
  const h = Math.floor(r / 3600);
  const m = Math.floor((r % 3600) / 60);
  const x = r % 60;
  return [h ? `${h} h` : '', m ? `${m} min` : '', x || (!h && !m) ? `${x} s` : ''].filter(Boolean).join(' ');
}

/** Seconds → "mm:ss" or "h:mm:ss". */
export function fmtClock(s: number): string {
  const r = Math.max(0, Math.round(s));
  const h = Math.floor(r / 3600);
  const m = Math.floor((r % 3600) / 60);
  const x = r % 60;
  const mm = String(m).padStart(2, '0');
  const ss = String(x).padStart(2, '0');
  return h ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

/** Seconds between two ISO times, or undefined. */
export function secondsBetween(a: string | undefined, b: string | undefined): number | undefined {
  if (!a || !b) return undefined;
  const d = (Date.parse(b) - Date.parse(a)) / 1000;
  return Number.isFinite(d) ? d : undefined;
}

/** A Markdown table cell: no pipes, no newlines. */
export function cell(v: unknown): string {
  return String(v ?? '').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

export function table(head: string[], rows: unknown[][]): string {
  return [`| ${head.map(cell).join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n');
}

/** XML/HTML text escaping. */
export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${fmtInt(n)} ${n === 1 ? one : many}`;
}

/** "none", "a", "a and b", "a, b and c". */
export function listWords(items: string[], none = 'none'): string {
  if (items.length === 0) return none;
  if (items.length === 1) return items[0]!;
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

export function median(xs: number[]): number | undefined {
  if (!xs.length) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1]! + s[m]!) / 2;
}

/** A compact one-line rendering of an evidence object: {pidGone: 1234} → "pidGone=1234". */
export function fmtEvidence(e: Record<string, unknown> | undefined): string {
  if (!e) return '';
  return Object.entries(e)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
}
