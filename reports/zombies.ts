/**
 * The report's "Zombies" subsection, from zombies.json: for each process the run held
 * stopped and then resumed, whether the engine declared it lost (and carried on without it
 * under which epoch or attempt), what it tried once resumed, and what fenced each attempt,
 * quoting the engine's own log lines. It says only what the lines show: a zombie the engine
 * never declared lost, or one that tried nothing the logs name, is said to be so.
 */
import type { TrailLine, ZombieTrail } from '../lib/evidence.ts';
import { table } from './format.ts';

const OUTCOME_WORDS: Record<ZombieTrail['outcome'], string> = {
  fenced: 'declared lost, replaced, and its late attempts fenced',
  'no-attempt': 'declared lost and replaced; it tried nothing its logs name once resumed',
  'not-lost': 'never declared lost: the pause did not outlast the engine\'s lease or heartbeat',
  unfenced: '**a late attempt with no fence in the logs**',
};

function quote(l: TrailLine | null): string {
  if (!l) return '—';
  return `${l.at.slice(11, 23)} ${l.host}: \`${l.line.replace(/^\S+\s+/, '').replace(/`/g, "'").slice(0, 160)}\``;
}

/** The process as the chaos log names it: its host and PID, or only its host (a partition names no PID). */
function processOf(z: ZombieTrail): string {
  return z.pid !== undefined ? `${z.host} pid ${z.pid}` : `the engine's process on ${z.host}`;
}

function stoppedFor(z: ZombieTrail): string {
  return `${Math.round((Date.parse(z.resumedAt) - Date.parse(z.stoppedAt)) / 1000)} s`;
}

/** The subsection (empty when the run held no process stopped). */
export function zombiesSection(zombies: readonly ZombieTrail[] | undefined): string[] {
  if (!zombies || zombies.length === 0) return [];
  const out = ['### Zombies', ''];
  out.push(
    'Each process below was held stopped while the job went on, then resumed. From the engine\'s own log lines (zombies.json): when it declared the process lost, the epoch or attempt it carried on under, and, after the resume, what the process tried and what stopped it.',
    '',
  );
  out.push(
    table(
      ['Fault', 'Process', 'Stopped', 'Outcome', 'Token'],
      zombies.map((z) => [z.faultId, `${processOf(z)}${z.point ? ` at \`${z.point}\`` : ''}`, stoppedFor(z), OUTCOME_WORDS[z.outcome], z.token.before || z.token.after ? `${z.token.before ?? '?'} → ${z.token.after ?? '?'}` : '—']),
    ),
    '',
  );
  for (const z of zombies) {
    out.push(`**${z.faultId}** (${processOf(z)}):`, '');
    out.push(`- declared lost: ${quote(z.declaredLost)}`);
    out.push(`- carried on without it: ${quote(z.replacedBy)}`);
    for (const a of z.attempts.slice(0, 6)) out.push(`- tried: ${quote(a)}`);
    if (z.attempts.length > 6) out.push(`- … ${z.attempts.length - 6} more attempts in zombies.json`);
    for (const f of z.fences.filter((f) => !z.attempts.includes(f) && !z.attempts.some((a) => a.at === f.at && a.line === f.line)).slice(0, 6)) out.push(`- fenced: ${quote(f)}`);
    out.push('');
  }
  return out;
}
