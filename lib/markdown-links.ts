/**
 * Checks a Markdown file's links to the repository: every relative link (`[text](path)`,
 * `![alt](path)`, with or without `#anchor`) must name a file or folder that exists, and an
 * anchor into a Markdown file must name one of its headings (GitHub's slugs). Links to the
 * web (`https:`, `mailto:` ...) are not checked. The README and docs/*.md are checked by
 * test/unit/lib/markdown-links.test.ts, so moving a section cannot leave a link behind.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** One link of a Markdown file: its target as written and the line it is on. */
export interface MarkdownLink {
  target: string;
  line: number;
}

/** A link that does not resolve, and why. */
export interface BrokenLink extends MarkdownLink {
  file: string;
  problem: string;
}

/** The links of a Markdown text, outside fenced code blocks and inline code. */
export function markdownLinks(text: string): MarkdownLink[] {
  const out: MarkdownLink[] = [];
  let fenced = false;
  text.split('\n').forEach((raw, i) => {
    if (/^\s*```/.test(raw)) {
      fenced = !fenced;
      return;
    }
    if (fenced) return;
    const line = raw.replace(/`[^`]*`/g, '');
    for (const m of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ target: m[1]!, line: i + 1 });
  });
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown text's headings (a repeated heading gets -1, -2, ... as on GitHub). */
export function headingAnchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = headingSlug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The links of `file` (a Markdown file) that do not resolve. */
export function brokenLinks(file: string): BrokenLink[] {
  const text = readFileSync(file, 'utf8');
  const out: BrokenLink[] = [];
  for (const link of markdownLinks(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue;
    const [rawPath, anchor] = link.target.split('#', 2) as [string, string | undefined];
    const target = rawPath ? path.resolve(path.dirname(file), decodeURIComponent(rawPath)) : file;
    if (!existsSync(target)) {
      out.push({ ...link, file, problem: `no such file: ${path.relative(path.dirname(file), target)}` });
      continue;
    }
    if (anchor && target.endsWith('.md') && statSync(target).isFile() && !headingAnchors(readFileSync(target, 'utf8')).has(anchor)) {
      out.push({ ...link, file, problem: `no heading '#${anchor}' in ${path.basename(target)}` });
    }
  }
  return out;
}
