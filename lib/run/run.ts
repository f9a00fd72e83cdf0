// runQuery / planQuery: the library entry points that tie the layers together, in one direction:
// query/ (parse + validate) -> plan/ (domain plan) -> engine (native run) -> response/.
import { binding } from '../binding';
import { runCompiled, runNative } from '../engine';
import { TetCancelledError, TetQueryError } from '../errors';
import type { NativeFileHandle } from '../native';
import { compileExecution, planAgainstTarget, type CompiledExecution, type PlannedQuery } from '../plan/compile';
import type { CompiledPlan } from '../plan/encode';
import { allocateReductionOutput, reductionOutputSpec } from '../plan/output';
import { planTableQuery } from '../plan/table';
import { isTableQuery, type QueryDocument } from '../query/document';
import { toQueryDocument } from '../query/parse';
import { buildEmptyResponse, buildExecutedResponse, plannedResponse } from '../response/build';
import { tableResponse } from '../response/table';
import type { QueryResponse } from '../response/types';
import type { ProgressCallback } from '../progress';
import type { QueryTarget } from '../types';
import { where, whereSync } from './where';
import { firstReductionDoc, runReductions } from './reductions';
import { groupsOf } from './group';
import { axisPositions } from '../plan/group';
import { markAnswered } from '../warm';
import type { NativeQueryResult } from '../native';

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
  const doc = toQueryDocument(input);
  if (isTableQuery(doc)) return plannedTableResponse(target, planTableQuery(target.tables ?? [], doc));
  if (doc.reductions !== undefined) {
    return { ...plannedResponse(planAgainstTarget(target, firstReductionDoc(doc), undefined, whereSync(target, doc))), query: doc };
  }
  return plannedResponse(planAgainstTarget(target, doc, undefined, whereSync(target, doc)));
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
    // MemAvailable only: hostInfo() would also start the pool and probe the device module
    hostAvailableRamBytes: binding().availableRamBytes(),
    device: opts.device,
    routeDevice: (q) => binding().routeDevice(q),
  });
}

/** A query whose `where` leaves no element: the empty values, nothing read (spill: an error). */
export function emptyAnswer(planned: PlannedQuery, compiled: CompiledExecution): QueryResponse {
  if (planned.doc.spill !== undefined) {
    throw new TetQueryError('TET_QUERY_EMPTY_SELECTION',
      `query $.where: selects no element of dataset ${JSON.stringify(planned.dataset!.name)}, so there is nothing to spill`);
  }
  return buildEmptyResponse(planned, compiled);
}

/** A table query resolved against the file's tables, not run. */
function plannedTableResponse(target: QueryTarget, planned: ReturnType<typeof planTableQuery>): QueryResponse {
  const name = planned.table.name;
  return { status: 'planned', accepted: true, dataset: name, table: name, tet_file: target.path, selection_axes: 0, query: planned.doc };
}

/**
 * A table query (`"table": name`): planned against the file's tables, run by the native table
 * query (where, reduction / group_by, or rows), shaped by lib/response/table.ts.
 */
async function runTableQuery(target: QueryTarget, doc: QueryDocument, opts: RunQueryOptions): Promise<QueryResponse> {
  const planned = planTableQuery(target.tables ?? [], doc);
  if (opts.execute === false) return plannedTableResponse(target, planned);
  if (opts.signal?.aborted) throw cancelled();
  const native = binding();
  const handle = target.native as NativeFileHandle;
  const result = await runNative(opts.signal, (token) => native.fileTableQuery(handle, planned.native, token));
  return tableResponse(planned, target.path, result);
}

/** Validates, plans and executes a query. Unknown datasets resolve to status "unmatched". */
export function runQuery(target: QueryTarget, input: string | object, opts: RunQueryOptions = {}): Promise<QueryResponse> {
  return answer(target, input, opts).then(markAnswered);
}

async function answer(target: QueryTarget, input: string | object, opts: RunQueryOptions): Promise<QueryResponse> {
  const doc = toQueryDocument(input);
  if (isTableQuery(doc)) return runTableQuery(target, doc, opts);
  if (doc.reductions !== undefined) return runReductions(target, doc, opts, (p) => compileForRun(p, target, opts));
  // The file's handle as the query starts: a close() while the where runs lets this query finish.
  const handle = target.native as NativeFileHandle;
  // Without a where nothing is awaited before the native call starts (a close() right after the
  // call still lets the query finish, as for reads).
  const evaluated = doc.where !== undefined ? await where(target, doc, opts.signal, handle) : undefined;
  const planned = planAgainstTarget(target, doc, undefined, evaluated);
  if (!planned.dataset || opts.execute === false) return plannedResponse(planned);
  if (opts.signal?.aborted) throw cancelled();
  if (planned.groupBy) planned.groups = await groupsOf(planned, opts.signal, handle);
  const native = binding();
  const compiled = compileForRun(planned, target, opts);
  if (planned.selection!.elementCount === 0) return emptyAnswer(planned, compiled);
  if (planned.groups && !compiled.plan.group) {
    return buildExecutedResponse(planned, compiled, await runPerGroup(planned, compiled, handle, opts.signal));
  }
  // A partial streaming reduction's values go straight into a JS array the caller owns.
  const op = planned.operation;
  const kept = op ? planned.selection!.shape.filter((_, a) => !op.axes.includes(a)) : [];
  const cells = kept.reduce((p, n) => p * n, 1) * (planned.groups ? planned.groups.keys.length : 1);
  const spec = op && (kept.length > 0 || planned.groups) ? reductionOutputSpec(op.name, planned.dataset.dtype, false, cells) : null;
  const output = spec ? allocateReductionOutput(spec, `${op!.name} of ${planned.dataset.name}`) : null;
  const result = await runCompiled(compiled, opts.signal, (bytes, token) => (output
    ? native.execute(handle, bytes, token, output, 'reduction') : native.execute(handle, bytes, token)), opts.onProgress);
  return buildExecutedResponse(planned, compiled, result);
}

/**
 * A grouped median / quantile: one run per group, its selection the group's positions of the
 * group axis (as an index list), values concatenated in key order into [G, ...kept].
 */
async function runPerGroup(planned: PlannedQuery, compiled: CompiledExecution, handle: NativeFileHandle,
  signal: AbortSignal | undefined): Promise<NativeQueryResult> {
  const native = binding();
  const ga = planned.groupBy!.axis;
  const groups = planned.groups!;
  const positions = axisPositions(planned.selection!.axes[ga]);
  const members: number[][] = groups.keys.map(() => []);
  positions.forEach((p, i) => members[groups.ids[i]].push(p));
  const base = compiled.plan;
  const ndim = base.start.length;
  let out: Float64Array | null = null;
  let first: NativeQueryResult | null = null;
  const stats = { chunksRead: 0, storedBytesRead: 0, seconds: 0, threadsUsed: 0 };
  for (let g = 0; g < members.length; g++) {
    if (signal?.aborted) throw cancelled();
    const idx = members[g];
    const plan: CompiledPlan = {
      ...base,
      start: base.start.map((x, a) => (a === ga ? idx[0] : x)),
      step: base.step.map((x, a) => (a === ga ? 1 : x)),
      count: base.count.map((x, a) => (a === ga ? idx.length : x)),
      indices: Array.from({ length: ndim }, (_x, a) => (a === ga ? idx : base.indices?.[a] ?? null)),
      previewMax: g === 0 ? base.previewMax : 0,
    };
    const r = await runCompiled({ ...compiled, plan }, signal, (bytes, token) => native.execute(handle, bytes, token));
    const v = r.values as Float64Array;
    out ??= new Float64Array(v.length * members.length);
    out.set(v, g * v.length);
    first ??= r;
    stats.chunksRead += r.stats.chunksRead;
    stats.storedBytesRead += r.stats.storedBytesRead;
    stats.seconds += r.stats.seconds;
    stats.threadsUsed = Math.max(stats.threadsUsed, r.stats.threadsUsed);
  }
  const kept = planned.selection!.shape.filter((_, a) => !planned.operation!.axes.includes(a));
  return { ...first!, values: out!, reducedShape: [members.length, ...kept], stats: { ...first!.stats, ...stats } };
}
