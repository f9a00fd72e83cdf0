// NetCDF classic sources (CDF-1, CDF-2 64-bit offset, CDF-5 64-bit data). The header grammar is
// parsed here with bounds checks (netcdfjs needs the whole file in memory and stops at CDF-2
// offsets above 4 GiB and at CDF-5); variable data is read by hyperslab with positioned reads.
import * as fs from 'node:fs';
import type { DTypeName, TetTypedArray } from '../types';
import { jsonAttr } from './attrs';
import { storageFromBytes, toStorage } from './dtype';
import { convertError, describe, openSourceFd } from './errors';
import { decodeFixedTexts } from './text';
import type { SourceReader, SourceVariable } from './types';

const NC_DIMENSION = 10;
const NC_VARIABLE = 11;
const NC_ATTRIBUTE = 12;
const STREAMING = 0xffffffff;

interface NcType { name: string; size: number; dtype: DTypeName | null }
const NC_TYPES: Record<number, NcType> = {
  1: { name: 'byte', size: 1, dtype: 'i16' }, 2: { name: 'char', size: 1, dtype: null },
  3: { name: 'short', size: 2, dtype: 'i16' }, 4: { name: 'int', size: 4, dtype: 'i32' },
  5: { name: 'float', size: 4, dtype: 'f32' }, 6: { name: 'double', size: 8, dtype: 'f64' },
  7: { name: 'ubyte', size: 1, dtype: 'u8' }, 8: { name: 'ushort', size: 2, dtype: 'u16' },
  9: { name: 'uint', size: 4, dtype: 'u32' }, 10: { name: 'int64', size: 8, dtype: 'i64' },
  11: { name: 'uint64', size: 8, dtype: 'u64' },
};

/** Bounds-checked big-endian cursor over the header bytes read so far. */
class HeaderCursor {
  pos = 0;
  constructor(private readonly buf: Buffer, private readonly version: number, private readonly complete: boolean) {}

  private need(n: number, what: string): void {
    if (this.pos + n > this.buf.length) {
      if (!this.complete) throw new NeedMoreBytes();
      throw convertError('TET_CONVERT_SOURCE_INVALID',
        `NetCDF header truncated: ${what} needs ${n} bytes at offset ${this.pos}, file has ${this.buf.length}`);
    }
  }
  u32(what: string): number { this.need(4, what); const v = this.buf.readUInt32BE(this.pos); this.pos += 4; return v; }
  u64(what: string): number {
    this.need(8, what);
    const v = this.buf.readBigUInt64BE(this.pos); this.pos += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw convertError('TET_CONVERT_SOURCE_INVALID', `NetCDF header: ${what} = ${v} exceeds 2^53`);
    }
    return Number(v);
  }
  /** NON_NEG: 4 bytes, 8 in CDF-5. */
  count(what: string): number { return this.version === 5 ? this.u64(what) : this.u32(what); }
  /** OFFSET: 4 bytes in CDF-1, 8 in CDF-2/5. */
  offset(what: string): number { return this.version === 1 ? this.u32(what) : this.u64(what); }
  bytes(n: number, what: string): Buffer {
    this.need(n, what);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n + ((4 - (n % 4)) % 4);
    return b;
  }
  /** A name as netCDF-C reads it: up to the first NUL (an in-place rename to a shorter name pads
   *  the old length with NULs), NFC-normalized. */
  name(what: string): string {
    const raw = this.bytes(this.count(`${what} name length`), `${what} name`);
    const nul = raw.indexOf(0);
    return (nul >= 0 ? raw.subarray(0, nul) : raw).toString('utf8').normalize('NFC');
  }
}
class NeedMoreBytes extends Error {}

interface NcDim { name: string; size: number }
interface NcVar extends SourceVariable {
  ncType: NcType;
  begin: number;
  isRecord: boolean;
  /** Bytes per record of this variable (record variables) or the whole variable. */
  innerBytes: number;
}

function parseAttrs(c: HeaderCursor, where: string) {
  const attrs: Record<string, unknown> = {};
  const attrTypes: Record<string, string> = {};
  const tag = c.u32(`${where} attribute tag`);
  const n = c.count(`${where} attribute count`);
  if (tag === 0 && n === 0) return { attrs, attrTypes };
  if (tag !== NC_ATTRIBUTE) {
    throw convertError('TET_CONVERT_SOURCE_INVALID', `NetCDF header: expected attribute tag 12 or absent for ${where}, found ${tag}`);
  }
  for (let i = 0; i < n; i++) {
    const name = c.name(`${where} attribute`);
    const typeCode = c.u32(`${where} attribute ${name} type`);
    const type = NC_TYPES[typeCode];
    if (!type) throw convertError('TET_CONVERT_SOURCE_INVALID', `NetCDF header: attribute ${name} of ${where} has type ${typeCode}, expected 1..11`);
    const len = c.count(`${where} attribute ${name} length`);
    const raw = Buffer.from(c.bytes(len * type.size, `${where} attribute ${name} values`));
    if (type.name === 'char') {
      attrs[name] = raw.toString('utf8').replace(/\0+$/, '');
      continue;
    }
    const values = bigEndianToStorage(raw, type);
    const json = jsonAttr(values);
    if (json !== undefined) attrs[name] = json;
    attrTypes[name] = type.name === 'byte' ? 'i8' : type.dtype!;
  }
  return { attrs, attrTypes };
}

/** Big-endian element bytes -> little-endian storage array (byte widens to i16). Swaps in place. */
function bigEndianToStorage(bytes: Buffer, type: NcType): TetTypedArray {
  if (type.size === 2) bytes.swap16();
  else if (type.size === 4) bytes.swap32();
  else if (type.size === 8) bytes.swap64();
  if (type.name === 'byte') return toStorage('i16', new Int8Array(bytes.buffer, bytes.byteOffset, bytes.length));
  return storageFromBytes(type.dtype!, bytes);
}

function parseHeader(buf: Buffer, complete: boolean, fileLen: number, src: string) {
  const version = buf[3];
  const c = new HeaderCursor(buf, version, complete);
  c.pos = 4;
  let numrecs = version === 5 ? c.u64('numrecs') : c.u32('numrecs');
  const dims: NcDim[] = [];
  const dimTag = c.u32('dimension tag');
  const nd = c.count('dimension count');
  if (!(dimTag === 0 && nd === 0)) {
    if (dimTag !== NC_DIMENSION) throw convertError('TET_CONVERT_SOURCE_INVALID', `NetCDF header: expected dimension tag 10, found ${dimTag}`);
    for (let i = 0; i < nd; i++) dims.push({ name: c.name('dimension'), size: c.count('dimension length') });
  }
  const recordDim = dims.findIndex((d) => d.size === 0);
  const globalAttrs = parseAttrs(c, 'global').attrs;
  const varTag = c.u32('variable tag');
  const nv = c.count('variable count');
  const vars: NcVar[] = [];
  if (!(varTag === 0 && nv === 0)) {
    if (varTag !== NC_VARIABLE) throw convertError('TET_CONVERT_SOURCE_INVALID', `NetCDF header: expected variable tag 11, found ${varTag}`);
    for (let i = 0; i < nv; i++) {
      const name = c.name('variable');
      const rank = c.count(`variable ${name} rank`);
      const dimIds: number[] = [];
      for (let d = 0; d < rank; d++) {
        const id = c.count(`variable ${name} dimension id`);
        if (id >= dims.length) throw convertError('TET_CONVERT_SOURCE_INVALID', `NetCDF header: variable ${name} uses dimension ${id}, file has ${dims.length}`);
        dimIds.push(id);
      }
      const { attrs, attrTypes } = parseAttrs(c, `variable ${name}`);
      const typeCode = c.u32(`variable ${name} type`);
      const ncType = NC_TYPES[typeCode];
      if (!ncType) throw convertError('TET_CONVERT_SOURCE_INVALID', `NetCDF header: variable ${name} has type ${typeCode}, expected 1..11`);
      c.count(`variable ${name} vsize`); // recomputed from the shape: CDF-1/2 clamp it at 2^32-1
      const begin = c.offset(`variable ${name} begin`);
      const isRecord = rank > 0 && dimIds[0] === recordDim;
      const innerShape = dimIds.slice(isRecord ? 1 : 0).map((id) => dims[id].size);
      vars.push({
        name, sourceType: ncType.name, dtype: ncType.dtype, ncType, begin, isRecord,
        skipReason: ncType.dtype ? undefined : `unsupported element type (${ncType.name})`,
        shape: dimIds.map((id) => dims[id].size), chunkShape: null,
        dimNames: dimIds.map((id) => dims[id].name), coordVars: [], attrs, attrTypes,
        innerBytes: innerShape.reduce((a, b) => a * b, 1) * ncType.size,
      });
    }
  }
  // Record layout: one record holds every record variable, each padded to 4 bytes, except when a
  // single record variable exists (then records are unpadded).
  const recordVars = vars.filter((v) => v.isRecord);
  const recSize = recordVars.length === 1 ? recordVars[0].innerBytes
    : recordVars.reduce((s, v) => s + v.innerBytes + ((4 - (v.innerBytes % 4)) % 4), 0);
  if (numrecs === STREAMING && version !== 5) {
    const firstBegin = Math.min(...recordVars.map((v) => v.begin));
    numrecs = recSize > 0 && recordVars.length ? Math.floor((fileLen - firstBegin) / recSize) : 0;
  }
  for (const v of vars) {
    if (v.isRecord) v.shape[0] = numrecs;
    const end = v.isRecord ? v.begin + Math.max(0, numrecs - 1) * recSize + v.innerBytes : v.begin + v.innerBytes;
    if (!v.skipReason && v.shape.every((n) => n > 0) && end > fileLen) {
      throw convertError('TET_CONVERT_SOURCE_INVALID',
        `${src}: variable ${v.name} data ends at byte ${end}, beyond the file length ${fileLen}`);
    }
    // A `char` variable (station, strlen) holds one string per station.
    if (v.ncType.name === 'char' && v.shape.length === 2) v.text = 'chars';
    if (!v.skipReason && v.shape.length === 0) v.skipReason = 'rank-0 (scalar) variable';
    if (!v.skipReason && v.shape.length > 8) v.skipReason = `rank ${v.shape.length} exceeds 8`;
  }
  for (const v of vars) {
    v.coordVars = (v.dimNames ?? []).map((dn, d) =>
      vars.find((c) => c.name === dn && c.shape.length === 1 && !c.skipReason && c.shape[0] === v.shape[d]) ?? null);
  }
  return { version, vars, recSize, globalAttrs };
}

class NetcdfClassicReader implements SourceReader {
  readonly kind = 'netcdf3' as const;
  /** NetCDF classic has no groups. */
  readonly groupAttrs: Record<string, Record<string, unknown>> = {};
  constructor(readonly path: string, private fd: number, readonly variables: NcVar[], private readonly recSize: number,
    readonly globalAttrs: Record<string, unknown>) {}

  static open(src: string): NetcdfClassicReader {
    const fd = openSourceFd(src);
    try {
      const fileLen = fs.fstatSync(fd).size;
      // The header length is not stored: parse growing prefixes until it fits.
      for (let size = Math.min(fileLen, 1 << 16); ; size = Math.min(fileLen, size * 4)) {
        const buf = Buffer.alloc(size);
        fs.readSync(fd, buf, 0, size, 0);
        try {
          const { vars, recSize, globalAttrs } = parseHeader(buf, size === fileLen, fileLen, src);
          return new NetcdfClassicReader(src, fd, vars, recSize, globalAttrs);
        } catch (err) {
          if (!(err instanceof NeedMoreBytes)) throw err;
        }
      }
    } catch (err) {
      fs.closeSync(fd);
      throw err;
    }
  }

  async read(variable: SourceVariable, start: number[], count: number[]): Promise<TetTypedArray> {
    const v = variable as NcVar;
    if (!v.ncType.dtype) throw convertError('TET_CONVERT_UNSUPPORTED', `${v.name}: element type ${v.sourceType} is not numeric`);
    return bigEndianToStorage(this.readRaw(v, start, count), v.ncType);
  }

  async readText(variable: SourceVariable, start: number, count: number): Promise<string[]> {
    const v = variable as NcVar;
    if (v.text !== 'chars') throw convertError('TET_CONVERT_UNSUPPORTED', `${v.name}: element type ${v.sourceType} is not text`);
    const len = v.shape[1];
    return decodeFixedTexts(this.readRaw(v, [start, 0], [count, len]), len, count);
  }

  /** The stored (big-endian) bytes of the hyperslab [start, start+count). */
  private readRaw(v: NcVar, start: number[], count: number[]): Buffer {
    const esize = v.ncType.size;
    const total = count.reduce((a, b) => a * b, 1);
    const out = Buffer.alloc(total * esize);
    const inner = v.isRecord ? v.shape.slice(1) : v.shape;
    const innerStart = v.isRecord ? start.slice(1) : start;
    const innerCount = v.isRecord ? count.slice(1) : count;
    const innerElems = innerCount.reduce((a, b) => a * b, 1);
    const records = v.isRecord ? count[0] : 1;
    try {
      for (let r = 0; r < records; r++) {
        const base = v.isRecord ? v.begin + (start[0] + r) * this.recSize : v.begin;
        this.readBlock(base, inner, innerStart, innerCount, esize, out.subarray(r * innerElems * esize, (r + 1) * innerElems * esize));
      }
    } catch (err) {
      throw convertError('TET_CONVERT_READ',
        `cannot read ${v.name} [start ${start.join(',')}, count ${count.join(',')}] from ${this.path}: ${describe(err)}`, err);
    }
    return out;
  }

  /** Copies the row-major block [start, start+count) of an array of `shape` stored at `base`. */
  private readBlock(base: number, shape: number[], start: number[], count: number[], esize: number, out: Buffer): void {
    const nd = shape.length;
    const strides = new Array<number>(nd);
    let s = esize;
    for (let d = nd - 1; d >= 0; d--) { strides[d] = s; s *= shape[d]; }
    // Axes after `k` are read whole, so each run along axis k (and below) is contiguous on disk.
    let k = nd - 1;
    while (k > 0 && count[k] === shape[k] && start[k] === 0) k--;
    const runBytes = nd === 0 ? esize : count[k] * strides[k];
    const first = start.reduce((acc, x, d) => acc + x * strides[d], 0);
    const last = start.reduce((acc, x, d) => acc + (x + count[d] - 1) * strides[d], 0) + esize;
    const span = last - first;
    if (span <= out.length * 2 + (1 << 20)) {
      // One read of the bounding span, then gather the runs from it.
      const buf = span === out.length ? out : Buffer.alloc(span);
      this.readFully(buf, base + first);
      if (buf === out) return;
      this.forEachRun(start, count, strides, k, (offset, i) => buf.copy(out, i * runBytes, offset - first, offset - first + runBytes));
      return;
    }
    this.forEachRun(start, count, strides, k, (offset, i) => this.readFully(out.subarray(i * runBytes, (i + 1) * runBytes), base + offset));
  }

  private forEachRun(start: number[], count: number[], strides: number[], k: number, visit: (offset: number, i: number) => void): void {
    const idx = new Array<number>(k).fill(0);
    for (let i = 0; ; i++) {
      let offset = start[k] * strides[k];
      for (let d = 0; d < k; d++) offset += (start[d] + idx[d]) * strides[d];
      visit(offset, i);
      let d = k - 1;
      while (d >= 0 && ++idx[d] === count[d]) idx[d--] = 0;
      if (d < 0) return;
    }
  }

  private readFully(buf: Buffer, position: number): void {
    let done = 0;
    while (done < buf.length) {
      const n = fs.readSync(this.fd, buf, done, buf.length - done, position + done);
      if (n <= 0) throw new Error(`unexpected end of file at byte ${position + done}`);
      done += n;
    }
  }

  close(): void {
    if (this.fd >= 0) { fs.closeSync(this.fd); this.fd = -1; }
  }
}

export async function openNetcdfClassic(src: string): Promise<SourceReader> {
  return NetcdfClassicReader.open(src);
}
