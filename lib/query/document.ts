// The query document: the flat wire shape users write in JSON or TOML (validated, unchanged),
// and the normalized operation the planner works from.

import { MATERIALIZE_OP_NAMES, PARAM_OPS, SIMPLE_OPS } from '../ops.generated';

/** An axis: index, decimal string ("0") or dimension name ("time"). */
export type AxisToken = number | string;
/** [] = scalar; one token or a list of tokens = partial reduction over those axes. */
export type AxisSpec = AxisToken | AxisToken[];

/** One axis of a document's `selection`: a box, coordinate labels, or an index list. */
export interface SelectionAxisWire {
  /**
   * Index list: the selected positions, integers strictly ascending (sorted, unique), each in
   * [0, extent), 1..2^24 entries. Excludes start/stop/step/start_label/stop_label.
   */
  indices?: readonly number[] | null;
  start?: number | null;
  stop?: number | null;
  step?: number | null;
  start_label?: string | number | null;
  stop_label?: string | number | null;
}

/** A document's `execution` hints: memory budget, parallelism, device (docs/queries.md). */
export interface ExecutionHints {
  memory_budget_bytes?: number;
  memory_budget_percent?: number;
  memory_budget_percent_bps?: number;
  fold_parallel?: boolean;
  threads?: number;
  device?: string;
}

/** The axes of a parameterised reduction (`axis` and `axes` are synonyms). */
export interface AxisParams { axis?: AxisSpec; axes?: AxisSpec }
/** `null_count`: elements equal to `fill` (default: the dataset's fill attribute). */
export interface NullCountParams extends AxisParams { fill?: number }
/** `quantile`: `q` in [0, 1], numpy's linear interpolation. */
export interface QuantileParams extends AxisParams { q: number }
/** `histogram`: 1..1e6 `bins`; `min` and `max` (together) fix the range. */
export interface HistogramParams extends AxisParams { bins: number; min?: number; max?: number }

/** Reductions written as a bare axis spec, and with op-specific parameters (native/fold/ops.def). */
export { SIMPLE_OPS, PARAM_OPS };
/**
 * A reduction written as a bare axis spec: `sum`, `mean`, `min`, `max`, `count`, `var`, `std`,
 * `product`, `norm_l1`, `norm_l2`, `all_finite`, `any_nan`, `any_inf`, `arg_min`, `arg_max`,
 * `nan_count`, `inf_count`, `nan_mean`, `nan_std`, `median`.
 */
export type SimpleOpName = (typeof SIMPLE_OPS)[number];
/** A reduction written with op-specific parameters: `null_count`, `quantile`, `histogram`, `covariance`, `correlation`. */
export type ParamOpName = (typeof PARAM_OPS)[number];
/** Any reduction key of a query document. */
export type ReductionName = SimpleOpName | ParamOpName;
export const REDUCTION_KEYS: readonly ReductionName[] = [...SIMPLE_OPS, ...PARAM_OPS];

/** Tier C: needs the whole logical selection (materialize or temp spill). */
export const MATERIALIZE_OPS: ReadonlySet<ReductionName> = new Set<ReductionName>(MATERIALIZE_OP_NAMES);

export const TOP_LEVEL_KEYS: readonly string[] = [
  'dataset', 'layout_version', 'selection', 'execution', 'spill', ...REDUCTION_KEYS,
];

/**
 * A query document, the flat wire of the query engine spec: `dataset`, optional `selection`,
 * at most one reduction key, `execution` hints and `spill` (docs/queries.md).
 */
export type QueryDocument = {
  dataset: string;
  layout_version?: 1;
  selection?: (SelectionAxisWire | null)[] | null;
  execution?: ExecutionHints;
  spill?: string;
  null_count?: AxisSpec | NullCountParams;
  quantile?: QuantileParams;
  histogram?: HistogramParams;
  covariance?: AxisToken | AxisParams;
  correlation?: AxisToken | AxisParams;
} & { [K in SimpleOpName]?: AxisSpec };

/** The reduction of a document, with axis tokens not yet resolved against a dataset. */
export interface QueryOperation {
  name: ReductionName;
  /** null = scalar (all axes); otherwise the tokens as written (non-empty). */
  axes: AxisToken[] | null;
  q?: number;
  bins?: number;
  range?: { min: number; max: number };
  fill?: number;
}

function tokens(spec: AxisSpec | undefined): AxisToken[] | null {
  if (spec === undefined) return null;
  if (Array.isArray(spec)) return spec.length === 0 ? null : spec.slice();
  return [spec];
}

/** The single reduction key of a validated document, or null for preview / spill only. */
export function queryOperation(doc: QueryDocument): QueryOperation | null {
  const name = REDUCTION_KEYS.find((k) => (doc as Record<string, unknown>)[k] !== undefined);
  if (!name) return null;
  const v = (doc as Record<string, unknown>)[name];
  switch (name) {
    case 'quantile': {
      const p = v as QuantileParams;
      return { name, axes: tokens(p.axes ?? p.axis), q: p.q };
    }
    case 'histogram': {
      const p = v as HistogramParams;
      const range = p.min !== undefined && p.max !== undefined ? { min: p.min, max: p.max } : undefined;
      return { name, axes: tokens(p.axes ?? p.axis), bins: p.bins, ...(range ? { range } : {}) };
    }
    case 'null_count': {
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
        const p = v as NullCountParams;
        return { name, axes: tokens(p.axes ?? p.axis), ...(p.fill !== undefined ? { fill: p.fill } : {}) };
      }
      return { name, axes: tokens(v as AxisSpec) };
    }
    case 'covariance':
    case 'correlation': {
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
        const p = v as AxisParams;
        return { name, axes: tokens(p.axes ?? p.axis) ?? [0] };
      }
      return { name, axes: tokens(v as AxisToken) ?? [0] };
    }
    default:
      return { name, axes: tokens(v as AxisSpec) };
  }
}
