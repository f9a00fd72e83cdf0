// The query document: the flat wire shape users write in JSON or TOML (validated, unchanged),
// and the normalized operation the planner works from.

import { MATERIALIZE_OP_NAMES, OP_TIER, PARAM_OPS, SIMPLE_OPS } from '../ops.generated';

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

/** The reductions a `reductions` list takes: the streaming (tier A/B) ones written as a bare axis spec. */
export const MULTI_REDUCTION_OPS: readonly SimpleOpName[] = SIMPLE_OPS.filter((o) => OP_TIER[o] === 'stream');
/** `reductions` (extension, docs/queries.md): several streaming reductions over one axis spec,
 *  answered from one pass: a list of names (every axis reduced), or `{ops, axis}` / `{ops, axes}`. */
export type ReductionsWire = SimpleOpName[] | { ops: SimpleOpName[]; axis?: AxisSpec; axes?: AxisSpec };

/** A `where` literal as written: the planner converts it to the column's stored form. */
export type WhereLiteral = string | number | boolean;

/** The ops of a `where` predicate (exactly one per predicate). */
export const WHERE_OPS = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'in', 'not_in', 'range', 'prefix', 'is_null', 'is_nan'] as const;
export type WhereOpName = (typeof WHERE_OPS)[number];

/**
 * One `where` predicate (tables_and_filters.md §4.1): a column (of the table, or of an axis
 * table of the dataset: `axis` names the dim when the column name alone is ambiguous) and
 * exactly one op. Nulls match nothing but `is_null: true`; `ne` / `not_in` match NaN.
 */
export interface WherePredicate {
  axis?: AxisToken;
  column: string;
  eq?: WhereLiteral; ne?: WhereLiteral; lt?: WhereLiteral; le?: WhereLiteral; gt?: WhereLiteral; ge?: WhereLiteral;
  /** ≤ 65,536 values. */
  in?: WhereLiteral[];
  /** ≤ 65,536 values. */
  not_in?: WhereLiteral[];
  /** Half-open `lo <= v < hi`; null = unbounded. */
  range?: [WhereLiteral | null, WhereLiteral | null];
  prefix?: string;
  is_null?: boolean;
  is_nan?: boolean;
}

/** Calendar buckets of `group_by` on date / timestamp columns (UTC). */
export type TimeBucket = 'year' | 'month' | 'day' | 'hour' | 'minute';
/** A group key: `bucket` for date / timestamp columns, `width` for int / float (not both). */
export interface GroupBySpec { axis?: AxisToken; column: string; bucket?: TimeBucket; width?: number }
/** `"country"`, `"station.country"` (axis.column), a spec, or (table queries) a list of 1..4. */
export type GroupByWire = string | GroupBySpec | (string | GroupBySpec)[];
/** A table reduction's column: `{"column": name}`; `count: []` or `{}` counts rows. */
export interface ColumnParams { column?: string }
/** One `order_by` key of a `columns` query (ascending unless `desc`). */
export interface OrderBySpec { column: string; desc?: boolean }

/** Keys only table queries take. */
export const TABLE_ONLY_KEYS = ['columns', 'limit', 'offset', 'order_by'] as const;

export const TOP_LEVEL_KEYS: readonly string[] = [
  'dataset', 'table', 'layout_version', 'selection', 'where', 'group_by', ...TABLE_ONLY_KEYS,
  'execution', 'spill', 'reductions', ...REDUCTION_KEYS,
];

/**
 * A query document, the flat wire of the query engine spec: `dataset` (tensor query) or `table`
 * (table query; exactly one of the two), optional `selection` (tensors), `where`, `group_by`, at
 * most one reduction key (tables: `{"column": name}`), `columns` / `limit` / `offset` /
 * `order_by` (tables), `execution` hints and `spill` (docs/queries.md, docs/tables.md).
 */
export type QueryDocument = {
  dataset?: string;
  table?: string;
  layout_version?: 1;
  selection?: (SelectionAxisWire | null)[] | null;
  where?: WherePredicate[];
  group_by?: GroupByWire;
  columns?: string[];
  /** 0..1,000,000 rows (default 1,000). */
  limit?: number;
  offset?: number;
  order_by?: OrderBySpec[];
  execution?: ExecutionHints;
  spill?: string;
  reductions?: ReductionsWire;
  null_count?: AxisSpec | NullCountParams | ColumnParams;
  quantile?: QuantileParams & ColumnParams;
  histogram?: HistogramParams & ColumnParams;
  covariance?: AxisToken | AxisParams;
  correlation?: AxisToken | AxisParams;
} & { [K in SimpleOpName]?: AxisSpec | ColumnParams };

/** Whether the document queries a table (`table`) rather than a dataset. */
export function isTableQuery(doc: QueryDocument): boolean {
  return doc.table !== undefined;
}

/** The name queried: the dataset's or the table's. */
export function queryTarget(doc: QueryDocument): string {
  return (doc.table ?? doc.dataset)!;
}

/** The column a table reduction names (`{"column": name}`), or null (`count: []` / `{}` counts rows). */
export function reductionColumn(doc: QueryDocument, op: ReductionName): string | null {
  const v = (doc as Record<string, unknown>)[op];
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const c = (v as ColumnParams).column;
    return typeof c === 'string' ? c : null;
  }
  return null;
}

/** The group keys as a list of specs, short forms split ("axis.column" at the first dot, tensors). */
export function groupKeys(doc: QueryDocument): GroupBySpec[] {
  const g = doc.group_by;
  if (g === undefined) return [];
  const list = Array.isArray(g) ? g : [g];
  return list.map((k) => {
    if (typeof k !== 'string') return { ...k };
    if (isTableQuery(doc)) return { column: k };
    const dot = k.indexOf('.');
    return dot > 0 && dot < k.length - 1 ? { axis: k.slice(0, dot), column: k.slice(dot + 1) } : { column: k };
  });
}

/** The op key of a validated predicate. */
export function predicateOp(p: WherePredicate): WhereOpName {
  return WHERE_OPS.find((k) => (p as unknown as Record<string, unknown>)[k] !== undefined)!;
}

/** The reduction of a document, with axis tokens not yet resolved against a dataset. */
export interface QueryOperation {
  name: ReductionName;
  /** null = scalar (all axes); otherwise the tokens as written (non-empty). */
  axes: AxisToken[] | null;
  q?: number;
  bins?: number;
  range?: { min: number; max: number };
  fill?: number;
  /** Table queries: the reduced column (absent: `count` of rows). */
  column?: string;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
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
  const column = isObject(v) && typeof v.column === 'string' ? { column: v.column } : {};
  switch (name) {
    case 'quantile': {
      const p = v as QuantileParams;
      return { name, axes: tokens(p.axes ?? p.axis), q: p.q, ...column };
    }
    case 'histogram': {
      const p = v as HistogramParams;
      const range = p.min !== undefined && p.max !== undefined ? { min: p.min, max: p.max } : undefined;
      return { name, axes: tokens(p.axes ?? p.axis), bins: p.bins, ...(range ? { range } : {}), ...column };
    }
    case 'null_count': {
      if (isObject(v)) {
        const p = v as NullCountParams;
        return { name, axes: tokens(p.axes ?? p.axis), ...(p.fill !== undefined ? { fill: p.fill } : {}), ...column };
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
      if (isObject(v)) return { name, axes: null, ...column };
      return { name, axes: tokens(v as AxisSpec) };
  }
}

/** A document's `reductions` as its op names and axis tokens (null: every axis), or null without one. */
export function queryReductions(doc: QueryDocument): { ops: SimpleOpName[]; axes: AxisToken[] | null } | null {
  const r = doc.reductions;
  if (r === undefined) return null;
  if (Array.isArray(r)) return { ops: r.slice(), axes: null };
  return { ops: r.ops.slice(), axes: tokens(r.axes ?? r.axis) };
}
