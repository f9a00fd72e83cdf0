// The domain plan's data: the catalog entry and read plan a query resolves to, and the execution
// fields known before running. Their field names are the spec's response fields, so lib/response
// places them in the response as they are.
import type { CodecName, DTypeName, FileExecution } from '../types';
import type { BudgetSource } from './budget';
import type { ReadPlanChunk } from './chunks';
import type { IoRegime } from './strategy';
import type { WherePlanEntry } from './where';

/** `dataset_<dtype>_bytes` (the reference's name for the dataset's logical bytes, one per dtype). */
export type DatasetDtypeBytesKey = `dataset_${DTypeName}_bytes`;

/** How the touched chunks of a selection were found: unit-step box, strided box, or index lists. */
export type ChunkTouchPolicy = 'dense_half_open_unit_step' | 'strided_half_open' | 'index_list';

/** The `catalog` section of a response: the dataset's entry in the file (or the available names). */
export interface CatalogSection extends Partial<Record<DatasetDtypeBytesKey, number>> {
  file: string;
  dataset: string;
  dataset_resolution: 'matched' | 'unmatched';
  /** dataset_resolution === 'matched' (the reference's field). */
  matched: boolean;
  available_datasets: string[];
  /** Rows of the file's chunk index (every dataset's chunks; one row per chunk). */
  chunk_index_rows: number;
  dataset_id?: number;
  /** The dataset's 0-based position in the catalog (= dataset_id; the reference's name). */
  dataset_index?: number;
  dtype?: DTypeName;
  shape?: number[];
  chunk_shape?: number[];
  grid?: number[];
  chunk_count?: number;
  codecs?: Record<CodecName, number>;
  logical_bytes?: number;
  stored_bytes?: number;
  dim_names?: string[];
  file_execution?: FileExecution;
  dataset_f32_bytes?: number;
  dataset_f64_bytes?: number;
}

/** One axis of a resolved selection in `read_plan.selection`. */
export interface ReadPlanAxis {
  start: number;
  /** Exclusive, clamped to the axis length. */
  stop: number;
  step: number;
  count: number;
  /** Index-list axis: true (start/stop are its first and last + 1; the list is in `query`). */
  index_list?: true;
}

/** The `read_plan` section of a response: the resolved selection, its size, the touched chunks. */
export interface ReadPlan {
  dataset: string;
  dataset_id: number;
  dtype: DTypeName;
  selection: ReadPlanAxis[];
  logical_selection_shape: number[];
  logical_element_count: number;
  logical_selection_bytes: number;
  chunk_touch_policy: ChunkTouchPolicy;
  /** Touched chunks (all of them, also when `chunks` is truncated). */
  chunk_count: number;
  chunks_per_axis: number[];
  /** Touched chunks, row-major by chunk coords (capped; see chunks_truncated). */
  chunks: ReadPlanChunk[];
  chunks_truncated: boolean;
  /** Stored (on-disk, compressed for zstd) bytes of every touched chunk (all of them, also when
   *  `chunks` is truncated). */
  total_stored_bytes: number;
  /** The `where` evaluated at planning (spec §4.4 where_plan, keyed by the filtered axis's dim
   *  name or decimal index); also `execution.where_plan` once executed. */
  where_plan?: Record<string, WherePlanEntry>;
}

/** Execution fields known before running: budget, I/O regime, preview size, device routing. */
export interface PlannedExecutionFields {
  memory_budget_bytes: number;
  memory_budget_source: BudgetSource;
  host_available_ram_bytes?: number;
  logical_selection_bytes: number;
  logical_selection_f32_bytes?: number;
  io_regime: IoRegime;
  preview_max: number;
  device_requested?: string;
  device_used?: string;
  device_fallback_reason?: string;
  /** The GPU route overlaps tile decode, transfers and kernels (more than one chunk). */
  device_gpu_pipeline?: boolean;
  /** cuda:multi on more than one device. */
  device_gpu_multi?: boolean;
}
