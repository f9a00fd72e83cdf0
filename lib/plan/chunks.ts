// Which chunks a selection touches. A chunk is touched only when the progression
// start + i*step (or an index of an index list) actually lands inside it (a step larger than
// the tile can skip tiles).
import type { AxisRange } from './selection';

export interface AxisChunkTouch {
  /** Chunk index along the axis. */
  index: number;
  /** Selected positions inside this chunk. */
  selected: number;
}

/** Touched chunks along one axis of length `extent` tiled by `chunk`, in ascending order. */
export function touchedChunksAlongAxis(range: AxisRange, extent: number, chunk: number): AxisChunkTouch[] {
  if (range.indices) {  // index list: group the ascending positions by chunk
    const out: AxisChunkTouch[] = [];
    for (let i = 0; i < range.indices.length; i++) {
      const c = Math.floor(range.indices[i] / chunk);
      if (out.length && out[out.length - 1].index === c) out[out.length - 1].selected++;
      else out.push({ index: c, selected: 1 });
    }
    return out;
  }
  const { start, step, count } = range;
  const last = start + (count - 1) * step;
  const out: AxisChunkTouch[] = [];
  const firstChunk = Math.floor(start / chunk);
  const lastChunk = Math.floor(last / chunk);
  for (let c = firstChunk; c <= lastChunk; c++) {
    const lo = c * chunk;
    const hi = Math.min(lo + chunk, extent);
    // First selected position >= lo.
    const k0 = lo <= start ? 0 : Math.ceil((lo - start) / step);
    const first = start + k0 * step;
    if (first > last) break;
    if (first >= hi) {
      // Nothing lands in this tile; jump to the tile holding the next selected position.
      c = Math.floor(first / chunk) - 1;
      continue;
    }
    const k1 = Math.min(count - 1, Math.floor((hi - 1 - start) / step));
    out.push({ index: c, selected: k1 - k0 + 1 });
  }
  return out;
}

/** A touched chunk in `read_plan.chunks`: grid coordinates, origin, tile shape, selected elements. */
export interface ReadPlanChunk {
  /** Chunk grid coordinates. */
  coords: number[];
  /** The same grid coordinates under the reference's name (a copy of `coords`). */
  chunk_index: number[];
  /** Global element coordinates of the tile's first element. */
  origin: number[];
  /** Tile extent (edge tiles are clipped to the array shape). */
  tile_shape: number[];
  /** Selected elements inside the tile. */
  selected_elements: number;
}

/**
 * Row-major (last axis fastest) list of touched chunks, capped at `limit` entries; `total`
 * is the full count.
 */
export function touchedChunks(ranges: readonly AxisRange[], shape: readonly number[], chunkShape: readonly number[],
  limit: number): { total: number; perAxis: AxisChunkTouch[][]; chunks: ReadPlanChunk[] } {
  const perAxis = ranges.map((r, a) => touchedChunksAlongAxis(r, shape[a], chunkShape[a]));
  const total = perAxis.reduce((p, l) => p * l.length, 1);
  const chunks: ReadPlanChunk[] = [];
  const ndim = ranges.length;
  const idx = new Array<number>(ndim).fill(0);
  const n = Math.min(total, limit);
  for (let i = 0; i < n; i++) {
    const coords: number[] = [];
    const origin: number[] = [];
    const tile: number[] = [];
    let selected = 1;
    for (let a = 0; a < ndim; a++) {
      const t = perAxis[a][idx[a]];
      coords.push(t.index);
      origin.push(t.index * chunkShape[a]);
      tile.push(Math.min(chunkShape[a], shape[a] - t.index * chunkShape[a]));
      selected *= t.selected;
    }
    chunks.push({ coords, chunk_index: coords.slice(), origin, tile_shape: tile, selected_elements: selected });
    for (let a = ndim - 1; a >= 0; a--) {
      if (++idx[a] < perAxis[a].length) break;
      idx[a] = 0;
    }
  }
  return { total, perAxis, chunks };
}

/**
 * Stored bytes of every touched chunk. Without zstd chunks (`storedBytes` omitted) a tile's
 * stored size is its raw size, so the sum factors per axis (no enumeration); otherwise
 * `storedBytes` gives each chunk's stored size in row-major grid order.
 */
export function touchedStoredBytes(perAxis: readonly AxisChunkTouch[][], shape: readonly number[],
  chunkShape: readonly number[], elemSize: number, storedBytes?: ArrayLike<number>): number {
  const ndim = perAxis.length;
  if (!storedBytes) {
    let total = elemSize;
    for (let a = 0; a < ndim; a++) {
      let s = 0;
      for (const t of perAxis[a]) s += Math.min(chunkShape[a], shape[a] - t.index * chunkShape[a]);
      total *= s;
    }
    return total;
  }
  const grid = shape.map((n, a) => Math.ceil(n / chunkShape[a]));
  let total = 0;
  const walk = (a: number, base: number): void => {
    if (a === ndim) { total += storedBytes[base]; return; }
    for (const t of perAxis[a]) walk(a + 1, base * grid[a] + t.index);
  };
  if (perAxis.every((l) => l.length > 0)) walk(0, 0);
  return total;
}

/**
 * Stored bytes of the touched tiles holding a selected element whose row-major position in the
 * selection is below `limit` (the tiles a preview of `limit` values reads). Along an axis the
 * first selected ordinal inside a touched chunk is the sum of the selections before it.
 */
export function previewStoredBytes(perAxis: readonly AxisChunkTouch[][], shape: readonly number[],
  chunkShape: readonly number[], elemSize: number, limit: number, storedBytes?: ArrayLike<number>): number {
  if (limit <= 0 || perAxis.some((l) => l.length === 0)) return 0;
  const ndim = perAxis.length;
  const counts = perAxis.map((l) => l.reduce((s, t) => s + t.selected, 0));
  const stride = new Array<number>(ndim).fill(1);
  for (let a = ndim - 2; a >= 0; a--) stride[a] = stride[a + 1] * counts[a + 1];
  const grid = shape.map((n, a) => Math.ceil(n / chunkShape[a]));
  let total = 0;
  const walk = (a: number, minLogical: number, base: number, elems: number): void => {
    if (minLogical >= limit) return;
    if (a === ndim) { total += storedBytes ? storedBytes[base] : elems * elemSize; return; }
    let ordinal = 0;
    for (const t of perAxis[a]) {
      const extent = Math.min(chunkShape[a], shape[a] - t.index * chunkShape[a]);
      walk(a + 1, minLogical + ordinal * stride[a], base * grid[a] + t.index, elems * extent);
      ordinal += t.selected;
      if (minLogical + ordinal * stride[a] >= limit) break;
    }
  };
  walk(0, 0, 0, 1);
  return total;
}
