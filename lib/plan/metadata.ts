// Footer metadata lookups used at plan time: dimension names and coordinate labels.
import type { DatasetMetadata, FileMetadata } from '../types';

export function datasetMetadata(meta: FileMetadata | undefined, name: string): DatasetMetadata {
  const all = meta?.datasets;
  if (!all || typeof all !== 'object') return {};
  const m = Object.prototype.hasOwnProperty.call(all, name) ? all[name] : undefined;
  return m && typeof m === 'object' && !Array.isArray(m) ? m : {};
}

/** dim_names when present and well-formed (one string per axis), else null. */
export function dimNames(meta: DatasetMetadata, ndim: number): string[] | null {
  const dn = meta.dim_names;
  return Array.isArray(dn) && dn.length === ndim && dn.every((x) => typeof x === 'string') ? dn : null;
}

/** Coordinate labels of axis `axis` (coords keyed by dimension name, else by "<axis>"), or null. */
export function coordLabels(meta: DatasetMetadata, ndim: number, axis: number): string[] | null {
  const coords = meta.coords;
  if (!coords || typeof coords !== 'object') return null;
  const names = dimNames(meta, ndim);
  const keys = [...(names ? [names[axis]] : []), String(axis)];
  for (const k of keys) {
    if (!Object.prototype.hasOwnProperty.call(coords, k)) continue;
    const spec = coords[k] as { labels?: unknown } | undefined;
    if (spec && Array.isArray(spec.labels)) return spec.labels.map((x) => String(x));
  }
  return null;
}

/** The dataset's fill value from CF-style attrs (_FillValue, missing_value, fill_value). */
export function attrFillValue(meta: DatasetMetadata): number | undefined {
  const attrs = meta.attrs;
  if (!attrs || typeof attrs !== 'object') return undefined;
  for (const k of ['_FillValue', 'missing_value', 'fill_value']) {
    const v = (attrs as Record<string, unknown>)[k];
    if (typeof v === 'number') return v;
    if (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) return Number(v);
    if (typeof v === 'string' && /^\s*nan\s*$/i.test(v)) return NaN;
  }
  return undefined;
}
