// Public data types of the SDK (no runtime code). Shared by every lib/ module.
import type { TableInfo } from './tables/io';

/** The element types of layout v1. */
export type DTypeName = 'f32' | 'f64' | 'i32' | 'i64' | 'u8' | 'u16' | 'i16' | 'u32' | 'f16' | 'u64';

/** Wire tags of layout v1, index = tag. */
export const DTYPE_BY_TAG: readonly (DTypeName | undefined)[] = [
  undefined, 'f32', 'f64', 'i32', 'i64', 'u8', 'u16', 'i16', 'u32', 'f16', 'u64',
];
/** Wire tag of each dtype (the inverse of {@link DTYPE_BY_TAG}). */
export const DTYPE_TAG: Readonly<Record<DTypeName, number>> = {
  f32: 1, f64: 2, i32: 3, i64: 4, u8: 5, u16: 6, i16: 7, u32: 8, f16: 9, u64: 10,
};
/** Bytes per element of each dtype. */
export const DTYPE_SIZE: Readonly<Record<DTypeName, number>> = {
  f32: 4, f64: 8, i32: 4, i64: 8, u8: 1, u16: 2, i16: 2, u32: 4, f16: 2, u64: 8,
};

/** The typed array a dtype reads into (f16 widens to Float32Array). */
export type TypedArrayFor<D extends DTypeName> = D extends 'f32' | 'f16' ? Float32Array
  : D extends 'f64' ? Float64Array : D extends 'i32' ? Int32Array : D extends 'i64' ? BigInt64Array
  : D extends 'u8' ? Uint8Array : D extends 'u16' ? Uint16Array : D extends 'i16' ? Int16Array
  : D extends 'u32' ? Uint32Array : BigUint64Array;
/** Any typed array the SDK reads into or writes from. */
export type TetTypedArray = Float32Array | Float64Array | Int32Array | BigInt64Array | Uint8Array
  | Uint16Array | Int16Array | Uint32Array | BigUint64Array;

/** Tile codecs of layout v1. */
export type CodecName = 'raw' | 'zstd';

/** A dataset of an open file ({@link TetFile.datasets}): dtype, shape, chunk grid, codec mix, sizes. */
export interface DatasetInfo {
  name: string;
  id: number;
  dtype: DTypeName;
  shape: number[];
  chunkShape: number[];
  /** Chunks per axis. */
  grid: number[];
  chunkCount: number;
  /** Chunk count per codec actually present. */
  codecs: { raw: number; zstd: number };
  logicalBytes: number;
  storedBytes: number;
}

/** TIDX header execution settings (0 = engine default). */
export interface FileExecution {
  memory_budget_percent_bps: number;
  memory_budget_bytes: number;
}

/** A row of the file's history footer (what produced the file, when, from what). */
export interface HistoryRow {
  op: string;
  source: string;
  at: string;
  parents?: unknown[];
  params?: Record<string, unknown>;
}

/** Coordinate labels of one axis, one per position. */
export interface CoordLabels { labels: (string | number)[] }

/** Footer metadata of one dataset: dimension names, coordinate labels, attributes. */
export interface DatasetMetadata {
  dim_names?: string[];
  /** Keyed by dimension name or decimal axis index. */
  coords?: Record<string, CoordLabels>;
  attrs?: Record<string, unknown>;
}

/** Footer metadata of a file: per-dataset metadata plus file-level keys (`attrs`, `group_attrs`, `empty_datasets`, ...). */
export interface FileMetadata {
  datasets?: Record<string, DatasetMetadata>;
  [key: string]: unknown;
}

/**
 * One axis of a selection; null/undefined = default (whole axis, step 1). `indices` selects a
 * sorted, unique list of positions instead (1..2^24 entries, each in [0, extent)).
 */
export interface AxisSelection {
  indices?: readonly number[] | null;
  start?: number | null;
  stop?: number | null;
  step?: number | null;
}

/** What {@link hostInfo} returns. `simd` is the fold kernels' ISA (scalar, avx2, avx512, neon). */
export interface HostInfo {
  cores: number;
  totalRamBytes: number;
  availableRamBytes: number;
  simd: string;
  buildFlags: string;
  /** GPUs the optional CUDA module reports ([] without the module, the driver or a GPU). */
  devices: DeviceInfo[];
  /** The loaded device module's backend ('cuda'; '' when none is loaded). */
  deviceBackend: string;
  /** '' when GPUs are usable, else the fallback reason every GPU request gets (gpu_feature_disabled, ...). */
  deviceStatus: string;
  /** Why, in words. */
  deviceDetail: string;
}

/** One GPU of {@link HostInfo.devices}. */
export interface DeviceInfo {
  ordinal: number;
  name: string;
  totalBytes: number;
  freeBytes: number;
  smCount: number;
  computeCapability: string;
}

/**
 * What the query layer needs from an open file (implemented by TetFile). Keeps lib/query
 * independent of the TetFile class.
 */
export interface QueryTarget {
  readonly path: string;
  readonly datasets: readonly DatasetInfo[];
  readonly metadata: FileMetadata;
  readonly fileExecution: FileExecution;
  /** Opaque native handle (lib/native.ts). */
  readonly native: unknown;
  /** The file's tables (axis tables answer a query's `where`); absent = none. */
  readonly tables?: readonly TableInfo[];
  /**
   * Stored bytes of each chunk of a dataset, row-major by grid coordinates (from the chunk
   * index). Needed only for datasets holding zstd chunks (raw tiles store their raw size);
   * optional for targets that cannot read the index.
   */
  chunkStoredBytes?(datasetId: number): ArrayLike<number>;
}
