// Progress reporting of long operations (query, read, queryPartial, convert): the public
// `onProgress` event, and the throttle every producer feeds. Queries are counted natively
// (tet::Progress behind the cancel token, lib/engine.ts polls it from a timer on the JS thread),
// conversions in lib/convert; both end up here, so the rules are the same everywhere.

/** A progress event: logical bytes done of the total, and their ratio. */
export interface Progress {
  /** Logical bytes done so far (never decreases within one operation; at most bytesTotal). */
  bytesDone: number;
  /** Logical bytes of the whole operation (a query: its selection; a shard: its share). */
  bytesTotal: number;
  /** bytesDone / bytesTotal in [0, 1] (1 when bytesTotal is 0). */
  fraction: number;
}

/** `onProgress` of query / read / queryPartial options. */
export type ProgressCallback = (p: Progress) => void;

/** Least time between two intermediate calls of an `onProgress` callback. */
export const PROGRESS_INTERVAL_MS = 100;

/**
 * Throttles calls of one operation's callback: an intermediate call only when the count moved
 * and at least PROGRESS_INTERVAL_MS passed since the previous call, and one final call with
 * bytesDone = bytesTotal on success. Counts are clamped into [previous, total], so the callback
 * sees monotone values. A callback that throws never breaks the operation: the first exception
 * is reported once with process.emitWarning (code TET_PROGRESS_CALLBACK) and later calls go on.
 */
export class ProgressThrottle<E extends Progress = Progress> {
  private last = -Infinity;
  private done = 0;
  private reported = -1;
  private warned = false;

  constructor(private readonly callback: (event: E) => void,
    private readonly now: () => number = () => performance.now()) {}

  /** A new count; calls back when the throttle allows. `extra` adds fields to the event. */
  update(done: number, total: number, extra?: Omit<E, keyof Progress>): void {
    const d = this.clamp(done, total);
    if (d === this.reported || total <= 0) return;
    const t = this.now();
    if (t - this.last < PROGRESS_INTERVAL_MS) return;
    this.last = t;
    this.emit(d, total, extra);
  }

  /** The final call of a successful operation: done = total, whatever the throttle says. */
  finish(total: number, extra?: Omit<E, keyof Progress>): void {
    const tot = Math.max(0, total);
    this.done = tot;
    this.last = this.now();
    this.emit(tot, tot, extra);
  }

  private clamp(done: number, total: number): number {
    this.done = Math.max(this.done, Math.min(Math.max(0, done), Math.max(0, total)));
    return this.done;
  }

  private emit(done: number, total: number, extra?: Omit<E, keyof Progress>): void {
    this.reported = done;
    const event = { ...extra, bytesDone: done, bytesTotal: total, fraction: total > 0 ? done / total : 1 } as E;
    try {
      this.callback(event);
    } catch (err) {
      if (this.warned) return;
      this.warned = true;
      const why = err instanceof Error ? err.message : String(err);
      process.emitWarning(`an onProgress callback threw (${why}); the operation goes on and later throws are not reported`,
        { code: 'TET_PROGRESS_CALLBACK' });
    }
  }
}
