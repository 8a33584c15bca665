/**
 * The shape a run directory's JSON evidence must have before a reader dereferences it:
 * verdict.json and provenance.json are JSON objects with the nested parts the report and
 * the runs list read (counters are numbers, lists are lists, objects are objects). A file
 * of another shape is treated as unreadable, with the reason, instead of crashing a reader
 * (exit 255) on `undefined.duplicates`.
 */
import { COUNTER_NAMES } from './evidence.ts';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What is wrong with the counters object at `name`, if anything. */
function countersProblem(v: unknown, name: string): string | undefined {
  if (!isObject(v)) return `${name} is not an object of counters`;
  const bad = COUNTER_NAMES.filter((c) => v[c] !== undefined && typeof v[c] !== 'number');
  return bad.length ? `${name}.${bad[0]} is not a number` : undefined;
}

/** verdict.json: verdict a string; oracle and recount counters; reasons and warnings lists (when present). */
function verdictProblem(v: Json): string | undefined {
  if (typeof v.verdict !== 'string') return 'its "verdict" is not a string';
  for (const k of ['oracle', 'recount'] as const) {
    if (v[k] !== undefined) {
      const p = countersProblem(v[k], k);
      if (p) return p;
    }
  }
  for (const k of ['reasons', 'warnings', 'uncoveredFaultPoints'] as const) if (v[k] !== undefined && !Array.isArray(v[k])) return `"${k}" is not a list`;
  if (v.tamper !== undefined && !(isObject(v.tamper) && isObject(v.tamper.harnessMutations) && Array.isArray(v.tamper.reactions))) return '"tamper" is not { reactions: [...], harnessMutations: {...} }';
  return undefined;
}

/** provenance.json: engine an object; rig { kind, hosts: [...] }; components a list. */
function provenanceProblem(v: Json): string | undefined {
  if (!isObject(v.engine)) return '"engine" is not an object';
  if (!isObject(v.rig) || typeof v.rig.kind !== 'string' || !Array.isArray(v.rig.hosts)) return '"rig" is not { kind, hosts: [...] }';
  if (!Array.isArray(v.components)) return '"components" is not a list';
  if (v.harness !== undefined && !isObject(v.harness)) return '"harness" is not an object';
  return undefined;
}

/** Why a JSON evidence value (by its file name, e.g. verdict.json) has the wrong shape; undefined when it is fine. */
export function evidenceShapeProblem(file: string, value: unknown): string | undefined {
  const check = SHAPES[file];
  if (!check) return undefined;
  if (!isObject(value)) return `not a JSON object (found ${value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value})`;
  return check(value);
}

/** The files whose shape is checked (plan.json is a list, others are read field by field). */
const SHAPES: Record<string, (v: Json) => string | undefined> = { 'verdict.json': verdictProblem, 'provenance.json': provenanceProblem };
