// runQuery / planQuery: the library entry points that tie the layers together, in one direction:
// query/ (parse + validate) -> plan/ (domain plan) -> engine (native run) -> response/.
import { binding } from '../binding';
import { runCompiled } from '../engine';
import { TetCancelledError } from '../errors';
import type { NativeFileHandle } from '../native';
import { compileExecution, planAgainstTarget, type CompiledExecution, type PlannedQuery } from '../plan/compile';
import { allocateReductionOutput, reductionOutputSpec } from '../plan/output';
import { toQueryDocument } from '../query/parse';
import { buildExecutedResponse, plannedResponse } from '../response/build';
import type { QueryResponse } from '../response/types';
import type { ProgressCallback } from '../progress';
import type { QueryTarget } from '../types';

/** Library default preview length (the CLI picks per --format). */
export const DEFAULT_PREVIEW = 64;

/** Options of {@link runQuery} / `TetFile.query`. */
export interface RunQueryOptions {
  signal?: AbortSignal;
  /** Preview elements (default 64; 0 = none). Aggregates are never truncated. */
  preview?: number;
  /** Extra spill roots besides the .tet directory tree and the platform cache dirs. */
  spillAllow?: string[];
  /** false = plan only (same as planQuery). Default true. */
  execute?: boolean;
  /** Device token (cpu, auto, cuda, ...); overrides execution.device. */
  device?: string;
  /**
   * Called as the query reads its selection: logical bytes of the tiles read so far of the
   * selection's total (native counters polled on the JS thread; no native thread calls JS).
   * At most one call per 100 ms while it runs, values monotone, and one final call with
   * bytesDone = bytesTotal when it succeeds (none when it fails or is cancelled). It counts the
   * first pass over the tiles: a median or quantile that passes over them again may report 1
   * before it ends. A callback that throws does not break the query: the first throw is
   * reported once through process.emitWarning (code TET_PROGRESS_CALLBACK).
   */
  onProgress?: ProgressCallback;
}

/** Plans a query against the file's catalog without executing it (status planned / unmatched). */
export function planQuery(target: QueryTarget, input: string | object): QueryResponse {
  return plannedResponse(planAgainstTarget(target, toQueryDocument(input)));
}

function cancelled(): TetCancelledError {
  return new TetCancelledError('TET_CANCELLED', 'the query was cancelled');
}

/** Compiles a planned query for execution here: preview, spill roots, device, this host's RAM. */
export function compileForRun(planned: PlannedQuery, target: QueryTarget,
  opts: { preview?: number; spillAllow?: string[]; device?: string }): CompiledExecution {
  return compileExecution(planned, target, {
    preview: opts.preview ?? DEFAULT_PREVIEW,
    spillAllow: opts.spillAllow,
    hostAvailableRamBytes: binding().hostInfo().availableRamBytes,
    device: opts.device,
    routeDevice: (q) => binding().routeDevice(q),
  });
}

/** Validates, plans and executes a query. Unknown datasets resolve to status "unmatched". */
export async function runQuery(target: QueryTarget, input: string | object, opts: RunQueryOptions = {}): Promise<QueryResponse> {
  const planned = planAgainstTarget(target, toQueryDocument(input));
  if (!planned.dataset || opts.execute === false) return plannedResponse(planned);
  if (opts.signal?.aborted) throw cancelled();
  const native = binding();
  const compiled = compileForRun(planned, target, opts);
  // A partial streaming reduction's values go straight into a JS array the caller owns.
  const op = planned.operation;
  const kept = op ? planned.selection!.shape.filter((_, a) => !op.axes.includes(a)) : [];
  const spec = op && kept.length > 0 ? reductionOutputSpec(op.name, planned.dataset.dtype, false, kept.reduce((p, n) => p * n, 1)) : null;
  const output = spec ? allocateReductionOutput(spec, `${op!.name} of ${planned.dataset.name}`) : null;
  const handle = target.native as NativeFileHandle;
  const result = await runCompiled(compiled, opts.signal, (bytes, token) => (output
    ? native.execute(handle, bytes, token, output, 'reduction') : native.execute(handle, bytes, token)), opts.onProgress);
  return buildExecutedResponse(planned, compiled, result);
}
