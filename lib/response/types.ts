// QueryResponse: what a query returns (library) and what the CLI prints (formatters).
//
// Value representation in the JS object:
// - scalar aggregates are numbers / booleans; integer results (min/max of i64/u64, counts,
//   indices) beyond 2^53 are bigint;
// - partial float results (operation_reduced_sum, _mean, ...) are Float64Array; integer and
//   count partials are number[] (elements beyond 2^53 become bigint); boolean partials are
//   boolean[]; covariance / histogram arrays are number[];
// - previews are the dtype's typed array (Float32Array for f32 and f16, BigInt64Array for i64, ...).
// JSON output (lib/response/json.ts) writes NaN/±Infinity as "NaN"/"Infinity"/"-Infinity" and
// bigint as exact integer digits.
import type { QueryDocument } from '../query/document';
import type { DTypeName, TetTypedArray } from '../types';
import type { IoModeName, StrategyName } from '../plan/encode';
import type { CatalogSection, PlannedExecutionFields, ReadPlan } from '../plan/types';
import type { WherePlanEntry } from '../plan/where';

/** validated: no file given; planned: read plan only; executed: ran; unmatched: no such dataset. */
export type QueryStatus = 'validated' | 'planned' | 'executed' | 'unmatched';

export type { CatalogSection, ChunkTouchPolicy, ReadPlan, ReadPlanAxis } from '../plan/types';
export type { WherePlanEntry } from '../plan/where';

export type ScalarValue = number | boolean | bigint;
/** A table value in its column kind's JSON form (spec tables_and_filters.md §1); null = null. */
export type TableValue = boolean | number | bigint | string | null;
export type IntegerList = (number | bigint)[];
export type PartialValues = Float64Array | IntegerList | boolean[];

/** `<dtype>_preview_truncated`: the preview holds fewer values than the selection (reference name). */
export type PreviewTruncatedKey = `${DTypeName}_preview_truncated`;

/** Fields the plan knows (budget, regime, routing) plus what the run measured and computed. */
export interface ExecutionSection extends PlannedExecutionFields, Partial<Record<PreviewTruncatedKey, boolean>> {
  memory_strategy: StrategyName;
  io_mode: IoModeName;
  fold_parallel: boolean;
  fold_linear_scan: boolean;
  /** Extension: the tiles were read by pread into per-thread buffers, not through the mapping (a dataset's first scan in the process, where that measured faster). */
  read_by_pread: boolean;
  threads: number;
  simd: string;
  chunks_read: number;
  stored_bytes_read: number;
  /** Stored bytes read from the .tet file over every pass (preview pass + operation pass). */
  total_bytes_read_from_disk: number;
  seconds: number;
  preview_length: number;
  spill_path?: string;
  spill_bytes?: number;
  spill_f32_path?: string;
  spill_f32_bytes?: number;
  f32_preview?: Float32Array;
  f16_preview?: Float32Array;
  f64_preview?: Float64Array;
  i32_preview?: Int32Array;
  i64_preview?: BigInt64Array;
  u8_preview?: Uint8Array;
  u16_preview?: Uint16Array;
  i16_preview?: Int16Array;
  u32_preview?: Uint32Array;
  u64_preview?: BigUint64Array;

  operation?: string;
  /** `reductions` (extension): the reductions answered, in the document's order (operation is "reductions"). */
  operations?: string[];
  operation_sum?: number;
  operation_mean?: number;
  operation_min?: number | bigint;
  operation_max?: number | bigint;
  operation_element_count?: number | bigint;
  operation_var?: number;
  operation_std?: number;
  operation_product?: number;
  operation_norm_l1?: number;
  operation_norm_l2?: number;
  operation_all_finite?: boolean;
  operation_any_nan?: boolean;
  operation_any_inf?: boolean;
  /** null when the `where` leaves nothing to search (spec §4.5). */
  operation_argmin_index?: number | bigint | null;
  operation_argmax_index?: number | bigint | null;
  operation_nan_count?: number | bigint;
  operation_inf_count?: number | bigint;
  operation_null_count?: number | bigint;
  operation_null_fill?: number;
  operation_nan_mean?: number;
  operation_nan_std?: number;
  operation_median?: number;
  operation_quantile?: number;
  operation_quantile_q?: number;
  operation_histogram_counts?: IntegerList;
  operation_histogram_edges?: number[];
  operation_histogram_bins?: number;
  operation_covariance?: number[];
  operation_covariance_order?: number;
  operation_correlation?: number[];
  operation_correlation_order?: number;

  // where / group_by / table queries (spec tables_and_filters.md §4.4). A table query's
  // execution section has these, threads and seconds, and none of the tensor fields above.
  /** Keyed by the filtered axis's dim name (tensors, `selected` counted before `selection`) or
   *  the table's name: how the where was settled (spec §4.4) and the payload bytes it read. Only with a `where`. */
  where_plan?: Record<string, WherePlanEntry>;
  table_rows?: number;
  rows_selected?: number;
  /** A table reduction's column. */
  operation_column?: string;
  /** Group keys, ascending (composite keys as arrays), in their JSON form. */
  group_keys?: unknown[];
  /** Rows (tables) / positions along the group axis (tensors) per group. */
  group_counts?: number[];
  /** A table `columns` query's rows. */
  rows?: Record<string, TableValue>[];
  [grouped: `operation_grouped_${string}`]: TableValue[] | Float64Array | IntegerList | boolean[] | undefined;

  operation_reduced_shape?: number[];
  operation_reduced_axes?: number[];
  operation_reduced_sum?: Float64Array;
  operation_reduced_mean?: Float64Array;
  operation_reduced_min?: Float64Array | IntegerList;
  operation_reduced_max?: Float64Array | IntegerList;
  operation_reduced_count?: IntegerList;
  operation_reduced_var?: Float64Array;
  operation_reduced_std?: Float64Array;
  operation_reduced_product?: Float64Array;
  operation_reduced_norm_l1?: Float64Array;
  operation_reduced_norm_l2?: Float64Array;
  operation_reduced_all_finite?: boolean[];
  operation_reduced_any_nan?: boolean[];
  operation_reduced_any_inf?: boolean[];
  operation_reduced_argmin?: IntegerList | null[];
  operation_reduced_argmax?: IntegerList | null[];
  operation_reduced_nan_count?: IntegerList;
  operation_reduced_inf_count?: IntegerList;
  operation_reduced_null_count?: IntegerList;
  operation_reduced_nan_mean?: Float64Array;
  operation_reduced_nan_std?: Float64Array;
  operation_reduced_median?: Float64Array;
  operation_reduced_quantile?: Float64Array;
  operation_reduced_histogram_counts?: IntegerList;
}

export interface QueryResponse {
  status: QueryStatus;
  /** The query document was valid (always true: an invalid one throws). Reference field. */
  accepted: boolean;
  /** The queried dataset name (= query.dataset; a table query: the table's name). Reference field. */
  dataset: string;
  /** A table query: the queried table (= query.table). */
  table?: string;
  /** The .tet file planned against (= catalog.file), null when only validated. Reference field. */
  tet_file: string | null;
  /** Entries in the query's `selection` (0 without one). Reference field. */
  selection_axes: number;
  /** The validated query document, echoed. */
  query: QueryDocument;
  catalog?: CatalogSection;
  read_plan?: ReadPlan;
  execution?: ExecutionSection;
}

export type PreviewArray = TetTypedArray;
