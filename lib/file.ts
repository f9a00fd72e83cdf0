// An open .tet file: catalog, footer metadata/history, element reads and queries. The native
// handle is read-only and shared by concurrent reads; close() only stops new work.
import { closeSync, fstatSync, openSync as openFd, readSync } from 'node:fs';
import { inspect } from 'node:util';
import { binding } from './binding';
import { runNative } from './engine';
import { TetCancelledError, TetError, TetIoError, TetQueryError, toTetError } from './errors';
import type { NativeCatalog, NativeFileHandle } from './native';
import { encodePlan } from './plan/encode';
import { allocateOutput, checkOutput, float16ArrayCtor, readOutputSpec } from './plan/output';
import { resolveSelection } from './plan/selection';
import { findTable, listTables, readColumn, type ReadColumnOptions, type TableInfo } from './tables/io';
import type { ColumnValues } from './tables/types';
import type { ProgressCallback } from './progress';
import { planQuery, runQuery, runQueryPartial } from './run';
import type { QueryPartialOptions } from './run';
import type { SelectionAxisWire } from './query/document';
import {
  DTYPE_BY_TAG, type DatasetInfo, type FileExecution, type FileMetadata,
  type HistoryRow, type QueryTarget, type TetTypedArray,
} from './types';

/** Options of {@link open} / {@link openSync}. */
export interface OpenOptions {
  /** Reject a corrupt history footer (default true). `tet repair` opens with false. */
  verifyFooter?: boolean;
}

/** What {@link TetFile.read} returns. */
export interface ReadResult<A extends TetTypedArray = TetTypedArray> {
  /** Row-major values of the selection; f16 widens to Float32Array (Float16Array with `{ f16: 'float16' }`), i64/u64 are BigInt arrays. */
  data: A;
  /** Number of selected positions per axis. */
  shape: number[];
}

/** Options of {@link TetFile.read}. */
export interface ReadOptions {
  /** Aborting rejects the read with TetCancelledError (checked between tiles). */
  signal?: AbortSignal;
  /** Bytes of the selection read so far; throttled, as a query's `onProgress` (RunQueryOptions). */
  onProgress?: ProgressCallback;
  /**
   * f16 datasets: `'float32'` (default) widens every value to a Float32Array; `'float16'` returns
   * the stored binary16 values, bit for bit, in a Float16Array (half the memory). Needs a runtime
   * with Float16Array (Node 24+); elsewhere it is a TetQueryError TET_QUERY_UNSUPPORTED. Other
   * dtypes ignore it.
   */
  f16?: 'float32' | 'float16';
}

/** Raw footer facts, for `tet info` / `tet verify`. */
export interface FooterInfo {
  present: boolean;
  metadataSpilled: boolean;
  /** Payloads end at or before this offset. */
  payloadLimit: number;
  historyJson: string;
}

/** Where the file's structures lie (header flags, chunk index, footer), for `tet info` / `tet verify`. */
export interface FileLayout {
  fileLen: number;
  flags: number;
  chunkIndexOffset: number;
  chunkIndexLength: number;
  footer: FooterInfo;
}

type QueryInput = Parameters<typeof runQuery>[1];
type QueryOptions = Parameters<typeof runQuery>[2];

/**
 * Opens a `.tet` file: maps it, checks the whole catalog (bounds, overflow,
 * duplicates) and, unless `verifyFooter: false`, the history footer. A small catalog whose pages
 * are in memory is read on the calling thread (it cannot wait for the disk: ~0.1 ms); any other
 * off the JS thread. Rejects with a {@link TetFormatError} or {@link TetIoError} naming what is
 * wrong.
 */
export async function open(path: string, opts: OpenOptions = {}): Promise<TetFile> {
  let handle: NativeFileHandle;
  try {
    // A small catalog already in memory opens here (never waiting for the disk: ~0.1 ms), any
    // other on a native job thread.
    const b = binding(), verifyFooter = opts.verifyFooter ?? true;
    handle = b.openFileResident(path, verifyFooter) ?? await b.openFile(path, verifyFooter);
  } catch (err) {
    throw toTetError(err);
  }
  return opened(new TetFile(path, handle), opts);
}

// The files whose footer was checked at open (verifyFooter not false): verify() takes them as
// they are instead of opening the path again (lib/health.ts).
const footerChecked = new WeakSet<TetFile>();
function opened(file: TetFile, opts: OpenOptions): TetFile {
  if (opts.verifyFooter ?? true) footerChecked.add(file);
  return file;
}

/** Whether `file` was opened with the footer check (the default). @internal */
export function openedStrictly(file: TetFile): boolean {
  return footerChecked.has(file);
}

/** {@link open} on the calling thread. */
export function openSync(path: string, opts: OpenOptions = {}): TetFile {
  let handle: NativeFileHandle;
  try {
    handle = binding().openFileSync(path, opts.verifyFooter ?? true);
  } catch (err) {
    throw toTetError(err);
  }
  return opened(new TetFile(path, handle), opts);
}

/**
 * An open `.tet` file: its datasets, footer metadata and history, element reads and queries.
 * Get one from {@link open} or {@link openSync}; {@link TetFile.close} when done.
 */
export class TetFile implements QueryTarget {
  readonly path: string;
  readonly datasets: readonly DatasetInfo[];
  /** Resolved footer metadata ({} when the file has none). */
  readonly metadata: FileMetadata;
  /** Footer history; legacy [op, source, at] rows are normalised to objects. */
  readonly history: readonly HistoryRow[];
  readonly fileExecution: FileExecution;
  readonly layout: FileLayout;
  private handle: NativeFileHandle | null;
  private storedSizes: Map<number, Float64Array> | null = null;
  private tableList: readonly TableInfo[] | null = null;
  private tableListEncodings: readonly TableInfo[] | null = null;

  /**
   * Use open() / openSync().
   * @internal
   */
  constructor(path: string, handle: NativeFileHandle) {
    this.path = path;
    this.handle = handle;
    const catalog = wrapNative(() => binding().catalog(handle));
    this.datasets = Object.freeze(catalog.datasets.map(datasetInfoOf));
    this.fileExecution = {
      memory_budget_percent_bps: catalog.execution.memoryBudgetPercentBps,
      memory_budget_bytes: catalog.execution.memoryBudgetBytes,
    };
    const footer = parseFooter(catalog);
    this.metadata = footer.metadata;
    this.history = Object.freeze(footer.history);
    this.layout = {
      fileLen: catalog.fileLen, flags: catalog.flags, chunkIndexOffset: catalog.chunkIndexOffset,
      chunkIndexLength: catalog.chunkIndexLength,
      footer: {
        present: catalog.footer.present, metadataSpilled: catalog.footer.metadataSpilled,
        payloadLimit: catalog.footer.payloadLimit, historyJson: catalog.footer.historyJson,
      },
    };
  }

  /**
   * The native handle (lib/native.ts); throws TET_IO_CLOSED after close().
   * @internal
   */
  get native(): NativeFileHandle {
    if (!this.handle) throw new TetError('TET_IO_CLOSED', `${this.path} is closed`);
    return this.handle;
  }

  get closed(): boolean {
    return this.handle === null;
  }

  dataset(name: string): DatasetInfo {
    const found = this.datasets.find((d) => d.name === name);
    if (!found) {
      const names = this.datasets.map((d) => JSON.stringify(d.name)).join(', ') || 'none';
      throw new TetQueryError('TET_QUERY_UNKNOWN_DATASET', `dataset ${JSON.stringify(name)} not found in ${this.path} (datasets: ${names})`);
    }
    return found;
  }

  /**
   * Reads a selection (one entry per axis: start/stop/step, start_label/stop_label, or
   * {indices: [...]} — sorted, unique positions, as numpy fancy indexing with np.ix_; stop
   * clamps to the axis length; omit for the whole dataset) into the dataset's natural typed
   * array, row-major. Bad selections throw TetQueryError.
   */
  async read(name: string, selection?: readonly (SelectionAxisWire | null)[], opts: ReadOptions = {}): Promise<ReadResult> {
    const ds = this.dataset(name);
    if (opts.signal?.aborted) throw new TetCancelledError('TET_CANCELLED', `read of ${JSON.stringify(name)} was cancelled`);
    const box = resolveSelection(selection ?? null, ds.shape, this.metadata.datasets?.[name]);
    // The result is one caller-owned typed array: refuse what JS cannot hold before allocating.
    if (opts.f16 !== undefined && opts.f16 !== 'float32' && opts.f16 !== 'float16') {
      throw new TetQueryError('TET_QUERY_INVALID', `read option f16 must be 'float32' or 'float16', found ${JSON.stringify(opts.f16)}`);
    }
    const float16 = opts.f16 === 'float16' && ds.dtype === 'f16';
    const F16 = float16ArrayCtor();
    if (float16 && !F16) {
      throw new TetQueryError('TET_QUERY_UNSUPPORTED',
        `read option f16: 'float16' needs Float16Array, which Node ${process.versions.node} does not have (Node 24+ does); read as 'float32'`);
    }
    const spec = readOutputSpec(ds.dtype, box.elementCount, float16);
    checkOutput(spec, `read of ${name}`);
    const plan = encodePlan({
      datasetId: ds.id, start: box.axes.map((r) => r.start), step: box.axes.map((r) => r.step), count: box.shape,
      ...(box.indexed ? { indices: box.axes.map((r) => r.indices ?? null) } : {}),
      op: 'none', reduceAxes: [], strategy: 'capped_in_memory', ioMode: 'parallel_chunks',
      previewMax: box.elementCount,
      ...(float16 ? { f16Raw: true } : {}),
    });
    const handle = this.native;
    const output = allocateOutput(spec, `read of ${name}`);
    // Native pool threads write the selection straight into `output`; it resolves with it.
    const data = await runNative(opts.signal, (token) => binding().execute(handle, plan, token, output), opts.onProgress);
    if (float16 && F16) return { data: new F16(output.buffer, output.byteOffset, output.length), shape: box.shape };
    return { data, shape: box.shape };
  }

  /** Runs a query document (JSON text, TOML text or object); see lib/query. */
  query(input: QueryInput, opts?: QueryOptions): ReturnType<typeof runQuery> {
    return runQuery(this, input, opts);
  }

  /**
   * Runs shard `opts.shard = [i, n]` of a query and resolves with its partial state (bytes for
   * mergePartials, which returns the same response as query()); see lib/run/shard.ts.
   */
  queryPartial(input: QueryInput, opts: QueryPartialOptions): Promise<Uint8Array> {
    return runQueryPartial(this, input, opts);
  }

  /**
   * Stored bytes of each chunk of dataset `datasetId`, row-major by grid coordinates, read from
   * the chunk index on first use (queries need it only for partial selections of datasets with
   * zstd chunks: read_plan.total_stored_bytes). TET_IO_FILE_CHANGED if the file changed since open.
   */
  chunkStoredBytes(datasetId: number): Float64Array {
    if (!this.storedSizes) this.storedSizes = readStoredSizes(this.path, this.layout, this.datasets);
    const sizes = this.storedSizes.get(datasetId);
    if (!sizes) throw new TetQueryError('TET_QUERY_UNKNOWN_DATASET', `no dataset with id ${datasetId} in ${this.path}`);
    return sizes;
  }

  /** Plans a query without executing it. */
  plan(input: Parameters<typeof planQuery>[1]): ReturnType<typeof planQuery> {
    return planQuery(this, input);
  }

  /**
   * The tables stored in the file (axis tables and standalone ones; [] when none), read once.
   * Throws TET_CELLS_INVALID when the file's tables region is malformed (its tensors stay
   * readable).
   */
  get tables(): readonly TableInfo[] {
    this.tableList ??= Object.freeze(listTables(binding(), this.native));
    return this.tableList;
  }

  /** One table; `{ encodings: true }` also lists each column's encodings (validating every block). */
  table(name: string, opts: { encodings?: boolean } = {}): TableInfo {
    if (opts.encodings) {
      // Listing encodings validates every block of every table: once per file, however many tables are asked for.
      this.tableListEncodings ??= Object.freeze(listTables(binding(), this.native, true));
      return findTable(this.tableListEncodings, name);
    }
    return findTable(this.tables, name);
  }

  /**
   * Rows [start, stop) of one column, decoded off the JS thread: `values` as Uint8Array (bool),
   * BigInt64Array (int, timestamp, time µs), Int32Array (date, days since 1970-01-01),
   * Float64Array (float) or string[] (str), and `valid` (1 = present) when the range has nulls.
   */
  readColumn(table: string, column: string, opts: ReadColumnOptions = {}): Promise<ColumnValues> {
    try {
      return readColumn(binding(), this.native, findTable(this.tables, table), column, opts);
    } catch (err) {
      return Promise.reject(err instanceof TetError ? err : toTetError(err));
    }
  }

  /** A table (or a row range of it, or some of its columns) as an Apache Arrow Table. */
  async toArrow(table: string, opts: ReadColumnOptions & { columns?: string[] } = {}): Promise<import('apache-arrow').Table> {
    const { tableToArrow } = await import('./tables/arrow');
    const t = findTable(this.tables, table);
    return tableToArrow(t, opts.columns ?? t.columns.map((c) => c.name), (c) => this.readColumn(table, c, opts));
  }

  /** console.log / util.inspect (also what a notebook prints): the path and each dataset's dtype and shape. */
  [inspect.custom](): string {
    const list = this.datasets.map((d) => `${d.name} ${d.dtype}[${d.shape.join(', ')}]`).join(', ');
    return `TetFile ${this.path} (${this.datasets.length} dataset${this.datasets.length === 1 ? '' : 's'}: ${list})`;
  }

  /** Releases the file. Idempotent; reads already running finish, new ones reject TET_IO_CLOSED. */
  close(): void {
    if (!this.handle) return;
    const handle = this.handle;
    this.handle = null;
    binding().closeFile(handle);
  }
}

// `await using f = await open(...)` where the runtime has explicit resource management.
const asyncDispose = (Symbol as unknown as { asyncDispose?: symbol }).asyncDispose;
if (asyncDispose) {
  Object.defineProperty(TetFile.prototype, asyncDispose, {
    value: async function disposeTetFile(this: TetFile) { this.close(); },
    configurable: true, writable: true,
  });
}

const INDEX_HEADER = 32;
const INDEX_ROW = 104;

/** Per dataset, each chunk's stored_byte_len (row-major grid order), from the chunk index. */
function readStoredSizes(path: string, layout: FileLayout, datasets: readonly DatasetInfo[]): Map<number, Float64Array> {
  const changed = (why: string) => new TetIoError('TET_IO_FILE_CHANGED', `${path} changed since it was opened: ${why}`);
  const out = new Map<number, Float64Array>(datasets.map((d) => [d.id, new Float64Array(d.chunkCount)]));
  if (layout.chunkIndexLength === 0) return out;
  let fd: number;
  try {
    fd = openFd(path, 'r');
  } catch (err) {
    throw new TetIoError('TET_IO_OPEN', `cannot open ${path} to read its chunk index: ${(err as Error).message}`, { cause: err });
  }
  try {
    const len = fstatSync(fd).size;
    if (len !== layout.fileLen) throw changed(`length was ${layout.fileLen} bytes, now ${len}`);
    const buf = Buffer.alloc(layout.chunkIndexLength);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, layout.chunkIndexOffset + got);
      if (n === 0) break;
      got += n;
    }
    if (got !== buf.length || buf.toString('latin1', 0, 4) !== 'TIDX') throw changed('the chunk index no longer reads back');
    const rows = Number(buf.readBigUInt64LE(8));
    if (INDEX_HEADER + rows * INDEX_ROW !== buf.length) throw changed('the chunk index no longer reads back');
    const byId = new Map(datasets.map((d) => [d.id, d]));
    for (let r = 0; r < rows; r++) {
      const at = INDEX_HEADER + r * INDEX_ROW;
      const d = byId.get(Number(buf.readBigUInt64LE(at)));
      if (!d) throw changed(`chunk index row ${r} names an unknown dataset`);
      let k = 0;
      for (let a = 0; a < d.grid.length; a++) k = k * d.grid[a] + Number(buf.readBigUInt64LE(at + 8 + 8 * a));
      if (!(k < d.chunkCount)) throw changed(`chunk index row ${r} lies outside its dataset's grid`);
      out.get(d.id)![k] = Number(buf.readBigUInt64LE(at + 88));
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

function wrapNative<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw toTetError(err);
  }
}

function datasetInfoOf(d: NativeCatalog['datasets'][number], id: number): DatasetInfo {
  const dtype = DTYPE_BY_TAG[d.dtype];
  if (!dtype) throw new TetError('TET_INTERNAL', `native catalog reports dtype tag ${d.dtype} for ${d.name}`);
  return {
    name: d.name, id, dtype, shape: d.shape, chunkShape: d.chunkShape, grid: d.grid,
    chunkCount: d.chunkCount, codecs: { raw: d.rawChunks, zstd: d.zstdChunks },
    logicalBytes: d.logicalBytes, storedBytes: d.storedBytes,
  };
}

function parseFooter(catalog: NativeCatalog): { metadata: FileMetadata; history: HistoryRow[] } {
  const f = catalog.footer;
  // With verifyFooter=false a corrupt footer arrives as empty strings; the core validated the rest.
  const metadata = f.metadataJson ? (JSON.parse(f.metadataJson) as FileMetadata) : {};
  let history: HistoryRow[] = [];
  if (f.historyJson) {
    const doc = JSON.parse(f.historyJson) as { history?: unknown };
    if (Array.isArray(doc.history)) history = doc.history.map(historyRowOf);
  }
  return { metadata, history };
}

function historyRowOf(row: unknown): HistoryRow {
  if (Array.isArray(row)) return { op: String(row[0] ?? ''), source: String(row[1] ?? ''), at: String(row[2] ?? '') };
  if (row && typeof row === 'object') {
    const r = row as Record<string, unknown>;
    const out: HistoryRow = { op: String(r.op ?? ''), source: String(r.source ?? ''), at: String(r.at ?? '') };
    if (Array.isArray(r.parents)) out.parents = r.parents;
    if (r.params && typeof r.params === 'object') out.params = r.params as Record<string, unknown>;
    return out;
  }
  return { op: String(row), source: '', at: '' };
}
