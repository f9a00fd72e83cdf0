// JSON `selection` -> per axis a half-open box with stride (start, stop, step, count), or an
// index list (sorted, unique positions; start/stop = first/last+1, step 1, count = its length).
import { TetQueryError } from '../errors';
import type { SelectionAxisWire } from '../query/document';
import { checkIndexAxisKeys, checkIndexList } from '../query/indices';
import type { DatasetMetadata } from '../types';
import { coordLabels } from './metadata';

export interface AxisRange {
  start: number;
  /** Exclusive, already clamped to the axis length. */
  stop: number;
  step: number;
  /** Selected positions: start + i*step for 0 <= i < count (or `indices`). */
  count: number;
  /** Index-list axis: the selected positions (strictly ascending, in range). */
  indices?: readonly number[];
}

export interface ResolvedSelection {
  axes: AxisRange[];
  shape: number[];
  elementCount: number;
  /** No axis restricted and every step 1. */
  full: boolean;
  unitStep: boolean;
  /** Some axis is an index list. */
  indexed: boolean;
}

function resolveLabel(meta: DatasetMetadata, ndim: number, axis: number, label: string | number,
  key: 'start_label' | 'stop_label'): number {
  const labels = coordLabels(meta, ndim, axis);
  if (!labels) {
    throw new TetQueryError('TET_QUERY_LABEL_NOT_FOUND',
      `query $.selection[${axis}].${key}: expected coordinate labels for axis ${axis} in the footer metadata, found none`);
  }
  const idx = labels.indexOf(String(label));
  if (idx < 0) {
    const sample = labels.slice(0, 5).map((l) => JSON.stringify(l)).join(', ');
    throw new TetQueryError('TET_QUERY_LABEL_NOT_FOUND',
      `query $.selection[${axis}].${key}: expected one of the ${labels.length} labels of axis ${axis} ` +
      `(${sample}${labels.length > 5 ? ', ...' : ''}), found ${JSON.stringify(String(label))}`);
  }
  return idx;
}

/**
 * Resolves the document's selection against a dataset shape. Labels are half-open:
 * start_label is included, stop_label excluded. `stop` beyond the axis clamps (Python slicing);
 * an empty result, step 0, start >= stop, negative bounds or a rank mismatch are errors.
 */
export function resolveSelection(selection: readonly (SelectionAxisWire | null)[] | null | undefined,
  shape: readonly number[], meta: DatasetMetadata = {}): ResolvedSelection {
  const ndim = shape.length;
  if (selection != null && selection.length !== ndim) {
    throw new TetQueryError('TET_QUERY_RANK_MISMATCH',
      `query $.selection: expected ${ndim} entries (one per axis of the rank-${ndim} dataset), found ${selection.length} ` +
      `(selection rank ${selection.length} != dataset rank ${ndim}: the selection must have exactly ${ndim} axes)`);
  }
  const axes: AxisRange[] = [];
  for (let a = 0; a < ndim; a++) {
    const w = selection?.[a] ?? {};
    const at = `$.selection[${a}]`;
    if (w.indices != null) {
      checkIndexAxisKeys(w as Record<string, unknown>, a);
      const indices = checkIndexList(w.indices, a, shape[a]);
      const n = indices.length;
      axes.push({ start: indices[0], stop: indices[n - 1] + 1, step: 1, count: n, indices });
      continue;
    }
    for (const k of ['start', 'stop', 'step'] as const) {
      const v = w[k];
      if (v != null && (!Number.isSafeInteger(v) || v < 0)) {
        throw new TetQueryError('TET_QUERY_SELECTION', `query ${at}.${k}: expected a non-negative integer, found ${v}`);
      }
    }
    let start = w.start ?? undefined;
    let stop = w.stop ?? undefined;
    if (w.start_label != null) start = resolveLabel(meta, ndim, a, w.start_label, 'start_label');
    if (w.stop_label != null) stop = resolveLabel(meta, ndim, a, w.stop_label, 'stop_label');
    const step = w.step ?? 1;
    if (step === 0) throw new TetQueryError('TET_QUERY_SELECTION', `query ${at}.step: expected a step >= 1, found 0`);
    if (start !== undefined && stop !== undefined && !(start < stop)) {
      throw new TetQueryError('TET_QUERY_SELECTION',
        `query ${at}: expected start < stop, found start ${start} and stop ${stop}`);
    }
    const s = start ?? 0;
    const e = Math.min(stop ?? shape[a], shape[a]);
    if (s >= e) {
      throw new TetQueryError('TET_QUERY_EMPTY_SELECTION',
        `query ${at}: expected a non-empty range within axis ${a} of length ${shape[a]}, found start ${s}` +
        (stop !== undefined ? ` and stop ${stop}` : ''));
    }
    axes.push({ start: s, stop: e, step, count: Math.floor((e - s + step - 1) / step) });
  }
  const outShape = axes.map((r) => r.count);
  return {
    axes,
    shape: outShape,
    elementCount: outShape.reduce((p, n) => p * n, 1),
    full: axes.every((r, a) => r.start === 0 && r.stop === shape[a] && r.step === 1 && r.count === shape[a]),
    unitStep: axes.every((r) => r.step === 1 && !r.indices),
    indexed: axes.some((r) => r.indices !== undefined),
  };
}
