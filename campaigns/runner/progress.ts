/**
 * Progress for the operator: on a terminal, one live line rewritten in place (elapsed,
 * produced, committed, checkpoints, faults landed/healed/heal-failed, counters); otherwise, and for
 * events, plain timestamped log lines.
 */
import { raisedCounters, type Counters } from '../../lib/evidence.ts';

export interface ProgressState {
  phase: string;
  produced: number;
  committed: number;
  checkpoints: number;
  landed: number;
  healed: number;
  /** Faults whose heal threw (heal-failed): shown loudly, the run cannot PASS. */
  healFailed?: number;
  faultsPlanned: number;
  counters: Counters;
}

export class Progress {
  private readonly tty: boolean;
  private readonly t0 = Date.now();
  private lineShown = false;
  private lastPlain = 0;
  private readonly out: NodeJS.WriteStream;

  constructor(out: NodeJS.WriteStream = process.stderr) {
    this.out = out;
    this.tty = Boolean(out.isTTY) && !process.env.CI;
  }

  private elapsed(): string {
    const s = Math.floor((Date.now() - this.t0) / 1000);
    return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
  }

  /** A log line (event). */
  log(line: string): void {
    if (this.lineShown) this.out.write('\r\x1b[2K');
    this.lineShown = false;
    this.out.write(`[${this.elapsed()}] ${line}\n`);
  }

  /** The live status; on a non-terminal, printed at most every 30 s. */
  update(s: ProgressState): void {
    const bad = raisedCounters(s.counters).join(' ');
    const line = `[${this.elapsed()}] ${s.phase} | produced ${s.produced} committed ${s.committed} | checkpoints ${s.checkpoints} | faults ${s.landed}/${s.faultsPlanned} landed ${s.healed} healed${s.healFailed ? ` ${s.healFailed} HEAL FAILED` : ''} | ${bad || 'counters 0'}`;
    if (this.tty) {
      this.out.write(`\r\x1b[2K${line.slice(0, (this.out.columns || 160) - 1)}`);
      this.lineShown = true;
    } else if (Date.now() - this.lastPlain >= 30_000) {
      this.lastPlain = Date.now();
      this.out.write(line + '\n');
    }
  }

  end(): void {
    if (this.lineShown) this.out.write('\n');
    this.lineShown = false;
  }
}
