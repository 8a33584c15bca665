/**
 * The benchmarks' command line, once: parse the options, or print the usage for --help
 * (exit 0) or for an unusable option (its message first, exit 254). `null` means: done, do
 * not run.
 */
export function optionsOrUsage<T>(parse: (args: string[]) => T | 'help', args: string[], usage: string): T | null {
  let o: T | 'help';
  try {
    o = parse(args);
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${usage}`);
    process.exitCode = 254;
    return null;
  }
  if (o === 'help') {
    console.log(usage);
    return null;
  }
  return o;
}
