// Native QueryResult (header + typed arrays) -> QueryResponse.execution fields.
import type { NativeQueryResult } from '../native';
import { IO_MODE_NAME, STRATEGY_NAME } from '../plan/encode';
import { PARTIAL_FIELD as GEN_PARTIAL_FIELD, SCALAR_FIELD as GEN_SCALAR_FIELD } from '../plan/ops.generated';
import type { CompiledExecution, PlannedQuery, ResolvedOperation } from '../plan/compile';
import type { ExecutionSection, IntegerList, PartialValues, QueryResponse, ScalarValue } from './types';

/** Scalar field per reduction (spec: operations table; generated from native/fold/ops.def). */
export const SCALAR_FIELD: Readonly<Record<string, keyof ExecutionSection>> = GEN_SCALAR_FIELD;

/** Partial-axis field per reduction. */
export const PARTIAL_FIELD: Readonly<Record<string, keyof ExecutionSection>> = GEN_PARTIAL_FIELD;

const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);
const SAFE_MIN = BigInt(Number.MIN_SAFE_INTEGER);

function integerValue(v: bigint): number | bigint {
  return v <= SAFE_MAX && v >= SAFE_MIN ? Number(v) : v;
}

function scalarAt(values: NativeQueryResult['values'], i: number): ScalarValue {
  if (values instanceof Float64Array) return values[i];
  if (values instanceof Uint8Array) return values[i] !== 0;
  return integerValue((values as BigInt64Array | BigUint64Array)[i]);
}

function integerList(values: NativeQueryResult['values']): IntegerList {
  if (values instanceof Float64Array || values instanceof Uint8Array) return Array.from(values);
  return Array.from(values as BigInt64Array | BigUint64Array, integerValue);
}

function partialValues(values: NativeQueryResult['values']): PartialValues {
  if (values instanceof Float64Array) return values;
  if (values instanceof Uint8Array) return Array.from(values, (x) => x !== 0);
  return integerList(values);
}

function operationFields(op: ResolvedOperation, r: NativeQueryResult): Partial<ExecutionSection> {
  const out: Record<string, unknown> = { operation: op.name };
  if (op.name === 'covariance' || op.name === 'correlation') {
    out[`operation_${op.name}`] = Array.from(r.values as Float64Array, Number);
    out[`operation_${op.name}_order`] = r.covOrder;
    return out as Partial<ExecutionSection>;
  }
  if (op.q !== undefined && op.name === 'quantile') out.operation_quantile_q = op.q;
  if (op.fill !== undefined) out.operation_null_fill = op.fill;
  if (op.name === 'histogram') out.operation_histogram_bins = op.bins;
  if (op.scalar) {
    if (op.name === 'histogram') {
      out.operation_histogram_counts = integerList(r.values);
      out.operation_histogram_edges = Array.from(r.histEdges);
    } else {
      out[SCALAR_FIELD[op.name]] = scalarAt(r.values, 0);
    }
  } else {
    out[PARTIAL_FIELD[op.name]] = op.name === 'histogram' ? integerList(r.values) : partialValues(r.values);
    out.operation_reduced_shape = r.reducedShape.map(Number);
    out.operation_reduced_axes = op.axes.slice();
  }
  return out as Partial<ExecutionSection>;
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
  if (planned.operation) Object.assign(execution, operationFields(planned.operation, result));
  return { ...planned.response, status: 'executed', execution };
}
