// Zarr v3 and v2 directory sources through zarrita (which decodes blosc, zstd, gzip, ... and
// returns hyperslabs). Metadata (dimension_names, _ARRAY_DIMENSIONS, attributes) is read from the
// JSON documents directly.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DTypeName, TetTypedArray } from '../types';
import { toStorage } from './dtype';
import { dtypeFromNumpy, dtypeFromZarr3 } from './dtype';
import { convertError, describe } from './errors';
import type { OpenOptions, SourceReader, SourceVariable } from './types';

type Zarrita = typeof import('zarrita');
let zarritaLoaded: Promise<[Zarrita, typeof import('@zarrita/storage/fs').default]> | undefined;
function loadZarrita() {
  zarritaLoaded ??= Promise.all([import('zarrita'), import('@zarrita/storage/fs').then((m) => m.default)]);
  return zarritaLoaded;
}

/** Attribute written by `tet export` on arrays that only hold coordinate labels. */
export const COORDINATE_ROLE_ATTR = 'tetration_role';
/** Attribute written by `tet export`: per axis (dim name or axis index) the store path of the
 *  coordinate array (`{"array": "grp/time"}`) or the labels themselves (`{"labels": [...]}`). */
export const COORDS_ATTR = 'tetration_coords';
/** Attributes consumed by the reader (axis names, coordinates), not copied into dataset attrs. */
const INTERNAL_ATTRS = new Set(['_ARRAY_DIMENSIONS', COORDINATE_ROLE_ATTR, COORDS_ATTR]);

interface ZarrVariable extends SourceVariable {
  /** Store key of the array, '/'-prefixed ('/' for a root array). */
  key: string;
  version: 2 | 3;
  coordsAttr?: unknown;
  handle?: any;
}

function readJsonFile(file: string): any {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw convertError('TET_CONVERT_SOURCE_INVALID', `cannot parse Zarr metadata ${file}: ${describe(err)}`, err);
  }
}

function subdirectories(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name).sort();
}

function arrayVariable(rel: string, version: 2 | 3, meta: any, attrs: Record<string, unknown>, rootName: string): ZarrVariable {
  const dataType = version === 3 ? meta.data_type : meta.dtype;
  let dtype = version === 3 ? dtypeFromZarr3(dataType) : dtypeFromNumpy(String(dataType));
  const shape: number[] = Array.isArray(meta.shape) ? meta.shape.map(Number) : [];
  const chunkShape: number[] | null = version === 3
    ? (meta.chunk_grid?.name === 'regular' ? meta.chunk_grid.configuration?.chunk_shape ?? null : null)
    : meta.chunks ?? null;
  let skipReason: string | undefined;
  if (!dtype) skipReason = `unsupported element type (${JSON.stringify(dataType)})`;
  if (dtype === 'f16' && !(globalThis as any).Float16Array && !simpleCodecs(version, meta)) {
    skipReason = 'float16 with codecs other than bytes/zstd/gzip needs Float16Array (Node >= 24)';
    dtype = null;
  }
  if (version === 3 && meta.codecs?.some((c: any) => c?.name === 'sharding_indexed') && dtype === 'f16') {
    skipReason = 'float16 in sharded arrays is not supported';
    dtype = null;
  }
  if (!skipReason && shape.length === 0) skipReason = 'rank-0 (scalar) array';
  if (!skipReason && shape.length > 8) skipReason = `rank ${shape.length} exceeds 8`;
  const dimSource = version === 3 ? meta.dimension_names : attrs._ARRAY_DIMENSIONS;
  const dimNames = Array.isArray(dimSource) && dimSource.length === shape.length
    && dimSource.every((n: unknown) => typeof n === 'string' && n.length > 0) ? dimSource as string[] : null;
  const kept: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(attrs)) if (!INTERNAL_ATTRS.has(k)) kept[k] = v;
  return {
    name: rel || rootName, key: `/${rel}`, version, sourceType: String(dataType), dtype, skipReason, shape,
    chunkShape: Array.isArray(chunkShape) && chunkShape.length === shape.length ? chunkShape.map(Number) : null,
    dimNames, coordVars: [], attrs: kept, attrTypes: {}, coordsAttr: attrs[COORDS_ATTR],
    hidden: attrs[COORDINATE_ROLE_ATTR] === 'coordinate',
  };
}

/** bytes (+ zstd | gzip) pipelines, decodable without zarrita (used for float16 on Node < 24). */
function simpleCodecs(version: 2 | 3, meta: any): boolean {
  if (version === 2) return meta.filters == null && (meta.compressor == null || ['zstd', 'gzip', 'zlib'].includes(meta.compressor.id));
  const codecs: any[] = meta.codecs ?? [];
  return codecs.length >= 1 && codecs[0]?.name === 'bytes' && codecs.slice(1).every((c) => ['zstd', 'gzip'].includes(c?.name)) && codecs.length <= 2;
}

class ZarrReader implements SourceReader {
  readonly variables: ZarrVariable[] = [];
  globalAttrs: Record<string, unknown> = {};
  groupAttrs: Record<string, Record<string, unknown>> = {};
  constructor(readonly path: string, readonly kind: 'zarr3' | 'zarr2', private readonly zarr: Zarrita, private readonly store: any) {}

  static async open(src: string, version: 2 | 3, _opts: OpenOptions = {}): Promise<ZarrReader> {
    const [zarr, FileSystemStore] = await loadZarrita();
    const reader = new ZarrReader(src, version === 3 ? 'zarr3' : 'zarr2', zarr, new FileSystemStore(path.resolve(src)));
    reader.scan(version);
    return reader;
  }

  private scan(version: 2 | 3): void {
    const rootName = path.basename(path.resolve(this.path)).replace(/\.zarr$/i, '') || 'array';
    const walk = (dir: string, rel: string) => {
      if (version === 3) {
        const metaFile = path.join(dir, 'zarr.json');
        if (!fs.existsSync(metaFile)) return;
        const meta = readJsonFile(metaFile);
        if (meta.node_type === 'array') {
          this.variables.push(arrayVariable(rel, 3, meta, meta.attributes ?? {}, rootName));
          return;
        }
        if (rel === '' && meta.node_type === 'group') this.globalAttrs = meta.attributes ?? {};
        if (meta.node_type !== 'group') {
          throw convertError('TET_CONVERT_SOURCE_INVALID', `${metaFile}: expected node_type "group" or "array", found ${JSON.stringify(meta.node_type)}`);
        }
      } else {
        const attrsFile = path.join(dir, '.zattrs');
        const attrs = fs.existsSync(attrsFile) ? readJsonFile(attrsFile) : {};
        if (fs.existsSync(path.join(dir, '.zarray'))) {
          this.variables.push(arrayVariable(rel, 2, readJsonFile(path.join(dir, '.zarray')), attrs, rootName));
          return;
        }
        if (!fs.existsSync(path.join(dir, '.zgroup'))) return;
        if (rel === '') this.globalAttrs = attrs;
      }
      for (const sub of subdirectories(dir)) walk(path.join(dir, sub), rel ? `${rel}/${sub}` : sub);
    };
    walk(this.path, '');
    // xarray convention: the labels of dimension `x` are the 1-D array `x` of the same group (or the root).
    const byName = new Map(this.variables.map((v) => [v.name, v]));
    const usable = (c: ZarrVariable | undefined, d: number, v: ZarrVariable) =>
      c && !c.skipReason && c.shape.length === 1 && c.shape[0] === v.shape[d] ? c : null;
    for (const v of this.variables) {
      const group = v.name.includes('/') ? v.name.slice(0, v.name.lastIndexOf('/')) : '';
      v.coordVars = v.shape.map((_, d) => {
        const dn = v.dimNames?.[d];
        return dn ? usable(byName.get(group ? `${group}/${dn}` : dn) ?? byName.get(dn), d, v) : null;
      });
      const written = v.coordsAttr;
      if (written && typeof written === 'object' && !Array.isArray(written)) {
        v.inlineCoords = v.shape.map(() => null);
        for (const [key, spec] of Object.entries(written as Record<string, any>)) {
          const d = v.dimNames?.indexOf(key) ?? -1;
          const axis = d >= 0 ? d : /^\d+$/.test(key) ? Number(key) : -1;
          if (axis < 0 || axis >= v.shape.length) continue;
          if (typeof spec?.array === 'string') v.coordVars[axis] = usable(byName.get(spec.array), axis, v);
          else if (Array.isArray(spec?.labels) && spec.labels.length === v.shape[axis]) v.inlineCoords[axis] = spec.labels;
        }
      }
    }
  }

  async read(variable: SourceVariable, start: number[], count: number[]): Promise<TetTypedArray> {
    const v = variable as ZarrVariable;
    const dtype = v.dtype as DTypeName;
    try {
      if (dtype === 'f16' && !(globalThis as any).Float16Array) return await this.readRawFloat16(v, start, count);
      const zarr = this.zarr;
      v.handle ??= await (v.version === 3 ? zarr.open.v3 : zarr.open.v2)(zarr.root(this.store).resolve(v.key), { kind: 'array' });
      const chunk = await zarr.get(v.handle, start.map((s, d) => zarr.slice(s, s + count[d])));
      const data = chunk.data as unknown;
      if (data instanceof zarr.BoolArray) return new Uint8Array(data.buffer, data.byteOffset, data.length).slice();
      return toStorage(dtype, data as ArrayLike<number | bigint>);
    } catch (err) {
      throw convertError('TET_CONVERT_READ',
        `cannot read ${v.name} [start ${start.join(',')}, count ${count.join(',')}] from ${this.path}: ${describe(err)}`, err);
    }
  }

  /** float16 without Float16Array: decode the chunks' bytes (bytes + zstd/gzip) and keep the bit patterns. */
  private async readRawFloat16(v: ZarrVariable, start: number[], count: number[]): Promise<TetTypedArray> {
    const dir = path.join(this.path, ...v.key.split('/').filter(Boolean));
    const metaFile = v.version === 3 ? path.join(dir, 'zarr.json') : path.join(dir, '.zarray');
    const meta = readJsonFile(metaFile);
    const chunkShape = v.chunkShape ?? v.shape;
    const nd = v.shape.length;
    const out = new Uint16Array(count.reduce((a, b) => a * b, 1));
    const fill = float16Bits(meta.fill_value);
    const bigEndian = v.version === 3 ? meta.codecs[0]?.configuration?.endian === 'big' : String(meta.dtype).startsWith('>');
    const compressor: string | undefined = v.version === 3 ? meta.codecs[1]?.name : meta.compressor?.id;
    const sep = v.version === 3
      ? (meta.chunk_key_encoding?.configuration?.separator ?? (meta.chunk_key_encoding?.name === 'v2' ? '.' : '/'))
      : (meta.dimension_separator ?? '.');
    const prefix = v.version === 3 && meta.chunk_key_encoding?.name !== 'v2' ? ['c'] : [];
    const g0 = start.map((s, d) => Math.floor(s / chunkShape[d]));
    const g1 = start.map((s, d) => Math.floor((s + count[d] - 1) / chunkShape[d]));
    const idx = g0.slice();
    for (;;) {
      const file = path.join(dir, [...prefix, ...idx.map(String)].join(sep));
      let chunk: Uint16Array | null = null;
      if (fs.existsSync(file)) {
        let bytes: Uint8Array = fs.readFileSync(file);
        if (compressor === 'zstd') {
          const Zstd = (await import('numcodecs/zstd')).default;
          bytes = await Zstd.fromConfig({ id: 'zstd' }).decode(bytes);
        } else if (compressor === 'gzip' || compressor === 'zlib') {
          bytes = require('node:zlib').unzipSync(bytes);
        }
        const buf = Buffer.from(bytes);
        if (bigEndian) buf.swap16();
        chunk = new Uint16Array(buf.buffer, buf.byteOffset, buf.length / 2);
      }
      // Copy the intersection of this chunk with the requested block, element by element.
      const lo = idx.map((c, d) => Math.max(start[d], c * chunkShape[d]));
      const hi = idx.map((c, d) => Math.min(start[d] + count[d], (c + 1) * chunkShape[d]));
      const p = lo.slice();
      for (;;) {
        let src = 0, dst = 0;
        for (let d = 0; d < nd; d++) {
          src = src * chunkShape[d] + (p[d] - idx[d] * chunkShape[d]);
          dst = dst * count[d] + (p[d] - start[d]);
        }
        out[dst] = chunk ? chunk[src] : fill;
        let d = nd - 1;
        while (d >= 0 && ++p[d] === hi[d]) { p[d] = lo[d]; d--; }
        if (d < 0) break;
      }
      let d = nd - 1;
      while (d >= 0 && ++idx[d] > g1[d]) { idx[d] = g0[d]; d--; }
      if (d < 0) break;
    }
    return out;
  }

  close(): void { /* FileSystemStore holds no descriptors between reads */ }
}

/** IEEE binary16 bit pattern of a Zarr fill value (number or 'NaN'/'Infinity'/'-Infinity'). */
function float16Bits(value: unknown): number {
  const x = typeof value === 'string' ? Number(value) : typeof value === 'number' ? value : 0;
  return float32ToFloat16Bits(x);
}

/** Round-to-nearest-even binary16 encoding of a number. */
export function float32ToFloat16Bits(x: number): number {
  const f32 = new Float32Array([x]);
  const u = new Uint32Array(f32.buffer)[0];
  const sign = (u >>> 16) & 0x8000;
  const exp = (u >>> 23) & 0xff;
  let mant = u & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rem > mid || (rem === mid && (half & 1))) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (half & 1))) half++;
  return sign | half;
}

export async function openZarr(src: string, version: 2 | 3, opts: OpenOptions = {}): Promise<SourceReader> {
  return ZarrReader.open(src, version, opts);
}
