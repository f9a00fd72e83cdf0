// A deliberately small, independent reader of .tet v1 (layout_v1.md), written from the spec
// for the tests only: it shares no code with lib/ or native/. It assembles datasets whose
// tiles are all raw into row-major arrays of plain numbers / bigints; zstd tiles are reported
// as undecodable (Node 20 has no zstd).
import { readFileSync } from 'node:fs';

export interface IndependentDataset {
  name: string;
  dtypeTag: number;
  shape: number[];
  chunkShape: number[];
  /** Row-major values, or null when some tile is zstd. */
  values: (number | bigint)[] | null;
}

const SIZE = [0, 4, 8, 4, 8, 1, 2, 2, 4, 2, 8];

/** IEEE binary16 bits → number, from the format's definition (shared by the independent readers). */
export function halfToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

function element(v: DataView, off: number, tag: number): number | bigint {
  switch (tag) {
    case 1: return v.getFloat32(off, true);
    case 2: return v.getFloat64(off, true);
    case 3: return v.getInt32(off, true);
    case 4: return v.getBigInt64(off, true);
    case 5: return v.getUint8(off);
    case 6: return v.getUint16(off, true);
    case 7: return v.getInt16(off, true);
    case 8: return v.getUint32(off, true);
    case 9: return halfToNumber(v.getUint16(off, true));
    case 10: return v.getBigUint64(off, true);
    default: throw new Error(`dtype ${tag}`);
  }
}

export function readIndependently(path: string): IndependentDataset[] {
  const buf = readFileSync(path);
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const u64 = (o: number) => Number(v.getBigUint64(o, true));
  const count = v.getUint32(8, true);
  if (count === 0) return [];
  const indexOffset = u64(16);
  const out: IndependentDataset[] = [];
  let p = 40;
  for (let i = 0; i < count; i++) {
    const start = p;
    const nameLen = v.getUint32(p, true);
    const dtypeTag = v.getUint32(p + 4, true);
    const ndim = v.getUint32(p + 8, true);
    const name = buf.subarray(p + 16, p + 16 + nameLen).toString('utf8');
    p = p + 16 + nameLen;
    p = start + Math.ceil((p - start) / 8) * 8;
    const shape = Array.from({ length: ndim }, (_, a) => u64(p + 8 * a));
    const chunkShape = Array.from({ length: ndim }, (_, a) => u64(p + 8 * (ndim + a)));
    p += 16 * ndim;
    const total = shape.reduce((x, y) => x * y, 1);
    out.push({ name, dtypeTag, shape, chunkShape, values: new Array(total) });
  }
  const entries = u64(indexOffset + 8);
  for (let e = 0; e < entries; e++) {
    const row = indexOffset + 32 + 104 * e;
    const ds = out[u64(row)];
    const coords = Array.from({ length: ds.shape.length }, (_, a) => u64(row + 8 + 8 * a));
    const payload = u64(row + 72);
    const codec = v.getUint32(row + 96, true);
    if (codec !== 0 || ds.values === null) {
      ds.values = null;
      continue;
    }
    const ndim = ds.shape.length;
    const origin = coords.map((c, a) => c * ds.chunkShape[a]);
    const extent = origin.map((o, a) => Math.min(ds.chunkShape[a], ds.shape[a] - o));
    const tileCount = extent.reduce((x, y) => x * y, 1);
    const local = new Array(ndim).fill(0);
    for (let k = 0; k < tileCount; k++) {
      let flat = 0;
      for (let a = 0; a < ndim; a++) flat = flat * ds.shape[a] + origin[a] + local[a];
      ds.values[flat] = element(v, payload + k * SIZE[ds.dtypeTag], ds.dtypeTag);
      for (let a = ndim - 1; a >= 0; a--) {
        if (++local[a] < extent[a]) break;
        local[a] = 0;
      }
    }
  }
  return out;
}
