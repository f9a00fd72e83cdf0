// The spec's flat response fields for an aggregate result (spec/query_engine.md, operations
// table): `operation`, `operation_<scalar field>` or `operation_reduced_<field>` plus the
// reduced shape / axes, histogram counts / edges / bins, covariance matrices and their order.
// Field names come from native/fold/ops.def (lib/ops.generated.ts).
import { PARTIAL_FIELD as GEN_PARTIAL_FIELD, SCALAR_FIELD as GEN_SCALAR_FIELD } from '../ops.generated';
import type { AggregateResult } from './result';
import type { ExecutionSection, IntegerList, PartialValues, ScalarValue } from './types';

/** Scalar field per reduction (spec: operations table; generated from native/fold/ops.def). */
export const SCALAR_FIELD: Readonly<Record<string, keyof ExecutionSection>> = GEN_SCALAR_FIELD;

/** Partial-axis field per reduction. */
export const PARTIAL_FIELD: Readonly<Record<string, keyof ExecutionSection>> = GEN_PARTIAL_FIELD;

type Values = AggregateResult['values'];

const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);
const SAFE_MIN = BigInt(Number.MIN_SAFE_INTEGER);

function integerValue(v: bigint): number | bigint {
  return v <= SAFE_MAX && v >= SAFE_MIN ? Number(v) : v;
}

function scalarAt(values: Values, i: number): ScalarValue {
  if (values instanceof Float64Array) return values[i];
  if (values instanceof Uint8Array) return values[i] !== 0;
  return integerValue((values as BigInt64Array | BigUint64Array)[i]);
}

function integerList(values: Values): IntegerList {
  if (values instanceof Float64Array || values instanceof Uint8Array) return Array.from(values);
  return Array.from(values as BigInt64Array | BigUint64Array, integerValue);
}

function partialValues(values: Values): PartialValues {
  if (values instanceof Float64Array) return values;
  if (values instanceof Uint8Array) return Array.from(values, (x) => x !== 0);
  return integerList(values);
}

/** The `operation*` fields of the execution section for one aggregate result. */
export function operationFields(r: AggregateResult): Partial<ExecutionSection> {
  const out: Record<string, unknown> = { operation: r.op };
  if (r.op === 'covariance' || r.op === 'correlation') {
    out[`operation_${r.op}`] = Array.from(r.values as Float64Array, Number);
    out[`operation_${r.op}_order`] = r.shape[0];
    return out as Partial<ExecutionSection>;
  }
  if (r.q !== undefined) out.operation_quantile_q = r.q;
  if (r.fill !== undefined) out.operation_null_fill = r.fill;
  if (r.op === 'histogram') out.operation_histogram_bins = r.bins;
  if (r.scalar) {
    if (r.op === 'histogram') {
      out.operation_histogram_counts = integerList(r.values);
      out.operation_histogram_edges = Array.from(r.edges ?? []);
    } else {
      out[SCALAR_FIELD[r.op]] = scalarAt(r.values, 0);
    }
  } else if (r.grouped) {
    out[`operation_grouped_${r.op}`] = partialValues(r.values);
    out.operation_reduced_shape = r.shape.slice();
    out.operation_reduced_axes = r.axes.slice();
  } else {
    out[PARTIAL_FIELD[r.op]] = r.op === 'histogram' ? integerList(r.values) : partialValues(r.values);
    out.operation_reduced_shape = r.op === 'histogram' ? r.shape.slice(0, -1) : r.shape.slice();
    out.operation_reduced_axes = r.axes.slice();
  }
  return out as Partial<ExecutionSection>;
}
