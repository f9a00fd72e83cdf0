// The one place that runs native calls for queries and reads: the cancel token tied to an
// AbortSignal and error mapping to TetError. TetFile.read (execute into a caller-owned array)
// calls it directly; queries go through lib/query/engine.ts (temp directory, plan bytes).
import { binding } from './binding';
import { toTetError } from './errors';
import type { NativeCancelToken } from './native';

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
