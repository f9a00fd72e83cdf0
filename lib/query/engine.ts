// One place for running a compiled plan natively: the temp directory a spilling strategy
// needs, the cancel token tied to an AbortSignal, the plan bytes, error mapping to TetError and
// cleanup. runQuery (execute) and queryPartial (executePartial) both go through it.
import { rmSync } from 'node:fs';
import { toTetError } from '../errors';
import type { NativeCancelToken } from '../native';
import type { CompiledExecution } from '../plan/compile';
import { encodePlan } from '../plan/encode';
import { makeQueryTempDir } from '../plan/spill';
import { binding } from '../binding';

/** Runs `call(planBytes, token)` for `compiled`; native failures become TetErrors. */
export async function runCompiled<T>(compiled: CompiledExecution, signal: AbortSignal | undefined,
  call: (planBytes: Uint8Array, token: NativeCancelToken | null) => Promise<T>): Promise<T> {
  const native = binding();
  const tempDir = compiled.plan.strategy === 'temp_spill_materialize' ? makeQueryTempDir() : undefined;
  let token: NativeCancelToken | null = null;
  const onAbort = () => { if (token) native.cancel(token); };
  try {
    if (signal) {
      token = native.createCancelToken();
      signal.addEventListener('abort', onAbort, { once: true });
    }
    const bytes = encodePlan({ ...compiled.plan, ...(tempDir ? { tempDir } : {}) });
    try {
      return await call(bytes, token);
    } catch (err) {
      throw toTetError(err);
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  }
}
