/**
 * `clink-qual test`: the test runner, bin/run-tests.ts (what `npm test`, `./clink-qual test`
 * and CI run). Its usage and arguments are the runner's own: `clink-qual test --help` and
 * `clink-qual help test` print its USAGE, and every other argument goes to it unchanged.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Command } from '../../lib/cli.ts';
import { EXIT } from '../../lib/errors.ts';
import { repoRoot } from '../../lib/paths.ts';
import { USAGE } from '../run-tests.ts';

const command: Command = {
  name: 'test',
  summary: 'Type-check, run the unit tests, then the rig tests on the local rig (what CI runs; --unit: no rig)',
  ownUsage: USAGE,
  async run({ positionals }) {
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'run-tests.ts'), ...positionals], { cwd: repoRoot, stdio: 'inherit' });
    return await new Promise<number>((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? EXIT.unknown : EXIT.internal))));
  },
};
export default command;
