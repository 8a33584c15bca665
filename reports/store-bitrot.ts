/**
 * The report's section on bitrot in the object store's own data (store-bitrot faults,
 * chaos/store-bitrot.ts): for each fault that landed, which object and which file, the byte
 * (offset, before → after), what the store answered right after the rot, what it answered at
 * the recount's held pass for a committed object held through it (recount-held.json), and
 * what the heal found. Everything from chaos.jsonl's landing and heal evidence and from
 * recount-held.json; nothing is said that they do not record.
 */
import type { ChaosRecord, HeldStoreAnswer } from '../lib/evidence.ts';
import type { RunEvidence } from './evidence.ts';
import { cell, table } from './format.ts';

type Evidence = Record<string, unknown>;

/** A store's answer in words, from store-bitrot's storeAnswer or a held pass's answer. */
export function answerWords(a: Evidence | HeldStoreAnswer | undefined, store: string): string {
  if (!a) return 'not recorded';
  if (a.answered === 'not read') return 'not read (a staged part is read only once its upload is completed)';
  if (a.answered === 'error') {
    const status = typeof a.httpStatus === 'number' ? `HTTP ${a.httpStatus} ` : '';
    return `${store} refused it: ${status}${String(a.name ?? 'error')}`;
  }
  if (a.answered === 'bytes') {
    if (a.matchesOriginal === true) return `${store} served the intact bytes (MD5 matches the original)`;
    if (a.matchesOriginal === false) return `**${store} served bytes that differ from the original** (MD5 ${String(a.md5)})`;
    return `${store} served ${String(a.size)} bytes (MD5 ${String(a.md5)})`;
  }
  return 'not recorded';
}

/** The heal's outcome in words: the byte written back, or why not (the store repaired it itself, the file is gone). */
function healWords(healed: ChaosRecord | undefined, store: string): string {
  if (!healed) return 'not healed';
  const e = healed.evidence ?? {};
  const when = e.afterHeldRecount ? 'after the held pass: ' : e.onAbort ? 'on abort: ' : '';
  const what = e.restored === true ? 'byte written back' : e.restored === false ? `not written back: ${String(e.why ?? 'no reason recorded')}` : 'healed';
  const after = e.storeAnswer ? `; then ${answerWords(e.storeAnswer as Evidence, store)}` : '';
  return `${when}${what}${after}`;
}

/** The "Store bitrot" subsection, or nothing when no store-bitrot fault landed. */
export function storeBitrotSection(ev: RunEvidence): string[] {
  const landed = ev.chaos.filter((r) => r.kind === 'store-bitrot' && r.phase === 'landed');
  if (!landed.length) return [];
  const store = ev.provenance?.store?.name === 'minio' ? 'MinIO' : (ev.provenance?.store?.name ?? 'the store');
  const held = ev.recountHeld;
  const out = ['### Store bitrot', ''];
  out.push(
    `One bit of the store's own data flipped on its disk while the store was frozen, at the byte below, on one drive (Layout: the store's drives as the fault found them). A committed object's rot is held through the recount's first pass (the held pass, \`recount-held.json\`), which records what the store answered for it, then healed before the recount that decides the verdict; the other rots are healed during the run.`,
    '',
  );
  const rows = landed.map((r) => {
    const e = r.evidence ?? {};
    const layout = e.layout as { drives?: number; kind?: string } | undefined;
    const healed = ev.chaos.find((h) => h.faultId === r.faultId && h.phase === 'healed');
    const answer = held?.answers.find((a) => a.faultId === r.faultId);
    const atHeld = e.heldThroughRecount ? (held ? (answer ? answerWords(answer, store) : 'not recorded in recount-held.json') : 'no held pass recorded (recount-held.json missing)') : 'not held (healed during the run)';
    return [
      r.faultId,
      String(e.variant ?? ''),
      layout ? `${layout.kind ?? ''}, ${layout.drives ?? '?'} drive${layout.drives === 1 ? '' : 's'}` : '',
      e.key ? `\`${String(e.key)}\`` : e.shaDir ? `staged upload (multipart dir \`${String(e.shaDir).slice(0, 12)}…\`)` : '',
      `\`${cell(String(e.file ?? ''))}\` byte ${String(e.offset ?? '?')}: ${String(e.before ?? '?')} → ${String(e.after ?? '?')}`,
      answerWords(e.storeAnswer as Evidence | undefined, store),
      atHeld,
      healWords(healed, store),
    ];
  });
  out.push(table(['Fault', 'Variant', 'Layout', 'Object', 'File, byte: before → after', 'Answer right after', 'Answer at the held pass', 'Heal'], rows), '');
  const others = (held?.answers ?? []).filter((a) => !a.faultId);
  if (others.length) {
    out.push(`The held pass also recorded ${others.length} object${others.length === 1 ? '' : 's'} no held fault rotted:`, '');
    for (const a of others.slice(0, 10)) out.push(`- \`${a.key}\` (${a.why.join(', ')}): ${answerWords(a, store)}${a.judged && a.matchesJudged === false ? `; judged as ETag ${a.judged.etag}, ${a.judged.size} bytes, now ETag ${String(a.etag)}, ${String(a.size)} bytes` : ''}`);
    out.push('');
  }
  return out;
}
