#!/usr/bin/env node
/** The clink-qual CLI. Runs on Node 24 (the project pins it: node_modules/.bin/node). */
import { main } from '../lib/cli.ts';
import { commands } from './commands/index.ts';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major! < 24 || (major === 24 && minor! < 6)) {
  console.error(`clink-qual needs Node >= 24.6 (found ${process.version}). Use the pinned one: npx clink-qual, or node_modules/.bin/node.`);
  process.exit(254);
}

process.exitCode = await main(commands, process.argv.slice(2));
