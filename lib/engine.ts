// The one place that runs native calls for queries and reads: the cancel token tied to an
// AbortSignal, the temp directory a spilling plan needs, the plan bytes, and error mapping to
// TetError. TetFile.read (execute into a caller-owned array) calls runNative directly; queries
// (lib/run: runQuery, queryPartial) call runCompiled.
import { rmSync } from 'node:fs';
import { binding } from './binding';
import { toTetError } from './errors';
import type { NativeCancelToken } from './native';
import type { CompiledExecution } from './plan/compile';
import { encodePlan } from './plan/encode';
import { makeQueryTempDir } from './plan/spill';

/** Runs `call(token)` with a cancel token that `signal` trips; native failures become TetErrors. */
export async function runNative<T>(signal: AbortSignal | undefined,
  call: (token: NativeCancelToken | null) => Promise<T>): Promise<T> {
  const native = binding();
  let token: NativeCancelToken | null = null;
  const onAbort = () => { if (token) native.cancel(token); };
  try {
    if (signal) {
      token = native.createCancelToken();
      signal.addEventListener('abort', onAbort, { once: true });
    }
    return await call(token);
  } catch (err) {
    throw toTetError(err);
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Runs `call(planBytes, token)` for `compiled` (with its temp directory when it spills). */
export async function runCompiled<T>(compiled: CompiledExecution, signal: AbortSignal | undefined,
  call: (planBytes: Uint8Array, token: NativeCancelToken | null) => Promise<T>): Promise<T> {
  const tempDir = compiled.plan.strategy === 'temp_spill_materialize' ? makeQueryTempDir() : undefined;
  try {
    const bytes = encodePlan({ ...compiled.plan, ...(tempDir ? { tempDir } : {}) });
    return await runNative(signal, (token) => call(bytes, token));
  } finally {
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  }
}
