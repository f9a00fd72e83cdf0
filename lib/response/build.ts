// (domain plan, native result) -> QueryResponse: the planned / unmatched response of a plan, and
// the executed response: the execution section from the native QueryResult's stats and preview,
// the aggregate as a typed result (result.ts) flattened to the spec's fields (wire.ts).
import type { NativeQueryResult } from '../native';
import { IO_MODE_NAME, STRATEGY_NAME } from '../plan/encode';
import type { CompiledExecution, PlannedQuery } from '../plan/compile';
import { aggregateResult } from './result';
import type { ExecutionSection, QueryResponse } from './types';
import { operationFields } from './wire';

/** The response of a planned (not executed) query: status planned, or unmatched without a dataset. */
export function plannedResponse(planned: Pick<PlannedQuery, 'doc' | 'catalog' | 'readPlan' | 'dataset'>): QueryResponse {
  if (!planned.dataset || !planned.readPlan) return { status: 'unmatched', query: planned.doc, catalog: planned.catalog };
  return { status: 'planned', query: planned.doc, catalog: planned.catalog, read_plan: planned.readPlan };
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
    ...compiled.fields,
    threads: s.threadsUsed,
    simd: s.simd,
    chunks_read: s.chunksRead,
    stored_bytes_read: s.storedBytesRead,
    seconds: s.seconds,
    preview_length: (preview as unknown as ArrayLike<unknown>).length ?? 0,
  };
  const previewField = `${dtype}_preview` as keyof ExecutionSection;
  (execution as unknown as Record<string, unknown>)[previewField] = preview;
  if (compiled.plan.spillPath) {
    execution.spill_path = compiled.plan.spillPath;
    execution.spill_bytes = s.spillBytes;
    execution.spill_f32_path = compiled.plan.spillPath;
    execution.spill_f32_bytes = s.spillBytes;
  }
  if (planned.operation) Object.assign(execution, operationFields(aggregateResult(planned.operation, result)));
  return { ...plannedResponse(planned), status: 'executed', execution };
}
