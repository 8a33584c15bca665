/**
 * Bundles Clink's process code (engine/clink/main.ts and everything it imports, Kafka
 * and S3 clients included) into one ESM file to upload to the rig's hosts. node:
 * builtins stay external; CommonJS dependencies get a `require` through createRequire.
 * The bundle must not read files relative to itself (checked: no `native.wasm`).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
let cached: Promise<{ file: string; sha256: string }> | null = null;

/** Builds (once per process) and returns the bundle's path and sha256. */
export function clinkBundle(): Promise<{ file: string; sha256: string }> {
  cached ??= build().catch((err) => {
    cached = null;
    throw err;
  });
  return cached;
}

async function build(): Promise<{ file: string; sha256: string }> {
  const esbuild = await import('esbuild');
  const dir = path.join(os.tmpdir(), `clink-qual-bundle-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'clink.mjs');
  await esbuild.build({
    entryPoints: [path.join(here, 'main.ts')],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    external: ['node:*'],
    logLevel: 'error',
    legalComments: 'none',
    // The Kafka client's compression helpers read a .wasm file next to their module; the
    // package's `bundled` entry inlines it, so the bundle stays one file.
    alias: { '@platformatic/wasm-utils': '@platformatic/wasm-utils/bundled' },
    banner: { js: "import { createRequire as __clinkCreateRequire } from 'node:module'; const require = __clinkCreateRequire(import.meta.url);" },
  });
  if (!existsSync(file)) throw new Error(`esbuild wrote no ${file}`);
  if (readFileSync(file, 'utf8').includes('native.wasm')) throw new Error('clink bundle still reads native.wasm from disk');
  const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
  return { file, sha256 };
}
