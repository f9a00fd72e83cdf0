// HDF5 and NetCDF-4 sources through h5wasm (HDF5 compiled to WebAssembly, reading the file in
// place through Emscripten's NODERAWFS): hyperslab reads, dimension scales, attributes.
import * as path from 'node:path';
import type { DTypeName, TetTypedArray } from '../types';
import { jsonAttr, typedArrayKind } from './attrs';
import { toStorage } from './dtype';
import { convertError, describe } from './errors';
import type { OpenOptions, SourceKind, SourceReader, SourceVariable } from './types';

type H5Module = typeof import('h5wasm/node');
type H5Dataset = import('h5wasm/node').Dataset;
type H5Group = import('h5wasm/node').Group;

let h5Loaded: Promise<H5Module> | undefined;
async function loadH5wasm(): Promise<H5Module> {
  h5Loaded ??= import('h5wasm/node').then(async (mod) => { await mod.default.ready; return mod; });
  return h5Loaded;
}

// HDF5 type classes (H5T_class_t)
const H5T_INTEGER = 0;
const H5T_FLOAT = 1;
const H5T_ENUM = 8;

/** Attributes that carry HDF5 / NetCDF-4 bookkeeping, not user metadata. */
const BOOKKEEPING_ATTRS = new Set(['REFERENCE_LIST', 'DIMENSION_LIST', 'DIMENSION_LABELS', '_Netcdf4Dimid',
  '_Netcdf4Coordinates', '_nc3_strict', '_NCProperties', '_SuperblockVersion', '_IsNetcdf4']);
const NETCDF_PHANTOM_DIM = 'This is a netCDF dimension but not a netCDF variable';

interface H5Variable extends SourceVariable {
  h5path: string;
  /** Typed array kind h5wasm hands back ('i8' needs widening, 'u16' for f16 bit patterns). */
  readKind: string;
  elementSize: number;
}

function elementMapping(meta: import('h5wasm/node').Dataset['metadata']): { dtype: DTypeName | null; readKind: string; reason?: string } {
  const { type, size, signed } = meta;
  if (type === H5T_FLOAT) {
    if (size === 2) return { dtype: 'f16', readKind: 'u16' };
    if (size === 4) return { dtype: 'f32', readKind: 'f32' };
    if (size === 8) return { dtype: 'f64', readKind: 'f64' };
    return { dtype: null, readKind: '', reason: `${size * 8}-bit float` };
  }
  if (type === H5T_INTEGER) {
    const map: Record<string, DTypeName> = { i1: 'i16', u1: 'u8', i2: 'i16', u2: 'u16', i4: 'i32', u4: 'u32', i8: 'i64', u8: 'u64' };
    const key = `${signed ? 'i' : 'u'}${size}`;
    const dtype = map[key];
    return dtype ? { dtype, readKind: key === 'i1' ? 'i8' : dtype } : { dtype: null, readKind: '', reason: `${size * 8}-bit integer` };
  }
  if (type === H5T_ENUM) {
    const members = meta.enum_type?.members ?? {};
    const names = Object.keys(members).map((k) => k.toUpperCase()).sort().join(',');
    if (size === 1 && names === 'FALSE,TRUE') return { dtype: 'u8', readKind: 'u8' };
    return { dtype: null, readKind: '', reason: 'enumeration' };
  }
  const names: Record<number, string> = { 2: 'time', 3: 'string', 4: 'bitfield', 5: 'opaque', 6: 'compound', 7: 'reference', 9: 'variable-length', 10: 'array' };
  return { dtype: null, readKind: '', reason: names[type] ?? `type class ${type}` };
}

function readAttrs(obj: { attrs: Record<string, import('h5wasm/node').Attribute> }, isScale: boolean) {
  const attrs: Record<string, unknown> = {};
  const attrTypes: Record<string, string> = {};
  let entries: [string, import('h5wasm/node').Attribute][];
  try {
    entries = Object.entries(obj.attrs);
  } catch {
    return { attrs, attrTypes, raw: {} as Record<string, unknown> };
  }
  const raw: Record<string, unknown> = {};
  for (const [name, attr] of entries) {
    let value: unknown;
    try {
      value = attr.value;
    } catch {
      continue; // attribute of a type h5wasm cannot decode
    }
    raw[name] = value;
    if (BOOKKEEPING_ATTRS.has(name) || (isScale && (name === 'CLASS' || name === 'NAME'))) continue;
    const json = jsonAttr(value);
    if (json === undefined) continue;
    attrs[name] = json;
    const kind = typedArrayKind(value) || (typeof value === 'bigint' ? (attr.metadata.signed ? 'i64' : 'u64') : '');
    if (kind) attrTypes[name] = kind;
  }
  return { attrs, attrTypes, raw };
}

function scalarString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

class Hdf5Reader implements SourceReader {
  kind: SourceKind = 'hdf5';
  variables: H5Variable[] = [];
  globalAttrs: Record<string, unknown> = {};
  groupAttrs: Record<string, Record<string, unknown>> = {};

  constructor(readonly path: string, private readonly h5: H5Module, private readonly file: import('h5wasm/node').File) {}

  static async open(src: string, _opts: OpenOptions = {}): Promise<Hdf5Reader> {
    const h5 = await loadH5wasm();
    let file: import('h5wasm/node').File;
    try {
      file = new h5.default.File(path.resolve(src), 'r');
    } catch (err) {
      throw convertError('TET_CONVERT_OPEN', `cannot open HDF5 source ${src}: ${describe(err)}`, err);
    }
    if (typeof file.file_id === 'bigint' ? file.file_id < 0n : Number(file.file_id) < 0) {
      throw convertError('TET_CONVERT_OPEN', `cannot open HDF5 source ${src}: H5Fopen failed`);
    }
    const reader = new Hdf5Reader(src, h5, file);
    try {
      reader.scan();
    } catch (err) {
      reader.close();
      if (err instanceof Error && (err as { code?: string }).code?.startsWith('TET_')) throw err;
      throw convertError('TET_CONVERT_SOURCE_INVALID', `cannot read the structure of ${src}: ${describe(err)}`, err);
    }
    return reader;
  }

  private scan(): void {
    const { Dataset, Group } = this.h5.default;
    const root = readAttrs(this.file, false);
    const rootAttrs = root.raw;
    this.globalAttrs = root.attrs;
    let netcdf = '_NCProperties' in rootAttrs;
    const byPath = new Map<string, H5Variable>();
    const datasets: H5Dataset[] = [];
    const visited = new Set<string>();
    const walk = (group: H5Group, prefix: string) => {
      for (const key of group.keys()) {
        const obj = group.get(key);
        const objPath = `${prefix}/${key}`;
        if (obj instanceof Group) {
          if (!visited.has(objPath)) { visited.add(objPath); walk(obj, objPath); }
        } else if (obj instanceof Dataset) {
          datasets.push(obj);
        }
      }
    };
    walk(this.file, '');

    for (const ds of datasets) {
      const meta = ds.metadata;
      const { raw } = readAttrs(ds, false);
      const isScale = scalarString(raw.CLASS) === 'DIMENSION_SCALE';
      const { attrs, attrTypes } = readAttrs(ds, isScale);
      if ('_Netcdf4Dimid' in raw || '_Netcdf4Coordinates' in raw) netcdf = true;
      const mapping = elementMapping(meta);
      const shape = meta.shape ?? [];
      const v: H5Variable = {
        name: ds.path.replace(/^\/+/, ''),
        h5path: ds.path,
        sourceType: ds.dtype === 'unknown' ? mapping.reason ?? 'unknown' : String(ds.dtype),
        dtype: mapping.dtype,
        skipReason: mapping.dtype ? undefined : `unsupported element type (${mapping.reason})`,
        shape,
        chunkShape: meta.chunks ?? null,
        dimNames: null,
        coordVars: [],
        attrs,
        attrTypes,
        readKind: mapping.readKind,
        elementSize: meta.size,
        hidden: isScale && (scalarString(raw.NAME) ?? '').startsWith(NETCDF_PHANTOM_DIM),
      };
      if (!meta.shape) v.skipReason ??= 'null dataspace';
      else if (shape.length === 0) v.skipReason ??= 'rank-0 (scalar) dataset';
      else if (shape.length > 8) v.skipReason ??= `rank ${shape.length} exceeds 8`;
      byPath.set(ds.path, v);
      this.variables.push(v);
    }
    if (netcdf) this.kind = 'netcdf4';

    // Axis names and labels: attached dimension scales first, then a CF `coordinates` list.
    datasets.forEach((ds, i) => {
      const v = this.variables[i];
      if (v.skipReason || v.hidden) return;
      const names: (string | null)[] = [];
      const coords: (SourceVariable | null)[] = [];
      let labels: (string | null)[] = [];
      try { labels = ds.get_dimension_labels(); } catch { labels = []; }
      for (let d = 0; d < v.shape.length; d++) {
        let scales: string[] = [];
        try { scales = ds.get_attached_scales(d); } catch { scales = []; }
        const scale = scales.length ? byPath.get(scales[0]) : undefined;
        let name: string | null = labels[d] || null;
        if (scale) {
          name ??= scale.hidden ? path.posix.basename(scale.h5path) : this.scaleName(scale);
          coords.push(scale.hidden || scale.skipReason || scale.shape.length !== 1 || scale.shape[0] !== v.shape[d] ? null : scale);
        } else {
          coords.push(null);
        }
        names.push(name);
      }
      const isOwnScale = v.shape.length === 1 && names[0] === null && scalarString(readAttrs(ds, false).raw.CLASS) === 'DIMENSION_SCALE';
      if (isOwnScale) { names[0] = this.scaleName(v); coords[0] = v; }
      if (names.every((n) => n === null)) this.cfCoordinates(v, names, coords);
      v.dimNames = names.every((n): n is string => typeof n === 'string' && n.length > 0) ? names : null;
      v.coordVars = coords;
    });
  }

  private scaleName(v: H5Variable): string {
    const ds = this.file.get(v.h5path) as H5Dataset;
    let name: string | null = null;
    try { name = ds.get_scale_name(); } catch { name = null; }
    return name && !name.startsWith(NETCDF_PHANTOM_DIM) ? name : path.posix.basename(v.h5path);
  }

  /** CF `coordinates = "time lat lon"` naming exactly the variable's axes in order, each a 1-D
   *  variable of that axis' length (looked up in the same group, then by unique name anywhere). */
  private cfCoordinates(v: H5Variable, names: (string | null)[], coords: (SourceVariable | null)[]): void {
    const list = typeof v.attrs.coordinates === 'string' ? v.attrs.coordinates.trim().split(/\s+/) : [];
    if (list.length !== v.shape.length) return;
    const group = path.posix.dirname(v.h5path);
    const found = list.map((n, d) => {
      const candidates = this.variables.filter((c) => !c.skipReason && c.shape.length === 1 && c.shape[0] === v.shape[d]);
      const local = candidates.find((c) => c.h5path === path.posix.join(group, n));
      if (local) return local;
      const named = candidates.filter((c) => path.posix.basename(c.h5path) === n);
      return named.length === 1 ? named[0] : undefined;
    });
    if (found.some((c) => !c)) return;
    list.forEach((n, d) => { names[d] = n; coords[d] = found[d]!; });
  }

  async read(variable: SourceVariable, start: number[], count: number[]): Promise<TetTypedArray> {
    const v = variable as H5Variable;
    const Module = this.h5.Module as any;
    const n = count.reduce((a, b) => a * b, 1);
    const nbytes = n * v.elementSize;
    const ptr: number = Module._malloc(Math.max(nbytes, 1));
    if (!ptr) {
      throw convertError('TET_CONVERT_READ', `cannot allocate ${nbytes} bytes in the HDF5 reader for a slab of ${v.name}`);
    }
    let bytes: Uint8Array;
    try {
      Module.get_dataset_data(this.file.file_id, v.h5path, count.map(BigInt), start.map(BigInt),
        count.map(() => 1n), BigInt(ptr));
      bytes = Module.HEAPU8.slice(ptr, ptr + nbytes);
    } catch (err) {
      throw convertError('TET_CONVERT_READ',
        `cannot read ${v.name} [start ${start.join(',')}, count ${count.join(',')}] from ${this.path}: ${describe(err)}`, err);
    } finally {
      Module._free(ptr);
    }
    const buf = bytes.buffer;
    switch (v.readKind) {
      case 'i8': return toStorage('i16', new Int8Array(buf));
      case 'u8': return bytes;
      case 'u16': return new Uint16Array(buf);
      case 'i16': return new Int16Array(buf);
      case 'i32': return new Int32Array(buf);
      case 'u32': return new Uint32Array(buf);
      case 'i64': return new BigInt64Array(buf);
      case 'u64': return new BigUint64Array(buf);
      case 'f32': return new Float32Array(buf);
      case 'f64': return new Float64Array(buf);
      default: throw convertError('TET_CONVERT_UNSUPPORTED', `${v.name}: element type ${v.sourceType} is not readable`);
    }
  }

  close(): void {
    try { this.file.close(); } catch { /* already closed */ }
  }
}

export function openHdf5(src: string, opts: OpenOptions = {}): Promise<SourceReader> {
  return Hdf5Reader.open(src, opts);
}
