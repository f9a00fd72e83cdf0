// Zarr v3 and v2 directory sources through zarrita (which decodes blosc, zstd, gzip, lz4, sharding,
// transpose, ... and returns hyperslabs). Metadata (dimension_names, _ARRAY_DIMENSIONS, attributes) is
// read from the JSON documents directly, with Python's json dialect (bare NaN / Infinity / -Infinity).
// zarrita sees the metadata through a store wrapper that normalises those documents: non-finite
// fill values become the strings zarrita understands, and float16 arrays are opened as uint16 (the
// same bytes), so every codec pipeline yields the binary16 bit patterns without Float16Array.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { DTypeName, TetTypedArray } from '../types';
import { jsonNumber } from './attrs';
import { toStorage } from './dtype';
import { dtypeFromNumpy, dtypeFromZarr3 } from './dtype';
import { convertError, describe } from './errors';
import { decodeFixedTexts } from './text';
import type { OpenOptions, SourceReader, SourceVariable } from './types';
import { importEsm } from '../esm';

type Zarrita = typeof import('zarrita');
let zarritaLoaded: Promise<[Zarrita, typeof import('@zarrita/storage/fs').default]> | undefined;
function loadZarrita() {
  zarritaLoaded ??= Promise.all([importEsm<Zarrita>('zarrita'), importEsm<typeof import('@zarrita/storage/fs')>('@zarrita/storage/fs').then((m) => m.default)]);
  return zarritaLoaded;
}

/** Attribute written by `tet export` on arrays that only hold coordinate labels. */
export const COORDINATE_ROLE_ATTR = 'tetration_role';
/** Attribute written by `tet export`: per axis (dim name or axis index) the store path of the
 *  coordinate array (`{"array": "grp/time"}`) or the labels themselves (`{"labels": [...]}`). */
export const COORDS_ATTR = 'tetration_coords';
/** Attribute written by `tet export` when the node path had to differ from the dataset name. */
export const NAME_ATTR = 'tetration_name';
/** Attributes consumed by the reader (axis names, coordinates), not copied into dataset attrs. */
const INTERNAL_ATTRS = new Set(['_ARRAY_DIMENSIONS', COORDINATE_ROLE_ATTR, COORDS_ATTR, NAME_ATTR]);
/** Metadata documents of Zarr v2 and v3 stores. */
const METADATA_FILES = new Set(['.zarray', '.zattrs', '.zgroup', 'zarr.json', '.zmetadata']);
/** Codecs that compute on the element values (wrong on float16 read as uint16 bit patterns). */
const VALUE_CODECS = /delta|scale_offset|fixedscaleoffset|cast_value|bitround|quantize|astype/;

interface ZarrVariable extends SourceVariable {
  /** Store key of the array, '/'-prefixed ('/' for a root array). */
  key: string;
  version: 2 | 3;
  coordsAttr?: unknown;
  handle?: any;
}

// ---------------------------------------------------------------------------------------------
// Python-dialect JSON

const SENTINEL = '\u0000tet-nonfinite:';

/**
 * Parses a Zarr metadata document as Python's json module does: standard JSON plus the bare tokens
 * `NaN`, `Infinity` and `-Infinity` (outside strings), which become JS NaN / ±Infinity.
 */
export function parseZarrJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch (first) {
    let out = '';
    let changed = false;
    let i = 0;
    const n = text.length;
    while (i < n) {
      const ch = text[i];
      if (ch === '"') {
        // Copy the string literal verbatim, escapes included.
        let j = i + 1;
        while (j < n && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
        out += text.slice(i, j + 1);
        i = j + 1;
        continue;
      }
      const token = text.startsWith('NaN', i) ? 'NaN' : text.startsWith('Infinity', i) ? 'Infinity'
        : text.startsWith('-Infinity', i) ? '-Infinity' : null;
      if (token) {
        out += JSON.stringify(SENTINEL + token);
        i += token.length;
        changed = true;
        continue;
      }
      out += ch;
      i++;
    }
    if (!changed) throw first;
    return JSON.parse(out, (_k, v) => (typeof v === 'string' && v.startsWith(SENTINEL) ? Number(v.slice(SENTINEL.length)) : v));
  }
}

/** A JSON value with non-finite numbers spelled 'NaN' / 'Infinity' / '-Infinity' (as attrs.ts does). */
function jsonSafe(value: unknown): unknown {
  if (typeof value === 'number') return jsonNumber(value);
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = jsonSafe(v);
    return out;
  }
  return value;
}

function parseFile(file: string, text: string): any {
  try {
    return parseZarrJson(text);
  } catch (err) {
    throw convertError('TET_CONVERT_SOURCE_INVALID', `cannot parse Zarr metadata ${file}: ${describe(err)}`, err);
  }
}

/** Metadata documents of a store, by '/'-separated key relative to the root (`grp/.zarray`):
 *  the file when present, else the entry of a consolidated v2 `.zmetadata`. */
class StoreMetadata {
  private readonly consolidated: Record<string, unknown> | null = null;
  private readonly cache = new Map<string, unknown>();
  constructor(readonly root: string, version: 2 | 3) {
    const file = join(root, '.zmetadata');
    if (version === 2 && existsSync(file)) {
      const doc = parseFile(file, readFileSync(file, 'utf8'));
      if (doc && typeof doc.metadata === 'object' && doc.metadata) this.consolidated = doc.metadata;
    }
  }

  /** The parsed document, or undefined when the store has none under `key`. */
  doc(key: string): any {
    if (this.cache.has(key)) return this.cache.get(key);
    const file = join(this.root, ...key.split('/').filter(Boolean));
    let doc: unknown;
    if (existsSync(file)) doc = parseFile(file, readFileSync(file, 'utf8'));
    else if (this.consolidated && key in this.consolidated) doc = this.consolidated[key];
    this.cache.set(key, doc);
    return doc;
  }

  /** Child node names of a group: its subdirectories and the consolidated keys below it. */
  children(rel: string): string[] {
    const dir = join(this.root, ...rel.split('/').filter(Boolean));
    const names = new Set<string>();
    if (existsSync(dir)) {
      for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory() && !e.name.startsWith('.')) names.add(e.name);
    }
    const prefix = rel ? `${rel}/` : '';
    for (const key of Object.keys(this.consolidated ?? {})) {
      if (!key.startsWith(prefix)) continue;
      const rest = key.slice(prefix.length).split('/');
      if (rest.length >= 2 && !rest[0].startsWith('.')) names.add(rest[0]);
    }
    return [...names].sort();
  }
}

// ---------------------------------------------------------------------------------------------
// Metadata as zarrita sees it

/** IEEE binary16 bit pattern of a Zarr fill value (number, 'NaN'/'Infinity'/'-Infinity', '0x7e00'). */
function float16Bits(value: unknown): number {
  if (typeof value === 'string' && /^0x[0-9a-f]+$/i.test(value)) return parseInt(value, 16) & 0xffff;
  const x = typeof value === 'string' ? Number(value) : typeof value === 'number' ? value : 0;
  return float32ToFloat16Bits(x);
}

/** A float fill value zarrita can use: non-finite numbers as strings, v3 hex bit patterns decoded. */
function floatFill(value: unknown, bytes: number): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (typeof value === 'string' && /^0x[0-9a-f]+$/i.test(value) && (bytes === 4 || bytes === 8)) {
    const view = new DataView(new ArrayBuffer(8));
    if (bytes === 4) { view.setUint32(0, parseInt(value, 16)); return jsonNumber(view.getFloat32(0)); }
    view.setBigUint64(0, BigInt(value));
    return jsonNumber(view.getFloat64(0));
  }
  return value ?? 0;
}

/** The array document zarrita opens: float16 as uint16 (bit-pattern fill), fill values it accepts. */
function zarritaArrayDoc(doc: any, version: 2 | 3): any {
  const out = { ...doc };
  if (version === 2) {
    const m = /^([<>|=]?)([a-zA-Z])(\d+)$/.exec(String(doc.dtype));
    if (m && m[2] === 'f' && m[3] === '2') {
      out.dtype = `${m[1]}u2`;
      out.fill_value = float16Bits(doc.fill_value);
    } else if (m && m[2] === 'f') {
      out.fill_value = floatFill(doc.fill_value, Number(m[3]));
    } else if (m && (m[2] === 'S' || m[2] === 'U')) {
      out.fill_value = doc.fill_value ?? '';
    } else if (String(doc.dtype) !== '|O' && (doc.fill_value === null || doc.fill_value === undefined)) {
      out.fill_value = m && m[2] === 'b' ? false : 0;
    }
    if (m && m[3] === '1') out.dtype = `|${m[2]}1`; // no byte order for 1-byte elements (see below)
  } else {
    if (doc.data_type === 'float16') {
      out.data_type = 'uint16';
      out.fill_value = float16Bits(doc.fill_value);
    } else if (doc.data_type === 'float32' || doc.data_type === 'float64') {
      out.fill_value = floatFill(doc.fill_value, doc.data_type === 'float32' ? 4 : 8);
    } else if (doc.data_type !== 'string' && (doc.fill_value === null || doc.fill_value === undefined)) {
      out.fill_value = doc.data_type === 'bool' ? false : 0;
    }
    if (doc.attributes) out.attributes = jsonSafe(doc.attributes);
    // Byte order is meaningless for 1-byte elements, and zarrita byte-swaps bool in 4-byte groups
    // when a bytes codec says "big": drop it.
    if (['bool', 'int8', 'uint8'].includes(doc.data_type)) out.codecs = littleEndianBytes(doc.codecs);
  }
  return out;
}

/** A v3 codec list with every bytes codec (sharding's inner and index codecs too) little-endian. */
function littleEndianBytes(codecs: unknown): unknown {
  if (!Array.isArray(codecs)) return codecs;
  return codecs.map((c: any) => {
    if (c?.name === 'bytes') return { ...c, configuration: { ...c.configuration, endian: 'little' } };
    if (c?.name === 'sharding_indexed' && c.configuration) {
      return { ...c, configuration: { ...c.configuration, codecs: littleEndianBytes(c.configuration.codecs) } };
    }
    return c;
  });
}

/** A FileSystemStore whose metadata documents are served normalised (see the file comment). */
function metadataStore(inner: any, meta: StoreMetadata, version: 2 | 3): any {
  const encoder = new TextEncoder();
  return {
    async get(key: string, opts?: unknown) {
      const base = key.slice(key.lastIndexOf('/') + 1);
      if (!METADATA_FILES.has(base)) return inner.get(key, opts);
      const doc = meta.doc(key.replace(/^\/+/, ''));
      if (doc === undefined) return undefined;
      const isArray = base === '.zarray' || (base === 'zarr.json' && doc?.node_type === 'array');
      return encoder.encode(JSON.stringify(isArray ? zarritaArrayDoc(doc, version) : jsonSafe(doc)));
    },
    getRange: (key: string, range: unknown, opts?: unknown) => inner.getRange(key, range, opts),
  };
}

// ---------------------------------------------------------------------------------------------
// Variables

/** Codec names of an array's pipeline as zarrita's registry spells them (sharding's inner codecs too). */
function codecNames(version: 2 | 3, meta: any): string[] {
  if (version === 2) {
    const names: string[] = [];
    for (const f of Array.isArray(meta.filters) ? meta.filters : []) {
      const id = String(f?.id);
      if (id === 'fixedscaleoffset' || id === 'numcodecs.fixedscaleoffset') names.push('scale_offset', 'cast_value');
      else names.push(`numcodecs.${id}`);
    }
    if (meta.compressor) names.push(`numcodecs.${String(meta.compressor.id)}`);
    return names;
  }
  const walk = (codecs: unknown): string[] => (Array.isArray(codecs) ? codecs : []).flatMap((c: any) =>
    [String(c?.name), ...(c?.name === 'sharding_indexed' ? [...walk(c.configuration?.codecs), ...walk(c.configuration?.index_codecs)] : [])]);
  return walk(meta.codecs);
}

/** Why zarrita cannot decode this pipeline (losslessly, into the mapped dtype), or undefined. */
function unsupportedCodec(zarr: Zarrita, version: 2 | 3, meta: any, dtype: DTypeName | null): string | undefined {
  const registry = zarr.registry as Map<string, unknown>;
  for (const name of codecNames(version, meta)) {
    if (name === 'sharding_indexed') continue;
    if (!registry.has(name)) return `codec ${name.replace(/^numcodecs\./, '')} is not supported`;
    if (dtype === 'f16' && VALUE_CODECS.test(name)) return `codec ${name.replace(/^numcodecs\./, '')} on float16 is not supported`;
  }
  if (version === 2) {
    for (const f of Array.isArray(meta.filters) ? meta.filters : []) {
      if (f?.id === 'delta' && f.astype !== undefined && f.astype !== f.dtype) return `codec delta with astype ${f.astype} is not supported`;
    }
  }
  return undefined;
}

function arrayVariable(zarr: Zarrita, rel: string, version: 2 | 3, meta: any, attrs: Record<string, unknown>, rootName: string): ZarrVariable {
  const dataType = version === 3 ? meta.data_type : meta.dtype;
  const dtype = version === 3 ? dtypeFromZarr3(dataType) : dtypeFromNumpy(String(dataType));
  const shape: number[] = Array.isArray(meta.shape) ? meta.shape.map(Number) : [];
  const chunkShape: number[] | null = version === 3
    ? (meta.chunk_grid?.name === 'regular' ? meta.chunk_grid.configuration?.chunk_shape ?? null : null)
    : meta.chunks ?? null;
  const dimSource = version === 3 ? meta.dimension_names : attrs._ARRAY_DIMENSIONS;
  const dimNames = Array.isArray(dimSource) && dimSource.length === shape.length
    && dimSource.every((n: unknown) => typeof n === 'string' && n.length > 0) ? dimSource as string[] : null;
  let skipReason: string | undefined;
  let skipCode: string | undefined;
  if (!dtype) skipReason = `unsupported element type (${JSON.stringify(dataType)})`;
  if (!skipReason && shape.length === 0) skipReason = 'rank-0 (scalar) array';
  if (!skipReason && shape.length > 8) skipReason = `rank ${shape.length} exceeds 8`;
  const empty = shape.findIndex((n) => n === 0);
  if (!skipReason && empty >= 0) {
    skipReason = `0-length axis ${dimNames?.[empty] ?? empty}`;
    skipCode = 'TET_CONVERT_EMPTY';
  }
  if (!skipReason && version === 3 && meta.chunk_grid?.name !== 'regular') {
    skipReason = `chunk grid ${JSON.stringify(meta.chunk_grid?.name)} is not supported`;
  }
  const codecProblem = skipReason ? undefined : unsupportedCodec(zarr, version, meta, dtype);
  if (codecProblem) {
    skipReason = codecProblem;
    skipCode = 'TET_CONVERT_UNSUPPORTED_FILTER';
  }
  const kept: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(attrs)) if (!INTERNAL_ATTRS.has(k)) kept[k] = jsonSafe(v);
  const text = textForm(version, meta, shape.length);
  return {
    ...(text ? { text } : {}),
    name: typeof attrs[NAME_ATTR] === 'string' && attrs[NAME_ATTR] ? attrs[NAME_ATTR] as string : rel || rootName, key: `/${rel}`, version, sourceType: String(dataType), dtype, skipReason, skipCode, shape,
    chunkShape: Array.isArray(chunkShape) && chunkShape.length === shape.length ? chunkShape.map(Number) : null,
    dimNames, coordVars: [], attrs: kept, attrTypes: {}, coordsAttr: attrs[COORDS_ATTR],
    hidden: attrs[COORDINATE_ROLE_ATTR] === 'coordinate',
  };
}

/** Text arrays: v2 `|S<n>` / `<U<n>` / object arrays with a vlen-utf8 codec, v3 `string`; a
 *  2-D `|S1` array is a char array (one string per row), as NetCDF writes them. */
function textForm(version: 2 | 3, meta: any, rank: number): SourceVariable['text'] {
  if (version === 3) return meta.data_type === 'string' && rank === 1 ? 'strings' : undefined;
  const dtype = String(meta.dtype);
  if (rank === 2 && /^[|<>]?S1$/.test(dtype)) return 'chars';
  if (rank !== 1) return undefined;
  if (/^[|<>]?[SU]\d+$/.test(dtype)) return 'strings';
  const codecs = [...(Array.isArray(meta.filters) ? meta.filters : []), meta.compressor];
  return dtype === '|O' && codecs.some((c: any) => c?.id === 'vlen-utf8') ? 'strings' : undefined;
}

/** Strings of a zarrita chunk of a text array (`rows` rows; a char array's rows of `chars`). */
function chunkTexts(zarr: Zarrita, data: any, rows: number, shape: number[], stride: number[]): (string | null)[] {
  if (Array.isArray(data)) return data.map((x) => (typeof x === 'string' ? x.replace(/\0+$/, '') : null));
  if (data instanceof zarr.ByteStringArray) {
    let bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    if (shape.length === 2) bytes = toCOrder(bytes, shape, stride);
    return decodeFixedTexts(bytes, bytes.length / rows, rows);
  }
  if (data instanceof zarr.UnicodeStringArray) {
    const chars = data.chars as number;
    const points = new Int32Array(data.buffer, data.byteOffset, data.byteLength / 4);
    const out = new Array<string>(rows);
    for (let i = 0; i < rows; i++) {
      let end = (i + 1) * chars;
      while (end > i * chars && points[end - 1] === 0) end--;
      let s = '';
      for (let j = i * chars; j < end; j++) s += points[j] >= 0 && points[j] <= 0x10ffff ? String.fromCodePoint(points[j]) : '\ufffd';
      out[i] = s;
    }
    return out;
  }
  throw new Error(`unexpected chunk type ${data?.constructor?.name} for a text array`);
}

/** Row-major copy of a strided view (zarrita hands back chunks in the array's storage order). */
function toCOrder<T extends { length: number; [i: number]: any }>(data: T, shape: number[], stride: number[]): T {
  const nd = shape.length;
  let contiguous = true;
  for (let d = nd - 1, step = 1; d >= 0; step *= shape[d], d--) {
    if (shape[d] > 1 && stride[d] !== step) { contiguous = false; break; }
  }
  if (contiguous) return data;
  const size = shape.reduce((a, b) => a * b, 1);
  const out = new (data.constructor as new (n: number) => T)(size);
  const inner = shape[nd - 1];
  const innerStride = stride[nd - 1];
  const idx = new Array<number>(nd).fill(0);
  let base = 0;
  for (let o = 0; o < size; o += inner) {
    for (let j = 0, p = base; j < inner; j++, p += innerStride) out[o + j] = data[p];
    for (let d = nd - 2; d >= 0; d--) {
      base += stride[d];
      if (++idx[d] < shape[d]) break;
      base -= stride[d] * shape[d];
      idx[d] = 0;
    }
  }
  return out;
}

class ZarrReader implements SourceReader {
  readonly variables: ZarrVariable[] = [];
  globalAttrs: Record<string, unknown> = {};
  groupAttrs: Record<string, Record<string, unknown>> = {};
  constructor(readonly path: string, readonly kind: 'zarr3' | 'zarr2', private readonly zarr: Zarrita,
    private readonly meta: StoreMetadata, private readonly store: any) {}

  static async open(src: string, version: 2 | 3, _opts: OpenOptions = {}): Promise<ZarrReader> {
    const [zarr, FileSystemStore] = await loadZarrita();
    const root = resolve(src);
    const meta = new StoreMetadata(root, version);
    const store = metadataStore(new FileSystemStore(root), meta, version);
    const reader = new ZarrReader(src, version === 3 ? 'zarr3' : 'zarr2', zarr, meta, store);
    reader.scan(version);
    return reader;
  }

  private scan(version: 2 | 3): void {
    const rootName = basename(resolve(this.path)).replace(/\.zarr$/i, '') || 'array';
    const key = (rel: string, file: string) => (rel ? `${rel}/${file}` : file);
    const groupAttrs = (rel: string, attrs: unknown) => {
      const safe = attrs && typeof attrs === 'object' && !Array.isArray(attrs) ? jsonSafe(attrs) as Record<string, unknown> : {};
      if (rel === '') this.globalAttrs = safe;
      else if (Object.keys(safe).length) this.groupAttrs[rel] = safe;
    };
    const walk = (rel: string) => {
      if (version === 3) {
        const meta = this.meta.doc(key(rel, 'zarr.json'));
        if (meta === undefined) return;
        if (meta?.node_type === 'array') {
          this.variables.push(arrayVariable(this.zarr, rel, 3, meta, meta.attributes ?? {}, rootName));
          return;
        }
        if (meta?.node_type !== 'group') {
          throw convertError('TET_CONVERT_SOURCE_INVALID',
            `${join(this.path, key(rel, 'zarr.json'))}: expected node_type "group" or "array", found ${JSON.stringify(meta?.node_type)}`);
        }
        groupAttrs(rel, meta.attributes);
      } else {
        const attrs = this.meta.doc(key(rel, '.zattrs')) ?? {};
        const array = this.meta.doc(key(rel, '.zarray'));
        if (array !== undefined) {
          this.variables.push(arrayVariable(this.zarr, rel, 2, array, attrs, rootName));
          return;
        }
        if (this.meta.doc(key(rel, '.zgroup')) === undefined && !(rel === '' && existsSync(join(this.meta.root, '.zmetadata')))) return;
        groupAttrs(rel, attrs);
      }
      for (const sub of this.meta.children(rel)) walk(key(rel, sub));
    };
    walk('');
    // xarray convention: the labels of dimension `x` are the 1-D array `x` of the same group (or the root).
    // Looked up by store path (names may differ: `tetration_name`).
    const byName = new Map(this.variables.map((v) => [v.key.slice(1), v]));
    const usable = (c: ZarrVariable | undefined, d: number, v: ZarrVariable) =>
      c && !c.skipReason && c.shape.length === 1 && c.shape[0] === v.shape[d] ? c : null;
    for (const v of this.variables) {
      const rel = v.key.slice(1);
      const group = rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '';
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
    if (v.skipReason) {
      throw convertError((v.skipCode ?? 'TET_CONVERT_READ') as `TET_CONVERT_${string}`, `cannot read ${v.name} from ${this.path}: ${v.skipReason}`);
    }
    const zarr = this.zarr;
    try {
      v.handle ??= await (v.version === 3 ? zarr.open.v3 : zarr.open.v2)(zarr.root(this.store).resolve(v.key), { kind: 'array' });
      const chunk = await zarr.get(v.handle, start.map((s, d) => zarr.slice(s, s + count[d])));
      let data = chunk.data as any;
      if (data instanceof zarr.BoolArray) data = new Uint8Array(data.buffer, data.byteOffset, data.length);
      data = toCOrder(data, chunk.shape, chunk.stride);
      return toStorage(dtype, data as ArrayLike<number | bigint>);
    } catch (err) {
      const unknownCodec = err instanceof zarr.UnknownCodecError || (err as any)?.cause instanceof zarr.UnknownCodecError;
      throw convertError(unknownCodec ? 'TET_CONVERT_UNSUPPORTED_FILTER' : 'TET_CONVERT_READ',
        `cannot read ${v.name} [start ${start.join(',')}, count ${count.join(',')}] from ${this.path}: ${describe(err)}`, err);
    }
  }

  async readText(variable: SourceVariable, start: number, count: number): Promise<(string | null)[]> {
    const v = variable as ZarrVariable;
    if (!v.text) throw convertError('TET_CONVERT_UNSUPPORTED', `${v.name}: element type ${v.sourceType} is not text`);
    const zarr = this.zarr;
    try {
      v.handle ??= await (v.version === 3 ? zarr.open.v3 : zarr.open.v2)(zarr.root(this.store).resolve(v.key), { kind: 'array' });
      const sel = v.text === 'chars' ? [zarr.slice(start, start + count), null] : [zarr.slice(start, start + count)];
      const chunk = await zarr.get(v.handle, sel);
      return chunkTexts(zarr, chunk.data, count, chunk.shape, chunk.stride);
    } catch (err) {
      const unknownCodec = err instanceof zarr.UnknownCodecError || (err as any)?.cause instanceof zarr.UnknownCodecError;
      throw convertError(unknownCodec ? 'TET_CONVERT_UNSUPPORTED_FILTER' : 'TET_CONVERT_READ',
        `cannot read ${v.name} [start ${start}, count ${count}] from ${this.path}: ${describe(err)}`, err);
    }
  }

  close(): void { /* FileSystemStore holds no descriptors between reads */ }
}

/** Round-to-nearest-even binary16 encoding of a number. */
export function float32ToFloat16Bits(x: number): number {
  const f32 = new Float32Array([x]);
  const u = new Uint32Array(f32.buffer)[0];
  const sign = (u >>> 16) & 0x8000;
  const exp = (u >>> 23) & 0xff;
  let mant = u & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
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
