// HDF5 and NetCDF-4 sources through h5wasm (HDF5 compiled to WebAssembly, reading the file in
// place through Emscripten's NODERAWFS): hyperslab reads, dimension scales, attributes.
//
// Every call into the wasm library runs under quiet(): HDF5's error stack (and Emscripten's
// abort text) is captured instead of reaching the terminal, and a failing read is an error naming
// the dataset and its filter pipeline, never bytes that were not read. Compression filters that
// h5wasm lacks come from the h5wasm-plugins package (lzf, blosc, lz4, bitshuffle, bzip2, zstd);
// a filter that cannot be decoded marks its dataset skipped (TET_CONVERT_UNSUPPORTED_FILTER).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { DTypeName, TetTypedArray } from '../types';
import { jsonAttr, typedArrayKind } from './attrs';
import { f16BitsToNumber as f16ToNumber, toStorage } from './dtype';
import { convertError, describe } from './errors';
import { decodeFixedTexts, decodeText } from './text';
import type { OpenOptions, SourceKind, SourceReader, SourceVariable } from './types';
import { importEsm } from '../esm';

type H5Module = typeof import('h5wasm/node');
type H5Metadata = import('h5wasm/node').Dataset['metadata'];
type WasmModule = any;

// ---------------------------------------------------------------------------------------------
// Loading h5wasm (+ plugins) and running calls quietly

interface H5Runtime {
  mod: H5Module;
  M: WasmModule;
  /** Plugin filters whose .so is on the search path: id -> plugin name. */
  plugins: Map<number, string>;
  /** Set when the wasm instance aborted: the next open loads a fresh one. */
  aborted: boolean;
}

/** Filters built into h5wasm's HDF5. */
const BUILTIN_FILTERS = new Map<number, string>([[1, 'deflate'], [2, 'shuffle'], [3, 'fletcher32'], [5, 'nbit'], [6, 'scaleoffset']]);
/** Plugin file stem (libH5Z<stem>.so) -> HDF5 filter id. */
const PLUGIN_IDS: Record<string, number> = {
  lzf: 32000, blosc: 32001, lz4: 32004, bshuf: 32008, bz2: 307, zstd: 32015, blosc2: 32026, zfp: 32013,
  jpeg: 32019, bitgroom: 32022, bitround: 32023,
};
/** Plugins whose decoding was checked value for value against h5py (test/convert-real-hdf5.test.ts). */
const VERIFIED_PLUGINS = new Set([32000, 32001, 32004, 32008, 307, 32015]);
/** Blosc compressor codes (cd_values[6]) and whether the h5wasm blosc plugin decodes them: its
 *  zlib codec calls `uncompress`, which h5wasm 0.10 does not export (the instance aborts). */
const BLOSC_CODECS: Record<number, [string, boolean]> = {
  0: ['blosclz', true], 1: ['lz4', true], 2: ['lz4hc', true], 3: ['snappy', false], 4: ['zlib', false], 5: ['zstd', true],
};
const PLUGINS_PACKAGE = 'h5wasm-plugins';

let runtime: Promise<H5Runtime> | undefined;
let generation = 0;

/** A fresh copy of h5wasm's module (new wasm instance) after an abort. */
async function importFresh(n: number): Promise<H5Module> {
  const req = createRequire(typeof __filename === 'string' ? __filename : path.join(process.cwd(), 'index.js'));
  for (const dir of req.resolve.paths('h5wasm') ?? []) {
    const file = path.join(dir, 'h5wasm', 'dist', 'node', 'hdf5_hl.js');
    if (fs.existsSync(file)) return importEsm<H5Module>(`${pathToFileURL(file).href}?instance=${n}`);
  }
  return importEsm<H5Module>('h5wasm/node');
}

async function loadRuntime(): Promise<H5Runtime> {
  if (runtime) {
    const rt = await runtime;
    if (!rt.aborted) return rt;
    runtime = undefined;
  }
  runtime ??= (async () => {
    const n = generation++;
    const mod = n === 0 ? await importEsm<H5Module>('h5wasm/node') : await importFresh(n);
    const M = await mod.default.ready;
    const plugins = new Map<number, string>();
    try {
      const spec = PLUGINS_PACKAGE;
      const helpers = await importEsm<{ base_url?: string }>(spec);
      const dir = fileURLToPath(`${helpers.base_url}/plugins`);
      for (const file of fs.readdirSync(dir)) {
        const stem = /^libH5Z(\w+)\.so$/.exec(file)?.[1];
        if (stem && PLUGIN_IDS[stem] !== undefined) plugins.set(PLUGIN_IDS[stem], stem);
      }
      if (plugins.size) M.insert_plugin_search_path(dir, 0);
    } catch {
      plugins.clear(); // package absent: only the built-in filters decode
    }
    return { mod, M, plugins, aborted: false };
  })();
  return runtime;
}

interface Quiet<T> { ok: boolean; value?: T; error?: unknown; stderr: string }

/** Runs a synchronous wasm call with fd-2 writes (HDF5's error stack) and process.stderr writes
 *  (Emscripten's abort text) captured. An abort marks the runtime for reloading. */
function quiet<T>(rt: H5Runtime, fn: () => T): Quiet<T> {
  const chunks: string[] = [];
  const fsAny = fs as unknown as { writeSync: (...args: unknown[]) => number };
  const origWrite = fsAny.writeSync;
  const origStderr = process.stderr.write;
  fsAny.writeSync = function (this: unknown, fd: unknown, buf: unknown, ...rest: unknown[]) {
    if (fd !== 2) return origWrite.call(this, fd, buf, ...rest);
    if (typeof buf === 'string') { chunks.push(buf); return Buffer.byteLength(buf); }
    const view = buf as Uint8Array;
    const off = typeof rest[0] === 'number' ? rest[0] : 0;
    const len = typeof rest[1] === 'number' ? rest[1] : view.byteLength - off;
    chunks.push(Buffer.from(view.buffer, view.byteOffset + off, len).toString('utf8'));
    return len;
  };
  process.stderr.write = ((s: string | Uint8Array, ...rest: unknown[]) => {
    chunks.push(typeof s === 'string' ? s : Buffer.from(s).toString('utf8'));
    const cb = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    cb?.();
    return true;
  }) as typeof process.stderr.write;
  try {
    return { ok: true, value: fn(), stderr: chunks.join('') };
  } catch (error) {
    const RuntimeError = (globalThis as { WebAssembly?: { RuntimeError?: new () => Error } }).WebAssembly?.RuntimeError;
    if ((RuntimeError && error instanceof RuntimeError) || /Aborted\(/.test(describe(error))) rt.aborted = true;
    return { ok: false, error, stderr: chunks.join('') };
  } finally {
    fsAny.writeSync = origWrite;
    process.stderr.write = origStderr;
  }
}

/** The innermost messages of a captured HDF5 error stack (or the thrown error's text). */
function h5Message(q: Quiet<unknown>): string {
  const lines = q.stderr.split('\n').map((l) => /#\d+: .* in (\w+)\(\): (.*)$/.exec(l)).filter((m) => m) as RegExpExecArray[];
  if (lines.length) return lines.slice(-2).map((m) => m[2].trim()).join('; ');
  return q.error !== undefined ? describe(q.error).split('\n')[0] : 'HDF5 call failed';
}

// ---------------------------------------------------------------------------------------------
// Element types and attributes

// HDF5 type classes (H5T_class_t)
const H5T_INTEGER = 0;
const H5T_FLOAT = 1;
const H5T_STRING = 3;
const H5T_BITFIELD = 4;
const H5T_ENUM = 8;
const H5T_ARRAY = 10;
const CLASS_NAMES: Record<number, string> = { 2: 'time', 3: 'string', 4: 'bitfield', 5: 'opaque', 6: 'compound', 7: 'reference', 9: 'variable-length', 10: 'array' };

/** Attributes that carry HDF5 / NetCDF-4 bookkeeping, not user metadata. */
const BOOKKEEPING_ATTRS = new Set(['REFERENCE_LIST', 'DIMENSION_LIST', 'DIMENSION_LABELS', '_Netcdf4Dimid',
  '_Netcdf4Coordinates', '_nc3_strict', '_NCProperties', '_SuperblockVersion', '_IsNetcdf4']);
/** Bookkeeping attributes whose values the structure needs. */
const STRUCTURAL_ATTRS = new Set(['DIMENSION_LIST', 'DIMENSION_LABELS', '_Netcdf4Dimid', '_Netcdf4Coordinates']);
const NETCDF_PHANTOM_DIM = 'This is a netCDF dimension but not a netCDF variable';
/** netCDF-C's HDF5 name for a variable named like a dimension it is not the coordinate of. */
const NON_COORD_PREFIX = '_nc4_non_coord_';

function elementMapping(meta: H5Metadata): { dtype: DTypeName | null; readKind: string; sourceType: string; reason?: string } {
  const { type, size, signed } = meta;
  const order = size === 1 ? '|' : meta.littleEndian ? '<' : '>';
  if (type === H5T_FLOAT) {
    const sourceType = `${order}f${size}`;
    if (size === 2) return { dtype: 'f16', readKind: 'u16', sourceType };
    if (size === 4) return { dtype: 'f32', readKind: 'f32', sourceType };
    if (size === 8) return { dtype: 'f64', readKind: 'f64', sourceType };
    return { dtype: null, readKind: '', sourceType, reason: `${size * 8}-bit float` };
  }
  if (type === H5T_INTEGER) {
    const map: Record<string, DTypeName> = { i1: 'i16', u1: 'u8', i2: 'i16', u2: 'u16', i4: 'i32', u4: 'u32', i8: 'i64', u8: 'u64' };
    const key = `${signed ? 'i' : 'u'}${size}`;
    const dtype = map[key];
    const sourceType = `${order}${key}`;
    return dtype ? { dtype, readKind: key === 'i1' ? 'i8' : dtype, sourceType } : { dtype: null, readKind: '', sourceType, reason: `${size * 8}-bit integer` };
  }
  if (type === H5T_BITFIELD) {
    // h5py reads bitfields as unsigned integers of the same size.
    const dtype = ({ 1: 'u8', 2: 'u16', 4: 'u32', 8: 'u64' } as Record<number, DTypeName>)[size];
    const sourceType = `${order}b${size}`;
    return dtype ? { dtype, readKind: dtype, sourceType } : { dtype: null, readKind: '', sourceType, reason: `${size * 8}-bit bitfield` };
  }
  if (type === H5T_ENUM) {
    const members = meta.enum_type?.members ?? {};
    const names = Object.keys(members).map((k) => k.toUpperCase()).sort().join(',');
    if (size === 1 && names === 'FALSE,TRUE') return { dtype: 'u8', readKind: 'u8', sourceType: 'bool' };
    return { dtype: null, readKind: '', sourceType: 'enum', reason: 'enumeration' };
  }
  const name = CLASS_NAMES[type] ?? `type class ${type}`;
  return { dtype: null, readKind: '', sourceType: name, reason: name };
}


interface AttrSet {
  attrs: Record<string, unknown>;
  attrTypes: Record<string, string>;
  /** Bookkeeping values kept for structure (CLASS, NAME, DIMENSION_LIST, ...). */
  raw: Record<string, unknown>;
  names: string[];
}

interface H5Variable extends SourceVariable {
  h5path: string;
  /** Typed array kind read back ('i8' needs widening, 'u16' for f16 bit patterns). */
  readKind: string;
  elementSize: number;
  /** Filter pipeline, as `name (id)` items, for error messages. */
  pipeline?: string;
  /** Identity of the HDF5 object (hard links share it). */
  identity: string;
  resolved?: boolean;
  /** Variable-length strings (pointers in the read buffer), for `text` variables. */
  vlenText?: boolean;
}

interface WalkedDataset { h5path: string; identity: string }

class Hdf5Reader implements SourceReader {
  kind: SourceKind = 'hdf5';
  variables: H5Variable[] = [];
  globalAttrs: Record<string, unknown> = {};
  groupAttrs: Record<string, Record<string, unknown>> = {};
  private fid: bigint = -1n;
  private readonly attrCache = new Map<string, AttrSet>();
  private readonly byPath = new Map<string, H5Variable>();
  private readonly byIdentity = new Map<string, H5Variable>();
  private netcdfRoot = false;

  private constructor(readonly path: string, private readonly rt: H5Runtime, private readonly opts: OpenOptions) {}

  private get M(): WasmModule { return this.rt.M; }

  private notice(message: string): void { this.opts.notice?.(message); }

  static async open(src: string, opts: OpenOptions = {}): Promise<Hdf5Reader> {
    const rt = await loadRuntime();
    const reader = new Hdf5Reader(src, rt, opts);
    const q = quiet(rt, () => rt.M.open(path.resolve(src), rt.M.H5F_ACC_RDONLY, false, -1, -1) as bigint);
    const fid = q.ok ? BigInt(q.value as bigint) : -1n;
    if (fid < 0n) {
      throw convertError('TET_CONVERT_OPEN', `cannot open HDF5 source ${src}: ${h5Message(q)}`, q.error);
    }
    reader.fid = fid;
    try {
      reader.scan();
    } catch (err) {
      reader.close();
      if (err instanceof Error && (err as { code?: string }).code?.startsWith('TET_')) throw err;
      throw convertError('TET_CONVERT_SOURCE_INVALID', `cannot read the structure of ${src}: ${describe(err)}`, err);
    }
    return reader;
  }

  /** A wasm call that must succeed (structure queries); failures become errors naming `what`. */
  private call<T>(what: string, fn: (M: WasmModule) => T): T {
    const q = quiet(this.rt, () => fn(this.M));
    if (!q.ok) throw new Error(`${what}: ${h5Message(q)}`);
    return q.value as T;
  }

  /** A wasm call whose failure is tolerated (undefined). */
  private tryCall<T>(fn: (M: WasmModule) => T): T | undefined {
    const q = quiet(this.rt, () => fn(this.M));
    return q.ok ? q.value : undefined;
  }

  private identityOf(objPath: string, fileTag: string): string {
    const ref = this.tryCall((M) => M.create_object_reference(this.fid, objPath) as ArrayLike<number>);
    if (!ref || !Array.from(ref).some((b) => b !== 0)) return `path:${fileTag}${objPath}`;
    return `${fileTag}#${Array.from(ref, (b) => b.toString(16).padStart(2, '0')).join('')}`;
  }

  // -- attributes ------------------------------------------------------------------------------

  /** Attributes of an object, read once; undecodable ones are reported, never read blindly. */
  private readAttrs(objPath: string, isScale = false): AttrSet {
    const cached = this.attrCache.get(objPath);
    if (cached) return cached;
    const set: AttrSet = { attrs: {}, attrTypes: {}, raw: {}, names: [] };
    const names = this.tryCall((M) => M.get_attribute_names(this.fid, objPath) as string[]);
    if (!names) {
      this.notice(`${objPath}: attributes not readable; none kept`);
      this.attrCache.set(objPath, set);
      return set;
    }
    set.names = [...names];
    for (const name of names) {
      const meta = this.tryCall((M) => M.get_attribute_metadata(this.fid, objPath, name) as H5Metadata);
      if (!meta) { this.notice(`attribute '${name}' of ${objPath}: type not readable; not kept`); continue; }
      const bookkeeping = BOOKKEEPING_ATTRS.has(name);
      if (bookkeeping && !STRUCTURAL_ATTRS.has(name)) { set.raw[name] = true; continue; }
      const value = this.attrValue(objPath, name, meta, bookkeeping);
      if (value === undefined) continue;
      set.raw[name] = value;
      if (bookkeeping || (isScale && (name === 'CLASS' || name === 'NAME'))) continue;
      const json = jsonAttr(value);
      if (json === undefined) continue;
      set.attrs[name] = json;
      const kind = typedArrayKind(value) || (typeof value === 'bigint' ? (meta.signed ? 'i64' : 'u64') : '')
        || (meta.type === H5T_FLOAT && meta.size === 2 ? 'f16' : '');
      if (kind) set.attrTypes[name] = kind;
    }
    this.attrCache.set(objPath, set);
    return set;
  }

  /** One attribute's value; undefined (with a notice) when it has no JSON form or fails. */
  private attrValue(objPath: string, name: string, meta: H5Metadata, structural: boolean): unknown {
    const drop = (why: string) => { this.notice(`attribute '${name}' of ${objPath}: ${why}; not kept`); return undefined; };
    if (!meta.shape) return undefined; // null dataspace: no value
    const { type, size } = meta;
    const numeric = (m: { type: number; size: number }) => (m.type === H5T_INTEGER && [1, 2, 4, 8].includes(m.size))
      || (m.type === H5T_FLOAT && [4, 8].includes(m.size));
    const rawKinds = (type === H5T_FLOAT && size === 2) || type === H5T_BITFIELD || (type === H5T_STRING && !meta.vlen);
    const viaH5wasm = structural || numeric(meta) || (type === H5T_STRING && meta.vlen)
      || (type === H5T_ENUM && meta.enum_type && [1, 2, 4, 8].includes(size))
      || (type === H5T_ARRAY && meta.array_type && numeric(meta.array_type as { type: number; size: number }));
    if (!rawKinds && !viaH5wasm) return drop(`${CLASS_NAMES[type] ?? `type class ${type}`} type has no JSON form`);
    if (rawKinds) {
      const bytes = this.attrBytes(objPath, name, meta);
      if (!bytes) return drop('value not readable');
      if (type === H5T_STRING) {
        const out: string[] = [];
        const dec = new TextDecoder('utf-8');
        for (let off = 0; off + size <= bytes.length; off += size) {
          let item = bytes.subarray(off, off + size);
          const z = item.indexOf(0);
          if (z >= 0) item = item.subarray(0, z);
          out.push(dec.decode(item));
        }
        return meta.shape.length === 0 ? out[0] : out;
      }
      const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      if (type === H5T_FLOAT) {
        const vals = Array.from({ length: bytes.length / 2 }, (_, i) => f16ToNumber(dv.getUint16(i * 2, true)));
        return meta.shape.length === 0 ? vals[0] : vals;
      }
      const ctor = ({ 1: Uint8Array, 2: Uint16Array, 4: Uint32Array, 8: BigUint64Array } as Record<number, any>)[size];
      if (!ctor) return drop(`${size * 8}-bit bitfield has no JSON form`);
      const arr = new ctor(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
      return meta.shape.length === 0 ? arr[0] : arr;
    }
    const ds = new this.rt.mod.default.Dataset(this.fid as any, objPath);
    const q = quiet(this.rt, () => ds.get_attribute(name, false));
    if (!q.ok) return drop(`cannot be decoded (${h5Message(q)})`);
    let value = q.value as unknown;
    if (type === H5T_ARRAY && Array.isArray(value)) value = (value as unknown[]).flat(Infinity);
    return value;
  }

  /** Raw little-endian bytes of an attribute (types h5wasm does not decode itself). */
  private attrBytes(objPath: string, name: string, meta: H5Metadata): Uint8Array | undefined {
    const nbytes = meta.size * (meta.total_size ?? 1);
    const M = this.M;
    const ptr: number = M._malloc(Math.max(nbytes, 1));
    if (!ptr) return undefined;
    try {
      const q = quiet(this.rt, () => M.get_attribute_data(this.fid, objPath, name, BigInt(ptr)) as number);
      if (!q.ok || (q.value as number) < 0) return undefined;
      return M.HEAPU8.slice(ptr, ptr + nbytes);
    } finally {
      M._free(ptr);
    }
  }

  private normalizedAttrs(objPath: string): Record<string, unknown> {
    return this.readAttrs(objPath).attrs;
  }

  // -- structure -------------------------------------------------------------------------------

  /** Walks the group tree once: datasets (deduplicated by object identity), group attributes,
   *  external and dangling links reported. */
  private walk(): WalkedDataset[] {
    const follow = this.opts.followExternalLinks === true;
    const datasets: WalkedDataset[] = [];
    const seenGroups = new Set<string>([this.identityOf('/', '')]);
    const visit = (groupPath: string, fileTag: string) => {
      const names = this.tryCall((M) => M.get_names(this.fid, groupPath, false) as string[]);
      if (!names) { this.notice(`group ${groupPath}: members not readable; skipped`); return; }
      for (const key of names) {
        const full = groupPath === '/' ? `/${key}` : `${groupPath}/${key}`;
        let tag = fileTag;
        const ext = this.tryCall((M) => M.get_external_link(this.fid, full) as { filename?: string; obj_path?: string });
        if (ext?.filename) {
          if (!follow) {
            this.notice(`external link ${full.slice(1)} -> ${ext.filename}:${ext.obj_path} not followed (use --follow-external-links)`);
            continue;
          }
          tag = `${fileTag}${ext.filename}:${ext.obj_path}|`;
        }
        const type = this.tryCall((M) => M.get_type(this.fid, full) as number) ?? -1;
        if (type === this.M.H5G_GROUP) {
          const id = this.identityOf(full, tag);
          if (seenGroups.has(id)) continue; // a second link to a group already walked (or a cycle)
          seenGroups.add(id);
          if (full !== '/') {
            const attrs = this.normalizedAttrs(full);
            if (Object.keys(attrs).length) this.groupAttrs[full.slice(1)] = attrs;
          }
          visit(full, tag);
        } else if (type === this.M.H5G_DATASET) {
          datasets.push({ h5path: full, identity: this.identityOf(full, tag) });
        } else if (type === this.M.H5G_UDLINK) {
          this.notice(`external link ${full.slice(1)} -> ${ext?.filename ?? '?'}:${ext?.obj_path ?? '?'}: target not found`);
        } else if (type === this.M.H5G_LINK) {
          const target = this.tryCall((M) => M.get_symbolic_link(this.fid, full) as string | null);
          this.notice(`soft link ${full.slice(1)} -> ${target ?? '?'} is dangling; skipped`);
        }
      }
    };
    visit('/', '');
    return datasets;
  }

  /** The name a dataset is shown under: path without the leading slash, netCDF-C's
   *  `_nc4_non_coord_` prefix removed as every NetCDF reader does. */
  private displayName(h5path: string): string {
    const name = h5path.replace(/^\/+/, '');
    const base = path.posix.basename(name);
    if (!base.startsWith(NON_COORD_PREFIX) || base.length === NON_COORD_PREFIX.length) return name;
    let netcdf = this.netcdfRoot;
    if (!netcdf) {
      const names = this.tryCall((M) => M.get_attribute_names(this.fid, h5path) as string[]) ?? [];
      netcdf = names.some((n) => n.startsWith('_Netcdf4'));
    }
    if (!netcdf) return name;
    const dir = path.posix.dirname(name);
    const stripped = base.slice(NON_COORD_PREFIX.length);
    return dir === '.' ? stripped : `${dir}/${stripped}`;
  }

  private scan(): void {
    const root = this.readAttrs('/');
    this.globalAttrs = root.attrs;
    this.netcdfRoot = root.names.includes('_NCProperties') || root.names.includes('_nc3_strict');
    if (this.netcdfRoot) this.kind = 'netcdf4';
    const keep = this.opts.keep ?? (() => true);

    const walked = this.walk();
    const kept: H5Variable[] = [];
    for (const w of walked) {
      const meta = this.tryCall((M) => M.get_dataset_metadata(this.fid, w.h5path) as H5Metadata);
      const name = this.displayName(w.h5path);
      const mapping = meta ? elementMapping(meta) : { dtype: null, readKind: '', sourceType: 'unknown', reason: 'metadata not readable' };
      const shape = meta?.shape ?? [];
      const v: H5Variable = {
        name, h5path: w.h5path, identity: w.identity,
        sourceType: mapping.sourceType,
        dtype: mapping.dtype,
        skipReason: mapping.dtype ? undefined : `unsupported element type (${mapping.reason})`,
        shape: [...shape],
        chunkShape: meta?.chunks ?? null,
        dimNames: null,
        coordVars: [],
        attrs: {},
        attrTypes: {},
        readKind: mapping.readKind,
        elementSize: meta?.size ?? 0,
      };
      if (meta?.type === H5T_STRING && shape.length > 0) {
        // NetCDF-4 `char` variables are 1-byte strings whose last axis spells one string.
        if (!meta.vlen && meta.size === 1 && shape.length === 2) v.text = 'chars';
        else if (shape.length === 1) { v.text = 'strings'; v.vlenText = !!meta.vlen; }
      }
      if (meta && !meta.shape) v.skipReason ??= 'null dataspace';
      else if (meta && shape.length === 0) v.skipReason ??= 'rank-0 (scalar) dataset';
      else if (shape.length > 8) v.skipReason ??= `rank ${shape.length} exceeds 8`;
      const wanted = keep(name);
      const first = this.byIdentity.get(w.identity);
      if (first) {
        // A second hard link (or a soft link) to a dataset already listed: converted once, under
        // the first kept name.
        if (first.skipCode === 'TET_CONVERT_DUPLICATE_LINK' || !wanted || keep(first.name)) {
          v.skipReason = `same HDF5 dataset as ${first.name} (another link to it); converted once`;
          v.skipCode = 'TET_CONVERT_DUPLICATE_LINK';
        } else {
          first.skipReason = `same HDF5 dataset as ${name} (another link to it); converted once`;
          first.skipCode = 'TET_CONVERT_DUPLICATE_LINK';
          this.byIdentity.set(w.identity, v);
        }
      } else {
        this.byIdentity.set(w.identity, v);
      }
      this.byPath.set(w.h5path, v);
      this.variables.push(v);
      if (wanted && !v.skipCode) kept.push(v);
    }
    // Structure of kept datasets (and of the scales labelling them) only.
    for (const v of kept) this.resolve(v);
    for (const v of kept) this.resolveDims(v);
  }

  /** Attributes, filters and empty-axis check of one dataset (idempotent). */
  private resolve(v: H5Variable): void {
    if (v.resolved) return;
    v.resolved = true;
    const set = this.readAttrs(v.h5path);
    const isScale = typeof scalarString(set.raw.CLASS) === 'string' && scalarString(set.raw.CLASS) === 'DIMENSION_SCALE';
    if (isScale) {
      delete set.attrs.CLASS; delete set.attrs.NAME; delete set.attrTypes.CLASS; delete set.attrTypes.NAME;
    }
    v.attrs = set.attrs;
    v.attrTypes = set.attrTypes;
    if (set.names.some((n) => n === '_Netcdf4Dimid' || n === '_Netcdf4Coordinates')) this.kind = 'netcdf4';
    v.hidden = isScale && (scalarString(set.raw.NAME) ?? '').startsWith(NETCDF_PHANTOM_DIM);
    if (v.skipReason || v.hidden) return;
    this.checkFilters(v);
    if (!v.skipReason && v.shape.some((n) => n === 0)) {
      v.skipCode = 'TET_CONVERT_EMPTY';
      v.skipReason = `0-length axis ${v.shape.findIndex((n) => n === 0)}`;
    }
  }

  /** Marks the variable skipped when a filter of its pipeline cannot be decoded here. */
  private checkFilters(v: H5Variable): void {
    if (!v.chunkShape) return;
    const filters = this.tryCall((M) => M.get_dataset_filters(this.fid, v.h5path) as { id: number; name: string; cd_values: number[] }[]);
    if (!filters) return;
    const label = (f: { id: number; name: string }) => `${shortFilterName(f)} (${f.id})`;
    v.pipeline = filters.map(label).join(' + ');
    let trial = false;
    for (const f of filters) {
      if (BUILTIN_FILTERS.has(f.id)) continue;
      if (!this.rt.plugins.has(f.id)) {
        this.unsupported(v, `filter ${label(f)} is not available (no HDF5 plugin for it in this build)`);
        return;
      }
      if (f.id === 32001) {
        const code = Number(f.cd_values?.[6] ?? 0);
        const codec = BLOSC_CODECS[code];
        if (!codec || !codec[1]) {
          this.unsupported(v, `filter ${label(f)} with the ${codec?.[0] ?? `#${code}`} compressor is not supported by the h5wasm blosc plugin`);
          return;
        }
      }
      if (!VERIFIED_PLUGINS.has(f.id)) trial = true;
    }
    if (trial && v.shape.length && v.shape.every((n) => n > 0)) {
      // Plugin not verified against h5py here: decode the first chunk before promising the data.
      try {
        this.readBytes(v, v.shape.map(() => 0), v.shape.map(() => 1));
      } catch (err) {
        this.unsupported(v, `filter pipeline ${v.pipeline} cannot be decoded (${describe(err)})`);
      }
    }
  }

  private unsupported(v: H5Variable, reason: string): void {
    v.skipCode = 'TET_CONVERT_UNSUPPORTED_FILTER';
    v.skipReason = reason;
  }

  /** Axis names and labels: attached dimension scales first, then a CF `coordinates` list. */
  private resolveDims(v: H5Variable): void {
    const set = this.readAttrs(v.h5path);
    const names: (string | null)[] = [];
    const coords: (SourceVariable | null)[] = [];
    const labels = Array.isArray(set.raw.DIMENSION_LABELS) ? set.raw.DIMENSION_LABELS as unknown[] : [];
    const dimList = Array.isArray(set.raw.DIMENSION_LIST) ? set.raw.DIMENSION_LIST as unknown[] : null;
    for (let d = 0; d < v.shape.length; d++) {
      const scale = this.scaleOf(v, d, dimList);
      let name: string | null = typeof labels[d] === 'string' && labels[d] ? labels[d] as string : null;
      if (scale) {
        this.resolve(scale);
        name ??= scale.hidden ? this.baseName(scale) : this.scaleName(scale);
        coords.push(scale.hidden || scale.skipReason || scale.shape.length !== 1 || scale.shape[0] !== v.shape[d] ? null : scale);
      } else {
        coords.push(null);
      }
      names.push(name);
    }
    const isOwnScale = names[0] === null && scalarString(set.raw.CLASS) === 'DIMENSION_SCALE';
    if (isOwnScale) {
      // A scale labels its own first axis (netCDF-C also makes a 2-D `x(x, y)` the scale of x).
      names[0] = this.scaleName(v);
      coords[0] = v.skipReason || v.shape.length !== 1 ? null : v;
    }
    if (names.some((n) => n === null) && set.raw._Netcdf4Coordinates !== undefined) this.netcdfDims(v, set, names, coords);
    if (names.every((n) => n === null)) this.cfCoordinates(v, names, coords);
    v.dimNames = names.every((n): n is string => typeof n === 'string' && n.length > 0) ? names : null;
    v.coordVars = coords;
    if (v.skipCode === 'TET_CONVERT_EMPTY') {
      const d = v.shape.findIndex((n) => n === 0);
      v.skipReason = `0-length axis ${names[d] ?? d}`;
    }
  }

  /** The scale attached to axis d: DIMENSION_LIST references looked up among the walked
   *  datasets (no per-axis name search in the file), else h5wasm's own lookup. */
  private scaleOf(v: H5Variable, d: number, dimList: unknown[] | null): H5Variable | undefined {
    if (!dimList) return undefined;
    const refs = dimList[d];
    const first = Array.isArray(refs) ? refs[0] as { ref_data?: ArrayLike<number> } | undefined : undefined;
    if (first?.ref_data && first.ref_data.length === 8) {
      const hex = Array.from(first.ref_data, (b) => b.toString(16).padStart(2, '0')).join('');
      const tag = v.identity.includes('#') ? v.identity.slice(0, v.identity.indexOf('#')) : '';
      const hit = this.byIdentity.get(`${tag}#${hex}`);
      if (hit) return hit;
      const name = this.tryCall((M) => M.get_referenced_name(this.fid, first.ref_data, true) as string);
      if (name && this.byPath.has(name)) return this.byPath.get(name);
    }
    const paths = this.tryCall((M) => M.get_attached_scales(this.fid, v.h5path, d) as string[]) ?? [];
    return paths.length ? this.byPath.get(paths[0]) : undefined;
  }

  private dimScales?: Map<number, H5Variable>;

  /** Axes a NetCDF-4 variable names only through `_Netcdf4Coordinates` (dimension ids): the
   *  scale with that `_Netcdf4Dimid` in the variable's group or an enclosing one. */
  private netcdfDims(v: H5Variable, set: AttrSet, names: (string | null)[], coords: (SourceVariable | null)[]): void {
    const ids = Array.from(set.raw._Netcdf4Coordinates as ArrayLike<number>, Number);
    if (ids.length !== v.shape.length) return;
    if (!this.dimScales) {
      this.dimScales = new Map();
      const groups = new Set<string>();
      for (let g = path.posix.dirname(v.h5path); ; g = path.posix.dirname(g)) { groups.add(g); if (g === '/') break; }
      for (const c of this.variables) {
        if (!groups.has(path.posix.dirname(c.h5path))) continue;
        const raw = this.readAttrs(c.h5path).raw;
        if (scalarString(raw.CLASS) !== 'DIMENSION_SCALE' || raw._Netcdf4Dimid === undefined) continue;
        const id = Number(Array.from(raw._Netcdf4Dimid as ArrayLike<number>)[0] ?? raw._Netcdf4Dimid);
        if (!this.dimScales.has(id)) this.dimScales.set(id, c);
      }
    }
    ids.forEach((id, d) => {
      if (names[d] !== null) return;
      const scale = this.dimScales!.get(id);
      if (!scale) return;
      this.resolve(scale);
      names[d] = scale.hidden ? this.baseName(scale) : this.scaleName(scale);
      if (!coords[d] && !scale.hidden && !scale.skipReason && scale.shape.length === 1 && scale.shape[0] === v.shape[d]) coords[d] = scale;
    });
    this.dimScales = undefined;
  }

  private baseName(v: H5Variable): string {
    return path.posix.basename(v.name);
  }

  private scaleName(v: H5Variable): string {
    const name = scalarString(this.readAttrs(v.h5path).raw.NAME);
    return name && !name.startsWith(NETCDF_PHANTOM_DIM) ? name.replace(new RegExp(`^${NON_COORD_PREFIX}`), '') : this.baseName(v);
  }

  private coordIndex?: Map<string, H5Variable[]>;

  /** CF `coordinates = "time lat lon"` naming exactly the variable's axes in order, each a 1-D
   *  variable of that axis' length (looked up in the same group, then by unique name anywhere). */
  private cfCoordinates(v: H5Variable, names: (string | null)[], coords: (SourceVariable | null)[]): void {
    const list = typeof v.attrs.coordinates === 'string' ? v.attrs.coordinates.trim().split(/\s+/) : [];
    if (list.length !== v.shape.length) return;
    if (!this.coordIndex) {
      this.coordIndex = new Map();
      for (const c of this.variables) {
        if (c.skipReason || c.shape.length !== 1) continue;
        const base = path.posix.basename(c.name);
        this.coordIndex.set(base, [...(this.coordIndex.get(base) ?? []), c]);
      }
    }
    const group = path.posix.dirname(v.name);
    const found = list.map((n, d) => {
      const candidates = (this.coordIndex!.get(n) ?? []).filter((c) => c.shape[0] === v.shape[d]);
      const local = candidates.find((c) => path.posix.dirname(c.name) === group);
      if (local) return local;
      return candidates.length === 1 ? candidates[0] : undefined;
    });
    if (found.some((c) => !c)) return;
    found.forEach((c) => this.resolve(c!));
    if (found.some((c) => c!.skipReason)) return;
    list.forEach((n, d) => { names[d] = n; coords[d] = found[d]!; });
  }

  // -- data --------------------------------------------------------------------------------------

  /** Reads a hyperslab as little-endian bytes; any failure (status < 0, a thrown error, an abort)
   *  is an error naming the dataset and its filters. */
  private readBytes(v: H5Variable, start: number[], count: number[]): Uint8Array {
    const M = this.M;
    if (this.rt.aborted) {
      throw convertError('TET_CONVERT_READ', `cannot read ${v.name}: the HDF5 library aborted earlier in this conversion`);
    }
    const n = count.reduce((a, b) => a * b, 1);
    const nbytes = n * v.elementSize;
    const ptr: number = M._malloc(Math.max(nbytes, 1));
    if (!ptr) {
      throw convertError('TET_CONVERT_READ', `cannot allocate ${nbytes} bytes in the HDF5 reader for a slab of ${v.name}`);
    }
    try {
      const q = quiet(this.rt, () => M.get_dataset_data(this.fid, v.h5path, count.map(BigInt), start.map(BigInt),
        count.map(() => 1n), BigInt(ptr)) as number);
      if (!q.ok || typeof q.value !== 'number' || q.value < 0) {
        const detail = h5Message(q);
        const filterProblem = /filter|pipeline|Aborted|plugin/i.test(`${detail}\n${q.stderr}`) && v.pipeline;
        const where = `${v.name} [start ${start.join(',')}, count ${count.join(',')}] from ${this.path}`;
        if (filterProblem) {
          throw convertError('TET_CONVERT_UNSUPPORTED_FILTER', `cannot decode ${where}: filter pipeline ${v.pipeline}: ${detail}`, q.error);
        }
        throw convertError('TET_CONVERT_READ', `cannot read ${where}: ${detail}`, q.error);
      }
      return M.HEAPU8.slice(ptr, ptr + nbytes);
    } finally {
      if (!this.rt.aborted) M._free(ptr);
    }
  }

  async read(variable: SourceVariable, start: number[], count: number[]): Promise<TetTypedArray> {
    const v = variable as H5Variable;
    if (!v.readKind) throw convertError('TET_CONVERT_UNSUPPORTED', `${v.name}: element type ${v.sourceType} is not readable`);
    if (v.skipCode === 'TET_CONVERT_UNSUPPORTED_FILTER') {
      throw convertError('TET_CONVERT_UNSUPPORTED_FILTER', `cannot read ${v.name} from ${this.path}: ${v.skipReason}`);
    }
    const bytes = this.readBytes(v, start, count);
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

  async readText(variable: SourceVariable, start: number, count: number): Promise<(string | null)[]> {
    const v = variable as H5Variable;
    if (v.text === 'chars') {
      const len = v.shape[1];
      return decodeFixedTexts(this.readBytes(v, [start, 0], [count, len]), len, count);
    }
    if (v.text !== 'strings') throw convertError('TET_CONVERT_UNSUPPORTED', `${v.name}: element type ${v.sourceType} is not text`);
    if (!v.vlenText) return decodeFixedTexts(this.readBytes(v, [start], [count]), v.elementSize, count);
    return this.readVlenStrings(v, start, count);
  }

  /** Variable-length strings: HDF5 fills the buffer with pointers into the wasm heap, which are
   *  decoded (a null pointer is a null) and then reclaimed for exactly the `count` items read. */
  private readVlenStrings(v: H5Variable, start: number, count: number): (string | null)[] {
    const M = this.M;
    if (this.rt.aborted) throw convertError('TET_CONVERT_READ', `cannot read ${v.name}: the HDF5 library aborted earlier in this conversion`);
    const size = v.elementSize;
    if (size !== 4 && size !== 8) throw convertError('TET_CONVERT_READ', `${v.name}: variable-length string pointers of ${size} bytes`);
    const ptr: number = M._malloc(Math.max(count * size, 1));
    if (!ptr) throw convertError('TET_CONVERT_READ', `cannot allocate ${count * size} bytes in the HDF5 reader for ${v.name}`);
    let filled = false;
    try {
      const q = quiet(this.rt, () => M.get_dataset_data(this.fid, v.h5path, [BigInt(count)], [BigInt(start)], [1n], BigInt(ptr)) as number);
      if (!q.ok || typeof q.value !== 'number' || q.value < 0) {
        throw convertError('TET_CONVERT_READ', `cannot read ${v.name} [start ${start}, count ${count}] from ${this.path}: ${h5Message(q)}`, q.error);
      }
      filled = true;
      const heap: Uint8Array = M.HEAPU8;
      const view = new DataView(heap.buffer, ptr, count * size);
      const out = new Array<string | null>(count);
      for (let i = 0; i < count; i++) {
        const p = size === 4 ? view.getUint32(i * size, true) : Number(view.getBigUint64(i * size, true));
        if (p === 0) { out[i] = null; continue; }
        let end = p;
        while (end < heap.length && heap[end] !== 0) end++;
        out[i] = decodeText(heap.subarray(p, end));
      }
      return out;
    } finally {
      if (!this.rt.aborted) {
        if (filled) quiet(this.rt, () => M.reclaim_vlen_memory_count(this.fid, v.h5path, '', BigInt(ptr), [BigInt(count)]));
        M._free(ptr);
      }
    }
  }

  close(): void {
    if (this.fid < 0n || this.rt.aborted) return;
    const fid = this.fid;
    this.fid = -1n;
    quiet(this.rt, () => this.M.close_file(fid));
  }
}

function shortFilterName(f: { id: number; name: string }): string {
  const plugin = Object.entries(PLUGIN_IDS).find(([, id]) => id === f.id)?.[0];
  const known: Record<number, string> = { 32001: 'blosc', 32004: 'lz4', 32008: 'bitshuffle', 307: 'bzip2', 32000: 'lzf', 32015: 'zstd' };
  const name = (f.name ?? '').split(/[;,]/)[0].trim();
  return known[f.id] ?? BUILTIN_FILTERS.get(f.id) ?? (name && !/^HDF5 /.test(name) ? name : plugin ?? `filter`);
}

function scalarString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

export function openHdf5(src: string, opts: OpenOptions = {}): Promise<SourceReader> {
  return Hdf5Reader.open(src, opts);
}
