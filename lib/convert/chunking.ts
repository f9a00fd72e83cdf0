// Tile shapes for converted datasets and the slab plan that reads the source in bounded memory.
import { DTYPE_SIZE, type DTypeName } from '../types';

/** Source chunks are kept when one chunk holds between these many bytes. */
export const MIN_SOURCE_CHUNK_BYTES = 4 << 10;
export const MAX_SOURCE_CHUNK_BYTES = 64 << 20;
export const DEFAULT_TARGET_CHUNK_BYTES = 4 << 20;
export const DEFAULT_SLAB_BYTES = 64 << 20;
/** The .tet chunk index costs 104 bytes a tile; keep it small next to the data. */
const MAX_SOURCE_CHUNKS = 1 << 20;

const product = (xs: number[]) => xs.reduce((a, b) => a * b, 1);

/**
 * Row-major tiles of about `targetBytes`: trailing axes stay whole while they fit, the first axis
 * that does not fit is cut, leading axes get extent 1.
 */
export function defaultChunkShape(shape: number[], dtype: DTypeName, targetBytes = DEFAULT_TARGET_CHUNK_BYTES): number[] {
  const target = Math.max(1, Math.floor(targetBytes / DTYPE_SIZE[dtype]));
  const chunk = shape.map((n) => Math.max(1, n));
  for (let d = 0; d < chunk.length && product(chunk) > target; d++) {
    const rest = product(chunk.slice(d + 1));
    chunk[d] = Math.max(1, Math.min(chunk[d], Math.floor(target / rest)));
  }
  return chunk;
}

export interface ChunkChoice { chunkShape: number[]; origin: 'option' | 'source' | 'default' }

export function chooseChunkShape(shape: number[], dtype: DTypeName, sourceChunk: number[] | null,
  requested: number[] | undefined, targetBytes = DEFAULT_TARGET_CHUNK_BYTES): ChunkChoice {
  const clamp = (c: number[]) => c.map((n, d) => Math.max(1, Math.min(Math.floor(n), Math.max(1, shape[d]))));
  if (requested && requested.length === shape.length) return { chunkShape: clamp(requested), origin: 'option' };
  if (sourceChunk && sourceChunk.length === shape.length && sourceChunk.every((n) => Number.isSafeInteger(n) && n > 0)) {
    const c = clamp(sourceChunk);
    const bytes = product(c) * DTYPE_SIZE[dtype];
    const tiles = product(shape.map((n, d) => Math.ceil(n / c[d])));
    if (bytes <= MAX_SOURCE_CHUNK_BYTES && tiles <= MAX_SOURCE_CHUNKS && (bytes >= MIN_SOURCE_CHUNK_BYTES || tiles === 1)) {
      return { chunkShape: c, origin: 'source' };
    }
  }
  return { chunkShape: defaultChunkShape(shape, dtype, targetBytes), origin: 'default' };
}

/**
 * Number of leading axes read one tile-row at a time: the smallest k such that a slab of one
 * tile along axes < k and whole along axes >= k fits `slabBytes` (k = ndim: tile by tile).
 */
export function slabAxes(shape: number[], chunkShape: number[], dtype: DTypeName, slabBytes = DEFAULT_SLAB_BYTES): number {
  for (let k = 0; k < shape.length; k++) {
    const bytes = product(chunkShape.slice(0, k)) * product(shape.slice(k)) * DTYPE_SIZE[dtype];
    if (bytes <= slabBytes) return k;
  }
  return shape.length;
}

/** Visits every coordinate of `grid` in row-major order (nothing for an empty grid). */
export function* gridCoords(grid: number[]): Generator<number[]> {
  if (grid.some((n) => n <= 0)) return;
  const idx = new Array<number>(grid.length).fill(0);
  for (;;) {
    yield idx.slice();
    let d = grid.length - 1;
    while (d >= 0 && ++idx[d] === grid[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}
