/**
 * campaigns/schema.json's kind-dependent parts, generated from the fault-kind registry
 * (chaos/kinds.ts): the `faultKind` enum with its description, and `faultFields`, the
 * fields each kind requires or refuses. Everything else in the schema is written by hand in
 * schema.json itself; this rewrites only those two definitions and formats the file.
 *
 *   npm run schema            rewrite campaigns/schema.json
 *   npm run schema -- --check exit 1 if it is not current (a unit test checks the same in CI)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { FAULT_SPECS } from '../chaos/kinds.ts';
import { FAULT_FIELDS, type FaultField } from '../chaos/fault.ts';
import { type FaultKind } from '../lib/evidence.ts';
import { FAULT_KINDS } from '../chaos/kinds.ts';
import { SCHEMA_PATH } from './load.ts';

type Json = Record<string, unknown>;

/** `faultKind`: the closed list of kinds, each with its summary. */
export function faultKindDefinition(): Json {
  return {
    enum: [...FAULT_KINDS],
    description: FAULT_KINDS.map((k) => `${k}: ${FAULT_SPECS[k].summary}`).join(' '),
  };
}

/** `faultFields`: one if/then per group of kinds with the same required and refused fields, in FAULT_KINDS order. */
export function faultFieldsDefinition(): Json {
  const groups = new Map<string, { kinds: FaultKind[]; required: FaultField[]; refused: FaultField[]; variants?: readonly string[] }>();
  for (const k of FAULT_KINDS) {
    const { required, optional } = FAULT_SPECS[k].fields;
    const variants = FAULT_SPECS[k].variants;
    const refused = FAULT_FIELDS.filter((f) => !required.includes(f) && !optional.includes(f));
    const req = FAULT_FIELDS.filter((f) => required.includes(f));
    const key = JSON.stringify([req, refused, variants ?? null]);
    const g = groups.get(key);
    if (g) g.kinds.push(k);
    else groups.set(key, { kinds: [k], required: req, refused, ...(variants ? { variants } : {}) });
  }
  return {
    description: 'Fields every fault (battery entry or composition step) may carry, with the kind deciding which are required or allowed.',
    allOf: [...groups.values()].map((g) => ({
      if: { properties: { kind: g.kinds.length === 1 ? { const: g.kinds[0] } : { enum: g.kinds } }, required: ['kind'] },
      then: {
        ...(g.required.length ? { required: g.required } : {}),
        properties: { ...Object.fromEntries(g.refused.map((f) => [f, false])), ...(g.variants ? { variant: { enum: [...g.variants] } } : {}) },
      },
    })),
  };
}

/** The schema text with its kind-dependent definitions generated from the registry. */
export function generateSchema(current: Json): string {
  const definitions = { ...(current.definitions as Json), faultKind: faultKindDefinition(), faultFields: faultFieldsDefinition() };
  return JSON.stringify({ ...current, definitions }, null, 2) + '\n';
}

if (import.meta.main) {
  const text = readFileSync(SCHEMA_PATH, 'utf8');
  const next = generateSchema(JSON.parse(text) as Json);
  if (process.argv.includes('--check')) {
    if (next !== text) {
      console.error('campaigns/schema.json is not current with the fault-kind registry (chaos/kinds.ts): run npm run schema');
      process.exit(1);
    }
    console.log('campaigns/schema.json is current');
  } else if (next === text) {
    console.log('campaigns/schema.json is current; nothing written');
  } else {
    writeFileSync(SCHEMA_PATH, next);
    console.log('wrote campaigns/schema.json');
  }
}
