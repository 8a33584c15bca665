/**
 * The fault-kind registry is the one place a kind is declared: campaigns/schema.json's
 * kind-dependent definitions are generated from it and must be current, and the loader,
 * report and timeline read their targets, labels and colours from it.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { Ajv } from 'ajv';
import { FAULT_PACKAGES, FAULT_SPECS } from '../../../chaos/kinds.ts';
import { FAULT_FIELDS } from '../../../chaos/fault.ts';
import { faultFieldsDefinition, faultKindDefinition, generateSchema } from '../../../campaigns/schema-gen.ts';
import { SCHEMA_PATH } from '../../../campaigns/load.ts';
import { FAULT_KINDS } from '../../../chaos/kinds.ts';
import { KIND_COLOURS } from '../../../reports/timeline-svg.ts';

const SAMPLE: Record<(typeof FAULT_FIELDS)[number], unknown> = { durationS: 5, share: 0.2, points: ['sink.after-commit'], point: 'sink.after-commit', variant: 'overwrite', offsetS: -60 };

t.test('campaigns/schema.json is current with the registry (else: npm run schema)', async (t) => {
  const text = readFileSync(SCHEMA_PATH, 'utf8');
  t.equal(generateSchema(JSON.parse(text)), text);
});

t.test('every kind has a whole spec, its package names it, and the timeline takes its colour', async (t) => {
  t.same(Object.keys(FAULT_PACKAGES), [...FAULT_KINDS], 'one package per kind, in FAULT_KINDS order');
  const colours = new Set<string>();
  for (const k of FAULT_KINDS) {
    const s = FAULT_SPECS[k];
    t.equal(FAULT_PACKAGES[k].kind, k);
    t.ok(s.label.length > 0 && s.summary.length > 0 && s.evidence.length > 0, `${k}: label, summary, evidence`);
    t.match(s.colour, /^#[0-9a-f]{6}$/, `${k}: a colour`);
    colours.add(s.colour);
    t.equal(KIND_COLOURS[k], s.colour, `${k}: the timeline's colour is the spec's`);
    t.same(s.fields.required.filter((f) => s.fields.optional.includes(f)), [], `${k}: required and optional are disjoint`);
    t.ok(s.targets.defaultRoles.every((r) => s.targets.roles.includes(r)), `${k}: default targets among its roles`);
  }
  t.equal(colours.size, FAULT_KINDS.length, 'no two kinds share a colour');
  const kinds = faultKindDefinition();
  t.same(kinds.enum, [...FAULT_KINDS]);
  for (const k of FAULT_KINDS) t.match(String(kinds.description), `${k}: ${FAULT_SPECS[k].summary}`);
});

t.test("the generated faultFields enforce each spec: required fields required, others refused", async (t) => {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const check = ajv.compile(faultFieldsDefinition());
  for (const k of FAULT_KINDS) {
    const { required, optional } = FAULT_SPECS[k].fields;
    const variants = FAULT_SPECS[k].variants;
    const whole = Object.fromEntries([...required, ...optional].map((f) => [f, f === 'variant' && variants ? variants[0] : SAMPLE[f]]));
    t.ok(check({ kind: k, ...whole }), `${k}: its required and optional fields pass`);
    for (const v of variants ?? []) t.ok(check({ kind: k, ...whole, variant: v }), `${k}: variant ${v} passes`);
    if (variants) t.notOk(check({ kind: k, ...whole, variant: 'no-such-variant' }), `${k}: a variant it does not have is refused`);
    for (const f of required) {
      const less: Record<string, unknown> = { kind: k, ...whole };
      delete less[f];
      t.notOk(check(less), `${k}: without ${f} is refused`);
    }
    for (const f of FAULT_FIELDS.filter((x) => !required.includes(x) && !optional.includes(x))) t.notOk(check({ kind: k, ...whole, [f]: SAMPLE[f] }), `${k}: ${f} is refused`);
  }
  t.notOk(check({ kind: 'state-corruption', variant: 'overwrite' }), "state-corruption: store-tamper's variant is refused");
  t.notOk(check({ kind: 'store-tamper', variant: 'bitflip' }), "store-tamper: state-corruption's variant is refused");
});
