// `group_by` on tensor queries (spec tables_and_filters.md §4.2, §4.5): the key resolves to one
// axis of the dataset and one of that axis's tables (a stored axis table, or the implicit table
// of the footer's coordinate labels), like a `where` predicate. The rows of that table are the
// axis's positions; each row's group (keys in ascending order: numbers numerically with NaN after
// them, str in binary order, false < true, the null key last) comes from the native table query
// (lib/run/group.ts) or, for labels, from here. The groups listed are those present among the
// selected positions of the axis; the plan's GROUP section carries each selected position's group.
//
// Pure: no addon.
import { TetError, TetQueryError } from '../errors';
import { groupKeys, type QueryDocument, type ReductionName } from '../query/document';
import type { TableColumnInfo, TableInfo } from '../tables/io';
import type { DatasetInfo, DatasetMetadata } from '../types';
import { storedKeyTransform, type StoredKeyTransform } from './literals';
import type { AxisRange } from './selection';
import { axisCandidates, axisKey, compareBytes, resolveAxisColumn, type LabelsTable } from './where';

/** A key value in JSON form (lib/tables/values.ts: dates / timestamps as text, big ints as bigint). */
export type GroupKeyValue = boolean | number | bigint | string | null;

/** A tensor query's group_by resolved against the dataset. */
export interface TensorGroupBy {
  axis: number;
  /** where_plan-style axis key: the dim name, or the decimal index. */
  axisKey: string;
  column: string;
  source: { kind: 'table'; table: TableInfo; column: TableColumnInfo } | { kind: 'labels'; labels: LabelsTable };
  transform: StoredKeyTransform;
}

/** Every position's group along the axis (keys ascending). */
export interface AxisGroups {
  keys: GroupKeyValue[];
  /** Per position of the axis: an index into keys. */
  rowGroups: Uint32Array;
}

/** The groups present among the selected positions of the axis. */
export interface SelectedGroups {
  keys: GroupKeyValue[];
  /** Selected positions per group (spec §4.5: group_counts of tensor queries). */
  counts: number[];
  /** Per selected position of the axis, in selection order: its group (0..keys.length-1). */
  ids: Uint32Array;
}

/**
 * Resolves a validated document's group_by against a dataset (null without one); lib/query/validate.ts
 * has already refused the reductions group_by does not take and a group_by without a reduction.
 * Errors: TET_QUERY_GROUP_BY (a list of keys, an ambiguous column, a bucket / width the column
 * does not take), TET_QUERY_UNKNOWN_COLUMN,
 * TET_QUERY_UNKNOWN_DIMENSION / TET_QUERY_AXIS_OUT_OF_RANGE (bad `axis`), TET_QUERY_WHERE_AXIS
 * (the named axis has no table and no labels).
 */
export function resolveTensorGroupBy(doc: QueryDocument, op: ReductionName | null, ds: DatasetInfo, meta: DatasetMetadata,
  tables: () => readonly TableInfo[]): TensorGroupBy | null {  // the file's tables, listed only when asked (a native call)
  if (doc.group_by === undefined) return null;
  const specs = groupKeys(doc);
  if (specs.length !== 1) {
    throw new TetQueryError('TET_QUERY_GROUP_BY',
      `query $.group_by: a dataset query groups by one key (lists of up to 4 keys are for table queries), found ${specs.length}`);
  }
  if (op === null) throw new TetError('TET_INTERNAL', 'resolveTensorGroupBy: a group_by without a reduction passed validation');
  const spec = specs[0];
  const at = Array.isArray(doc.group_by) ? '$.group_by[0]' : '$.group_by';
  const ndim = ds.shape.length;
  const key = (a: number) => axisKey(meta, ndim, a);
  const c = resolveAxisColumn(axisCandidates(ds, meta, tables()), ds, meta, spec, at, 'TET_QUERY_GROUP_BY',
    'name the axis ("axis.column" or "axis")');
  if (c.source.kind === 'table') {
    const column = c.source.table.columns.find((x) => x.name === spec.column)!;
    return {
      axis: c.axis, axisKey: key(c.axis), column: spec.column, source: { kind: 'table', table: c.source.table, column },
      transform: storedKeyTransform(column, spec, `query ${at}`),
    };
  }
  const labels = c.source.labels;
  return {
    axis: c.axis, axisKey: key(c.axis), column: spec.column, source: { kind: 'labels', labels },
    transform: storedKeyTransform({ name: labels.column, kind: labels.kind }, spec, `query ${at}`),
  };
}

/** The groups of a labels table (no nulls): floats numerically (-0 as 0, NaN last), str in binary order. */
export function labelGroups(labels: LabelsTable, t: StoredKeyTransform): AxisGroups {
  const width = t.type === 'width_float' ? t.width : null;
  const keyOf = (v: string | number): string | number => {
    if (typeof v === 'string') return v;
    const x = width !== null ? Math.floor(v / width) * width : v;
    return x === 0 ? 0 : x;  // -0 and 0 are one group
  };
  const vals = labels.values.map(keyOf);
  const distinct = new Map<string | number, number>();
  for (const v of vals) if (!distinct.has(v)) distinct.set(v, 0);  // Map keys: NaN equals NaN
  const keys = [...distinct.keys()].sort((a, b) => {
    if (typeof a === 'string') return compareBytes(a, b as string);
    const an = Number.isNaN(a), bn = Number.isNaN(b as number);
    return an || bn ? Number(an) - Number(bn) : a - (b as number);
  });
  keys.forEach((k, i) => distinct.set(k, i));
  return { keys, rowGroups: Uint32Array.from(vals, (v) => distinct.get(v)!) };
}

/** The selected positions of an axis range, in selection order. */
export function axisPositions(r: AxisRange): number[] {
  if (r.indices) return r.indices.slice();
  return Array.from({ length: r.count }, (_x, i) => r.start + i * r.step);
}

/** The groups present among `positions` (ascending key order kept), with counts and per-position ids. */
export function selectedGroups(g: AxisGroups, positions: readonly number[]): SelectedGroups {
  const remap = new Int32Array(g.keys.length).fill(-1);
  for (const p of positions) remap[g.rowGroups[p]] = 0;
  const keys: GroupKeyValue[] = [];
  for (let k = 0; k < remap.length; k++) if (remap[k] === 0) { remap[k] = keys.length; keys.push(g.keys[k]); }
  const counts = new Array<number>(keys.length).fill(0);
  const ids = new Uint32Array(positions.length);
  positions.forEach((p, i) => { const id = remap[g.rowGroups[p]]; ids[i] = id; counts[id]++; });
  return { keys, counts, ids };
}
