/**
 * A small command framework: every command declares its options and help text, gets
 * `--help` for free, and ends through one handler that maps errors to exit codes.
 *
 * Commands live one a file under bin/commands/, are registered (lazily, by a loader) in
 * bin/commands/index.ts, and are addressed by one or two words: `rig up`, `verify`.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from './paths.ts';
import { EXIT, ExitError, QualError, exitCodeFor } from './errors.ts';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  description: string;
  default?: string | boolean;
  multiple?: boolean;
  /** Shown in help as the value's name, e.g. FILE. */
  valueName?: string;
}

export interface PositionalSpec {
  name: string;
  description: string;
  required?: boolean;
}

export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
}

export interface Command {
  /** One or two words, e.g. 'rig up'. */
  name: string;
  summary: string;
  /** Longer help, plain text, printed under the usage. */
  description?: string;
  options?: Record<string, OptionSpec>;
  positionals?: PositionalSpec[];
  examples?: string[];
  /** The exit codes, printed last under the one heading 'Exit codes:' (default: EXIT_CODES_HELP). */
  exitCodes?: string;
  /**
   * A command whose usage and arguments are another program's own (`test` is
   * bin/run-tests.ts's): `--help` prints this text as it is, and every argument but
   * `--help`/`-h` reaches `run` unparsed, as positionals.
   */
  ownUsage?: string;
  /** Returns the exit code (default 0). Throw QualError/ExitError for failures. */
  run(args: ParsedArgs): Promise<number | void>;
}

export interface CommandEntry {
  name: string;
  summary: string;
  load: () => Promise<{ default: Command }>;
}

/** How every duration option of every command is written (`--soak`, `--margin`, `--max-time`, ...). */
export const DURATION_GRAMMAR = 'seconds, or with units: 300, 90s, 5m, 2h, 1h30m';

const DURATION_UNIT_S: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * A duration option's value in whole seconds, in the one grammar of DURATION_GRAMMAR (the
 * one --soak has always taken: `300`, `90s`, `5m`, `2h`, `1h30m`, `1.5m`). Throws
 * QualError('BAD_ARGUMENTS') naming the option on anything else, on fractions of a second,
 * or outside min..max seconds.
 */
export function parseDurationOption(text: string, option: string, bounds: { min?: number; max?: number; maxName?: string } = {}): number {
  const min = bounds.min ?? 1;
  const max = bounds.max ?? 604_800;
  const s = text.trim().toLowerCase();
  let total: number;
  if (/^\d+(\.\d+)?$/.test(s)) total = Number(s);
  else if (/^(\d+(\.\d+)?[smhd])+$/.test(s)) {
    total = 0;
    for (const m of s.matchAll(/(\d+(?:\.\d+)?)([smhd])/g)) total += Number(m[1]) * DURATION_UNIT_S[m[2]!]!;
  } else throw new QualError('BAD_ARGUMENTS', `--${option}: '${text}' is not a duration (${DURATION_GRAMMAR})`);
  const rounded = Math.round(total * 1000) / 1000;
  if (!Number.isInteger(rounded)) throw new QualError('BAD_ARGUMENTS', `--${option}: '${text}' is ${rounded} s: give whole seconds`);
  if (rounded < min || rounded > max) throw new QualError('BAD_ARGUMENTS', `--${option}: '${text}' is ${rounded} s: give from ${min} s to ${bounds.maxName ? `${bounds.maxName} (${max})` : `${max} s`}`);
  return rounded;
}

/** The exit codes of a command that did its job or did not (lib/errors.ts EXIT). */
export const EXIT_CODES_HELP = '0 done, 2 the environment stopped it (a host, the store, a precondition), 254 bad arguments or input, 255 internal error.';

/** Edit distance (Levenshtein with adjacent transpositions counted as one edit), for did-you-mean. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The command names closest to what was typed (one or two words), if any is close enough. */
export function suggestCommands(entries: CommandEntry[], argv: string[]): string[] {
  const typed1 = argv[0] ?? '';
  const typed2 = argv.slice(0, 2).join(' ');
  const limit = (n: string) => Math.max(2, Math.floor(n.length / 3));
  const groups = [...new Set(entries.filter((e) => e.name.includes(' ')).map((e) => e.name.split(' ')[0]!))];
  // A known group with an unknown second word: suggest among that group's commands only.
  const pool = groups.includes(typed1) ? entries.filter((e) => e.name.startsWith(typed1 + ' ')) : entries;
  const scored = pool.map((e) => ({ name: e.name, d: editDistance(e.name.includes(' ') ? typed2 : typed1, e.name), max: limit(e.name) }));
  if (!groups.includes(typed1)) for (const g of groups) scored.push({ name: g, d: editDistance(typed1, g), max: limit(g) });
  const close = scored.filter((x) => x.d <= x.max);
  const best = Math.min(...close.map((x) => x.d));
  const names = [...new Set(close.filter((x) => x.d === best).map((x) => x.name))];
  // 'campain run' -> 'campaign run', not also the bare group 'campaign'.
  return names.filter((n) => n.includes(' ') || !names.some((m) => m.startsWith(n + ' ')));
}

/** `clink-qual --version`: the package's version and the checkout's git revision. */
export function versionLine(): string {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { name?: string; version?: string };
  const rev = spawnSync('git', ['-C', repoRoot, 'rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8' });
  const dirty = spawnSync('git', ['-C', repoRoot, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' });
  const revision = rev.status === 0 ? rev.stdout.trim() + (dirty.status === 0 && dirty.stdout.trim() ? '-dirty' : '') : 'unknown (not a git checkout)';
  return `clink-qual ${pkg.version ?? '?'} (revision ${revision})`;
}

/** Text wrapped at `width` columns, between words. */
export function wrapText(text: string, width = 92): string {
  const lines: string[] = [];
  let line = '';
  for (const w of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + w.length > width) {
      lines.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) lines.push(line);
  return lines.join('\n');
}

/** A command's --help: usage, summary, description, arguments, options, examples, and last the one 'Exit codes:' section. */
export function renderHelp(cmd: Command): string {
  if (cmd.ownUsage) return cmd.ownUsage;
  const lines: string[] = [];
  const pos = (cmd.positionals ?? []).map((p) => (p.required ? p.name : `[${p.name}]`)).join(' ');
  lines.push(`Usage: clink-qual ${cmd.name}${cmd.options && Object.keys(cmd.options).length ? ' [options]' : ''}${pos ? ' ' + pos : ''}`);
  lines.push('');
  lines.push(cmd.summary);
  if (cmd.description) {
    lines.push('');
    lines.push(cmd.description.trim());
  }
  if (cmd.positionals?.length) {
    lines.push('');
    lines.push('Arguments:');
    for (const p of cmd.positionals) lines.push(`  ${p.name.padEnd(24)} ${p.description}`);
  }
  const opts = { ...(cmd.options ?? {}), help: { type: 'boolean', short: 'h', description: 'Show this help' } as OptionSpec };
  lines.push('');
  lines.push('Options:');
  for (const [name, o] of Object.entries(opts)) {
    const flag = `${o.short ? `-${o.short}, ` : '    '}--${name}${o.type === 'string' ? ` ${o.valueName ?? 'VALUE'}` : ''}`;
    const def = o.default !== undefined && o.default !== false ? ` (default: ${String(o.default)})` : '';
    lines.push(`  ${flag.padEnd(30)} ${o.description}${def}`);
  }
  if (cmd.examples?.length) {
    lines.push('');
    lines.push('Examples:');
    for (const e of cmd.examples) lines.push(`  ${e}`);
  }
  lines.push('');
  lines.push(wrapText(`Exit codes: ${cmd.exitCodes ?? EXIT_CODES_HELP}`));
  return lines.join('\n');
}

/** One line for what parseArgs refused (an unknown option, a value missing or given to a flag), naming the option. */
export function argumentError(cmd: Command, err: unknown): QualError {
  const e = err as { code?: string; message?: string };
  const msg = String(e.message ?? err);
  const opt = /'(-{1,2}[^' ]+)/.exec(msg)?.[1] ?? '';
  const known = Object.entries(cmd.options ?? {}).find(([n, o]) => `--${n}` === opt || (o.short && `-${o.short}` === opt));
  let what: string;
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') what = `unknown option '${opt}'`;
  else if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && known?.[1].type === 'string') what = `option '${opt}' needs a value (${known[1].valueName ?? 'VALUE'})`;
  else if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') what = `option '${opt}' takes no value`;
  else what = msg.split('\n')[0]!.replace(/\. To specify a positional argument.*$/, '');
  return new QualError('BAD_ARGUMENTS', `${cmd.name}: ${what}. Run 'clink-qual ${cmd.name} --help' for its options.`);
}

export function parseCommandArgs(cmd: Command, argv: string[]): ParsedArgs & { help: boolean } {
  if (cmd.ownUsage) {
    const help = argv.includes('--help') || argv.includes('-h');
    return { values: {}, positionals: argv.filter((a) => a !== '--help' && a !== '-h'), help };
  }
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean; default?: string | boolean }> = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const [name, o] of Object.entries(cmd.options ?? {})) {
    options[name] = { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}), ...(o.default !== undefined ? { default: o.default } : {}) };
  }
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw argumentError(cmd, err);
  }
  const help = Boolean(parsed.values.help);
  if (!help) {
    const required = (cmd.positionals ?? []).filter((p) => p.required);
    if (parsed.positionals.length < required.length) {
      throw new QualError('BAD_ARGUMENTS', `missing argument ${required[parsed.positionals.length]!.name}\nRun 'clink-qual ${cmd.name} --help' for usage.`);
    }
    if (parsed.positionals.length > (cmd.positionals ?? []).length) {
      throw new QualError('BAD_ARGUMENTS', `unexpected argument '${parsed.positionals[(cmd.positionals ?? []).length]}'\nRun 'clink-qual ${cmd.name} --help' for usage.`);
    }
  }
  return { values: parsed.values as ParsedArgs['values'], positionals: parsed.positionals, help };
}

function topHelp(entries: CommandEntry[]): string {
  const lines = [
    'clink-qual: chaos qualification of exactly-once delivery from Kafka into S3-compatible storage',
    '',
    'Usage: clink-qual <command> [options]',
    '',
    'Commands:',
  ];
  for (const e of entries) lines.push(`  ${e.name.padEnd(22)} ${e.summary}`);
  lines.push('', "Run 'clink-qual <command> --help' (or 'clink-qual help <command>') for a command's options; 'clink-qual --version' (-v) for the version and revision.");
  lines.push('A command group without its command (clink-qual, clink-qual rig, ...) prints its commands and exits 0.');
  lines.push('', 'Exit codes: 0 pass/ok, 1 fail, 2 unknown (aborted, environment), 254 bad input, 255 internal error.');
  return lines.join('\n');
}

/** Finds the command named by the first one or two words of argv and runs it. */
export async function main(entries: CommandEntry[], argv: string[]): Promise<number> {
  try {
    if (argv[0] === '--version' || argv[0] === '-v' || argv[0] === '-V' || argv[0] === 'version') {
      console.log(versionLine());
      return EXIT.ok;
    }
    if (argv[0] === 'help' && argv.length > 1) return await main(entries, [...argv.slice(1), '--help']);
    // The program, like a command group, without a command: its overview, exit 0.
    if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
      console.log(topHelp(entries));
      return EXIT.ok;
    }
    if (argv[0]!.startsWith('-')) {
      console.error(`clink-qual: unknown option '${argv[0]}'. Run 'clink-qual --help' for the commands and options.`);
      return EXIT.badInput;
    }
    const two = argv.slice(0, 2).join(' ');
    let entry = entries.find((e) => e.name === two);
    let rest = argv.slice(2);
    if (!entry) {
      entry = entries.find((e) => e.name === argv[0]);
      rest = argv.slice(1);
    }
    if (!entry) {
      const group = entries.filter((e) => e.name.startsWith(argv[0] + ' '));
      if (group.length) {
        const wantsHelp = argv.length === 1 || argv[1] === '--help' || argv[1] === '-h';
        const out = [
          `Usage: clink-qual ${argv[0]} <command>`,
          '',
          'Commands:',
          ...group.map((e) => `  ${e.name.padEnd(22)} ${e.summary}`),
          '',
          `Run 'clink-qual ${argv[0]} <command> --help' for a command's options.`,
          '',
          'Exit codes: 0 listed; 254 an unknown command.',
        ].join('\n');
        if (wantsHelp) {
          console.log(out);
          return EXIT.ok;
        }
        const near = suggestCommands(entries, argv).filter((n) => n.includes(' '));
        console.error(`clink-qual: unknown command '${two}'${near.length ? `. Did you mean ${near.map((n) => `'${n}'`).join(' or ')}?` : ''}\n\n${out}`);
        return EXIT.badInput;
      }
      const near = suggestCommands(entries, argv);
      console.error(`clink-qual: unknown command '${argv[0]}'.${near.length ? ` Did you mean ${near.map((n) => `'${n}'`).join(' or ')}?` : ''} Run 'clink-qual --help'.`);
      return EXIT.badInput;
    }
    const cmd = (await entry.load()).default;
    const parsed = parseCommandArgs(cmd, rest);
    if (parsed.help) {
      console.log(renderHelp(cmd));
      return EXIT.ok;
    }
    const code = await cmd.run(parsed);
    return typeof code === 'number' ? code : EXIT.ok;
  } catch (err) {
    const code = exitCodeFor(err);
    if (err instanceof ExitError) {
      if (err.message && err.message !== `exit ${err.exitCode}`) console.error(`clink-qual: ${err.message}`);
    } else if (err instanceof QualError) {
      console.error(`clink-qual: ${err.message}`);
    } else {
      console.error(`clink-qual: internal error: ${(err as Error)?.stack ?? String(err)}`);
      console.error('This is a bug in clink-qual; please report it with the command you ran and the output above.');
    }
    return code;
  }
}
