// The contract of the native addon (native/napi). Only lib/binding.ts loads it; every other
// module talks to the core through these signatures.

import type { TetTypedArray } from './types';

/** Opaque handles owned by the addon. */
export interface NativeFileHandle { readonly __tetFile: unique symbol }
export interface NativeWriterHandle { readonly __tetWriter: unique symbol }
export interface NativeCancelToken { readonly __tetCancel: unique symbol }

export interface NativeDataset {
  name: string; dtype: number; ndim: number;
  shape: number[]; chunkShape: number[]; grid: number[];
  chunkCount: number; elementCount: number; logicalBytes: number; storedBytes: number;
  rawChunks: number; zstdChunks: number;
}

export interface NativeCatalog {
  fileLen: number;
  flags: number;
  chunkIndexOffset: number;
  chunkIndexLength: number;
  execution: { memoryBudgetPercentBps: number; memoryBudgetBytes: number };
  datasets: NativeDataset[];
  footer: { present: boolean; historyJson: string; metadataJson: string; metadataSpilled: boolean;
            payloadLimit: number };
}

export type NativeValues = Float64Array | BigInt64Array | BigUint64Array | Uint8Array;

export interface NativeExecStats {
  strategy: number;      // tet::Strategy
  ioMode: number;        // tet::IoMode
  readByPread?: boolean; // parallel chunks read by pread, not through the mapping (tet::ReadPath)
  threadsUsed: number;
  simd: string;
  chunksRead: number;
  storedBytesRead: number;
  spillBytes: number;
  seconds: number;
  /** Where the fold ran: 'cpu', 'cuda:N' or 'cuda:multi'. */
  deviceUsed?: string;
  /** A GPU plan that fell back to the CPU at run time: why, and the device's message. */
  deviceFallbackReason?: string;
  deviceError?: string;
  deviceGpuPipeline?: boolean;
  deviceGpuMulti?: boolean;
}

/** One GPU of hostInfo().devices. */
export interface NativeDevice {
  ordinal: number; name: string; totalBytes: number; freeBytes: number; smCount: number; computeCapability: string;
}

/** routeDevice's decision (native/include/tet/device.h). */
export interface NativeDeviceRoute {
  requested: string; used: string; reason?: string; pipeline: boolean; multi: boolean; gpu: boolean; ordinal: number;
}

export interface NativeQueryResult {
  reducedShape: number[];
  values: NativeValues;            // see tet::QueryResult
  /** The values of the plan's further aggregates (CompiledPlan.more), in order (`reductions`). */
  moreValues?: NativeValues[];
  histEdges: Float64Array;         // empty unless scalar histogram
  covOrder: number;
  /** Dtype-native preview: Float32Array (f32, f16), Float64Array, Int32Array, BigInt64Array, ... */
  preview: ArrayBufferView;
  stats: NativeExecStats;
}

export interface NativeVerifyFinding {
  severity: 'error' | 'warning';
  code: string;            // TET_* error code
  recommendation: string;  // e.g. 'footer_invalid', '' when none
  message: string;
}

/** One column in {@link NativeBinding.fileTables}. */
export interface NativeTableColumn {
  name: string; kind: string; unit?: string; tz?: string; nullable: boolean; nullCount: number;
  payloadBytes: number; blocks: number; storedCells: number; encodings?: string[]; metablocks: { kind: number; bytes: number }[];
}

export interface NativeTable {
  name: string; dataset?: string; axis?: number; rows: number; columns: NativeTableColumn[];
}

/** Rows of a column: physical values (i64 / f64 / u8, or UTF-8 bytes + offsets) and validity. */
/** What fileReadColumn resolves to: the values went into the caller's arrays; str rows come back as UTF-8 bytes + offsets. */
export type NativeColumnRows =
  | { kind: 'bool' | 'int' | 'float' | 'date' | 'timestamp' | 'time'; rows: number; anyNull: boolean }
  | { kind: 'str'; rows: number; anyNull: boolean; bytes: Uint8Array; offsets: Uint32Array };

/** `execution.where_plan` counts of one where over one table (native cells::WherePlan). */
export interface NativeWherePlan {
  rows: number; selected: number; blocks: number;
  blocks_zonemap_resolved: number; blocks_index_pruned: number; blocks_decoded: number;
  payload_bytes_read: number;
}

/** {@link NativeBinding.tableWhere}: the selected rows as flat [start, end) pairs, ascending. */
export interface NativeTableWhere { runs: Float64Array; plan: NativeWherePlan }

/** One typed column of a table query result (native/query/table_query.h ValueColumn). */
export type NativeValueColumn = { kind: string; valid?: Uint8Array } & (
  | { type: 'bool'; data: Uint8Array }
  | { type: 'i64'; data: BigInt64Array }
  | { type: 'u64'; data: BigUint64Array }
  | { type: 'f64'; data: Float64Array }
  | { type: 'i128'; data: string[] }
  | { type: 'str'; bytes: Uint8Array; offsets: Uint32Array });

/** What `fileTableQuery` resolves to. */
export interface NativeTableQueryResult {
  where?: NativeWherePlan;
  rowsSelected: number;
  threads: number;
  seconds: number;
  values?: NativeValueColumn;
  histEdges?: Float64Array;
  groupKeys?: NativeValueColumn[];
  groupCounts?: Float64Array;
  /** plan.rowGroups: each row's group (an index into groupKeys). */
  rowGroups?: Uint32Array;
  rows?: NativeValueColumn[];
  rowNumbers?: Float64Array;
}

export interface NativeBinding {
  openFile(path: string, verifyFooter: boolean): Promise<NativeFileHandle>;
  openFileSync(path: string, verifyFooter: boolean): NativeFileHandle;
  /** openFileSync where the catalog is small and all in memory (no disk wait); else undefined. */
  openFileResident(path: string, verifyFooter: boolean): NativeFileHandle | undefined;
  catalog(file: NativeFileHandle): NativeCatalog;
  /** plan: bytes per native/include/tet/plan.h. Rejects with an Error carrying `code`. */
  execute(file: NativeFileHandle, plan: Uint8Array, cancel: NativeCancelToken | null): Promise<NativeQueryResult>;
  /**
   * read(): a plan without a reduction whose preview (the whole selection, row-major) native
   * writes in place into `output` — the dataset's typed array (f16 → Float32Array), exactly
   * preview-length elements — on its pool threads; resolves with `output` itself. The caller
   * must not detach or transfer `output`'s buffer before the Promise settles.
   * A partial reduction of a streaming op with f64 / i64 / u64 values takes an output too: its
   * values (Float64Array / BigInt64Array / BigUint64Array, exactly their count) are written in
   * place and the Promise resolves with the usual result, `values` being `output`.
   */
  execute<A extends TetTypedArray>(file: NativeFileHandle, plan: Uint8Array, cancel: NativeCancelToken | null,
    output: A): Promise<A>;
  /** The same call for a partial reduction with a caller-owned values array (see above). */
  execute(file: NativeFileHandle, plan: Uint8Array, cancel: NativeCancelToken | null,
    output: Float64Array | BigInt64Array | BigUint64Array, reduction: 'reduction'): Promise<NativeQueryResult>;
  /**
   * Shard `shard` of `shards` of a plan (native/include/tet/shard.h): resolves with the partial's
   * bytes. `doc` is fingerprinted with the plan; `context` travels to the merge unread.
   */
  /** Runs the shard the plan's SHARD section names (index, count and the optional round request). */
  executePartial(file: NativeFileHandle, plan: Uint8Array, doc: string, context: string,
    cancel: NativeCancelToken | null): Promise<Uint8Array>;
  /**
   * Validates and merges a complete set of partials of one round (rejects with a TET_SHARD_*
   * code): the result when done, else the next round request (tier C).
   */
  mergePartials(parts: Uint8Array[]): Promise<{
    done: boolean; op: string; result?: NativeQueryResult; doc: string; context: string; round?: Uint8Array; roundNo?: number;
  }>;
  closeFile(file: NativeFileHandle): void;
  createCancelToken(): NativeCancelToken;
  cancel(token: NativeCancelToken): void;
  /**
   * The token's progress counters (native tet::Progress), read without a lock: `total` the run's
   * logical bytes (0 until it has planned its selection), `done` those of the tiles read so far
   * (as counted: it may pass `total` by a preview's tiles; lib/progress.ts clamps).
   */
  progressOf(token: NativeCancelToken): { done: number; total: number };
  /**
   * Decodes tiles [first, first+count) of every dataset in index order, then checks the tables
   * region (deep: decodes every block; those findings recommend 'cells_invalid'); one job, the
   * tiles' findings first. Never throws for a bad tile or table.
   */
  verify(file: NativeFileHandle, first: number, count: number, deep: boolean): Promise<NativeVerifyFinding[]>;
  /**
   * `tet repair --apply footer_invalid`: atomically rewrites the file without its (corrupt)
   * footer and with flags bit 1 cleared. Resolves with the new file length.
   */
  repairFooter(path: string): Promise<{ newLength: number }>;
  /** `tet repair --apply cells_invalid`: rewrites the file without its tables region. */
  repairCells(path: string): Promise<{ newLength: number }>;
  /** Process-wide query counters (all environments): running now, ended by cancellation, and
   *  cancel flags tripped by an environment's teardown (a terminated worker). Diagnostics. */
  engineStats(): { queriesRunning: number; queriesCancelled: number; teardownCancels: number };
  hostInfo(): { cores: number; totalRamBytes: number; availableRamBytes: number; simd: string; buildFlags: string;
    devices: NativeDevice[]; deviceBackend: string; deviceStatus: string; deviceDetail: string };
  /** MemAvailable in bytes (0 = unknown), without hostInfo()'s pool start and device probe. */
  availableRamBytes(): number;
  /** The device routing of a query (token, op and dtype wire codes, scalar, sizes). */
  routeDevice(req: { token: string; op: number; dtype: number; scalar: boolean; logicalBytes: number; chunks: number;
    outElements: number }): NativeDeviceRoute;

  writerCreate(path: string): NativeWriterHandle;
  writerSetExecution(w: NativeWriterHandle, percentBps: number, bytes: number): void;
  writerAddDataset(w: NativeWriterHandle, spec: { name: string; dtype: number; shape: number[];
    chunkShape: number[]; codec: number; level: number }): number;
  /** Compresses (when asked) and writes off the JS thread. */
  writerWriteChunk(w: NativeWriterHandle, datasetId: number, coords: number[], data: Uint8Array): Promise<void>;
  /** The row-major block of tiles [tileOrigin, tileOrigin + tileCount), read in place (the caller
   *  keeps `data` unchanged until it settles); tiles compress in parallel, land in grid order. */
  writerWriteSlab(w: NativeWriterHandle, datasetId: number, tileOrigin: number[], tileCount: number[],
    data: Uint8Array): Promise<void>;
  writerSetFooter(w: NativeWriterHandle, historyArrayJson: string, metadataObjectJson: string): void;
  writerCommit(w: NativeWriterHandle): Promise<void>;
  writerAbort(w: NativeWriterHandle): void;

  /** The tables of the file (docs/format-tables.md); `encodings` validates every block to list them. */
  fileTables(file: NativeFileHandle, encodings: boolean): NativeTable[];
  /**
   * Rows [start, start + count) of a column, decoded off the JS thread straight into `data`
   * (count entries: Uint8Array bool, Int32Array date, Float64Array float, BigInt64Array other
   * int-stored kinds; null for str) and `valid` (Uint8Array, 1 = present), which the caller owns.
   */
  fileReadColumn(file: NativeFileHandle, table: string, column: string, start: number, count: number,
    data: BigInt64Array | Float64Array | Uint8Array | Int32Array | null, valid: Uint8Array): Promise<NativeColumnRows>;
  /**
   * The AND of a where's predicates over one table (predicates: the wire of
   * native/cells/where_wire.h, lib/plan/where.ts encodeWhereWire), off the JS thread; rejects with
   * TET_QUERY_UNKNOWN_TABLE / _COLUMN, TET_QUERY_WHERE_OP, TET_QUERY_BAD_LITERAL, TET_PLAN_INVALID,
   * TET_CANCELLED (the token's flag, checked between blocks).
   */
  tableWhere(file: NativeFileHandle, table: string, predicates: Uint8Array, cancel: NativeCancelToken | null): Promise<NativeTableWhere>;
  /** The same on the JS thread (planQuery is synchronous). */
  tableWhereSync(file: NativeFileHandle, table: string, predicates: Uint8Array): NativeTableWhere;
  /** A table query (lib/plan/table.ts builds the plan object), run off the JS thread. */
  /** `token` (optional): a cancel token; cancel(token) stops the query with TET_CANCELLED. */
  fileTableQuery(file: NativeFileHandle, plan: object, token?: NativeCancelToken | null): Promise<NativeTableQueryResult>;
  /** Declares a table (axis -1 = standalone); returns its id. */
  writerAddTable(w: NativeWriterHandle, name: string, dataset: string, axis: number,
    columns: { name: string; kind: number; unit: number; utc: boolean; nullable: boolean }[]): number;
  /** Appends rows to every column of a table (arrays read in place until it settles). */
  writerAppendTable(w: NativeWriterHandle, table: number, rows: number,
    columns: { data: ArrayBufferView; offsets?: Uint32Array; valid?: Uint8Array }[]): Promise<void>;
}
