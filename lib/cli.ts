/**
 * A small command framework: every command declares its options and help text, gets
 * `--help` for free, and ends through one handler that maps errors to exit codes.
 *
 * Commands live one a file under bin/commands/, are registered (lazily, by a loader) in
 * bin/commands/index.ts, and are addressed by one or two words: `rig up`, `verify`.
 */
import { parseArgs } from 'node:util';
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
  /** Returns the exit code (default 0). Throw QualError/ExitError for failures. */
  run(args: ParsedArgs): Promise<number | void>;
}

export interface CommandEntry {
  name: string;
  summary: string;
  load: () => Promise<{ default: Command }>;
}

export function renderHelp(cmd: Command): string {
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
  return lines.join('\n');
}

export function parseCommandArgs(cmd: Command, argv: string[]): ParsedArgs & { help: boolean } {
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
    throw new QualError('BAD_ARGUMENTS', `${(err as Error).message}\nRun 'clink-qual ${cmd.name} --help' for usage.`);
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
  lines.push('', "Run 'clink-qual <command> --help' for a command's options.");
  lines.push('Exit codes: 0 pass/ok, 1 fail, 2 unknown (aborted, environment), 254 bad input, 255 internal error.');
  return lines.join('\n');
}

/** Finds the command named by the first one or two words of argv and runs it. */
export async function main(entries: CommandEntry[], argv: string[]): Promise<number> {
  try {
    if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
      console.log(topHelp(entries));
      return argv.length === 0 ? EXIT.badInput : EXIT.ok;
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
        const out = [`Usage: clink-qual ${argv[0]} <command>`, '', 'Commands:', ...group.map((e) => `  ${e.name.padEnd(22)} ${e.summary}`)].join('\n');
        if (wantsHelp) {
          console.log(out);
          return EXIT.ok;
        }
        console.error(`clink-qual: unknown command '${two}'\n\n${out}`);
        return EXIT.badInput;
      }
      console.error(`clink-qual: unknown command '${argv[0]}'. Run 'clink-qual --help'.`);
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
