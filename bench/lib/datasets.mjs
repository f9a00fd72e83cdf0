// What the benchmark measures on: dataset geometry per size, the deterministic values, and the
// query cases. Everything here is a pure function of the size, so the generator, the reference
// script's inputs and every trial agree without passing arrays around.

export const MiB = 1024 * 1024;
export const GiB = 1024 * MiB;

/** Parses "1G", "64M", "512MiB", "1073741824" into bytes. */
export function parseSize(text) {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(String(text));
  if (!m) throw new Error(`--size: expected a byte count such as 1G or 64M, found "${text}"`);
  const unit = { '': 1, k: 1024, m: MiB, g: GiB, t: 1024 * GiB }[m[2].toLowerCase()];
  return Math.round(Number(m[1]) * unit);
}

export function sizeLabel(bytes) {
  if (bytes >= GiB && bytes % GiB === 0) return `${bytes / GiB}GiB`;
  if (bytes % MiB === 0) return `${bytes / MiB}MiB`;
  return `${bytes}B`;
}

const DTYPE = {
  f32: { size: 4, tag: 1, numpy: '<f4', zarr: 'float32', h5: '<f', Array: Float32Array },
  f64: { size: 8, tag: 2, numpy: '<f8', zarr: 'float64', h5: '<d', Array: Float64Array },
  i32: { size: 4, tag: 3, numpy: '<i4', zarr: 'int32', h5: '<i', Array: Int32Array },
};
export const dtypeInfo = (dt) => DTYPE[dt];

/**
 * Geometry of the three variants for a main size of `bytes`: the f32 square `side × side`
 * (1 GiB → 16384²), f64 and i32 with the same byte count. Tiles span 4–64 MiB at 1 GiB:
 * f32 16 MiB (8×8 grid), f64 64 MiB (4×4), i32 4 MiB (16×16); they shrink with the size so a
 * small run still has a multi-chunk grid.
 */
export function geometry(bytes) {
  let side = Math.floor(Math.sqrt(bytes / 4) / 256) * 256;
  if (side < 512) side = 512;
  const f32 = { dtype: 'f32', shape: [side, side], chunkShape: [side / 8, side / 8] };
  const f64 = { dtype: 'f64', shape: [side, side / 2], chunkShape: [side / 4, side / 8] };
  const i32 = { dtype: 'i32', shape: [side, side], chunkShape: [side / 16, side / 16] };
  for (const g of [f32, f64, i32]) {
    g.elements = g.shape[0] * g.shape[1];
    g.bytes = g.elements * DTYPE[g.dtype].size;
    g.tileBytes = g.chunkShape[0] * g.chunkShape[1] * DTYPE[g.dtype].size;
    g.grid = [g.shape[0] / g.chunkShape[0], g.shape[1] / g.chunkShape[1]];
  }
  return { side, f32, f64, i32 };
}

/** Where the unique max / min sit (flat row-major index) so arg_max has one right answer. */
export function plantedExtremes(shape) {
  const [r, c] = shape;
  const maxAt = [Math.floor(r * 0.7) + 3, Math.floor(c * 0.3) + 5];
  const minAt = [Math.floor(r * 0.2) + 7, Math.floor(c * 0.9) + 1];
  return { maxAt, minAt, maxFlat: maxAt[0] * c + maxAt[1], minFlat: minAt[0] * c + minAt[1] };
}

// Integer hash of the flat index (murmur3 finalizer): order-independent noise, so tiles, row
// blocks and whole arrays produce identical values.
function hash32(k) {
  let h = Math.imul(k ^ (k >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Fills `out` (row-major, rows r0..r1, cols c0..c1) with the dataset's values. Floats are a
 * smooth field plus quantized noise (exact in f32, so f32 and f64 hold the same numbers and
 * zstd finds some redundancy, like real sensor data); i32 is the same field × 1000.
 */
export function fillBlock(g, r0, r1, c0, c1, out) {
  const [rows, cols] = g.shape;
  const { maxAt, minAt } = plantedExtremes(g.shape);
  const isInt = g.dtype === 'i32';
  const w = c1 - c0;
  const colTerm = new Float64Array(w);
  for (let j = 0; j < w; j++) colTerm[j] = Math.round(5 * Math.cos(((c0 + j) * 2 * Math.PI * 2) / cols) * 64) / 64;
  let o = 0;
  for (let i = r0; i < r1; i++) {
    const rowTerm = Math.round(10 * Math.sin((i * 2 * Math.PI * 3) / rows) * 64) / 64 + 3;
    const base = i * cols;
    if (isInt) {
      for (let j = 0; j < w; j++) {
        const h = hash32(base + c0 + j);
        out[o++] = Math.round((rowTerm + colTerm[j]) * 1000) + (h & 1023) - 512;
      }
    } else {
      for (let j = 0; j < w; j++) {
        const h = hash32(base + c0 + j);
        out[o++] = rowTerm + colTerm[j] + ((h >>> 8) & 255) / 256 - 0.5;
      }
    }
    if (i === maxAt[0] && maxAt[1] >= c0 && maxAt[1] < c1) out[(i - r0) * w + maxAt[1] - c0] = isInt ? 100000000 : 1000;
    if (i === minAt[0] && minAt[1] >= c0 && minAt[1] < c1) out[(i - r0) * w + minAt[1] - c0] = isInt ? -100000000 : -1000;
  }
  return out;
}

/**
 * Query cases. `doc` is the tet query (the dataset is always named "data"); `op` + `sel` tell
 * peers and the reference script what to compute. `sel` is per axis [start, stop, step].
 */
export function cases(geo) {
  const out = [];
  const scalarOps = ['sum', 'mean', 'min', 'max', 'var', 'std'];
  for (const dt of ['f32', 'f64', 'i32']) {
    const g = geo[dt];
    for (const op of scalarOps) out.push({ id: `${dt}.${op}`, dt, op, doc: { [op]: [] }, kind: 'scalar' });
    out.push({ id: `${dt}.arg_max`, dt, op: 'arg_max', doc: { arg_max: [] }, kind: 'argmax' });
    // min and max from one query (the `reductions` extension) against the probe's one-pass minmax
    out.push({ id: `${dt}.minmax`, dt, op: 'minmax', doc: { reductions: ['min', 'max'] }, kind: 'minmax' });
    out.push({ id: `${dt}.mean_axis0`, dt, op: 'mean_axis0', doc: { mean: 0 }, kind: 'axis' });
    out.push({ id: `${dt}.mean_axis1`, dt, op: 'mean_axis1', doc: { mean: 1 }, kind: 'axis' });
    if (dt === 'f32') {
      out.push({ id: 'f32.median', dt, op: 'median', doc: { median: [] }, kind: 'order' });
      out.push({ id: 'f32.quantile99', dt, op: 'quantile99', doc: { quantile: { q: 0.99 } }, kind: 'order' });
      const [cr, cc] = g.chunkShape;
      const one = [[cr, 2 * cr, 1], [cc, 2 * cc, 1]];
      out.push({ id: 'f32.one_chunk_sum', dt, op: 'sum', sel: one, doc: { sum: [], selection: selDoc(one) }, kind: 'scalar', bytes: g.tileBytes });
      const strided = [[0, g.shape[0], 4], [0, g.shape[1], 1]];
      out.push({ id: 'f32.strided_sum', dt, op: 'sum', sel: strided, doc: { sum: [], selection: selDoc(strided) }, kind: 'scalar' });
      out.push({ id: 'f32.zstd_sum', dt, op: 'sum', codec: 'zstd', doc: { sum: [] }, kind: 'scalar' });
    }
  }
  for (const c of out) c.doc = { dataset: 'data', ...c.doc };
  return out;
}

function selDoc(sel) {
  return sel.map(([start, stop, step]) => (step === 1 ? { start, stop } : { start, stop, step }));
}
