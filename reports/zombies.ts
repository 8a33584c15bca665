/**
 * The report's "Zombies" subsection, from zombies.json: for each process the run held
 * stopped and then resumed, and each whose host it cut off from the coordinator and then
 * reconnected (a partition: the process ran on), whether the engine declared it lost (and
 * carried on without it under which epoch or attempt), what it tried once resumed or while
 * cut off, and what fenced each attempt, quoting the engine's own log lines. It says only
 * what the lines show: a zombie the engine never declared lost, or one that tried nothing
 * the logs name, is said to be so.
 */
import type { TrailLine, ZombieTrail } from '../lib/evidence.ts';
import { table } from './format.ts';

/** The outcome in words; a partition's process ran on while cut off, so its window is a cut, not a pause. */
function outcomeWords(z: ZombieTrail): string {
  const cut = z.kind === 'partition';
  switch (z.outcome) {
    case 'fenced':
      return 'declared lost, replaced, and its late attempts fenced';
    case 'no-attempt':
      return cut ? 'declared lost and replaced; it tried nothing its logs name, cut off or after' : 'declared lost and replaced; it tried nothing its logs name once resumed';
    case 'not-lost':
      return `never declared lost: the ${cut ? 'cut' : 'pause'} did not outlast the engine's lease or heartbeat`;
    case 'unfenced':
      return '**a late attempt with no fence in the logs**';
  }
}

function quote(l: TrailLine | null): string {
  if (!l) return '—';
  // Without its stamp, runs of spaces made one (log4j pads the logger's name), and 240 characters: a Flink line's message comes after its logger's full name.
  return `${l.at.slice(11, 23)} ${l.host}: \`${l.line.replace(/^\S+\s+/, '').replace(/\s{2,}/g, ' ').replace(/`/g, "'").slice(0, 240)}\``;
}

/** The process as the chaos log names it: its host and PID, or only its host (a partition names no PID). */
function processOf(z: ZombieTrail): string {
  return z.pid !== undefined ? `${z.host} pid ${z.pid}` : `the engine's process on ${z.host}`;
}

/** How it was held and for how long: "stopped 75 s", or "cut off 75 s" for a partition. */
function heldFor(z: ZombieTrail): string {
  return `${z.kind === 'partition' ? 'cut off' : 'stopped'} ${Math.round((Date.parse(z.resumedAt) - Date.parse(z.stoppedAt)) / 1000)} s`;
}

/** The window in words, with its times: "stopped from … to …", "cut off from the coordinator from … to …". */
function windowOf(z: ZombieTrail): string {
  const at = (iso: string) => iso.slice(11, 23);
  return `${z.kind === 'partition' ? 'cut off from the coordinator' : 'stopped'} from ${at(z.stoppedAt)} to ${at(z.resumedAt)}`;
}

/** The subsection (empty when the run held no process stopped and cut no engine host off). */
export function zombiesSection(zombies: readonly ZombieTrail[] | undefined): string[] {
  if (!zombies || zombies.length === 0) return [];
  const cuts = zombies.filter((z) => z.kind === 'partition').length;
  const held = zombies.length - cuts;
  const out = ['### Zombies', ''];
  const which = [held ? 'held stopped while the job went on, then resumed' : '', cuts ? 'cut off from the coordinator while it ran on (the brokers and the store still in reach), then reconnected' : ''].filter(Boolean);
  out.push(
    `Each process below was ${which.join(', or ')}. From the engine's own log lines (zombies.json): when it declared the process lost, the epoch or attempt it carried on under, and what the process tried (${[held ? 'after the resume' : '', cuts ? 'while cut off and after' : ''].filter(Boolean).join('; ')}) and what stopped it.`,
    '',
  );
  out.push(
    table(
      ['Fault', 'Process', 'Held', 'Outcome', 'Token'],
      zombies.map((z) => [z.faultId, `${processOf(z)}${z.point ? ` at \`${z.point}\`` : ''}`, heldFor(z), outcomeWords(z), z.token.before || z.token.after ? `${z.token.before ?? '?'} → ${z.token.after ?? '?'}` : '—']),
    ),
    '',
  );
  for (const z of zombies) {
    out.push(`**${z.faultId}** (${processOf(z)}, ${windowOf(z)}):`, '');
    out.push(`- declared lost: ${quote(z.declaredLost)}`);
    out.push(`- carried on without it: ${quote(z.replacedBy)}`);
    for (const a of z.attempts.slice(0, 6)) out.push(`- tried: ${quote(a)}`);
    if (z.attempts.length > 6) out.push(`- … ${z.attempts.length - 6} more attempts in zombies.json`);
    for (const f of z.fences.filter((f) => !z.attempts.includes(f) && !z.attempts.some((a) => a.at === f.at && a.line === f.line)).slice(0, 6)) out.push(`- fenced: ${quote(f)}`);
    out.push('');
  }
  return out;
}
