// Running a compiled query plan: the temp directory a spilling strategy needs, the plan bytes
// and cleanup, around lib/engine.ts's cancel token and error mapping. runQuery (execute) and
// queryPartial (executePartial) both go through it.
import { rmSync } from 'node:fs';
import { runNative } from '../engine';
import type { NativeCancelToken } from '../native';
import type { CompiledExecution } from '../plan/compile';
import { encodePlan } from '../plan/encode';
import { makeQueryTempDir } from '../plan/spill';

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
