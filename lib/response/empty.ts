// The answer of a query whose `where` leaves no element (spec tables_and_filters.md §4.1, §4.5):
// no tile is read; every output cell holds its op's empty value. Plan wire v2 has no 0-length
// axis, so lib/run answers these here instead of the engine. A kept axis with no position gives
// shape [..., 0, ...] (no cells); a reduced axis with no position gives every cell the empty value.
import type { NativeQueryResult } from '../native';
import { IO_MODE_CODE, STRATEGY_CODE } from '../plan/encode';
import type { CompiledExecution, PlannedQuery } from '../plan/compile';
import { OP_VALUE } from '../ops.generated';
import type { ReductionName } from '../query/document';
import type { DTypeName } from '../types';

/**
 * The empty value of each reduction (§4.5): count 0, sum 0, product 1, norm_l1 / norm_l2 0,
 * nan_count / inf_count / null_count 0, any_* false, all_finite true, everything else NaN;
 * arg_* give null (set by {@link nullArgFields}), histogram counts 0.
 */
export function emptyValue(name: ReductionName): number | boolean | null {
  // Made at the first empty answer: an object literal with NaN fields cost every
  // `require('tetration')` ~0.08 ms (each NaN is a store that changes the field's representation).
  return (emptyValues ??= {
    count: 0, sum: 0, product: 1, norm_l1: 0, norm_l2: 0, nan_count: 0, inf_count: 0, null_count: 0,
    any_nan: false, any_inf: false, all_finite: true,
    mean: NaN, min: NaN, max: NaN, var: NaN, std: NaN, nan_mean: NaN, nan_std: NaN, median: NaN, quantile: NaN,
    arg_min: null, arg_max: null, histogram: 0, covariance: NaN, correlation: NaN,
  })[name];
}
let emptyValues: Readonly<Record<ReductionName, number | boolean | null>> | undefined;

const PREVIEW_CTOR: Readonly<Record<DTypeName, new (n: number) => ArrayBufferView>> = {
  f32: Float32Array, f16: Float32Array, f64: Float64Array, i32: Int32Array, i64: BigInt64Array,
  u8: Uint8Array, u16: Uint16Array, i16: Int16Array, u32: Uint32Array, u64: BigUint64Array,
};

/** numpy's histogram edges over nothing: the given range, else [0, 1]. */
function emptyEdges(bins: number, range?: { min: number; max: number }): Float64Array {
  const lo = range?.min ?? 0, hi = range?.max ?? 1;
  return Float64Array.from({ length: bins + 1 }, (_x, i) => (i === bins ? hi : lo + ((hi - lo) * i) / bins));
}

/** The native-shaped result of an empty selection: values filled with the op's empty value. */
export function emptyResult(planned: PlannedQuery, compiled: CompiledExecution): NativeQueryResult {
  const op = planned.operation;
  const shape = planned.readPlan!.logical_selection_shape;  // also in a sharded run's context
  const dtype = planned.dataset!.dtype;
  let values: NativeQueryResult['values'] = new Float64Array(0);
  let reducedShape: number[] = [];
  let histEdges: Float64Array = new Float64Array(0);
  let covOrder = 0;
  if (op) {
    const kept = op.scalar ? [] : shape.filter((_, a) => !op.axes.includes(a));
    // group_by: each group present holds the empty value (none present: shape [0, ...kept])
    const groups = planned.groups?.keys.length;
    const cells = kept.reduce((p, n) => p * n, 1) * (groups ?? 1);
    reducedShape = groups !== undefined ? [groups, ...kept] : kept;
    const empty = emptyValue(op.name);
    if (op.name === 'covariance' || op.name === 'correlation') {
      covOrder = shape[1 - op.obsAxis!];
      values = new Float64Array(covOrder * covOrder).fill(NaN);
    } else if (op.name === 'histogram') {
      values = new BigUint64Array(cells * op.bins!);
      if (op.scalar) histEdges = emptyEdges(op.bins!, op.range);
    } else if (OP_VALUE[op.name] === 'boolean') {
      values = new Uint8Array(cells).fill(empty ? 1 : 0);
    } else if (OP_VALUE[op.name] === 'u64') {
      values = new BigUint64Array(cells);  // counts 0; arg_* become null in the response
    } else {
      values = new Float64Array(cells).fill(empty as number);
    }
  }
  return {
    reducedShape, values, histEdges, covOrder,
    preview: new PREVIEW_CTOR[dtype](0),
    stats: {
      strategy: STRATEGY_CODE[compiled.plan.strategy], ioMode: IO_MODE_CODE[compiled.plan.ioMode],
      threadsUsed: 0, simd: 'none', chunksRead: 0, storedBytesRead: 0, spillBytes: 0, seconds: 0,
    },
  };
}

/** arg_* over nothing: null in place of each index (spec §4.5). */
export function nullArgFields(execution: Record<string, unknown>, op: ReductionName, scalar: boolean): void {
  if (op !== 'arg_min' && op !== 'arg_max') return;
  const base = op === 'arg_min' ? 'argmin' : 'argmax';
  if (scalar) execution[`operation_${base}_index`] = null;
  else execution[`operation_reduced_${base}`] = (execution[`operation_reduced_${base}`] as unknown[]).map(() => null);
}
