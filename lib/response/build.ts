// (domain plan, native result) -> QueryResponse: the planned / unmatched response of a plan, and
// the executed response: the execution section from the native QueryResult's stats and preview,
// the aggregate as a typed result (result.ts) flattened to the spec's fields (wire.ts).
import type { NativeQueryResult } from '../native';
import { IO_MODE_NAME, STRATEGY_NAME } from '../plan/encode';
import type { CompiledExecution, PlannedQuery } from '../plan/compile';
import { emptyResult, nullArgFields } from './empty';
import { aggregateResult } from './result';
import { queryTarget, type QueryDocument } from '../query/document';
import type { ExecutionSection, QueryResponse, QueryStatus } from './types';
import { operationFields } from './wire';

/** The top-level fields every response carries (the reference's names beside `status`). */
function envelope(status: QueryStatus, doc: QueryDocument, tetFile: string | null): QueryResponse {
  return {
    status, accepted: true, dataset: queryTarget(doc), ...(doc.table !== undefined ? { table: doc.table } : {}), tet_file: tetFile,
    selection_axes: Array.isArray(doc.selection) ? doc.selection.length : 0, query: doc,
  };
}

/** The response of a query validated without a file (status validated). */
export function validatedResponse(doc: QueryDocument): QueryResponse {
  return envelope('validated', doc, null);
}

/** The response of a planned (not executed) query: status planned, or unmatched without a dataset. */
export function plannedResponse(planned: Pick<PlannedQuery, 'doc' | 'catalog' | 'readPlan' | 'dataset'>): QueryResponse {
  if (!planned.dataset || !planned.readPlan) {
    return { ...envelope('unmatched', planned.doc, planned.catalog.file), catalog: planned.catalog };
  }
  return { ...envelope('planned', planned.doc, planned.catalog.file), catalog: planned.catalog, read_plan: planned.readPlan };
}

/**
 * Stored bytes read from the file over every pass: the preview's own pass where it has one (the
 * tiles holding its values: streaming folds and the in-place median / quantile read the preview
 * before the operation; materializing strategies and spills take it from their buffer or file)
 * and the operation's or spill's pass over every touched tile. The native count sums the passes
 * it sees; the in-place selection of a small median / quantile reads its tiles without counting
 * them, so when the count minus the preview's tiles is below one full pass, the full pass
 * (read_plan.total_stored_bytes) is taken instead.
 */
function bytesReadFromDisk(counted: number, planned: PlannedQuery, compiled: CompiledExecution): number {
  const op = planned.operation;
  const strategy = compiled.plan.strategy;
  if (op === null && strategy !== 'mmap_spill') return counted;
  const separatePreview = strategy === 'streaming_fold'
    || (strategy === 'in_memory_materialize' && op !== null && op.scalar && (op.name === 'median' || op.name === 'quantile'));
  const preview = separatePreview && compiled.plan.previewMax > 0 ? compiled.previewStoredBytes?.() ?? 0 : 0;
  const stored = planned.readPlan!.total_stored_bytes;
  return counted - preview < stored ? preview + stored : counted;
}

/** Where the query actually ran when a device was requested: a GPU plan may fall back at run time
 *  (gpu_runtime_error, gpu_vram_exceeded, ...), which native reports in its stats. */
function deviceOutcome(compiled: CompiledExecution, s: NativeQueryResult['stats']): Partial<ExecutionSection> {
  if (compiled.fields.device_requested === undefined || s.deviceUsed === undefined) return {};
  if (!compiled.plan.device || compiled.plan.device.kind !== 'gpu') return {};
  // execute() names every fallback; only sharded execution (execute_partial, merged) folds a GPU
  // plan on the CPU without one.
  const reason = s.deviceFallbackReason ?? (s.deviceUsed === 'cpu' ? 'gpu_sharded_cpu' : undefined);
  return {
    device_used: s.deviceUsed,
    ...(reason ? { device_fallback_reason: reason } : {}),
    device_gpu_pipeline: s.deviceGpuPipeline ?? false,
    device_gpu_multi: s.deviceGpuMulti ?? false,
  };
}

/**
 * The aggregate's fields of an executed response (operation_*, group keys and counts) from the
 * native result of a planned query with an operation.
 */
export function resultFields(planned: PlannedQuery, result: NativeQueryResult): Partial<ExecutionSection> {
  const groups = planned.groups;
  const out: Partial<ExecutionSection> = operationFields(aggregateResult(planned.operation!, result, groups !== undefined));
  if (groups) {
    out.group_keys = groups.keys;
    out.group_counts = groups.counts;
  }
  // Every reduction says how many elements it reduced (the reference's field; `count` sets it
  // as its value already).
  out.operation_element_count ??= planned.readPlan!.logical_element_count;
  return out;
}

/** The executed response: planned response + execution section built from the native result. */
export function buildExecutedResponse(planned: PlannedQuery, compiled: CompiledExecution,
  result: NativeQueryResult): QueryResponse {
  const s = result.stats;
  const strategy = STRATEGY_NAME[s.strategy] ?? compiled.plan.strategy;
  const ioMode = IO_MODE_NAME[s.ioMode] ?? compiled.plan.ioMode;
  const dtype = planned.dataset!.dtype;
  const preview = result.preview;
  const execution: ExecutionSection = {
    memory_strategy: strategy,
    io_mode: ioMode,
    fold_parallel: ioMode === 'parallel_chunks',
    fold_linear_scan: ioMode === 'linear_scan',
    read_by_pread: s.readByPread === true,
    ...compiled.fields,
    ...deviceOutcome(compiled, s),
    threads: s.threadsUsed,
    simd: s.simd,
    chunks_read: s.chunksRead,
    stored_bytes_read: s.storedBytesRead,
    total_bytes_read_from_disk: bytesReadFromDisk(s.storedBytesRead, planned, compiled),
    seconds: s.seconds,
    preview_length: (preview as unknown as ArrayLike<unknown>).length ?? 0,
  };
  const previewField = `${dtype}_preview` as keyof ExecutionSection;
  (execution as unknown as Record<string, unknown>)[previewField] = preview;
  execution[`${dtype}_preview_truncated`] = execution.preview_length < planned.readPlan!.logical_element_count;
  if (compiled.plan.spillPath) {
    execution.spill_path = compiled.plan.spillPath;
    execution.spill_bytes = s.spillBytes;
    execution.spill_f32_path = compiled.plan.spillPath;
    execution.spill_f32_bytes = s.spillBytes;
  }
  if (planned.operation) Object.assign(execution, resultFields(planned, result));
  // read_plan carries it through a sharded run's context too (lib/run/shard.ts)
  const wherePlan = planned.readPlan!.where_plan;
  if (wherePlan) execution.where_plan = wherePlan;
  return { ...plannedResponse(planned), status: 'executed', execution };
}

/**
 * The executed response of a query whose `where` leaves no element (selection count 0 on some
 * axis): nothing is read, every output cell holds its op's empty value (./empty.ts).
 */
export function buildEmptyResponse(planned: PlannedQuery, compiled: CompiledExecution): QueryResponse {
  const r = buildExecutedResponse(planned, compiled, emptyResult(planned, compiled));
  const op = planned.operation;
  if (op) nullArgFields(r.execution as unknown as Record<string, unknown>, op.name, op.scalar);
  return r;
}
