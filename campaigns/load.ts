/**
 * Loading a campaign file: YAML → schema check → meaning check → the resolved campaign.
 *
 * Every problem is reported the way an editor would want it: `FILE:LINE: FIELD: what is
 * wrong`, e.g. `campaigns/bad.yaml:12: faults[2].durationS: must be a number`. The YAML is
 * parsed with source ranges kept (parseDocument + LineCounter), so a schema error's
 * instance path (/faults/2/durationS) is mapped back to the node it names and its line.
 * All problems are collected and thrown together as one QualError('BAD_INPUT_FILE').
 *
 * Defaults come from the schema (`default` keywords, filled by ajv's useDefaults) plus a
 * few that depend on the fault kind (default targets) or on other fields (jitter, rate).
 *
 * A campaign's `perMutant` map (each mutant's own short schedule) is resolved beside the
 * base schedule; campaigns/per-mutant.ts puts a mutant's in place for its run.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject } from 'ajv';
import { LineCounter, isMap, isPair, isScalar, isSeq, parseDocument, visit, type Document, type Node } from 'yaml';
import { QualError } from '../lib/errors.ts';
import { MAX_CAMPAIGN_BYTES, readBoundedText } from '../lib/read-bounded.ts';
import type { FaultKind } from '../lib/evidence.ts';
import { FAULT_KINDS, FAULT_SPECS } from '../chaos/kinds.ts';
import { readInventory } from '../rig/inventory.ts';
import type { StoreKind } from '../rig/types.ts';
import { MINIO_DRIVE_LAYOUTS } from '../rig/store.ts';
import {
  DEFAULT_FAULT_POINTS,
  faultParams,
  STANDARD_HOSTS,
  type CampaignHost,
  type FaultParams,
  type ResolvedBatteryEntry,
  type ResolvedCampaign,
  type ResolvedComposition,
  type ResolvedMutantSchedule,
} from './types.ts';

export const SCHEMA_PATH = path.join(path.dirname(fileURLToPath(import.meta.url)), 'schema.json');

export interface LoadOptions {
  /** Protocol points the engine supports (Engine.faultPoints); default DEFAULT_FAULT_POINTS. */
  faultPoints?: readonly string[];
  /** The rig's hosts; default the standard rig for `local`, the inventory file's hosts for `inventory`. */
  hosts?: readonly CampaignHost[];
  /** Mutants the engine knows (Engine.mutants names): engine.mutant and the perMutant keys are checked against them; unchecked when absent. */
  mutants?: readonly string[];
  /** Engines the harness can drive (engine/index.ts ENGINE_NAMES): engine.name is checked against them; unchecked when absent. */
  engines?: readonly string[];
  /**
   * The engine's job profiles (Engine.jobProfiles): engine.profile is checked against them,
   * and refused outright when the list is empty (an engine with one job); unchecked when absent.
   */
  profiles?: readonly string[];
}

/** One problem found in a campaign file. */
export interface CampaignProblem {
  file: string;
  line: number;
  /** Dotted field path, e.g. faults[2].durationS ('' for the whole document). */
  field: string;
  message: string;
}

export function formatProblem(p: CampaignProblem): string {
  return `${p.file}:${p.line}: ${p.field ? `${p.field}: ` : ''}${p.message}`;
}

type Role = CampaignHost['roles'][number];

/** Which host roles each fault kind may target, and its default targets: from each kind's package (chaos/kinds.ts). */
const TARGET_ROLES: Record<FaultKind, { roles: Role[]; what: string; defaultRoles: Role[] }> = Object.fromEntries(Object.entries(FAULT_SPECS).map(([k, spec]) => [k, spec.targets])) as Record<FaultKind, { roles: Role[]; what: string; defaultRoles: Role[] }>;

/** The schedule a campaign that gives none gets: the schema's `schedule` default (campaigns/schema.json), the quick campaign's. */
export const DEFAULT_SCHEDULE: { readonly startAfterS: number; readonly spacingS: number } = (
  JSON.parse(readFileSync(SCHEMA_PATH, 'utf8')) as { properties: { schedule: { default: { startAfterS: number; spacingS: number } } } }
).properties.schedule.default;

let validator: ReturnType<Ajv['compile']> | undefined;
function validate(data: unknown): ErrorObject[] {
  if (!validator) {
    // strictNumbers: YAML's .inf and .nan are numbers to JavaScript; a campaign value never is one.
    const ajv = new Ajv({ allErrors: true, useDefaults: true, verbose: true, strict: false, strictNumbers: true });
    validator = ajv.compile(JSON.parse(readFileSync(SCHEMA_PATH, 'utf8')));
  }
  return validator(data) ? [] : [...(validator.errors ?? [])];
}

/** The file name as shown in messages: relative to the working directory when inside it. */
function displayName(file: string): string {
  const abs = path.resolve(file);
  const rel = path.relative(process.cwd(), abs);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : abs;
}

type Segment = string | number;

function fieldName(segs: Segment[]): string {
  let out = '';
  for (const s of segs) out += typeof s === 'number' ? `[${s}]` : out ? `.${s}` : s;
  return out;
}

function parsePointer(ptr: string): Segment[] {
  if (!ptr) return [];
  return ptr
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/**
 * The line of the YAML node at `segs`: the value's line, or (when `key` is set or the value
 * is missing) the key's line; falls back to the deepest existing ancestor.
 */
function lineOf(doc: Document, lc: LineCounter, segs: Segment[], opts: { key?: boolean } = {}): number {
  let node: unknown = doc.contents;
  let best: number | undefined = startOf(node);
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]!;
    const last = i === segs.length - 1;
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(s));
      if (!pair) break;
      const keyStart = startOf(pair.key);
      const valStart = startOf(pair.value);
      if (last && (opts.key || valStart === undefined)) {
        best = keyStart ?? best;
        break;
      }
      best = valStart ?? keyStart ?? best;
      node = pair.value;
    } else if (isSeq(node) && typeof s === 'number') {
      const item = node.items[s];
      if (item === undefined) break;
      best = startOf(item) ?? best;
      node = item;
    } else break;
  }
  return best === undefined ? 1 : lc.linePos(best).line;
}

function startOf(node: unknown): number | undefined {
  const r = (node as Node | null | undefined)?.range;
  return r ? r[0] : undefined;
}

function valueAt(data: unknown, segs: Segment[]): unknown {
  let v: unknown = data;
  for (const s of segs) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[s];
  }
  return v;
}

const TYPE_WORDS: Record<string, string> = {
  number: 'a number',
  integer: 'an integer',
  string: 'a string',
  object: 'a mapping (key: value)',
  array: 'a list',
  boolean: 'true or false',
  null: 'empty',
};

/** Turns ajv's errors into problems, dropping the noise (if/then bookkeeping, oneOf branches). */
function schemaProblems(errors: ErrorObject[], data: unknown, doc: Document, lc: LineCounter, file: string): CampaignProblem[] {
  const failedOneOf = errors.filter((e) => e.keyword === 'oneOf').map((e) => e.schemaPath + '/');
  // `store` is a name or a mapping: its errors are those of the shape the file used.
  const store = (data as Record<string, unknown> | null)?.store;
  const storeMapping = store !== null && typeof store === 'object' && !Array.isArray(store);
  const storeShape = typeof store === 'string' ? '#/properties/store/oneOf/0/' : storeMapping ? '#/properties/store/oneOf/1/' : undefined;
  const out: CampaignProblem[] = [];
  for (const e of errors) {
    if (e.keyword === 'if') continue;
    if (e.keyword === 'oneOf' && e.instancePath === '/store' && storeShape) continue;
    if (failedOneOf.some((p) => e.schemaPath.startsWith(p)) && !(storeShape && e.schemaPath.startsWith(storeShape))) continue;
    const segs = parsePointer(e.instancePath);
    const params = e.params as Record<string, unknown>;
    let at = segs;
    let key = false;
    let message = e.message ?? 'is not valid';
    switch (e.keyword) {
      case 'additionalProperties': {
        at = [...segs, String(params.additionalProperty)];
        key = true;
        const allowed = Object.keys(((e.parentSchema as { properties?: object } | undefined)?.properties ?? {}) as object).filter((k) => k !== '$schema');
        message = `unknown field${allowed.length ? ` (allowed here: ${allowed.join(', ')})` : ''}`;
        break;
      }
      case 'required': {
        const missing = String(params.missingProperty);
        out.push({ file, line: lineOf(doc, lc, segs), field: fieldName([...segs, missing]), message: 'required field is missing' });
        continue;
      }
      case 'false schema': {
        const kind = valueAt(data, [...segs.slice(0, -1), 'kind']);
        key = true;
        message = `not allowed${typeof kind === 'string' ? ` for kind ${kind}` : ''}`;
        break;
      }
      case 'type':
        if (typeof e.data === 'number' && !Number.isFinite(e.data)) {
          message = 'must be a finite number';
          break;
        }
        message = `must be ${String(params.type)
          .split(',')
          .map((t) => TYPE_WORDS[t] ?? t)
          .join(' or ')}`;
        break;
      case 'enum':
        message = `must be one of: ${(params.allowedValues as unknown[]).map(String).join(', ')} (found ${JSON.stringify(e.data)})`;
        break;
      case 'pattern':
        message = e.schemaPath.includes('hostName')
          ? `${JSON.stringify(e.data)} is not a host name (lower-case letters, digits and dashes, at most 31: worker-N, broker-N, coordinator, store, or an inventory's name)`
          : `${JSON.stringify(e.data)} must be lower case letters, digits, '.', '_' or '-'`;
        break;
      case 'oneOf':
        if (e.instancePath === '/workload') message = 'give either rate (events/s) or totalEvents, not both and not neither';
        else if (e.instancePath === '/store') message = 'must be a store name (minio, seaweedfs) or a mapping { kind: minio, drives: 4 }';
        else message = 'must match exactly one of the allowed shapes';
        break;
      case 'uniqueItems':
        message = 'lists the same host twice';
        break;
      default:
        break;
    }
    out.push({ file, line: lineOf(doc, lc, at, { key }), field: fieldName(at), message });
  }
  return out;
}

interface RawStep {
  kind: FaultKind;
  targets?: string[];
  points?: string[];
  point?: string;
}

/**
 * Meaning checks the schema cannot express: point names, target roles, the schedule's fit;
 * and for each mutant's own schedule (perMutant) its key, the same checks of its faults,
 * its fit in its soak, and that it uses nothing the base schedule lacks (notInBase).
 */
function meaningProblems(data: RawCampaign, doc: Document, lc: LineCounter, file: string, opts: LoadOptions, campaignDir: string, spacingGiven: boolean): CampaignProblem[] {
  const out: CampaignProblem[] = [];
  const add = (segs: Segment[], message: string, key = false) => out.push({ file, line: lineOf(doc, lc, segs, { key }), field: fieldName(segs), message });
  const points = opts.faultPoints ?? DEFAULT_FAULT_POINTS;
  const hosts = opts.hosts ?? (data.rig?.kind === 'inventory' ? undefined : STANDARD_HOSTS);
  if (data.faults.length === 0 && data.compositions.length === 0) add(['faults'], 'a campaign schedules at least one fault: list some here or in compositions', true);

  const checkFault = (f: RawStep, base: Segment[]) => {
    const pts = f.kind === 'protocol-point' ? (f.points ?? (f.point ? [f.point] : [])) : [];
    pts.forEach((p, j) => {
      if (!points.includes(p)) add(f.points ? [...base, 'points', j] : [...base, 'point'], `unknown protocol point '${p}' (the engine has: ${points.join(', ')})`);
    });
    const rule = TARGET_ROLES[f.kind];
    const fitting = hosts ? hosts.filter((h) => h.roles.some((r) => rule.roles.includes(r))).map((h) => h.name) : [];
    const allowed = `${f.kind} targets ${rule.what}${fitting.length ? `: ${fitting.join(', ')}` : ''}`;
    // hosts is unknown only when the inventory file is missing, a problem at rig.file already: targets wait for it.
    if (hosts) (f.targets ?? []).forEach((t, j) => {
      const role = hosts.find((h) => h.name === t)?.roles;
      if (!role || role.length === 0) {
        add([...base, 'targets', j], `'${t}' is not a host of this rig (${allowed})`);
      } else if (!role.some((r) => rule.roles.includes(r))) {
        add([...base, 'targets', j], `'${t}' cannot be a ${f.kind} target (${allowed})`);
      }
    });
    const stores = FAULT_SPECS[f.kind].stores;
    if (stores && !stores.includes(data.store)) add([...base, 'kind'], `${f.kind} works on ${stores.join(', ')}'s own files only, and this campaign's store is ${data.store} (the top-level 'store')`);
    if (f.kind === 'protocol-point' && f.targets?.length && pts.length && pts.every((p) => p.startsWith('coordinator.'))) {
      add([...base, 'targets'], 'coordinator points always fire in the coordinator: targets apply to sink.* points only', true);
    }
  };
  data.faults.forEach((f, i) => checkFault(f, ['faults', i]));
  const names = new Set<string>();
  (data.compositions ?? []).forEach((c, i) => {
    if (names.has(c.name)) add(['compositions', i, 'name'], `a composition named '${c.name}' is already defined`);
    names.add(c.name);
    c.steps.forEach((s, j) => checkFault(s, ['compositions', i, 'steps', j]));
  });

  if (opts.mutants && data.engine?.mutant && data.engine.mutant !== 'none' && !opts.mutants.includes(data.engine.mutant)) {
    add(['engine', 'mutant'], `unknown mutant '${data.engine.mutant}' (the engine has: none, ${opts.mutants.join(', ')})`);
  }
  if (opts.profiles && data.engine?.profile !== undefined && !opts.profiles.includes(data.engine.profile)) {
    add(
      ['engine', 'profile'],
      opts.profiles.length
        ? `unknown job profile '${data.engine.profile}' (the engine ${data.engine.name} has: ${opts.profiles.join(', ')})`
        : `the engine ${data.engine.name} deploys one job and has no profiles: remove engine.profile`,
    );
  }
  if (data.rig?.kind === 'inventory' && data.rig.file && !existsSync(path.resolve(campaignDir, data.rig.file))) {
    add(['rig', 'file'], `inventory file not found: ${path.resolve(campaignDir, data.rig.file)}`);
  }

  const { startAfterS, spacingS, jitterS } = data.schedule;
  const slots = countSlots(data.faults, data.compositions ?? []);
  if (slots > MAX_FAULT_SLOTS) add(['faults'], `${slots} fault slots; at most ${MAX_FAULT_SLOTS} in one campaign (one per fault, one per composition run)`, true);
  const planned = countPlannedFaults(data.faults, data.compositions ?? []);
  if (planned > MAX_PLANNED_FAULTS) add(plannedAt(data.compositions ?? [], []), `${planned} planned faults; at most ${MAX_PLANNED_FAULTS} in one campaign (each battery fault, and each step of each composition run)`, true);
  const needed = startAfterS + slots * spacingS;
  if (needed > data.workload.soakS) {
    const fix = spacingGiven
      ? ''
      : ` (spacingS is the default, ${DEFAULT_SCHEDULE.spacingS} s: give a longer workload.soakS, or a schedule, e.g. 'schedule: { startAfterS: ${startAfterS}, spacingS: ${Math.max(1, Math.floor((data.workload.soakS - startAfterS) / Math.max(1, slots)))} }')`;
    add(['schedule', 'spacingS'], `the schedule does not fit in the soak: startAfterS ${startAfterS} s + ${slots} fault slots × spacingS ${spacingS} s = ${needed} s > workload.soakS ${data.workload.soakS} s${fix}`);
  }
  if (jitterS !== undefined && jitterS >= spacingS) add(['schedule', 'jitterS'], `must be less than spacingS (${spacingS})`);
  else if (slots <= MAX_FAULT_SLOTS && needed <= data.workload.soakS) {
    for (const o of heldPastSoak(data.schedule, slots, data.faults, data.compositions ?? [], data.workload.soakS)) add(o.at, o.message);
  }

  // The gate's fault is planned with a kind alone: no target list, no point, no settings.
  if (!GATE_FAULT_KINDS.includes(data.gate.fault)) add(['gate', 'fault'], `${data.gate.fault} cannot be the gate's fault, which is planned with its kind alone (no point, no durationS, share, variant or offsetS): use one of ${GATE_FAULT_KINDS.join(', ')}`);
  if (opts.engines && !opts.engines.includes(data.engine.name)) add(['engine', 'name'], `unknown engine '${data.engine.name}' (known: ${opts.engines.join(', ')})`);

  const pauseMin = Math.max(MIN_PROCESS_PAUSE_S, data.workload.checkpointIntervalS);
  const checkPause = (f: RawStep & FaultParams, segs: Segment[]) => {
    if (f.kind === 'process-pause' && f.durationS !== undefined && f.durationS < pauseMin) {
      add([...segs, 'durationS'], `a process-pause of ${f.durationS} s is too short to mean anything: at least ${pauseMin} s (the longer of the checkpoint interval, ${data.workload.checkpointIntervalS} s, so a barrier falls inside it, and ${MIN_PROCESS_PAUSE_S} s, the bundled engine's worker-loss timeout)`);
    }
    // A protocol point that pauses its process holds it for durationS; one that kills takes none.
    if (f.kind === 'protocol-point' && f.variant === 'pause' && f.durationS === undefined) add([...segs, 'variant'], 'a protocol point with variant pause holds its process stopped for durationS seconds: give durationS');
    if (f.kind === 'protocol-point' && f.variant !== 'pause' && f.durationS !== undefined) add([...segs, 'durationS'], 'durationS is for a protocol point with variant pause (a point that kills its process holds nothing)');
    if (f.kind === 'protocol-point' && f.variant === 'pause' && f.durationS !== undefined && f.durationS < pauseMin) {
      add([...segs, 'durationS'], `a pause at a protocol point of ${f.durationS} s is too short to outlast the engine's loss detection: at least ${pauseMin} s`);
    }
  };
  data.faults.forEach((f, i) => checkPause(f, ['faults', i]));
  (data.compositions ?? []).forEach((c, i) => {
    c.steps.forEach((st, j) => checkPause(st, ['compositions', i, 'steps', j]));
    for (const o of overlappingSteps(c.steps, hosts ?? STANDARD_HOSTS)) add(['compositions', i, 'steps', o.later, 'afterS'], o.message, o.keyLine);
  });
  for (const [mutant, m] of Object.entries(data.perMutant ?? {})) m.faults.forEach((f, i) => checkPause(f, ['perMutant', mutant, 'faults', i]));

  for (const [mutant, m] of Object.entries(data.perMutant ?? {})) {
    const at: Segment[] = ['perMutant', mutant];
    if (mutant === 'none') add(at, "'none' is the correct engine, whose schedule is the base one: perMutant names mutants only", true);
    else if (opts.mutants && !opts.mutants.includes(mutant)) add(at, `unknown mutant '${mutant}' (the engine ${data.engine.name} has: ${opts.mutants.join(', ') || 'none'})`, true);
    m.faults.forEach((f, i) => checkFault(f, [...at, 'faults', i]));
    out.push(...notInBase(data, m, at, (segs, message, key) => ({ file, line: lineOf(doc, lc, segs, { key }), field: fieldName(segs), message }), hosts ?? STANDARD_HOSTS));
    const mSlots = countSlots(m.faults, m.compositions);
    const soakS = m.soakS ?? data.workload.soakS;
    const soakAt: Segment[] = m.soakS !== undefined ? [...at, 'soakS'] : at;
    const mPlanned = countPlannedFaults(m.faults, m.compositions.map((ref) => ({ count: ref.count, steps: (data.compositions ?? []).find((c) => c.name === ref.name)?.steps ?? [] })));
    if (mSlots === 0) add(at, "a mutant's schedule has at least one fault: list some in its faults or compositions", true);
    else if (mSlots > MAX_FAULT_SLOTS) add(at, `${mSlots} fault slots; at most ${MAX_FAULT_SLOTS} in one schedule`, true);
    else if (mPlanned > MAX_PLANNED_FAULTS) add(at, `${mPlanned} planned faults; at most ${MAX_PLANNED_FAULTS} in one schedule (each battery fault, and each step of each composition run)`, true);
    else if (startAfterS + mSlots * spacingS <= soakS) {
      const comps = m.compositions.map((ref) => ({ steps: (data.compositions ?? []).find((c) => c.name === ref.name)?.steps ?? [] }));
      for (const o of heldPastSoak(data.schedule, mSlots, m.faults, [], soakS, at, m.soakS !== undefined ? 'soakS' : 'workload.soakS')) add(o.at, o.message);
      const comp = heldPastSoak(data.schedule, mSlots, [], comps, soakS, at, m.soakS !== undefined ? 'soakS' : 'workload.soakS')[0];
      if (comp) add(soakAt, `a composition step ${comp.message}`, m.soakS === undefined);
    } else {
      add(
        soakAt,
        `the schedule does not fit in the soak: startAfterS ${startAfterS} s + ${mSlots} fault slots × spacingS ${spacingS} s = ${startAfterS + mSlots * spacingS} s > ${m.soakS !== undefined ? 'soakS' : 'workload.soakS (this schedule gives no soakS)'} ${soakS} s`,
        m.soakS === undefined,
      );
    }
  }
  return out;
}

type Problem = (segs: Segment[], message: string, key?: boolean) => CampaignProblem;

const SETTINGS = ['durationS', 'share', 'variant', 'offsetS'] as const;

function describeSettings(f: FaultParams): string {
  const s = SETTINGS.filter((k) => f[k] !== undefined).map((k) => `${k} ${String(f[k])}`);
  return s.length ? ` (${s.join(', ')})` : '';
}

/**
 * The rule that keeps a mutant's catch meaningful: everything its schedule uses is in the
 * base schedule, which the control (the correct engine) runs and must PASS. A battery entry
 * must match a base battery entry of its kind with the same settings (durationS, share,
 * variant, offsetS) and targets among that entry's (a base protocol point with no targets
 * is any worker's); each protocol point must be listed by such a base entry; a composition
 * must name a base composition (its steps are the base's).
 */
function notInBase(data: RawCampaign, m: RawMutantSchedule, at: Segment[], problem: Problem, hosts: readonly CampaignHost[]): CampaignProblem[] {
  const out: CampaignProblem[] = [];
  const targetsOf = (f: RawStep) => f.targets ?? defaultTargets(f.kind, hosts);
  const sameSettings = (a: FaultParams, b: FaultParams) => SETTINGS.every((k) => a[k] === b[k]);
  const covers = (base: RawStep, f: RawStep) => {
    const bt = targetsOf(base);
    return (f.kind === 'protocol-point' && bt.length === 0) || targetsOf(f).every((t) => bt.includes(t));
  };
  const why = 'every fault a mutant runs must be in the base schedule, which the control runs';
  m.faults.forEach((f, i) => {
    const segs = [...at, 'faults', i];
    const sameKind = data.faults.filter((b) => b.kind === f.kind);
    if (sameKind.length === 0) {
      out.push(problem([...segs, 'kind'], `${f.kind} is not in the base battery (faults): ${why}`));
      return;
    }
    const fitting = sameKind.filter((b) => sameSettings(b, f) && covers(b, f));
    if (f.kind === 'protocol-point') {
      (f.points ?? []).forEach((p, j) => {
        if (!fitting.some((b) => b.points?.includes(p))) out.push(problem([...segs, 'points', j], `protocol point '${p}' is not in the base battery's protocol-point entries${f.targets ? ' with these targets' : ''}: ${why}`));
      });
    } else if (fitting.length === 0) {
      const base = sameKind.map((b) => `${b.kind}${describeSettings(b)} on ${targetsOf(b).join(', ') || 'any'}`).join('; ');
      out.push(problem(segs, `${f.kind}${describeSettings(f)} on ${targetsOf(f).join(', ')} is not a fault of the base battery (it has: ${base}): ${why}`));
    }
  });
  const names = data.compositions.map((c) => c.name);
  const seen = new Set<string>();
  m.compositions.forEach((c, i) => {
    const segs = [...at, 'compositions', i, 'name'];
    if (seen.has(c.name)) out.push(problem(segs, `composition '${c.name}' is listed twice (give it one entry with a count)`));
    seen.add(c.name);
    if (!names.includes(c.name)) out.push(problem(segs, `no composition '${c.name}' in the base schedule (it has: ${names.join(', ') || 'none'}): ${why}`));
  });
  return out;
}

/**
 * The shortest process-pause that means something: the bundled engine's worker-loss timeout
 * (engine/clink/coordinator.ts, workerLossTimeoutMs, 6 s by default). A pause shorter than
 * that (or than one checkpoint interval, whichever is longer) neither loses the worker nor
 * holds a barrier: it would count as survived without testing anything.
 */
export const MIN_PROCESS_PAUSE_S = 6;

/**
 * The kinds the functional gate can land: the gate plans its fault with the kind alone
 * (campaigns/runner/phases.ts), so a kind that needs a point (protocol-point) or a setting
 * (durationS, share, variant, offsetS) can never land there.
 */
export const GATE_FAULT_KINDS: readonly FaultKind[] = FAULT_KINDS.filter((k) => k !== 'protocol-point' && FAULT_SPECS[k].fields.required.length === 0);

/** The latest second a slot can start at: startAfterS + (slots - 1) × spacingS + jitterS (default spacingS / 4). */
export function lastSlotStartS(schedule: { startAfterS: number; spacingS: number; jitterS?: number }, slots: number): number {
  const jitter = schedule.jitterS ?? Math.floor(schedule.spacingS / 4);
  return schedule.startAfterS + Math.max(0, slots - 1) * schedule.spacingS + jitter;
}

/**
 * The faults that may still be held when the soak ends: a battery fault, or a composition
 * step, in the slot that may start last (the seed can put any slot last), whose afterS +
 * durationS ends past `soakS`. Each with its field and a message saying the sum.
 */
export function heldPastSoak(
  schedule: { startAfterS: number; spacingS: number; jitterS?: number },
  slots: number,
  faults: FaultParams[],
  compositions: { steps: (FaultParams & { afterS?: number })[] }[],
  soakS: number,
  base: Segment[] = [],
  soakName = 'workload.soakS',
): { at: Segment[]; endS: number; message: string }[] {
  const last = lastSlotStartS(schedule, slots);
  const out: { at: Segment[]; endS: number; message: string }[] = [];
  const check = (f: FaultParams & { afterS?: number }, at: Segment[]) => {
    const afterS = f.afterS ?? 0;
    const held = f.durationS ?? 0;
    const end = last + afterS + held;
    if (end <= soakS) return;
    out.push({
      at: [...at, afterS > held ? 'afterS' : 'durationS'],
      endS: end,
      message: `ends past the soak: the last slot may start at ${last} s (startAfterS + (${slots} slots - 1) × spacingS + jitterS), + afterS ${afterS} s + durationS ${held} s = ${end} s > ${soakName} ${soakS} s`,
    });
  };
  faults.forEach((f, i) => check(f, [...base, 'faults', i]));
  compositions.forEach((c, i) => c.steps.forEach((st, j) => check(st, [...base, 'compositions', i, 'steps', j])));
  return out;
}

/**
 * Steps of one composition that hold a fault of the same kind on a target they may share,
 * at overlapping times: the first heal would end the second fault too. A step's window is
 * [afterS, afterS + durationS); steps without a durationS hold nothing. `later` is the index
 * of the step that starts second. Faults of different slots need no such check: the chaos
 * controller runs slots one after another, each once the previous one has healed and
 * recovered (chaos/controller.ts; campaigns/plan.ts says why).
 */
function overlappingSteps(steps: (RawStep & FaultParams & { afterS?: number })[], hosts: readonly CampaignHost[]): { later: number; message: string; keyLine: boolean }[] {
  const out: { later: number; message: string; keyLine: boolean }[] = [];
  const targetsOf = (f: RawStep) => f.targets ?? defaultTargets(f.kind, hosts);
  steps.forEach((a, i) => {
    steps.forEach((b, j) => {
      if (j <= i || a.kind !== b.kind || !a.durationS || !b.durationS) return;
      const [first, second, fi, si] = (a.afterS ?? 0) <= (b.afterS ?? 0) ? [a, b, i, j] : [b, a, j, i];
      const firstEnd = (first.afterS ?? 0) + first.durationS!;
      if ((second.afterS ?? 0) >= firstEnd) return;
      const ta = targetsOf(first);
      const tb = targetsOf(second);
      const shared = ta.length === 0 || tb.length === 0 ? ['the same host'] : ta.filter((t) => tb.includes(t));
      if (shared.length === 0) return;
      out.push({
        later: si,
        keyLine: (second.afterS ?? undefined) === undefined,
        message: `overlaps steps[${fi}]: both hold ${first.kind} on ${shared.join(', ')} (steps[${fi}] from ${first.afterS ?? 0} s to ${firstEnd} s, this one from ${second.afterS ?? 0} s): the first heal would end this fault too; start it at ${firstEnd} s or later, or give the two steps different targets`,
      });
    });
  });
  return out;
}

/** At most this many fault slots in one campaign (each entry's count is at most 10000 in the schema too). */
export const MAX_FAULT_SLOTS = 10_000;
/**
 * At most this many planned faults in one campaign (or one mutant's schedule): each battery
 * fault, and each step of each composition run (a composition of 1,000 steps run 5,000
 * times is 5,000,000 faults, though only 5,000 slots). Checked before anything is planned,
 * so a campaign file of a few kilobytes cannot make the planner hold millions of faults.
 */
export const MAX_PLANNED_FAULTS = 10_000;
/** At most this many alias uses in a campaign's YAML (an alias bomb expands exponentially). */
export const MAX_ALIAS_COUNT = 100;

/** Where the first alias of a document is, as a problem (when the aliases expand too far). */
function aliasProblem(doc: Document, lc: LineCounter, file: string, err: unknown): CampaignProblem {
  let at: { line: number; field: string } | undefined;
  visit(doc, {
    Alias(_key, node, ancestors) {
      const segs: Segment[] = [];
      const chain = [...ancestors, node];
      chain.forEach((a, i) => {
        if (isPair(a) && isScalar(a.key)) segs.push(String(a.key.value));
        else if (isSeq(a) && i + 1 < chain.length) segs.push(a.items.indexOf(chain[i + 1] as never));
      });
      const start = startOf(node);
      at = { line: start === undefined ? 1 : lc.linePos(start).line, field: fieldName(segs) };
      return visit.BREAK;
    },
  });
  const why = (err as Error).message.split('\n')[0];
  return { file, line: at?.line ?? 1, field: at?.field ?? '', message: `YAML aliases expand too far (at most ${MAX_ALIAS_COUNT} alias uses; an alias bomb?): ${why}` };
}

/** Slots a battery and its compositions take on the timeline: one per fault, one per composition run. */
export function countSlots(faults: { kind: string; count?: number; points?: string[] }[], compositions: { count?: number }[]): number {
  let n = 0;
  for (const f of faults) n += (f.count ?? 1) * (f.kind === 'protocol-point' ? (f.points?.length ?? 0) : 1);
  for (const c of compositions) n += c.count ?? 1;
  return n;
}

/** The faults a battery and its compositions plan: one per battery fault, one per step of each composition run. */
export function countPlannedFaults(faults: { kind: string; count?: number; points?: string[] }[], compositions: { count?: number; steps: unknown[] }[]): number {
  let n = countSlots(faults, []);
  for (const c of compositions) n += (c.count ?? 1) * c.steps.length;
  return n;
}

/** Where a too-large schedule is named: the composition that plans the most faults, else the battery. */
function plannedAt(compositions: { count?: number; steps: unknown[] }[], base: Segment[]): Segment[] {
  let best = -1;
  let most = 0;
  compositions.forEach((c, i) => {
    const n = (c.count ?? 1) * c.steps.length;
    if (n > most) [best, most] = [i, n];
  });
  return best >= 0 ? [...base, 'compositions', best, 'count'] : [...base, 'faults'];
}

/**
 * The campaign's store as a kind and a drive count: `store: minio` (one drive), or the
 * mapping `{ kind, drives }`. Refused, at the field's line: drives for a store that is not
 * MinIO (SeaweedFS keeps one data directory), and a drive count MinIO is not run on here
 * (rig/store.ts MINIO_DRIVE_LAYOUTS: 1, or 4 erasure-coded).
 */
function storeLayout(raw: StoreKind | { kind: StoreKind; drives?: number }, add: (segs: Segment[], message: string) => void): { kind: StoreKind; drives: number } {
  if (typeof raw === 'string') return { kind: raw, drives: 1 };
  if (raw.drives === undefined) return { kind: raw.kind, drives: 1 };
  if (raw.kind !== 'minio') add(['store', 'drives'], `${raw.kind} keeps its data in one directory: drives is MinIO's drive layout only (remove it, or use kind: minio)`);
  else if (!(MINIO_DRIVE_LAYOUTS as readonly number[]).includes(raw.drives))
    add(['store', 'drives'], `MinIO runs here on ${MINIO_DRIVE_LAYOUTS.join(' drive (single-drive mode) or ')} drives (erasure-coded, 2 data + 2 parity shards on the store host), not ${raw.drives}`);
  return { kind: raw.kind, drives: raw.drives };
}

/** A perMutant entry after the schema check (defaults filled). */
interface RawMutantSchedule {
  soakS?: number;
  faults: (RawStep & FaultParams & { count: number })[];
  compositions: { name: string; count: number }[];
}

/** The campaign as it stands after the schema check (schema defaults filled). */
interface RawCampaign {
  name: string;
  description?: string;
  seed: string;
  rig: { kind: 'local' | 'inventory'; file?: string };
  /** The kind alone once parseCampaign has read the layout (storeLayout) into storeDrives. */
  store: StoreKind;
  storeDrives: number;
  engine: { name: string; mutant: string; profile?: string };
  workload: { rate?: number; totalEvents?: number; partitions: number; keys: number; checkpointIntervalS: number; soakS: number };
  gate: { deadlineS: number; fault: FaultKind };
  faults: (RawStep & FaultParams & { count: number })[];
  compositions: { name: string; description?: string; count: number; last?: boolean; steps: (RawStep & FaultParams & { afterS: number })[] }[];
  schedule: { startAfterS: number; spacingS: number; jitterS?: number };
  deadlines: ResolvedCampaign['deadlines'];
  oracle: ResolvedCampaign['oracle'];
  perMutant?: Record<string, RawMutantSchedule>;
}

function defaultTargets(kind: FaultKind, hosts: readonly CampaignHost[]): string[] {
  const roles = TARGET_ROLES[kind].defaultRoles;
  return hosts.filter((h) => h.roles.some((r) => roles.includes(r))).map((h) => h.name);
}

function resolve(data: RawCampaign, file: string, campaignDir: string, opts: LoadOptions): ResolvedCampaign {
  const hosts = opts.hosts ?? STANDARD_HOSTS;
  const fault = <T extends RawStep & FaultParams>(f: T) => ({
    kind: f.kind,
    targets: f.targets ? [...f.targets] : defaultTargets(f.kind, hosts),
    ...faultParams(f),
  });
  const battery = (entries: RawCampaign['faults']): ResolvedBatteryEntry[] =>
    entries.map((f) => {
      const { kind, targets, ...rest } = fault(f);
      return { kind, count: f.count, targets, ...(f.points ? { points: [...f.points] } : {}), ...rest };
    });
  const faults = battery(data.faults);
  const compositions: ResolvedComposition[] = data.compositions.map((c) => ({
    name: c.name,
    ...(c.description ? { description: c.description } : {}),
    count: c.count,
    ...(c.last ? { last: true } : {}),
    steps: c.steps.map((s) => {
      const { kind, targets, ...rest } = fault(s);
      return { kind, afterS: s.afterS, targets, ...(s.point ? { point: s.point } : {}), ...rest };
    }),
  }));
  const perMutant = data.perMutant
    ? Object.fromEntries(
        Object.entries(data.perMutant).map(([mutant, m]): [string, ResolvedMutantSchedule] => [
          mutant,
          {
            ...(m.soakS !== undefined ? { soakS: m.soakS } : {}),
            faults: battery(m.faults),
            compositions: m.compositions.map((ref) => {
              const base = compositions.find((c) => c.name === ref.name)!;
              return { ...base, count: ref.count, steps: base.steps.map((s) => ({ ...s, targets: [...s.targets] })) };
            }),
          },
        ]),
      )
    : undefined;
  const w = data.workload;
  return {
    name: data.name,
    ...(data.description ? { description: data.description } : {}),
    seed: data.seed,
    file,
    rig: data.rig.kind === 'inventory' ? { kind: 'inventory', file: path.resolve(campaignDir, data.rig.file!) } : { kind: 'local' },
    store: data.store,
    storeDrives: data.storeDrives,
    engine: { name: data.engine.name, mutant: data.engine.mutant, ...(data.engine.profile !== undefined ? { profile: data.engine.profile } : {}) },
    workload: {
      rate: w.rate ?? Math.ceil(w.totalEvents! / w.soakS),
      ...(w.totalEvents !== undefined ? { totalEvents: w.totalEvents } : {}),
      partitions: w.partitions,
      keys: w.keys,
      checkpointIntervalS: w.checkpointIntervalS,
      soakS: w.soakS,
    },
    gate: { deadlineS: data.gate.deadlineS, fault: data.gate.fault },
    faults,
    compositions,
    schedule: {
      startAfterS: data.schedule.startAfterS,
      spacingS: data.schedule.spacingS,
      jitterS: data.schedule.jitterS ?? Math.floor(data.schedule.spacingS / 4),
    },
    deadlines: { ...data.deadlines },
    oracle: { ...data.oracle },
    ...(perMutant ? { perMutant } : {}),
  };
}

/**
 * Parses and checks campaign text (`file` is only used in messages and to resolve the
 * inventory path). Throws QualError('BAD_INPUT_FILE') listing every problem.
 */
export function parseCampaign(text: string, file: string, opts: LoadOptions = {}): ResolvedCampaign {
  const shown = displayName(file);
  const campaignDir = path.dirname(path.resolve(file));
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: true });
  const fail = (problems: CampaignProblem[]): never => {
    problems.sort((a, b) => a.line - b.line || a.field.localeCompare(b.field));
    const seen = new Set<string>();
    const lines = problems.map(formatProblem).filter((l) => !seen.has(l) && (seen.add(l), true));
    throw new QualError('BAD_INPUT_FILE', `campaign ${shown} is not valid (${lines.length} problem${lines.length === 1 ? '' : 's'}):\n  ${lines.join('\n  ')}`, {
      problems: lines,
    });
  };
  if (doc.errors.length) {
    fail(
      doc.errors.map((e) => ({
        file: shown,
        line: e.linePos?.[0]?.line ?? 1,
        field: '',
        message: `YAML syntax: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`,
      })),
    );
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    fail([aliasProblem(doc, lc, shown, err)]);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    fail([{ file: shown, line: 1, field: '', message: 'a campaign is a mapping (name:, seed:, workload:, faults:, schedule: ...)' }]);
  }
  // Whether the file gave schedule.spacingS, before the schema's defaults fill it (DEFAULT_SCHEDULE).
  const sched = (data as Record<string, unknown>).schedule;
  const spacingGiven = sched !== null && typeof sched === 'object' && 'spacingS' in sched;
  const errors = validate(data);
  if (errors.length) fail(schemaProblems(errors, data, doc, lc, shown));
  // The store's layout read (and checked) first: every later check sees the kind alone.
  const layoutProblems: CampaignProblem[] = [];
  const layout = storeLayout((data as { store: StoreKind | { kind: StoreKind; drives?: number } }).store, (segs, message) => layoutProblems.push({ file: shown, line: lineOf(doc, lc, segs), field: fieldName(segs), message }));
  const raw = { ...(data as object), store: layout.kind, storeDrives: layout.drives } as RawCampaign;
  // An inventory rig: targets are checked against (and default to) the inventory's own hosts and roles.
  if (raw.rig.kind === 'inventory' && raw.rig.file && !opts.hosts && existsSync(path.resolve(campaignDir, raw.rig.file))) {
    try {
      opts = { ...opts, hosts: readInventory(path.resolve(campaignDir, raw.rig.file)).map((h) => ({ name: h.name, roles: [...h.roles] })) };
    } catch (err) {
      fail([{ file: shown, line: lineOf(doc, lc, ['rig', 'file']), field: 'rig.file', message: `the inventory is not valid: ${(err as Error).message.replace(/\n/g, '; ')}` }]);
    }
  }
  const problems = [...layoutProblems, ...meaningProblems(raw, doc, lc, shown, opts, campaignDir, spacingGiven)];
  if (problems.length) fail(problems);
  return resolve(raw, shown, campaignDir, opts);
}

/** Reads (a regular file of at most MAX_CAMPAIGN_BYTES), checks and resolves a campaign file. Throws QualError('BAD_INPUT_FILE') naming file, line and field of every problem. */
export function loadCampaign(file: string, opts: LoadOptions = {}): ResolvedCampaign {
  // A regular file of at most 1 MiB: not /dev/zero, not a FIFO, not a 20 MB description.
  const text = readBoundedText(file, { maxBytes: MAX_CAMPAIGN_BYTES, what: 'campaign' });
  return parseCampaign(text, file, opts);
}
