// Shared shapes of the convert module: what a source reader exposes and what convert() reports.
import type { Progress } from '../progress';
import type { CoordLabels, DTypeName, TetTypedArray } from '../types';

/** A source format {@link detectSource} recognises. */
import type { ColumnSchema } from '../tables/types';

export type SourceKind = 'hdf5' | 'netcdf4' | 'netcdf3' | 'zarr3' | 'zarr2' | 'csv' | 'parquet' | 'arrow';

/** One array of the source, already mapped to a tetration dtype (or marked unsupported). */
export interface SourceVariable {
  /** Path inside the source, '/'-separated, without a leading slash: `group/sub/var`. */
  name: string;
  /** The source's own spelling of the element type (`<f4`, `float32`, `short`, ...). */
  sourceType: string;
  /** Target dtype; null when the element type has no lossless tetration mapping. */
  dtype: DTypeName | null;
  /** Why the variable cannot be converted (set when dtype is null or the shape is unusable). */
  skipReason?: string;
  /** Stable code for the skip (TET_CONVERT_UNSUPPORTED_FILTER, TET_CONVERT_EMPTY, ...). */
  skipCode?: string;
  shape: number[];
  /** Source chunk shape, null for contiguous storage. */
  chunkShape: number[] | null;
  /** One name per axis when the source names every axis. */
  dimNames: string[] | null;
  /** 1-D variables holding each axis' labels (NetCDF coordinate variables, dimension scales). */
  coordVars: (SourceVariable | null)[];
  /** Labels stored inline by the source (string labels of `tet export`), per axis, when no coordVar. */
  inlineCoords?: ((string | number)[] | null)[];
  /** Attributes as JSON values (numbers stay numbers, 64-bit integers beyond 2^53 become text). */
  attrs: Record<string, unknown>;
  /** Element type of numeric attributes (`f32`, `f64`, `i16`, ...) for CF unpacking. */
  attrTypes: Record<string, string>;
  /** Present in the source only to name or label axes; never becomes a dataset. */
  hidden?: boolean;
  /**
   * Text variables (never datasets; axis-table `str` columns): `strings`, one string per element
   * (HDF5 / NetCDF-4 fixed or variable-length strings, Zarr `|S`, `<U`, vlen-utf8); `chars`, a
   * char array whose last axis holds the bytes of one string (NetCDF `char`, HDF5 1-byte strings).
   * Read with {@link SourceReader.readText}.
   */
  text?: 'strings' | 'chars';
}

export interface SourceReader {
  readonly kind: SourceKind;
  readonly path: string;
  readonly variables: SourceVariable[];
  /** Root-level attributes (HDF5 root group, NetCDF global attributes, Zarr root group). */
  readonly globalAttrs: Record<string, unknown>;
  /** Attributes of non-root groups, keyed by group path ('/'-separated, no leading slash:
   *  `grp/sub`); only groups that have attributes. convert() stores them in the file metadata
   *  as `group_attrs`. */
  readonly groupAttrs: Record<string, Record<string, unknown>>;
  /** Row-major hyperslab [start, start+count) in the variable's tetration dtype. */
  read(variable: SourceVariable, start: number[], count: number[]): Promise<TetTypedArray>;
  /**
   * The strings of a `text` variable at positions [start, start+count) of its first axis (a
   * `chars` row is one string), trailing NULs stripped, UTF-8 decoded; null where the source
   * holds no string (an HDF5 null pointer).
   */
  readText?(variable: SourceVariable, start: number, count: number): Promise<(string | null)[]>;
  close(): void;
}

/** What convert() tells a reader when it opens the source. */
export interface OpenOptions {
  /** Whether a variable name passes --include/--exclude; readers may skip the work (dimension
   *  scales, coordinate lookups) for variables it rejects, except those that label kept ones. */
  keep?: (name: string) => boolean;
  /** Follow HDF5 external links (off by default: a notice names each link not followed). */
  followExternalLinks?: boolean;
  /** One line per problem found while opening (unreadable attribute, link not followed, ...). */
  notice?: (message: string) => void;
}

/** Tile codec of converted datasets (`auto`: zstd where it is smaller). */
export type CodecOption = 'raw' | 'zstd' | 'auto';

/** Options of {@link convert} (the `tet convert` flags). */
export interface ConvertOptions {
  /** Dataset names or globs (`*` within a path segment, `**` across segments, `?`). */
  include?: string[];
  exclude?: string[];
  /** Chunk shape for every dataset (clamped to each dataset's shape; missing axes keep the default). */
  chunk?: number[];
  codec?: CodecOption;
  level?: number;
  /** Apply CF scale_factor/add_offset into f32/f64 (with _Unsigned, valid_* and default fills masked). */
  unpack?: boolean;
  /** Follow HDF5 external links (default: not followed, each one reported as a notice). */
  followExternalLinks?: boolean;
  /** Largest hyperslab read from the source at once, bytes (default 64 MiB). */
  slabBytes?: number;
  /** Default chunk size when the source chunking is not used, bytes (default 4 MiB). */
  targetChunkBytes?: number;
  /**
   * Called as slabs of the source are read and handed to the writer, with the same rules as a
   * query's onProgress (lib/progress.ts): at most one call per 100 ms, monotone, a final call
   * with bytesDone = bytesTotal on success, a throwing callback reported once as a warning.
   */
  onProgress?: (event: ConvertProgress) => void;
  /** Called for every notice (skipped variable, dropped coordinate, ...). */
  onNotice?: (message: string) => void;
  /** Tabular sources (CSV, Parquet, Arrow IPC): the table's name (default: the file stem). */
  table?: string;
  /** Tabular sources: explicit column kinds (CSV: skip inference for these columns). */
  columns?: Record<string, ColumnSchema>;
  /** Tabular sources: leave out columns of unsupported types instead of failing. */
  skipUnsupported?: boolean;
  /**
   * HDF5 / NetCDF / Zarr sources: write an axis table per dimension of the converted datasets
   * from the 1-D variables along it (default true; `tet convert --no-tables`: false).
   */
  tables?: boolean;
}

/**
 * A progress event of {@link convert}: logical bytes of the converted datasets (as written,
 * after unpacking) and tiles, read from the source and queued for writing.
 */
export interface ConvertProgress extends Progress {
  /** The dataset being converted. */
  dataset: string;
  chunksDone: number;
  chunksTotal: number;
}

/** A dataset written by {@link convert}. */
export interface ConvertedDataset {
  name: string;
  sourceType: string;
  dtype: DTypeName;
  shape: number[];
  chunkShape: number[];
  dimNames: string[] | null;
  coords: string[];
  unpacked: boolean;
}

/** What {@link convert} returns: datasets written, variables skipped (with reasons), notices. */
export interface ConvertReport {
  source: string;
  kind: SourceKind;
  output: string;
  datasets: ConvertedDataset[];
  /** Variables not converted, with the reason; `code` is a stable TET_CONVERT_* code where one
   *  applies (TET_CONVERT_EMPTY for a 0-length axis, TET_CONVERT_UNSUPPORTED_FILTER, ...). */
  skipped: { name: string; reason: string; code?: string; shape?: number[] }[];
  notices: string[];
  /** Tables written: the one table of a tabular source, the axis tables of an array source. */
  tables?: {
    name: string; rows: number; columns: ({ name: string } & ColumnSchema)[];
    /** Axis tables: the dataset and dimension the table is bound to. */
    axis?: { dataset: string; dim: string };
  }[];
}

export type { CoordLabels };
