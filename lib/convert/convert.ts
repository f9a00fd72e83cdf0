// convert(src, out): every numeric array of an HDF5 / NetCDF / Zarr source becomes a .tet dataset
// named by its path, tile by tile (one slab of the source in memory at a time), with dim names,
// coordinate labels, attributes, axis tables from the 1-D variables (axis_tables.ts) and a
// "convert" history row. The output appears atomically.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { errorClassFor, TetError } from '../errors';
import { ProgressThrottle } from '../progress';
import { DTYPE_SIZE, type CoordLabels, type DatasetMetadata, type DTypeName } from '../types';
import { TetWriter } from '../writer';
import { jsonNumber } from './attrs';
import { writeAxisTables } from './axis_tables';
import { f16BitsToNumber } from './dtype';
import { chooseChunkShape, DEFAULT_SLAB_BYTES, gridCoords, slabAxes } from './chunking';
import { detectSourceDetail } from './detect';
import { convertError, describe } from './errors';
import { nameFilter } from './glob';
import { openHdf5 } from './hdf5';
import { openNetcdfClassic } from './netcdf3';
import type { ConvertedDataset, ConvertOptions, ConvertProgress, ConvertReport, OpenOptions, SourceReader, SourceVariable } from './types';
import { applyUnpack, unpackedAttrs, unpackPlan, type UnpackPlan } from './unpack';
import { convertTabular, tabularFormatOf } from './tabular_convert';
import { openZarr } from './zarr';

/** The first bytes of a regular file (magic numbers), or none for a directory / unreadable path. */
function readHead(src: string): Buffer {
  try {
    const fd = fs.openSync(src, 'r');
    try {
      const head = Buffer.alloc(8);
      return head.subarray(0, fs.readSync(fd, head, 0, 8, 0));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return Buffer.alloc(0);
  }
}

/** Coordinate vectors longer than this stay out of the footer metadata. */
const MAX_COORD_LABELS = 1_000_000;
/** Slabs handed to the writer but not yet written; bounds memory held by the write queue. */
const MAX_SLABS_IN_FLIGHT = 2;

/** Opens a source of any supported kind (detected by content; by extension while the content
 *  cannot be read yet, and then a failing reader says so). */
export async function openSource(src: string, opts: OpenOptions = {}): Promise<SourceReader> {
  const { kind, by } = detectSourceDetail(src);
  try {
    switch (kind) {
      case 'zarr3': return await openZarr(src, 3, opts);
      case 'zarr2': return await openZarr(src, 2, opts);
      case 'netcdf3': return await openNetcdfClassic(src);
      default: return await openHdf5(src, opts);
    }
  } catch (err) {
    if (by === 'extension' && err instanceof TetError) {
      const Cls = errorClassFor(err.code);
      throw new Cls(err.code, `${err.message} (format ${kind} taken from the file extension: the content could not be read yet)`,
        { cause: err, ...(err.detail ? { detail: err.detail } : {}) });
    }
    throw err;
  }
}

interface PlannedDataset {
  variable: SourceVariable;
  dtype: DTypeName;
  chunkShape: number[];
  unpack: UnpackPlan | null;
  meta: DatasetMetadata;
  report: ConvertedDataset;
}

function validateOptions(opts: ConvertOptions): void {
  const bad = (msg: string) => convertError('TET_CONVERT_BAD_OPTION', msg);
  if (opts.chunk !== undefined && (!Array.isArray(opts.chunk) || opts.chunk.length < 1 || opts.chunk.length > 8
    || opts.chunk.some((n) => !Number.isSafeInteger(n) || n < 1))) {
    throw bad(`chunk must be 1..8 positive integers, got ${JSON.stringify(opts.chunk)}`);
  }
  if (opts.codec !== undefined && !['raw', 'zstd', 'auto'].includes(opts.codec)) {
    throw bad(`codec must be raw, zstd or auto, got ${JSON.stringify(opts.codec)}`);
  }
  if (opts.level !== undefined && (!Number.isInteger(opts.level) || opts.level < -7 || opts.level > 22)) {
    throw bad(`level must be an integer in -7..22, got ${opts.level}`);
  }
  if (opts.slabBytes !== undefined && !(opts.slabBytes > 0)) throw bad(`slabBytes must be positive, got ${opts.slabBytes}`);
}

async function coordLabels(reader: SourceReader, v: SourceVariable, notice: (m: string) => void): Promise<(string | number)[] | null> {
  if (v.shape[0] > MAX_COORD_LABELS) {
    notice(`${v.name}: ${v.shape[0]} coordinate labels exceed ${MAX_COORD_LABELS}; labels not stored`);
    return null;
  }
  const data = await reader.read(v, [0], [v.shape[0]]);
  if (v.dtype === 'f16') return Array.from(data as Uint16Array, f16BitsToNumber).map(jsonNumber);
  return Array.from(data as ArrayLike<number | bigint>, jsonNumber);
}


async function planDatasets(reader: SourceReader, opts: ConvertOptions, notice: (m: string) => void,
  skipped: ConvertReport['skipped']): Promise<PlannedDataset[]> {
  const keep = nameFilter(opts.include, opts.exclude);
  const planned: PlannedDataset[] = [];
  for (const v of reader.variables) {
    if (v.hidden || !keep(v.name)) continue;
    const empty = v.shape.findIndex((n) => n === 0);
    if (!v.skipReason && empty >= 0) {
      v.skipReason = `0-length axis ${v.dimNames?.[empty] ?? empty} (shape ${v.shape.join('x')})`;
      v.skipCode = 'TET_CONVERT_EMPTY';
    }
    if (v.skipReason || !v.dtype) {
      const reason = v.skipReason ?? `unsupported element type (${v.sourceType})`;
      skipped.push({ name: v.name, reason, ...(v.skipCode ? { code: v.skipCode } : {}), shape: v.shape.slice() });
      notice(`skipped ${v.name}: ${reason}`);
      continue;
    }
    const up = opts.unpack ? unpackPlan(v) : null;
    const dtype: DTypeName = up ? up.dtype : v.dtype;
    if (opts.chunk && opts.chunk.length !== v.shape.length) {
      notice(`${v.name}: --chunk has ${opts.chunk.length} axes, the dataset ${v.shape.length}; default tiles used`);
    }
    const { chunkShape } = chooseChunkShape(v.shape, dtype, v.chunkShape, opts.chunk, opts.targetChunkBytes);
    const attrs = up ? unpackedAttrs(v.attrs, up) : { ...v.attrs };
    const meta: DatasetMetadata = {};
    if (v.dimNames) meta.dim_names = v.dimNames.slice();
    const coords: Record<string, CoordLabels> = {};
    for (let d = 0; d < v.shape.length; d++) {
      const cv = v.coordVars[d];
      const inline = v.inlineCoords?.[d];
      if ((!cv || !cv.dtype) && !inline) continue;
      const labels = cv && cv.dtype ? await coordLabels(reader, cv, notice) : inline!;
      if (labels) coords[v.dimNames?.[d] ?? String(d)] = { labels };
    }
    if (Object.keys(coords).length) meta.coords = coords;
    if (Object.keys(attrs).length) meta.attrs = attrs;
    planned.push({
      variable: v, dtype, chunkShape, unpack: up, meta,
      report: { name: v.name, sourceType: v.sourceType, dtype, shape: v.shape.slice(), chunkShape,
        dimNames: v.dimNames, coords: Object.keys(coords), unpacked: up !== null },
    });
  }
  return planned;
}

/**
 * Converts `src` (HDF5, NetCDF-4, NetCDF classic, Zarr v2/v3) into the .tet file `out`.
 * Nothing is left at `out` (or beside it) when it fails.
 */
export async function convert(src: string, out: string, opts: ConvertOptions = {}): Promise<ConvertReport> {
  validateOptions(opts);
  const notices: string[] = [];
  const notice = (m: string) => { notices.push(m); opts.onNotice?.(m); };
  const tabular = tabularFormatOf(src, readHead(src));
  if (tabular) {
    const report = await convertTabular(src, out, tabular, opts, notice);
    return { ...report, notices };
  }
  const keep = nameFilter(opts.include, opts.exclude);
  const reader = await openSource(src, { keep, followExternalLinks: opts.followExternalLinks ?? false, notice });
  const skipped: ConvertReport['skipped'] = [];
  let writer: TetWriter | null = null;
  try {
    const planned = await planDatasets(reader, opts, notice, skipped);
    const empty = skipped.filter((s) => s.code === 'TET_CONVERT_EMPTY');
    if (planned.length === 0 && empty.length === 0) {
      const filtered = opts.include?.length || opts.exclude?.length ? ' after --include/--exclude' : '';
      throw convertError('TET_CONVERT_NO_DATASETS',
        `${src}: no numeric array to convert${filtered} (${reader.variables.length} arrays found, ${skipped.length} unsupported)`);
    }
    writer = await TetWriter.create(out);
    const codec = opts.codec ?? 'auto';
    const level = opts.level ?? 3;
    for (const p of planned) {
      writer.addDataset({ name: p.variable.name, dtype: p.dtype, shape: p.variable.shape, chunkShape: p.chunkShape, codec, level });
    }
    for (const p of planned) if (Object.keys(p.meta).length) writer.setMetadata(p.variable.name, p.meta);
    const fileMeta = fileMetadata(reader, empty);
    if (Object.keys(fileMeta).length) writer.setFileMetadata(fileMeta);
    writer.addHistory({
      op: 'convert', source: path.resolve(src), at: new Date().toISOString(),
      params: {
        format: reader.kind, codec, level, unpack: opts.unpack ?? false,
        ...(opts.include?.length ? { include: opts.include } : {}),
        ...(opts.exclude?.length ? { exclude: opts.exclude } : {}),
        ...(opts.chunk ? { chunk: opts.chunk } : {}),
        ...(opts.followExternalLinks ? { follow_external_links: true } : {}),
        ...(opts.tables === false ? { tables: false } : {}),
      },
    });
    const progress = opts.onProgress ? new ProgressThrottle<ConvertProgress>(opts.onProgress) : null;
    await writeAll(reader, writer, planned, opts, progress);
    const tables = opts.tables === false ? []
      : await writeAxisTables(reader, writer, planned.map((p) => p.variable), keep, opts.unpack ?? false, notice);
    await writer.commit();
    const last = planned.at(-1);
    if (progress && last) {
      const t = totals(planned);
      progress.finish(t.bytes, { dataset: last.variable.name, chunksDone: t.chunks, chunksTotal: t.chunks });
    }
    return { source: src, kind: reader.kind, output: out, datasets: planned.map((p) => p.report), skipped, notices,
      ...(tables.length ? { tables } : {}) };
  } catch (err) {
    writer?.abort();
    if (err instanceof TetError) throw err;
    throw convertError('TET_CONVERT_FAILED', `converting ${src} failed: ${describe(err)}`, err);
  } finally {
    reader.close();
  }
}

/**
 * File-level metadata: the root attributes (`attrs`), the attributes of every other group
 * (`group_attrs`, keyed by group path) and the variables that have a 0-length axis, which a .tet
 * dataset cannot hold (`empty_datasets`, keyed by name: shape, source type, dim names, attrs).
 */
function fileMetadata(reader: SourceReader, empty: ConvertReport['skipped']): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  if (Object.keys(reader.globalAttrs).length) meta.attrs = reader.globalAttrs;
  const groups = Object.entries(reader.groupAttrs ?? {}).filter(([, a]) => Object.keys(a).length);
  if (groups.length) meta.group_attrs = Object.fromEntries(groups);
  if (empty.length) {
    const byName = new Map(reader.variables.map((v) => [v.name, v]));
    meta.empty_datasets = Object.fromEntries(empty.map((e) => {
      const v = byName.get(e.name)!;
      return [e.name, {
        shape: v.shape.slice(), source_type: v.sourceType,
        ...(v.dtype ? { dtype: v.dtype } : {}),
        ...(v.dimNames ? { dim_names: v.dimNames.slice() } : {}),
        ...(Object.keys(v.attrs).length ? { attrs: v.attrs } : {}),
      }];
    }));
  }
  return meta;
}

/** Logical bytes (as written) and tiles of the planned datasets: the totals of the progress events. */
function totals(planned: PlannedDataset[]): { bytes: number; chunks: number } {
  return {
    bytes: planned.reduce((s, p) => s + p.variable.shape.reduce((a, b) => a * b, 1) * DTYPE_SIZE[p.dtype], 0),
    chunks: planned.reduce((s, p) => s + p.variable.shape.reduce((a, n, d) => a * Math.ceil(n / p.chunkShape[d]), 1), 0),
  };
}

async function writeAll(reader: SourceReader, writer: TetWriter, planned: PlannedDataset[], opts: ConvertOptions,
  progress: ProgressThrottle<ConvertProgress> | null): Promise<void> {
  const { bytes: bytesTotal, chunks: chunksTotal } = totals(planned);
  let bytesDone = 0;
  let chunksDone = 0;
  const writes = new WriteQueue(MAX_SLABS_IN_FLIGHT);
  try {
  for (const p of planned) {
    const v = p.variable;
    const nd = v.shape.length;
    const grid = v.shape.map((n, d) => Math.ceil(n / p.chunkShape[d]));
    const k = slabAxes(v.shape, p.chunkShape, p.dtype, opts.slabBytes ?? DEFAULT_SLAB_BYTES);
    for (const outer of gridCoords(grid.slice(0, k))) {
      const start = v.shape.map((_, d) => (d < k ? outer[d] * p.chunkShape[d] : 0));
      const count = v.shape.map((n, d) => (d < k ? Math.min(p.chunkShape[d], n - start[d]) : n));
      let slab = await reader.read(v, start, count);
      const expected = count.reduce((a, b) => a * b, 1);
      if (slab.length !== expected) {
        throw convertError('TET_CONVERT_READ', `${v.name}: the source returned ${slab.length} elements for a slab of ${expected} (count ${count.join(',')})`);
      }
      if (p.unpack) slab = applyUnpack(slab, p.unpack);
      // One native call per slab: its tiles are cut and compressed in parallel while the next
      // slab is read here.
      const tileCount = grid.map((g, d) => (d < k ? 1 : g));
      await writes.add(writer.writeSlab(v.name, [...outer, ...new Array<number>(nd - k).fill(0)], tileCount, slab));
      chunksDone += tileCount.reduce((a, b) => a * b, 1);
      bytesDone += slab.length * DTYPE_SIZE[p.dtype];
      progress?.update(bytesDone, bytesTotal, { dataset: v.name, chunksDone, chunksTotal });
    }
  }
  } finally {
    // Every write is awaited before the caller commits or aborts: none rejects unobserved.
    await writes.settle();
  }
  writes.throwIfFailed();
}

/** At most `limit` writes in flight; the first failure is kept and thrown by the next add(). */
class WriteQueue {
  private readonly pending = new Set<Promise<void>>();
  private failure: { error: unknown } | null = null;
  constructor(private readonly limit: number) {}

  async add(write: Promise<void>): Promise<void> {
    const tracked: Promise<void> = write.then(
      () => { this.pending.delete(tracked); },
      (error) => { this.pending.delete(tracked); this.failure ??= { error }; });
    this.pending.add(tracked);
    while (this.pending.size >= this.limit && !this.failure) await Promise.race(this.pending);
    this.throwIfFailed();
  }

  async settle(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }
}
