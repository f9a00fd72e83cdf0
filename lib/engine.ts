// The one place that runs native calls for queries and reads: the cancel token tied to an
// AbortSignal and polled for progress (onProgress), the temp directory a spilling plan needs,
// the plan bytes, and error mapping to TetError. TetFile.read (execute into a caller-owned
// array) calls runNative directly; queries (lib/run: runQuery, queryPartial) call runCompiled.
import { rmSync } from 'node:fs';
import { binding } from './binding';
import { TetCancelledError, toTetError } from './errors';
import type { NativeCancelToken } from './native';
import type { CompiledExecution } from './plan/compile';
import { encodePlan } from './plan/encode';
import { makeQueryTempDir } from './plan/spill';
import { ProgressThrottle, type ProgressCallback } from './progress';

/** How often a running query's native progress counters are read (the callback is throttled further). */
const PROGRESS_POLL_MS = 50;

/**
 * Runs `call(token)` with a cancel token that `signal` trips; native failures become TetErrors.
 * With `onProgress` the token also carries the run's progress counters (native tet::Progress),
 * read by a timer on the JS thread while the call is pending: native threads never call into
 * JS. The timer is unref'd, so it never keeps the process alive.
 *
 * A signal that aborts before the call settles rejects it with TET_CANCELLED, also when the
 * native work had already finished (its answer is dropped): what the caller sees never depends on
 * how far the worker threads got before the abort. Every call here only reads, so nothing is left
 * half-done.
 */
export async function runNative<T>(signal: AbortSignal | undefined,
  call: (token: NativeCancelToken | null) => Promise<T>, onProgress?: ProgressCallback): Promise<T> {
  const native = binding();
  let token: NativeCancelToken | null = null;
  let poll: ReturnType<typeof setInterval> | undefined;
  const onAbort = () => { if (token) native.cancel(token); };
  try {
    if (signal || onProgress) token = native.createCancelToken();
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
    const throttle = onProgress && token ? new ProgressThrottle(onProgress) : undefined;
    if (throttle && token) {
      const t = token;
      poll = setInterval(() => {
        const p = native.progressOf(t);
        throttle.update(p.done, p.total);
      }, PROGRESS_POLL_MS);
      poll.unref();
    }
    const out = await call(token);
    if (signal?.aborted) throw new TetCancelledError('TET_CANCELLED', 'cancelled: the signal aborted before the answer came back');
    if (throttle && token) {
      clearInterval(poll);
      throttle.finish(native.progressOf(token).total);
    }
    return out;
  } catch (err) {
    throw toTetError(err);
  } finally {
    if (poll) clearInterval(poll);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Runs `call(planBytes, token)` for `compiled` (with its temp directory when it spills). */
export async function runCompiled<T>(compiled: CompiledExecution, signal: AbortSignal | undefined,
  call: (planBytes: Uint8Array, token: NativeCancelToken | null) => Promise<T>, onProgress?: ProgressCallback): Promise<T> {
  const tempDir = compiled.plan.strategy === 'temp_spill_materialize' ? makeQueryTempDir() : undefined;
  try {
    const bytes = encodePlan({ ...compiled.plan, ...(tempDir ? { tempDir } : {}) });
    return await runNative(signal, (token) => call(bytes, token), onProgress);
  } finally {
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  }
}
