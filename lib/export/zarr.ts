// exportZarr(tetPath, outDir): a .tet file as a Zarr v3 directory. One array per dataset (a/b/c
// names become nested groups), codecs bytes(little) + zstd, clipped edge tiles padded with the
// fill value, dimension_names, attributes, and coordinate labels as 1-D arrays. The directory is
// built beside outDir and renamed into place.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { COORDINATE_ROLE_ATTR, COORDS_ATTR, float32ToFloat16Bits } from '../convert/zarr';
import { convertError, describe } from '../convert/errors';
import { TetError } from '../errors';
import { open } from '../file';
import type { DatasetInfo, DatasetMetadata, DTypeName, TetTypedArray } from '../types';
import { gridCoords } from '../convert/chunking';
import { storageArray, storageBytes } from '../convert/dtype';
import { groupPaths, legalizeSegment, NAME_ATTR, zarrNodePaths } from './names';
import { importEsm } from '../esm';

/** Options of {@link exportZarr} (the `tet export` flags). */
export interface ExportZarrOptions {
  /** Dataset names to export (default: all). */
  datasets?: string[];
  /** 'zstd' (default) or 'raw' (bytes codec only). */
  codec?: 'zstd' | 'raw';
  /** zstd level (default 3). */
  level?: number;
  /** Replace an existing outDir. */
  overwrite?: boolean;
  onProgress?: (event: { dataset: string; chunksDone: number; chunksTotal: number }) => void;
}

/** An `empty_datasets` entry of the file metadata (written by `tet convert`). */
interface EmptyDataset { shape: number[]; dtype?: string; dim_names?: string[]; attrs?: Record<string, unknown> }

/** What {@link exportZarr} returns: the arrays and coordinate arrays written. */
export interface ExportZarrReport {
  output: string;
  arrays: { name: string; path: string; dtype: DTypeName; shape: number[]; chunkShape: number[] }[];
  coordinates: { path: string; length: number }[];
}

const ZARR_TYPE: Record<DTypeName, string> = {
  f32: 'float32', f64: 'float64', i32: 'int32', i64: 'int64', u8: 'uint8', u16: 'uint16', i16: 'int16',
  u32: 'uint32', f16: 'float16', u64: 'uint64',
};
const INT_RANGE: Partial<Record<DTypeName, [number, number]>> = {
  i32: [-(2 ** 31), 2 ** 31 - 1], u8: [0, 255], u16: [0, 65535], i16: [-32768, 32767], u32: [0, 2 ** 32 - 1],
  i64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER], u64: [0, Number.MAX_SAFE_INTEGER],
};

/** Zarr fill_value: the _FillValue attribute when it is representable in the dtype, else 0. */
function fillValueOf(dtype: DTypeName, attrs: Record<string, unknown> | undefined): number | string {
  let raw = attrs?._FillValue;
  if (Array.isArray(raw)) raw = raw[0];
  const float = dtype === 'f16' || dtype === 'f32' || dtype === 'f64';
  if (float && typeof raw === 'string' && ['NaN', 'Infinity', '-Infinity'].includes(raw)) return raw;
  if (typeof raw !== 'number' || !Number.isFinite(raw)) return 0;
  if (float) return raw;
  const range = INT_RANGE[dtype]!;
  return Number.isInteger(raw) && raw >= range[0] && raw <= range[1] ? raw : 0;
}

/** A full chunk of `dtype` filled with the Zarr fill value, in storage form (f16 as bit patterns). */
function filledChunk(dtype: DTypeName, length: number, fill: number | string): TetTypedArray {
  const out = storageArray(dtype, length);
  const x = Number(fill);
  if (dtype === 'f16') (out as Uint16Array).fill(float32ToFloat16Bits(x));
  else if (out instanceof BigInt64Array || out instanceof BigUint64Array) (out as BigInt64Array).fill(BigInt(x));
  else (out as Float64Array).fill(x);
  return out;
}

/** Tile values as read from the file -> storage form (f16 reads widen to Float32Array). */
function toStorageForm(dtype: DTypeName, data: TetTypedArray): TetTypedArray {
  if (dtype !== 'f16' || data instanceof Uint16Array) return data;
  const out = new Uint16Array(data.length);
  for (let i = 0; i < data.length; i++) out[i] = float32ToFloat16Bits((data as Float32Array)[i]);
  return out;
}

/** Copies a clipped tile (row-major, `extent`) into the corner of a full chunk (row-major, `chunk`). */
function padInto(dst: TetTypedArray, chunk: number[], src: TetTypedArray, extent: number[]): void {
  const nd = chunk.length;
  const rowLen = extent[nd - 1];
  const rows = extent.slice(0, nd - 1).reduce((a, b) => a * b, 1);
  const idx = new Array<number>(Math.max(nd - 1, 0)).fill(0);
  for (let r = 0; r < rows; r++) {
    let off = 0;
    for (let d = 0; d < nd - 1; d++) off = (off + idx[d]) * chunk[d + 1];
    (dst as Float64Array).set((src as Float64Array).subarray(r * rowLen, (r + 1) * rowLen), off);
    for (let d = nd - 2; d >= 0; d--) {
      if (++idx[d] < extent[d]) break;
      idx[d] = 0;
    }
  }
}

type Encoder = (bytes: Uint8Array) => Promise<Uint8Array>;
async function zstdEncoder(level: number): Promise<Encoder> {
  const Zstd = (await importEsm<typeof import('numcodecs/zstd')>('numcodecs/zstd')).default;
  const codec = Zstd.fromConfig({ id: 'zstd', level });
  return async (bytes) => codec.encode(bytes);
}

function writeJson(file: string, doc: unknown): void {
  fs.writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
}

function arrayDoc(shape: number[], chunkShape: number[], dtype: DTypeName, fill: number | string, codec: 'zstd' | 'raw',
  level: number, attributes: Record<string, unknown>, dimNames?: string[]): Record<string, unknown> {
  const codecs: unknown[] = [{ name: 'bytes', configuration: { endian: 'little' } }];
  if (codec === 'zstd') codecs.push({ name: 'zstd', configuration: { level, checksum: false } });
  return {
    zarr_format: 3, node_type: 'array', shape, data_type: ZARR_TYPE[dtype],
    chunk_grid: { name: 'regular', configuration: { chunk_shape: chunkShape } },
    chunk_key_encoding: { name: 'default', configuration: { separator: '/' } },
    fill_value: fill, codecs, attributes,
    ...(dimNames ? { dimension_names: dimNames } : {}),
  };
}

/** Creates the groups above `arrayPath`, with the source's group attributes where the group path
 *  is the one the attributes were recorded under. */
function ensureGroups(root: string, arrayPath: string, groupAttrs: Record<string, Record<string, unknown>> = {}): void {
  const parts = arrayPath.split('/');
  let dir = root;
  for (let i = 0; i < parts.length - 1; i++) {
    dir = path.join(dir, parts[i]);
    if (!fs.existsSync(path.join(dir, 'zarr.json'))) {
      fs.mkdirSync(dir, { recursive: true });
      const attrs = groupAttrs[parts.slice(0, i + 1).join('/')];
      writeJson(path.join(dir, 'zarr.json'), { zarr_format: 3, node_type: 'group',
        attributes: attrs && typeof attrs === 'object' ? attrs : {} });
    }
  }
}

/** Exports datasets of `tetPath` to the Zarr v3 directory `outDir`. */
export async function exportZarr(tetPath: string, outDir: string, opts: ExportZarrOptions = {}): Promise<ExportZarrReport> {
  const codec = opts.codec ?? 'zstd';
  const level = opts.level ?? 3;
  if (codec !== 'zstd' && codec !== 'raw') throw convertError('TET_EXPORT_BAD_OPTION', `codec must be zstd or raw, got ${JSON.stringify(codec)}`);
  if (!Number.isInteger(level) || level < -7 || level > 22) throw convertError('TET_EXPORT_BAD_OPTION', `level must be an integer in -7..22, got ${level}`);
  if (fs.existsSync(outDir) && !opts.overwrite) {
    throw convertError('TET_EXPORT_OUTPUT_EXISTS', `${outDir} already exists (pass overwrite / --force to replace it)`);
  }
  const file = await open(tetPath);
  const tmp = `${outDir.replace(/[\\/]+$/, '')}.tmp-${process.pid}-${Date.now().toString(36)}`;
  try {
    const names = opts.datasets?.length ? opts.datasets : file.datasets.map((d) => d.name);
    const selected: DatasetInfo[] = names.map((n) => {
      const ds = file.datasets.find((d) => d.name === n);
      if (!ds) throw convertError('TET_EXPORT_UNKNOWN_DATASET', `dataset ${JSON.stringify(n)} is not in ${tetPath} (has ${file.datasets.map((d) => d.name).join(', ')})`);
      return ds;
    });
    // Variables with a 0-length axis that `tet convert` recorded (a .tet dataset cannot hold them)
    // come back as empty Zarr arrays when the whole file is exported.
    const emptyMeta = (opts.datasets?.length ? {} : file.metadata.empty_datasets ?? {}) as Record<string, EmptyDataset>;
    const empties = Object.entries(emptyMeta).filter(([n, e]) => !selected.some((d) => d.name === n)
      && Array.isArray(e?.shape) && e.shape.length >= 1 && e.shape.every((x) => Number.isSafeInteger(x) && x >= 0)
      && typeof e.dtype === 'string' && e.dtype in ZARR_TYPE);
    const nodePath = zarrNodePaths([...selected.map((d) => d.name), ...empties.map(([n]) => n)]);
    const encode = codec === 'zstd' ? await zstdEncoder(level) : async (b: Uint8Array) => b;
    fs.mkdirSync(tmp, { recursive: true });
    const rootAttrs = file.metadata.attrs && typeof file.metadata.attrs === 'object' ? file.metadata.attrs as Record<string, unknown> : {};
    writeJson(path.join(tmp, 'zarr.json'), { zarr_format: 3, node_type: 'group', attributes: rootAttrs });
    const groupAttrs = (file.metadata.group_attrs && typeof file.metadata.group_attrs === 'object'
      ? file.metadata.group_attrs : {}) as Record<string, Record<string, unknown>>;

    const report: ExportZarrReport = { output: outDir, arrays: [], coordinates: [] };
    const datasetPaths = new Map(selected.map((d) => [nodePath.get(d.name)!, d]));
    const groups = groupPaths(nodePath.values());
    for (const [name, e] of empties) {
      const node = nodePath.get(name)!;
      const attributes: Record<string, unknown> = { ...(e.attrs ?? {}) };
      if (node !== name) attributes[NAME_ATTR] = name;
      ensureGroups(tmp, node, groupAttrs);
      const dir = path.join(tmp, ...node.split('/'));
      fs.mkdirSync(dir, { recursive: true });
      const dtype = e.dtype as DTypeName;
      writeJson(path.join(dir, 'zarr.json'), arrayDoc(e.shape, e.shape.map((n) => Math.max(1, n)), dtype,
        fillValueOf(dtype, e.attrs), codec, level, attributes,
        Array.isArray(e.dim_names) && e.dim_names.length === e.shape.length ? e.dim_names : undefined));
      report.arrays.push({ name, path: node, dtype, shape: e.shape.slice(), chunkShape: e.shape.map((n) => Math.max(1, n)) });
    }
    const writtenCoords = new Map<string, string>(); // array path -> JSON of labels
    const chunksTotal = selected.reduce((s, d) => s + d.chunkCount, 0);
    let chunksDone = 0;

    for (const ds of selected) {
      const meta: DatasetMetadata = file.metadata.datasets?.[ds.name] ?? {};
      const fill = fillValueOf(ds.dtype, meta.attrs);
      const attributes: Record<string, unknown> = { ...(meta.attrs ?? {}) };
      const node = nodePath.get(ds.name)!;
      if (node !== ds.name) attributes[NAME_ATTR] = ds.name;
      const coordRefs = await exportCoords(tmp, ds, node, meta, datasetPaths, groups, writtenCoords, file, report, encode, codec, level);
      if (Object.keys(coordRefs).length) attributes[COORDS_ATTR] = coordRefs;
      ensureGroups(tmp, node, groupAttrs);
      const dir = path.join(tmp, ...node.split('/'));
      fs.mkdirSync(dir, { recursive: true });
      writeJson(path.join(dir, 'zarr.json'), arrayDoc(ds.shape, ds.chunkShape, ds.dtype, fill, codec, level, attributes, meta.dim_names));
      const full = ds.chunkShape.reduce((a, b) => a * b, 1);
      for (const coords of gridCoords(ds.grid)) {
        const selection = coords.map((c, d) => ({ start: c * ds.chunkShape[d], stop: Math.min((c + 1) * ds.chunkShape[d], ds.shape[d]) }));
        const extent = selection.map((s) => s.stop - s.start);
        const { data } = await file.read(ds.name, selection);
        let tile = toStorageForm(ds.dtype, data);
        if (tile.length !== full) {
          const padded = filledChunk(ds.dtype, full, fill);
          padInto(padded, ds.chunkShape, tile, extent);
          tile = padded;
        }
        const chunkDir = path.join(dir, 'c', ...coords.slice(0, -1).map(String));
        fs.mkdirSync(chunkDir, { recursive: true });
        fs.writeFileSync(path.join(chunkDir, String(coords[coords.length - 1])), await encode(storageBytes(tile)));
        chunksDone++;
        opts.onProgress?.({ dataset: ds.name, chunksDone, chunksTotal });
      }
      report.arrays.push({ name: ds.name, path: node, dtype: ds.dtype, shape: ds.shape.slice(), chunkShape: ds.chunkShape.slice() });
    }
    if (opts.overwrite && fs.existsSync(outDir)) fs.rmSync(outDir, { recursive: true, force: true });
    fs.renameSync(tmp, outDir);
    return report;
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (err instanceof TetError) throw err;
    throw convertError('TET_EXPORT_FAILED', `exporting ${tetPath} to ${outDir} failed: ${describe(err)}`, err);
  } finally {
    file.close();
  }
}

/**
 * Writes the coordinate labels of one dataset: numeric labels as 1-D arrays `<group>/<dim>` (xarray
 * convention; reused when an identical one or the dataset of that name already holds them), string
 * labels inline. Returns the `tetration_coords` attribute value.
 */
async function exportCoords(root: string, ds: DatasetInfo, node: string, meta: DatasetMetadata,
  datasetPaths: Map<string, DatasetInfo>, groups: Set<string>, written: Map<string, string>,
  file: Awaited<ReturnType<typeof open>>, report: ExportZarrReport, encode: Encoder,
  codec: 'zstd' | 'raw', level: number): Promise<Record<string, unknown>> {
  const refs: Record<string, unknown> = {};
  const group = node.includes('/') ? node.slice(0, node.lastIndexOf('/') + 1) : '';
  const base = node.slice(group.length);
  for (const [key, coord] of Object.entries(meta.coords ?? {})) {
    const labels = coord.labels;
    const axis = meta.dim_names?.indexOf(key) ?? -1;
    const dimName = legalizeSegment(axis >= 0 ? key : `${base}_axis${key}`);
    if (!labels.every((x) => typeof x === 'number')) {
      refs[key] = { labels };
      continue;
    }
    const nums = labels as number[];
    const json = JSON.stringify(nums);
    const candidates = [`${group}${dimName}`, `${group}${base}_${dimName}`, `${group}${base}_${dimName}_coord`];
    let chosen: string | null = null;
    for (const c of candidates) {
      if (written.get(c) === json) { chosen = c; break; }
      if (groups.has(c)) continue;
      const info = datasetPaths.get(c);
      if (info) {
        if (info.shape.length === 1 && info.shape[0] === nums.length) {
          const { data } = await file.read(info.name);
          const values = Array.from(data as ArrayLike<number | bigint>, Number);
          if (JSON.stringify(values) === json) { chosen = c; break; }
        }
        continue;
      }
      if (!written.has(c)) {
        const allInt = nums.every((x) => Number.isSafeInteger(x));
        const dtype: DTypeName = allInt ? 'i64' : 'f64';
        const values = allInt ? BigInt64Array.from(nums, (x) => BigInt(x)) : Float64Array.from(nums);
        ensureGroups(root, c);
        const dir = path.join(root, ...c.split('/'));
        fs.mkdirSync(path.join(dir, 'c'), { recursive: true });
        writeJson(path.join(dir, 'zarr.json'), arrayDoc([nums.length], [Math.max(1, nums.length)], dtype, 0, codec, level,
          { [COORDINATE_ROLE_ATTR]: 'coordinate' }, [dimName]));
        fs.writeFileSync(path.join(dir, 'c', '0'), await encode(storageBytes(values)));
        written.set(c, json);
        report.coordinates.push({ path: c, length: nums.length });
        chosen = c;
        break;
      }
    }
    refs[key] = chosen ? { array: chosen } : { labels };
  }
  return refs;
}
