// Index-list selections (`selection: [{"indices": [3, 17, 18, 40]}, ...]`): the checks shared by
// query validation (no catalog: integers, strictly ascending, length) and planning / read()
// (also each index < the axis extent). Every failure is TET_QUERY_SELECTION naming the axis and
// the offending position.
import { TetQueryError } from '../errors';
import { describeFound } from './errors';

/** At most this many entries in one axis' index list (plan wire v2: 2^24). */
export const MAX_INDEX_LIST = 1 << 24;

/** Keys an index-list axis must not combine with. */
export const BOX_SELECTION_KEYS = ['start', 'stop', 'step', 'start_label', 'stop_label'] as const;

/**
 * Checks one axis' index list; `extent` (the axis length) is checked when given. Returns the
 * list. O(n), no copy.
 */
export function checkIndexList(list: unknown, axis: number, extent?: number): readonly number[] {
  const at = `$.selection[${axis}].indices`;
  if (!Array.isArray(list) && !(ArrayBuffer.isView(list) && !(list instanceof DataView))) {
    throw new TetQueryError('TET_QUERY_SELECTION',
      `query ${at}: expected an array of integer indices, found ${describeFound(list)}`);
  }
  const xs = list as ArrayLike<unknown>;
  const n = xs.length;
  if (n === 0) {
    throw new TetQueryError('TET_QUERY_SELECTION',
      `query ${at}: expected a non-empty index list (axis ${axis}), found []`);
  }
  if (n > MAX_INDEX_LIST) {
    throw new TetQueryError('TET_QUERY_SELECTION',
      `query ${at}: expected at most ${MAX_INDEX_LIST} indices on axis ${axis}, found ${n}`);
  }
  let prev = -1;
  for (let i = 0; i < n; i++) {
    const v = xs[i];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
      throw new TetQueryError('TET_QUERY_SELECTION',
        `query ${at}[${i}]: expected a non-negative integer index (axis ${axis}), found ${describeFound(v)}`);
    }
    if (v <= prev) {
      throw new TetQueryError('TET_QUERY_SELECTION',
        `query ${at}[${i}]: expected indices sorted strictly ascending (unique) on axis ${axis}, ` +
        `found ${v} after ${prev}`);
    }
    if (extent !== undefined && v >= extent) {
      throw new TetQueryError('TET_QUERY_SELECTION',
        `query ${at}[${i}]: expected an index in [0, ${extent}) (axis ${axis} has length ${extent}), found ${v}`);
    }
    prev = v;
  }
  return xs as readonly number[];
}

/** An axis entry that has `indices` must not also have box keys. */
export function checkIndexAxisKeys(axis: Record<string, unknown>, i: number): void {
  if (axis.indices == null) return;
  const other = BOX_SELECTION_KEYS.find((k) => axis[k] != null);
  if (other) {
    throw new TetQueryError('TET_QUERY_SELECTION',
      `query $.selection[${i}]: expected either "indices" or start/stop/step/start_label/stop_label, found "indices" and "${other}"`);
  }
}
