// Writing .tet files. The native writer needs every dataset declared before the first tile (it
// sizes the index up front), so TetWriter queues dataset specs until the first writeChunk() or
// commit() seals the layout; datasets given whole `data` go to the native writer as one block at
// seal time (tiled and compressed in parallel there, in grid order, which reproduces the
// reference writer's bytes). By default (`ordered`) writes reach the native writer one at a time
// in call order, so the file layout is deterministic; `ordered: false` lets several run at once.
import { binding } from './binding';
import { TetError, TetIoError, toTetError } from './errors';
import type { NativeWriterHandle } from './native';
import { batchOf, declareTable, nativeColumns, type TableBatch } from './tables/io';
import { schemaFromSpec } from './tables/normalize';
import type { ColumnInput, ColumnSchema, PhysicalBatch } from './tables/types';
import {
  DTYPE_SIZE, DTYPE_TAG, type DatasetMetadata, type DTypeName, type FileExecution, type FileMetadata,
  type HistoryRow, type TetTypedArray,
} from './types';

/** Tile codec: raw, zstd, or auto (zstd only where it is smaller). */
export type WriteCodec = 'raw' | 'zstd' | 'auto';

/** A dataset declared with {@link TetWriter.addDataset}. */
export interface DatasetSpec {
  name: string;
  dtype: DTypeName;
  shape: number[];
  /** Defaults to `shape` (one tile). */
  chunkShape?: number[];
  /** 'auto' stores zstd only where it is smaller. Default 'raw'. */
  codec?: WriteCodec;
  /** zstd level (default 3). */
  level?: number;
  /** Whole row-major array; omit to stream tiles with writeChunk(). */
  data?: TetTypedArray;
}

/** Options of {@link TetWriter.create}. */
export interface WriterOptions {
  /** TIDX execution settings stored in the file (0 = engine default). */
  execution?: Partial<FileExecution>;
  /**
   * true (default): writes run one after another in call order, so the same calls give the same
   * bytes. false: writes run concurrently (more compression in parallel); payload offsets then
   * follow completion order, which every reader handles (the index records each one).
   */
  ordered?: boolean;
}

/** A history row added with {@link TetWriter.addHistory}. */
export interface HistoryInput {
  op: string;
  source: string;
  /** ISO timestamp; defaults to now. */
  at?: string;
  parents?: unknown[];
  params?: Record<string, unknown>;
}

/**
 * A table added with {@link TetWriter.addTable}: `columns` (one shot: every column's values) or
 * `schema` (streaming: rows come with {@link TableWriter.append}), not both.
 */
export interface TableSpec {
  name: string;
  /**
   * Binds the table to one axis of a dataset of this writer: one row per position along it.
   * `dim` is a name from the dataset's `dim_names` (set with setMetadata first) or the axis
   * index. Omit for a standalone table.
   */
  axis?: { dataset: string; dim: string | number };
  columns?: Record<string, ColumnInput>;
  schema?: Record<string, ColumnSchema>;
}

/** Appends rows to a table being written (see {@link TetWriter.addTable}). */
export class TableWriter {
  /** Rows handed to append() so far (written once their promises settle). */
  rows = 0;
  /**
   * Use TetWriter.addTable().
   * @internal
   */
  constructor(readonly name: string, private readonly schema: Record<string, ColumnSchema>,
    private readonly send: (rows: number, columns: ReturnType<typeof nativeColumns>) => Promise<void>) {}

  /**
   * Appends a batch: one value array per column (typed arrays, plain arrays with `null`
   * entries, strings for date / timestamp / time) and optional `valid: { column: Uint8Array }`
   * masks. Batches of any size; memory stays one block per column in native. The arrays must
   * not change until the promise settles.
   */
  append(batch: TableBatch): Promise<void> {
    try {
      const { rows, columns } = batchOf(this.name, this.schema, batch, this.rows);
      this.rows += rows;
      return this.send(rows, nativeColumns(columns));
    } catch (err) {
      return Promise.reject(err instanceof TetError ? err : toTetError(err));
    }
  }

  /**
   * Appends physical batches (one per column, in schema order, `rows` each), as the converters
   * produce them.
   * @internal
   */
  appendPhysical(rows: number, columns: PhysicalBatch[]): Promise<void> {
    const names = Object.keys(this.schema);
    if (columns.length !== names.length || columns.some((c, i) => c.rows !== rows || c.kind !== this.schema[names[i]].kind)) {
      return Promise.reject(writeError(`table ${JSON.stringify(this.name)}: physical batches do not match the schema`));
    }
    this.rows += rows;
    return this.send(rows, nativeColumns(columns));
  }
}

const CODEC_CODE: Record<WriteCodec, number> = { raw: 0, zstd: 1, auto: 2 };

type ArrayCtor = new (...args: never[]) => TetTypedArray;
const ARRAY_TYPE: Record<DTypeName, ArrayCtor[]> = {
  f32: [Float32Array], f64: [Float64Array], i32: [Int32Array], i64: [BigInt64Array], u8: [Uint8Array],
  u16: [Uint16Array], i16: [Int16Array], u32: [Uint32Array], u64: [BigUint64Array],
  f16: [Float32Array, Uint16Array],  // f32 values (rounded to nearest even) or raw f16 bits
};

interface DeclaredDataset {
  spec: Required<Omit<DatasetSpec, 'data'>>;
  data?: TetTypedArray;
  id: number;  // native id, -1 until sealed
  grid: number[];
}

function writeError(message: string): TetIoError {
  return new TetIoError('TET_WRITE_ARGUMENT', message);
}

/**
 * Writes a new `.tet` file: declare datasets, stream their tiles in any order (constant memory),
 * set metadata and history, then {@link TetWriter.commit} (temp file beside the target, fsync,
 * rename) or {@link TetWriter.abort} (nothing is left behind).
 */
export class TetWriter {
  readonly path: string;
  private readonly handle: NativeWriterHandle;
  private readonly datasets: DeclaredDataset[] = [];
  private readonly history: HistoryRow[] = [];
  private metadata: FileMetadata = {};
  private sealed = false;
  private closed: 'commit' | 'abort' | null = null;
  // Ordered: tail of the chain of native writes (tiles reach the writer in call order).
  private pending: Promise<void> = Promise.resolve();
  // Unordered: every write not yet settled, and the first failure.
  private readonly running = new Set<Promise<void>>();
  private failure: { error: unknown } | null = null;
  private readonly ordered: boolean;

  private constructor(path: string, handle: NativeWriterHandle, ordered: boolean) {
    this.path = path;
    this.handle = handle;
    this.ordered = ordered;
  }

  /** Starts a new file; nothing appears at `path` until commit(). */
  static async create(path: string, opts: WriterOptions = {}): Promise<TetWriter> {
    const b = binding();
    let handle: NativeWriterHandle;
    try {
      handle = b.writerCreate(path);
    } catch (err) {
      throw toTetError(err);
    }
    const writer = new TetWriter(path, handle, opts.ordered ?? true);
    const exec = opts.execution;
    if (exec && (exec.memory_budget_percent_bps || exec.memory_budget_bytes)) {
      try {
        b.writerSetExecution(handle, exec.memory_budget_percent_bps ?? 0, exec.memory_budget_bytes ?? 0);
      } catch (err) {
        b.writerAbort(handle);
        throw toTetError(err);
      }
    }
    return writer;
  }

  /** Declares a dataset (before the first writeChunk()). Returns its dataset id. */
  addDataset(spec: DatasetSpec): number {
    this.assertOpen();
    if (this.sealed) {
      throw new TetIoError('TET_WRITE_SEALED', `cannot add dataset ${JSON.stringify(spec.name)}: tiles were already written; declare every dataset before the first writeChunk()`);
    }
    if (this.datasets.some((d) => d.spec.name === spec.name)) throw writeError(`dataset ${JSON.stringify(spec.name)} is declared twice`);
    if (!(spec.dtype in DTYPE_TAG)) throw writeError(`dataset ${JSON.stringify(spec.name)}: unknown dtype ${JSON.stringify(spec.dtype)}`);
    const shape = checkAxes(spec.name, 'shape', spec.shape, 0);
    const chunkShape = checkAxes(spec.name, 'chunkShape', spec.chunkShape ?? shape, 1);
    if (chunkShape.length !== shape.length) {
      throw writeError(`dataset ${JSON.stringify(spec.name)}: chunkShape has ${chunkShape.length} axes, shape has ${shape.length}`);
    }
    const codec = spec.codec ?? 'raw';
    if (!(codec in CODEC_CODE)) throw writeError(`dataset ${JSON.stringify(spec.name)}: codec must be raw, zstd or auto, got ${JSON.stringify(codec)}`);
    const level = spec.level ?? 3;
    if (!Number.isInteger(level) || level < -7 || level > 22) throw writeError(`dataset ${JSON.stringify(spec.name)}: zstd level must be an integer in -7..22, got ${level}`);
    if (spec.data !== undefined) {
      checkArrayType(spec.name, spec.dtype, spec.data);
      const want = shape.reduce((a, b) => a * b, 1);
      if (spec.data.length !== want) {
        throw writeError(`dataset ${JSON.stringify(spec.name)}: data has ${spec.data.length} elements, shape ${JSON.stringify(shape)} needs ${want}`);
      }
    }
    const grid = shape.map((n, a) => Math.ceil(n / chunkShape[a]));
    this.datasets.push({ spec: { name: spec.name, dtype: spec.dtype, shape, chunkShape, codec, level }, data: spec.data, id: -1, grid });
    return this.datasets.length - 1;
  }

  /**
   * Writes the (clipped) tile at grid `coords` of a streamed dataset, row-major. f16 datasets
   * take Float32Array (rounded to nearest even) or Uint16Array bit patterns.
   */
  writeChunk(datasetName: string, coords: number[], tile: TetTypedArray): Promise<void> {
    try {
      this.assertOpen();
      const ds = this.declared(datasetName);
      if (ds.data !== undefined) throw writeError(`dataset ${JSON.stringify(datasetName)} was given whole data; it cannot also take tiles`);
      const bytes = this.tileBytes(ds, coords, tile);
      this.seal();
      return this.enqueue(ds, coords.slice(), bytes);
    } catch (err) {
      return Promise.reject(err instanceof TetError ? err : toTetError(err));
    }
  }

  /**
   * Writes the whole tiles [tileOrigin, tileOrigin + tileCount) of a streamed dataset from one
   * row-major block (clipped at the array's edges: its extent along axis a is
   * min((tileOrigin[a] + tileCount[a]) * chunkShape[a], shape[a]) - tileOrigin[a] * chunkShape[a]).
   * One native call: tiles are cut, compressed in parallel and written in grid order, with no copy
   * on the JS thread, so `data` must not change until the promise settles.
   */
  writeSlab(datasetName: string, tileOrigin: number[], tileCount: number[], data: TetTypedArray): Promise<void> {
    try {
      this.assertOpen();
      const ds = this.declared(datasetName);
      if (ds.data !== undefined) throw writeError(`dataset ${JSON.stringify(datasetName)} was given whole data; it cannot also take tiles`);
      const bytes = this.slabBytes(ds, tileOrigin, tileCount, data);
      this.seal();
      return this.enqueueSlab(ds, tileOrigin.slice(), tileCount.slice(), bytes);
    } catch (err) {
      return Promise.reject(err instanceof TetError ? err : toTetError(err));
    }
  }

  /**
   * Adds a table (tables may come before or after the tiles). One shot: `columns` holds every
   * column's values (`{ kind, values, valid? }`), and the rows are sent at once. Streaming:
   * `schema` gives the kinds, and rows come with the returned writer's `append()`. An axis
   * table's row count must equal the axis length (checked at commit). Errors of the one-shot
   * rows surface from commit().
   */
  addTable(spec: TableSpec): TableWriter {
    this.assertOpen();
    if (!spec || typeof spec.name !== 'string') throw writeError('addTable needs a table name');
    if ((spec.columns === undefined) === (spec.schema === undefined)) {
      throw writeError(`table ${JSON.stringify(spec.name)}: give either columns (one shot) or schema (streaming)`);
    }
    const schema: Record<string, ColumnSchema> = {};
    for (const c of schemaFromSpec(spec.name, (spec.schema ?? spec.columns) as Record<string, ColumnSchema>).columns) schema[c.name] = c.schema;
    let dataset = '';
    let axis = -1;
    if (spec.axis !== undefined) {
      const ds = this.declared(spec.axis.dataset);
      dataset = ds.spec.name;
      axis = this.axisIndex(ds, spec.axis.dim, spec.name);
    }
    const id = declareTable(binding(), this.handle, spec.name, dataset, axis, schema);
    let chain: Promise<void> = Promise.resolve();
    const send = (rows: number, columns: ReturnType<typeof nativeColumns>): Promise<void> => {
      const write = () => binding().writerAppendTable(this.handle, id, rows, columns);
      if (this.ordered) return this.schedule(write);
      // Unordered writers still keep one table's appends in call order (its row order).
      const run = chain.then(write).catch((err) => { throw toTetError(err); });
      chain = run.catch(() => undefined);
      this.running.add(run);
      run.then(() => this.running.delete(run), (error) => { this.running.delete(run); this.failure ??= { error }; });
      return run;
    };
    const table = new TableWriter(spec.name, schema, send);
    if (spec.columns !== undefined) {
      const batch: TableBatch = {};
      const valid: Record<string, Uint8Array> = {};
      for (const [n, c] of Object.entries(spec.columns)) {
        batch[n] = c.values;
        if (c.valid) valid[n] = c.valid;
      }
      if (Object.keys(valid).length) {
        if ('valid' in schema) throw writeError(`table ${JSON.stringify(spec.name)}: a column named "valid" takes nulls as null entries, not a valid mask`);
        batch.valid = valid;
      }
      // The failure is kept for commit(); nobody awaits this promise.
      table.append(batch).catch(() => undefined);
    }
    return table;
  }

  private axisIndex(ds: DeclaredDataset, dim: string | number, table: string): number {
    const rank = ds.spec.shape.length;
    let index: number | undefined;
    if (typeof dim === 'number') index = dim;
    else if (/^[0-9]+$/.test(dim)) index = Number(dim);
    else {
      const names = this.metadata.datasets?.[ds.spec.name]?.dim_names;
      const at = names ? names.indexOf(dim) : -1;
      if (at < 0) {
        throw writeError(`table ${JSON.stringify(table)}: dataset ${JSON.stringify(ds.spec.name)} has no dim named ${JSON.stringify(dim)}` +
          (names ? ` (dim_names: ${names.join(', ')})` : ' (set its dim_names with setMetadata first, or give the axis index)'));
      }
      index = at;
    }
    if (!Number.isInteger(index) || index < 0 || index >= rank) {
      throw writeError(`table ${JSON.stringify(table)}: axis ${JSON.stringify(dim)} is outside dataset ${JSON.stringify(ds.spec.name)}'s ${rank} axes`);
    }
    return index;
  }

  /** Appends a history row to the footer. */
  addHistory(row: HistoryInput): void {
    this.assertOpen();
    if (typeof row.op !== 'string' || typeof row.source !== 'string') throw writeError('history rows need string op and source');
    const out: HistoryRow = { op: row.op, source: row.source, at: row.at ?? new Date().toISOString() };
    if (row.parents) out.parents = row.parents;
    if (row.params) out.params = row.params;
    this.history.push(out);
  }

  /** Dimension names, coordinate labels and attributes of one dataset. */
  setMetadata(datasetName: string, meta: DatasetMetadata): void {
    this.assertOpen();
    const ds = this.declared(datasetName);
    checkDatasetMetadata(ds, meta);
    this.metadata = { ...this.metadata, datasets: { ...(this.metadata.datasets ?? {}), [datasetName]: meta } };
  }

  /** File-level metadata keys (merged; `datasets` is managed by setMetadata). */
  setFileMetadata(meta: Record<string, unknown>): void {
    this.assertOpen();
    const { datasets: _ignored, ...rest } = meta;
    this.metadata = { ...rest, ...(this.metadata.datasets ? { datasets: this.metadata.datasets } : {}) };
  }

  /** Writes the index (and footer), fsyncs and renames into place. */
  async commit(): Promise<void> {
    this.assertOpen();
    this.seal();
    const b = binding();
    try {
      await this.settled();
      if (this.history.length > 0 || Object.keys(this.metadata).length > 0) {
        b.writerSetFooter(this.handle, JSON.stringify(this.history), JSON.stringify(this.metadata));
      }
      await b.writerCommit(this.handle);
      this.closed = 'commit';
    } catch (err) {
      throw toTetError(err);
    }
  }

  /** Discards everything; no file is left behind. Idempotent. */
  abort(): void {
    if (this.closed) return;
    this.closed = 'abort';
    binding().writerAbort(this.handle);
  }

  private assertOpen(): void {
    if (this.closed) throw new TetIoError('TET_WRITE_CLOSED', `writer for ${this.path} was already closed by ${this.closed}()`);
  }

  private declared(name: string): DeclaredDataset {
    const ds = this.datasets.find((d) => d.spec.name === name);
    if (!ds) throw writeError(`dataset ${JSON.stringify(name)} was not declared with addDataset()`);
    return ds;
  }

  // Declares every dataset natively (fixing ids and index size) and queues whole-data tiles.
  private seal(): void {
    if (this.sealed) return;
    this.sealed = true;
    const b = binding();
    for (const ds of this.datasets) {
      const s = ds.spec;
      try {
        ds.id = b.writerAddDataset(this.handle, {
          name: s.name, dtype: DTYPE_TAG[s.dtype], shape: s.shape, chunkShape: s.chunkShape,
          codec: CODEC_CODE[s.codec], level: s.level,
        });
      } catch (err) {
        throw toTetError(err);
      }
    }
    for (const ds of this.datasets) {
      if (ds.data === undefined) continue;
      const origin = ds.grid.map(() => 0);
      this.enqueueSlab(ds, origin, ds.grid.slice(), this.slabBytes(ds, origin, ds.grid, ds.data)).catch(() => {
        // surfaced by commit(), which awaits every write
      });
    }
  }

  private enqueue(ds: DeclaredDataset, coords: number[], bytes: Uint8Array): Promise<void> {
    return this.schedule(() => binding().writerWriteChunk(this.handle, ds.id, coords, bytes));
  }

  private enqueueSlab(ds: DeclaredDataset, origin: number[], count: number[], bytes: Uint8Array): Promise<void> {
    return this.schedule(() => binding().writerWriteSlab(this.handle, ds.id, origin, count, bytes));
  }

  /** Runs a native write in call order (ordered) or at once (unordered); rejects with a TetError. */
  private schedule(write: () => Promise<void>): Promise<void> {
    if (this.ordered) {
      const run = this.pending.then(write).catch((err) => { throw toTetError(err); });
      this.pending = run.catch(() => undefined);
      this.running.add(run);
      const forget = () => { this.running.delete(run); };
      run.then(forget, (error) => { forget(); this.failure ??= { error }; });
      return run;
    }
    const run = write().catch((err) => { throw toTetError(err); });
    this.running.add(run);
    run.then(() => this.running.delete(run), (error) => { this.running.delete(run); this.failure ??= { error }; });
    return run;
  }

  /** Waits for every write; throws the first failure. */
  private async settled(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running]);
    if (this.failure) throw this.failure.error;
  }

  private slabBytes(ds: DeclaredDataset, origin: number[], count: number[], data: TetTypedArray): Uint8Array {
    const { name, dtype, shape, chunkShape } = ds.spec;
    const ok = (xs: unknown): xs is number[] => Array.isArray(xs) && xs.length === shape.length;
    if (!ok(origin) || !ok(count)) {
      throw writeError(`dataset ${JSON.stringify(name)}: slab tile origin and count need ${shape.length} axes, got ${JSON.stringify(origin)} / ${JSON.stringify(count)}`);
    }
    let elements = 1;
    for (let a = 0; a < shape.length; a++) {
      const o = origin[a];
      const c = count[a];
      if (!Number.isSafeInteger(o) || !Number.isSafeInteger(c) || o < 0 || c < 1 || o + c > ds.grid[a]) {
        throw writeError(`dataset ${JSON.stringify(name)}: slab tiles ${JSON.stringify(origin)} + ${JSON.stringify(count)} outside grid ${JSON.stringify(ds.grid)}`);
      }
      elements *= Math.min((o + c) * chunkShape[a], shape[a]) - o * chunkShape[a];
    }
    checkArrayType(name, dtype, data);
    if (data.length !== elements) {
      throw writeError(`dataset ${JSON.stringify(name)}: slab at tiles ${JSON.stringify(origin)} has ${data.length} elements, the block needs ${elements}`);
    }
    const native = dtype === 'f16' && data instanceof Float32Array ? f32ArrayToF16Bits(data) : data;
    return new Uint8Array(native.buffer, native.byteOffset, native.byteLength);
  }

  private tileBytes(ds: DeclaredDataset, coords: number[], tile: TetTypedArray): Uint8Array {
    const { name, dtype, shape, chunkShape } = ds.spec;
    if (!Array.isArray(coords) || coords.length !== shape.length) {
      throw writeError(`dataset ${JSON.stringify(name)}: chunk coords need ${shape.length} axes, got ${JSON.stringify(coords)}`);
    }
    let elements = 1;
    for (let a = 0; a < shape.length; a++) {
      const c = coords[a];
      if (!Number.isSafeInteger(c) || c < 0 || c >= ds.grid[a]) {
        throw writeError(`dataset ${JSON.stringify(name)}: chunk coords ${JSON.stringify(coords)} outside grid ${JSON.stringify(ds.grid)}`);
      }
      elements *= Math.min(chunkShape[a], shape[a] - c * chunkShape[a]);
    }
    checkArrayType(name, dtype, tile);
    if (tile.length !== elements) {
      throw writeError(`dataset ${JSON.stringify(name)}: tile ${JSON.stringify(coords)} has ${tile.length} elements, the clipped tile needs ${elements}`);
    }
    const native = dtype === 'f16' && tile instanceof Float32Array ? f32ArrayToF16Bits(tile) : tile;
    if (native.byteLength !== elements * DTYPE_SIZE[dtype]) throw new TetError('TET_INTERNAL', 'tile byte length mismatch');
    return new Uint8Array(native.buffer, native.byteOffset, native.byteLength);
  }
}

function checkAxes(name: string, field: string, axes: unknown, min: number): number[] {
  if (!Array.isArray(axes) || axes.length < 1 || axes.length > 8) {
    throw writeError(`dataset ${JSON.stringify(name)}: ${field} must list 1..8 axes, got ${JSON.stringify(axes)}`);
  }
  for (const n of axes) {
    if (!Number.isSafeInteger(n) || n < min) throw writeError(`dataset ${JSON.stringify(name)}: ${field} entries must be integers >= ${min}, got ${JSON.stringify(axes)}`);
  }
  return axes.slice() as number[];
}

function checkArrayType(name: string, dtype: DTypeName, arr: unknown): void {
  if (!ARRAY_TYPE[dtype].some((C) => arr instanceof C)) {
    const want = ARRAY_TYPE[dtype].map((C) => C.name).join(' or ');
    const got = arr && typeof arr === 'object' ? (arr as object).constructor.name : typeof arr;
    throw writeError(`dataset ${JSON.stringify(name)} is ${dtype}: expected ${want}, got ${got}`);
  }
}

function checkDatasetMetadata(ds: DeclaredDataset, meta: DatasetMetadata): void {
  const { name, shape } = ds.spec;
  if (meta.dim_names !== undefined) {
    if (!Array.isArray(meta.dim_names) || meta.dim_names.length !== shape.length || meta.dim_names.some((d) => typeof d !== 'string')) {
      throw writeError(`dataset ${JSON.stringify(name)}: dim_names must be ${shape.length} strings, got ${JSON.stringify(meta.dim_names)}`);
    }
  }
  for (const [key, coord] of Object.entries(meta.coords ?? {})) {
    const axis = meta.dim_names?.indexOf(key) ?? -1;
    const a = axis >= 0 ? axis : /^\d+$/.test(key) ? Number(key) : -1;
    if (a < 0 || a >= shape.length) throw writeError(`dataset ${JSON.stringify(name)}: coords key ${JSON.stringify(key)} is neither a dim name nor an axis index`);
    if (!Array.isArray(coord?.labels) || coord.labels.length !== shape[a]) {
      throw writeError(`dataset ${JSON.stringify(name)}: coords ${JSON.stringify(key)} needs ${shape[a]} labels, got ${Array.isArray(coord?.labels) ? coord.labels.length : 'none'}`);
    }
  }
}

/** Calls `fn` with every chunk coordinate of `grid`, row-major (last axis fastest). */
export function forEachChunk(grid: number[], fn: (coords: number[]) => void): void {
  const total = grid.reduce((a, b) => a * b, 1);
  const coords = new Array<number>(grid.length).fill(0);
  for (let i = 0; i < total; i++) {
    fn(coords.slice());
    for (let a = grid.length - 1; a >= 0; a--) {
      if (++coords[a] < grid[a]) break;
      coords[a] = 0;
    }
  }
}

/** Copies the clipped tile at `coords` out of a row-major array, row-major. */
export function extractTile<A extends TetTypedArray>(data: A, shape: number[], chunkShape: number[], coords: number[]): A {
  const ndim = shape.length;
  const origin = coords.map((c, a) => c * chunkShape[a]);
  const extent = origin.map((o, a) => Math.min(chunkShape[a], shape[a] - o));
  const strides = new Array<number>(ndim);
  strides[ndim - 1] = 1;
  for (let a = ndim - 2; a >= 0; a--) strides[a] = strides[a + 1] * shape[a + 1];
  const rowLen = extent[ndim - 1];
  const rows = extent.slice(0, ndim - 1).reduce((a, b) => a * b, 1);
  const Ctor = data.constructor as new (n: number) => A;
  const out = new Ctor(rows * rowLen);
  const idx = new Array<number>(Math.max(ndim - 1, 0)).fill(0);
  for (let r = 0; r < rows; r++) {
    let src = origin[ndim - 1];
    for (let a = 0; a < ndim - 1; a++) src += (origin[a] + idx[a]) * strides[a];
    (out as unknown as { set(src: ArrayLike<unknown>, offset: number): void }).set(
      data.subarray(src, src + rowLen) as ArrayLike<unknown>, r * rowLen);
    for (let a = ndim - 2; a >= 0; a--) {
      if (++idx[a] < extent[a]) break;
      idx[a] = 0;
    }
  }
  return out;
}

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

/** IEEE binary16 bits of a float32 value, rounded to nearest even (NaN stays NaN). */
export function f32ToF16Bits(value: number): number {
  f32Scratch[0] = value;
  const bits = u32Scratch[0];
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 | (mant >>> 13) : 0);
  const e = exp - 127 + 15;  // biased half exponent
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;  // below half the smallest subnormal: rounds to zero
    const m = mant | 0x800000;
    const shift = 14 - e;
    let half = m >>> shift;
    const rem = m & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rem > halfway || (rem === halfway && half & 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && half & 1)) half++;  // a carry rolls into the exponent (up to inf)
  return sign | half;
}

function f32ArrayToF16Bits(src: Float32Array): Uint16Array {
  const out = new Uint16Array(src.length);
  for (let i = 0; i < src.length; i++) out[i] = f32ToF16Bits(src[i]);
  return out;
}
