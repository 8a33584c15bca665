/**
 * The report's section on corruption of the engine's own durable state (state-corruption
 * faults, chaos/state-corruption.ts): for each fault that landed, which file and what it
 * holds, the bytes changed (and, when the plug named it, the number a restore resumes from
 * that the flip fell on), and what the process did when it was started again on them: it
 * stopped (its last lines, then the original bytes written back and a restart), or it ran
 * on (and, when the plug can tell, whether the job ran again and after how long). Everything
 * from chaos.jsonl's landing and heal evidence; a process that ran on is judged by the
 * recount like everything it committed, and the section says no more than that.
 */
import type { ChaosRecord } from '../lib/evidence.ts';
import type { RunEvidence } from './evidence.ts';
import { cell, fmtDuration, table } from './format.ts';

type Evidence = Record<string, unknown>;

/** The bytes of a landing in words: the offset, before → after (shortened past 16 bytes), and the number aimed at. */
export function bytesWords(e: Evidence): string {
  const short = (hex: unknown) => {
    const h = String(hex ?? '?');
    return h.length > 32 ? `${h.slice(0, 32)}… (${h.length / 2} bytes)` : h;
  };
  const aimed = typeof e.aimedAt === 'string' ? ` (${e.aimedAt})` : '';
  return `byte ${String(e.offset ?? '?')}${aimed}: ${short(e.before)} → ${short(e.after)}`;
}

/** Of a refusal's error lines, the ones that say most: the last two (a JVM's deepest cause comes last), or one when they are the same. */
function refusal(errors: string[]): string[] {
  const tail = errors.slice(-2);
  return tail.length === 2 && tail[0]!.trim() === tail[1]!.trim() ? [tail[1]!] : tail;
}

/** What the restarted process did, from the heal's evidence (chaos/state-corruption.ts). */
export function reactionWords(healed: ChaosRecord | undefined): string {
  if (!healed) return 'not healed';
  const e = healed.evidence ?? {};
  const watched = typeof e.watchedS === 'number' ? ` ${fmtDuration(e.watchedS)} after its start` : '';
  if (e.reaction === 'stopped') {
    const lines = Array.isArray(e.lastLines) ? (e.lastLines as unknown[]).map(String) : [];
    // A stack trace's frames say where, not what: the last line that is not one (runs before the heal left them out recorded only frames).
    const said = lines.filter((l) => !/^\s+at /.test(l));
    const errors = Array.isArray(e.errorLines) ? (e.errorLines as unknown[]).map(String) : [];
    const quote = (l: string) => `\`${cell(l.trim().slice(0, 300)).replace(/`/g, "'")}\``;
    // The error lines when recorded (the refusal's own words: its first 'Caused by' after the last fatal line, and the root cause), else the last line that is not a frame.
    const last = errors.length
      ? `; in its words: ${refusal(errors).map(quote).join(' … ')}`
      : said.length
        ? `; its last line: ${quote(said[said.length - 1]!)}`
        : lines.length
          ? '; its last lines recorded are the frames of a stack trace'
          : '';
    const repaired = e.repaired ? `; the original bytes written back and the process started again${e.restartedPid ? ` (PID ${String(e.restartedPid)})` : ''}` : '';
    return `**stopped**${watched}${last}${repaired}`;
  }
  if (e.reaction === 'running') {
    if (e.restored === true) return `ran on: the job running again${watched}, nothing repaired`;
    if (e.restored === false) return `**up, but the job not running**${watched}; nothing repaired`;
    return 'ran on (still up at the end of the watch), nothing repaired';
  }
  return e.onAbort ? 'healed on abort' : 'healed';
}

/** The "State corruption" subsection, or nothing when no state-corruption fault landed. */
export function stateCorruptionSection(ev: RunEvidence): string[] {
  const landed = ev.chaos.filter((r) => r.kind === 'state-corruption' && r.phase === 'landed');
  if (!landed.length) return [];
  const out = ['### State corruption', ''];
  out.push(
    "The engine's process was killed, one of its durable files (the files it restores from, as its plug declares them) corrupted at rest as below, and the process started again on it. What must happen: it notices, and either restores from an older valid state or stops loudly; it never restores silently from the corrupted bytes. A process that stopped got the original bytes back (an operator's repair) and was started again. A process that ran on restored from something: whether what it committed is right is the recount's to say (Measured outcome), not this table's.",
    '',
  );
  const rows = landed.map((r) => {
    const e = r.evidence ?? {};
    const healed = ev.chaos.find((h) => h.faultId === r.faultId && h.phase === 'healed');
    return [
      r.faultId,
      String(e.variant ?? ''),
      `${String(e.host ?? '')} (${String(e.role ?? '')})`,
      `\`${cell(String(e.file ?? ''))}\`${e.what ? `: ${cell(String(e.what))}` : ''}`,
      cell(bytesWords(e)),
      reactionWords(healed),
    ];
  });
  out.push(table(['Fault', 'Variant', 'Process', 'File', 'Bytes', 'When started again'], rows), '');
  return out;
}
