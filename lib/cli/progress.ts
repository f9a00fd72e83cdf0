// The progress bar of `tet query -x` and `tet convert` on stderr: bytes done / total, rate and
// ETA, fed by the SDK's onProgress events (lib/progress.ts). Shown only on a TTY (the caller also
// drops it for --quiet / --no-progress), only once the operation has run PROGRESS_DELAY_MS (a
// short query prints nothing; TET_PROGRESS_DELAY_MS sets another delay), and erased when it ends.
// cli-progress draws it (bar glyphs, redraw, erase); it is required when the first bar is drawn,
// so a short command never loads it.
// The fields (bytes, rate, ETA) are computed here from the events, not by cli-progress, whose
// values are plain numbers and whose ETA is its own sampling of update calls.
import type { Progress } from '../index';
import { formatBytes } from './bytes';
import { lazy } from './lazy';

/** A bar appears only once the operation has run this long. */
export const PROGRESS_DELAY_MS = 500;

/** Seconds for people: 45s, 3m05s, 2h07m; '?' when unknown. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** The text fields of one bar line: done / total, the mean rate since the start, the ETA at that rate. */
export function progressFields(done: number, total: number, elapsedMs: number): { done: string; total: string; rate: string; eta: string } {
  const rate = elapsedMs > 0 ? done / (elapsedMs / 1000) : NaN;
  const eta = rate > 0 ? (total - done) / rate : NaN;
  return {
    done: formatBytes(done), total: formatBytes(total),
    rate: Number.isFinite(rate) ? `${formatBytes(Math.round(rate))}/s` : '?/s', eta: formatDuration(eta),
  };
}

/** The slice of cli-progress used here (it ships no type declarations). */
export interface CliBar {
  start(total: number, value: number, payload: Record<string, unknown>): void;
  update(value: number, payload: Record<string, unknown>): void;
  setTotal(total: number): void;
  stop(): void;
}
export type CliProgress = {
  SingleBar: new (options: Record<string, unknown>, preset: unknown) => CliBar;
  Presets: { shades_classic: unknown };
};

/** cli-progress, required when the first bar is drawn. */
export const loadCliProgress = lazy(() => require('cli-progress') as CliProgress);

/** Where and how a bar is drawn: injectable for tests (a fake TTY stream, a fake clock). */
export interface ProgressBarOptions {
  stream?: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  delayMs?: number;
  now?: () => number;
}

export class ProgressBar {
  // process.stderr is taken when the first bar is drawn (after the delay): a query that ends
  // sooner never creates the stream (lib/cli/out.ts says why that matters at start-up).
  private stream: ProgressBarOptions['stream'] | null;
  private readonly delayMs: number;
  private readonly now: () => number;
  private readonly t0: number;
  private bar: CliBar | null = null;
  private total = -1;
  private latest: { p: Pick<Progress, 'bytesDone' | 'bytesTotal'>; label: string } | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;

  constructor(opts: ProgressBarOptions = {}) {
    this.stream = opts.stream ?? null;
    this.delayMs = opts.delayMs ?? PROGRESS_DELAY_MS;
    this.now = opts.now ?? (() => performance.now());
    this.t0 = this.now();
  }

  /**
   * An onProgress event: drawn once the delay has passed. An event that comes earlier is kept
   * and drawn when the delay ends (an unref'd timer), so a run that stays at one count (a long
   * first tile, a median's later passes) still shows its bar.
   */
  update(p: Pick<Progress, 'bytesDone' | 'bytesTotal'>, label = ''): void {
    if (this.stopped) return;
    this.latest = { p: { bytesDone: p.bytesDone, bytesTotal: p.bytesTotal }, label };
    const wait = this.delayMs - (this.now() - this.t0);
    if (!this.bar && wait > 0) {
      if (!this.timer) {
        this.timer = setTimeout(() => { this.timer = null; this.draw(); }, wait);
        this.timer.unref();
      }
      return;
    }
    this.draw();
  }

  private draw(): void {
    if (this.stopped || !this.latest) return;
    const { p, label } = this.latest;
    // Payload keys other than cli-progress's own tokens (value, total, eta, ... are its numbers).
    const f = progressFields(p.bytesDone, p.bytesTotal, this.now() - this.t0);
    const payload = { bytes_done: f.done, bytes_total: f.total, rate: f.rate, time_left: f.eta, label: label ? ` | ${label}` : '' };
    if (!this.bar) {
      this.stream ??= process.stderr;
      if (!this.stream.isTTY) {
        this.stop();  // no terminal: never a bar
        return;
      }
      const cliProgress = loadCliProgress();
      // The cursor stays visible: a Ctrl-C ends the process without stop(), and a hidden cursor
      // would outlive it in the user's terminal.
      this.bar = new cliProgress.SingleBar({
        format: '{bar} {percentage}% | {bytes_done} / {bytes_total} | {rate} | ETA {time_left}{label}',
        stream: this.stream, hideCursor: false, clearOnComplete: true, barsize: 24,
      }, cliProgress.Presets.shades_classic);
      this.bar.start(p.bytesTotal, p.bytesDone, payload);
      this.total = p.bytesTotal;
      return;
    }
    if (p.bytesTotal !== this.total) {
      this.bar.setTotal(p.bytesTotal);
      this.total = p.bytesTotal;
    }
    this.bar.update(p.bytesDone, payload);
  }

  /** Erases the bar (if it was ever drawn) and draws no more; idempotent. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.bar?.stop();
    this.bar = null;
  }

  /** Whether the bar is on screen (tests). */
  get shown(): boolean {
    return this.bar !== null;
  }
}

/** The delay before a bar appears: TET_PROGRESS_DELAY_MS (milliseconds) or PROGRESS_DELAY_MS. */
export function progressDelayMs(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.TET_PROGRESS_DELAY_MS;
  const n = v !== undefined && /^\d+$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isSafeInteger(n) ? n : PROGRESS_DELAY_MS;
}

/** A bar for an operation, or null when none is wanted: disabled (--quiet / --no-progress), or a given stream no TTY (process.stderr is checked at the first draw). */
export function progressBar(enabled: boolean, opts: ProgressBarOptions = {}): ProgressBar | null {
  if (!enabled || (opts.stream && !opts.stream.isTTY)) return null;
  // No stream given: process.stderr, whose terminal check waits for the first draw.
  return new ProgressBar({ delayMs: progressDelayMs(), ...opts });
}
