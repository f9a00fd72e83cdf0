// Axis tokens (index, decimal string, dimension name) -> sorted axis indices.
import { TetQueryError } from '../errors';
import type { AxisToken } from '../query/document';
import type { DatasetMetadata } from '../types';
import { dimNames } from './metadata';

export function resolveAxisToken(token: AxisToken, ndim: number, meta: DatasetMetadata, at: string): number {
  let axis: number;
  if (typeof token === 'number') {
    axis = token;
  } else {
    const t = token.trim();
    if (/^[0-9]+$/.test(t)) {
      axis = Number(t);
    } else {
      const names = dimNames(meta, ndim);
      if (!names) {
        throw new TetQueryError('TET_QUERY_UNKNOWN_DIMENSION',
          `query ${at}: expected an axis index (the dataset has no dim_names metadata), found ${JSON.stringify(token)}`);
      }
      axis = names.indexOf(t);
      if (axis < 0) {
        throw new TetQueryError('TET_QUERY_UNKNOWN_DIMENSION',
          `query ${at}: expected a dimension name (${names.map((n) => JSON.stringify(n)).join(', ')}), found ${JSON.stringify(token)}`);
      }
    }
  }
  if (!Number.isSafeInteger(axis) || axis < 0 || axis >= ndim) {
    throw new TetQueryError('TET_QUERY_AXIS_OUT_OF_RANGE',
      `query ${at}: expected an axis in 0..${ndim - 1} (rank ${ndim}), found ${JSON.stringify(token)}`);
  }
  return axis;
}

/** Sorted, duplicate-free axes; `at` names the JSON path for errors. */
export function resolveAxes(tokens: readonly AxisToken[], ndim: number, meta: DatasetMetadata, at: string): number[] {
  const axes = tokens.map((t, i) => resolveAxisToken(t, ndim, meta, tokens.length > 1 ? `${at}[${i}]` : at));
  const seen = new Set<number>();
  for (const a of axes) {
    if (seen.has(a)) {
      throw new TetQueryError('TET_QUERY_DUPLICATE_AXIS', `query ${at}: expected distinct axes, found axis ${a} twice`);
    }
    seen.add(a);
  }
  return axes.sort((x, y) => x - y);
}
