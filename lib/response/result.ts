// The typed result of an executed aggregate: (resolved operation, native result) -> one object
// with the op, its axes, the output shape and the values as the native engine returned them
// (typed arrays, no per-element conversion). lib/response/wire.ts flattens it into the spec's
// `operation_*` fields; group-by keys and grouped values will extend this type, not the wire.
import type { NativeQueryResult } from '../native';
import type { ResolvedOperation } from '../plan/compile';
import type { ReductionName } from '../query/document';

export interface AggregateResult {
  op: ReductionName;
  /** True for the `[]` form (and covariance / correlation): one value (or matrix) over the selection. */
  scalar: boolean;
  /** Reduced axes, ascending (every axis for scalar ops; empty for covariance / correlation). */
  axes: number[];
  /** Shape of the values: [] scalar, the kept axes' counts for partials, [bins] / [...kept, bins]
   * for histograms, [order, order] for covariance / correlation. */
  shape: number[];
  /** Float64Array, BigInt64Array, BigUint64Array or Uint8Array (booleans), row-major over `shape`. */
  values: NativeQueryResult['values'];
  /** Scalar histogram: bins + 1 edges. */
  edges?: Float64Array;
  q?: number;
  bins?: number;
  fill?: number;
  /** group_by: shape is [groups, ...kept] and the values go to `operation_grouped_<op>`. */
  grouped?: boolean;
}

/** Maps a resolved operation and the native result to the typed aggregate result. */
export function aggregateResult(op: ResolvedOperation, r: NativeQueryResult, grouped = false): AggregateResult {
  const out: AggregateResult = { op: op.name, scalar: op.scalar, axes: op.axes.slice(), shape: [], values: r.values };
  if (grouped) out.grouped = true;
  if (op.name === 'covariance' || op.name === 'correlation') {
    out.shape = [r.covOrder, r.covOrder];
  } else {
    const kept = op.scalar ? [] : r.reducedShape.map(Number);
    out.shape = op.name === 'histogram' ? [...kept, op.bins ?? r.values.length] : kept;
  }
  if (op.name === 'histogram' && op.scalar) out.edges = r.histEdges;
  if (op.q !== undefined && op.name === 'quantile') out.q = op.q;
  if (op.bins !== undefined) out.bins = op.bins;
  if (op.fill !== undefined) out.fill = op.fill;
  return out;
}
