// A query response -> the picture that shows it, as a Vega specification (no I/O, no Vega
// import: lib/plot/render.ts renders it). What is drawn:
//   scalar histogram               bars over the bin edges
//   a 1-D result                   a line over the kept axis' coordinate labels (or positions)
//   a 2-D result, covariance /     a heatmap with both axes labelled and a colour scale
//   correlation
//   a grouped result [G]           bars per group key
//   a grouped result [G, K]        a heatmap: one row per group key, the kept axis across
// The geometry is fixed (autosize none, fixed padding), so the plot area of a heatmap starts at
// (padding.left, padding.top) and each cell is cellWidth x cellHeight pixels.
import { coordLabels, dimNames } from '../plan/metadata';
import { TetError } from '../errors';
import { PARTIAL_FIELD } from '../ops.generated';
import type { QueryResponse } from '../response/types';
import type { DatasetMetadata } from '../types';

/** Options of {@link renderPlot} / {@link plotSpec}. */
export interface PlotOptions {
  /** 'svg' (default) or 'png'. */
  format?: 'svg' | 'png';
  /** Target plot-area width in pixels (default 640; heatmap cells are whole pixels). */
  width?: number;
  /** Target plot-area height in pixels (default 400 for lines and bars; heatmaps follow their cells). */
  height?: number;
  /** Title (default: the operation, dataset and units). */
  title?: string;
  /** The dataset's metadata (`file.metadata.datasets[name]`): coordinate labels, dim names, units. */
  metadata?: DatasetMetadata;
  /** Vega colour scheme of heatmaps (default 'viridis'). */
  scheme?: string;
}

export const PADDING = { left: 72, top: 36, right: 120, bottom: 56 } as const;
/** Lines and bars have no colour legend on the right. */
const PADDING_NO_LEGEND = { ...PADDING, right: 32 } as const;
/** Pixels around the plot area. */
export type PlotPadding = { left: number; top: number; right: number; bottom: number };

/** What {@link plotSpec} returns: the Vega specification and the picture's fixed geometry. */
export interface PlotSpec {
  kind: 'histogram' | 'line' | 'heatmap' | 'bars';
  /** The Vega specification. */
  vega: Record<string, unknown>;
  /** Space around the plot area: the plot area starts at (padding.left, padding.top). */
  padding: PlotPadding;
  /** Picture size in pixels (plot area + padding). */
  width: number;
  height: number;
  /** Heatmaps: cell size, and whether row 0 is drawn at the bottom (numeric ascending row labels). */
  cell?: { width: number; height: number; rows: number; cols: number; rowZeroAtBottom: boolean };
}

function bad(message: string): never {
  throw new TetError('TET_PLOT_BAD_OPTION', message);
}

function unsupported(message: string): never {
  throw new TetError('TET_PLOT_UNSUPPORTED', message);
}

function positiveInt(v: unknown, name: string, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 16 || v > 16384) bad(`plot ${name} must be an integer in [16, 16384], found ${String(v)}`);
  return v;
}

/** The observation axis of a covariance / correlation document (default 0). */
function obsAxisOf(res: QueryResponse, op: string): number {
  const v = (res.query as unknown as Record<string, unknown>)[op];
  const spec = v && typeof v === 'object' && !Array.isArray(v) ? ((v as Record<string, unknown>).axis ?? (v as Record<string, unknown>).axes) : v;
  const token = Array.isArray(spec) ? spec[0] : spec;
  if (typeof token === 'number') return token === 1 || token === -1 ? 1 : 0;
  if (typeof token === 'string') return res.catalog?.dim_names?.indexOf(token) === 1 ? 1 : 0;
  return 0;
}

/** Labels of a kept selection axis: the coordinate labels at its selected positions, or the positions. */
function axisLabels(res: QueryResponse, meta: DatasetMetadata | undefined, axis: number): (string | number)[] {
  const ndim = res.catalog?.shape?.length ?? 0;
  const sel = res.read_plan?.selection[axis];
  const wire = res.query.selection?.[axis] as { indices?: number[] } | null | undefined;
  const positions = wire?.indices ?? (sel ? Array.from({ length: sel.count }, (_, i) => sel.start + i * sel.step) : []);
  const raw = meta?.coords ? rawLabels(meta, ndim, axis) : null;
  return raw ? positions.map((p) => raw[p] ?? p) : positions;
}

function rawLabels(meta: DatasetMetadata, ndim: number, axis: number): (string | number)[] | null {
  if (!coordLabels(meta, ndim, axis)) return null;
  const names = dimNames(meta, ndim);
  for (const k of [...(names ? [names[axis]] : []), String(axis)]) {
    const spec = meta.coords?.[k];
    if (spec && Array.isArray(spec.labels)) return spec.labels;
  }
  return null;
}

function axisTitle(res: QueryResponse, meta: DatasetMetadata | undefined, axis: number): string {
  const names = res.catalog?.dim_names ?? (meta ? dimNames(meta, res.catalog?.shape?.length ?? 0) : null);
  return names?.[axis] ?? `axis ${axis}`;
}

function units(meta: DatasetMetadata | undefined): string {
  const u = meta?.attrs?.units;
  return typeof u === 'string' ? u : '';
}

const numeric = (labels: (string | number)[]) => labels.every((x) => typeof x === 'number' && Number.isFinite(x));
const ascending = (labels: (string | number)[]) => numeric(labels) && labels.every((x, i) => i === 0 || (x as number) > (labels[i - 1] as number));

/** Every k-th label, so that about `room / 48` labels show on a band axis. */
function tickValues(labels: (string | number)[], room: number): (string | number)[] {
  const k = Math.max(1, Math.ceil(labels.length / Math.max(2, Math.floor(room / 80))));
  return labels.filter((_, i) => i % k === 0);
}

function toNumber(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  return null;
}

function frame(title: string, width: number, height: number, padding: PlotPadding, body: Record<string, unknown>): Record<string, unknown> {
  return {
    $schema: 'https://vega.github.io/schema/vega/v6.json',
    width, height, autosize: 'none', padding: { ...padding }, background: 'white',
    title: { text: title, anchor: 'start', fontSize: 13 },
    ...body,
  };
}

/** A group key as a label: composite keys joined with " · ", the null key as "null". */
export function groupKeyLabel(key: unknown): string {
  if (Array.isArray(key)) return key.map(groupKeyLabel).join(' · ');
  if (key === null || key === undefined) return 'null';
  return String(key);
}

/** The dataset axis a tensor query groups along, when the document names it (else null). */
function groupAxisOf(res: QueryResponse): number | null {
  const g = res.query.group_by;
  const first = Array.isArray(g) ? g[0] : g;
  let token: unknown = typeof first === 'string' ? (first.includes('.') ? first.slice(0, first.indexOf('.')) : undefined) : first?.axis;
  if (typeof token === 'string' && /^[0-9]+$/.test(token)) token = Number(token);
  if (typeof token === 'number') return token;
  if (typeof token === 'string') {
    const i = res.catalog?.dim_names?.indexOf(token) ?? -1;
    return i >= 0 ? i : null;
  }
  return null;
}

function barsSpec(title: string, width: number, height: number, keys: string[], values: ArrayLike<unknown>, yTitle: string): PlotSpec {
  const bars = keys.map((k, i) => ({ i, k, y: toNumber(values[i]) }));
  const index = keys.map((_, i) => i);
  const slanted = keys.length > 12 || keys.some((k) => k.length > 8);
  const pad = slanted ? { ...PADDING_NO_LEGEND, bottom: PADDING.bottom + 40 } : PADDING_NO_LEGEND;
  return {
    kind: 'bars', padding: pad, width: width + pad.left + pad.right, height: height + pad.top + pad.bottom,
    vega: frame(title, width, height, pad, {
      data: [{ name: 'bars', values: bars }],
      scales: [
        { name: 'x', type: 'band', domain: index, range: 'width', padding: 0.15 },
        { name: 'y', type: 'linear', domain: { data: 'bars', field: 'y' }, range: 'height', nice: true, zero: true },
      ],
      axes: [
        { orient: 'bottom', scale: 'x', title: 'group', values: tickValues(index, width * (slanted ? 2 : 1)),
          ...(slanted ? { labelAngle: -45, labelAlign: 'right' } : {}),
          encode: { labels: { update: { text: { signal: `[${keys.map((l) => JSON.stringify(l)).join(',')}][datum.value]` } } } } },
        { orient: 'left', scale: 'y', title: yTitle, grid: true },
      ],
      marks: [{
        type: 'rect', from: { data: 'bars' },
        encode: { enter: {
          x: { scale: 'x', field: 'i' }, width: { scale: 'x', band: 1 },
          y: { scale: 'y', field: 'y' }, y2: { scale: 'y', value: 0 },
          fill: [{ test: 'isValid(datum.y)', value: '#4c78a8' }, { value: '#d9d9d9' }],
        } },
      }],
    }),
  };
}

/** The Vega specification of a response's picture; TET_PLOT_UNSUPPORTED when it has none. */
export function plotSpec(res: QueryResponse, opts: PlotOptions = {}): PlotSpec {
  const ex = res.execution;
  if (!ex || res.status !== 'executed' || !ex.operation) unsupported('only an executed query with an aggregate has a picture (run it with -x / execute)');
  const op = ex.operation;
  const meta = opts.metadata;
  const width = positiveInt(opts.width, 'width', 640);
  const u = units(meta);
  const dataset = res.catalog?.dataset ?? res.query.dataset;
  const over = (ex.operation_reduced_axes ?? []).map((a) => axisTitle(res, meta, a));
  const title = opts.title ?? `${op} of ${dataset}${over.length ? ` over ${over.join(', ')}` : ''}${u ? ` (${u})` : ''}`;
  const scheme = opts.scheme ?? 'viridis';
  if (typeof scheme !== 'string' || !/^[a-z0-9-]+$/i.test(scheme)) bad(`plot scheme must be a Vega scheme name, found ${String(scheme)}`);

  const grouped = (ex as unknown as Record<string, unknown>)[`operation_grouped_${op}`] as ArrayLike<unknown> | undefined;
  if (ex.group_keys && grouped) {
    const keys = ex.group_keys.map(groupKeyLabel);
    const shape = ex.operation_reduced_shape ?? [keys.length];
    if (keys.length === 0) unsupported('a grouped result with no group (where left nothing) has no picture');
    if (shape.length === 1) {
      return barsSpec(opts.title ?? `${op} of ${dataset} per group${u ? ` (${u})` : ''}`, width, positiveInt(opts.height, 'height', 400),
        keys, grouped, `${op}${u ? ` (${u})` : ''}`);
    }
    if (shape.length !== 2) unsupported(`a grouped result of shape [${shape.join(', ')}] has no picture yet: keep at most one axis besides the groups`);
    const ndim = res.catalog?.shape?.length ?? 0;
    const gAxis = groupAxisOf(res);
    const reducedAxes = ex.operation_reduced_axes ?? [];
    const kept = Array.from({ length: ndim }, (_, a) => a).filter((a) => a !== gAxis && !reducedAxes.includes(a));
    const cols = kept.length === 1 ? axisLabels(res, meta, kept[0]).slice(0, shape[1]) : [];
    return heatmap({
      title: opts.title ?? `${op} of ${dataset} per group${u ? ` (${u})` : ''}`, width, height: opts.height, scheme, op, u,
      rows: keys, cols: cols.length === shape[1] ? cols : Array.from({ length: shape[1] }, (_, i) => i),
      values: grouped, rowTitle: 'group', colTitle: kept.length === 1 ? axisTitle(res, meta, kept[0]) : 'position', rowZeroAtBottom: false,
    });
  }

  if (op === 'histogram' && ex.operation_histogram_counts && ex.operation_histogram_edges) {
    const height = positiveInt(opts.height, 'height', 400);
    const edges = ex.operation_histogram_edges;
    const values = ex.operation_histogram_counts.map((c, i) => ({ x0: edges[i], x1: edges[i + 1], n: toNumber(c) }));
    return {
      kind: 'histogram', padding: PADDING_NO_LEGEND,
      width: width + PADDING_NO_LEGEND.left + PADDING_NO_LEGEND.right, height: height + PADDING.top + PADDING.bottom,
      vega: frame(title, width, height, PADDING_NO_LEGEND, {
        data: [{ name: 'bins', values }],
        scales: [
          { name: 'x', type: 'linear', domain: [edges[0], edges[edges.length - 1]], range: 'width', zero: false, nice: false },
          { name: 'y', type: 'linear', domain: { data: 'bins', field: 'n' }, range: 'height', nice: true, zero: true },
        ],
        axes: [
          { orient: 'bottom', scale: 'x', title: u ? `value (${u})` : 'value', labelOverlap: true },
          { orient: 'left', scale: 'y', title: 'count', grid: true },
        ],
        marks: [{
          type: 'rect', from: { data: 'bins' },
          encode: { enter: {
            x: { scale: 'x', field: 'x0' }, x2: { scale: 'x', field: 'x1', offset: -1 },
            y: { scale: 'y', field: 'n' }, y2: { scale: 'y', value: 0 }, fill: { value: '#4c78a8' },
          } },
        }],
      }),
    };
  }

  let rows: (string | number)[];
  let cols: (string | number)[] | null;
  let values: ArrayLike<unknown>;
  let rowTitle: string;
  let colTitle: string;
  if (op === 'covariance' || op === 'correlation') {
    const order = (ex[`operation_${op}_order`] as number | undefined) ?? 0;
    const varAxis = 1 - obsAxisOf(res, op);
    rows = axisLabels(res, meta, varAxis).slice(0, order);
    if (rows.length !== order) rows = Array.from({ length: order }, (_, i) => i);
    cols = rows;
    values = (ex[`operation_${op}`] as number[] | undefined) ?? [];
    rowTitle = colTitle = axisTitle(res, meta, varAxis);
  } else {
    const field = PARTIAL_FIELD[op as keyof typeof PARTIAL_FIELD];
    const shape = ex.operation_reduced_shape;
    const reduced = ex.operation_reduced_axes;
    if (!field || !shape || !reduced) unsupported(`a scalar ${op} is one number: it has no picture (reduce fewer axes, or ask for a histogram)`);
    if (op === 'histogram') unsupported('a partial histogram (one histogram per output cell) has no picture yet; use a scalar histogram');
    const ndim = res.catalog?.shape?.length ?? shape.length + reduced.length;
    const kept = Array.from({ length: ndim }, (_, a) => a).filter((a) => !reduced.includes(a));
    values = (ex as unknown as Record<string, ArrayLike<unknown>>)[field];
    if (kept.length === 1) {
      const height = positiveInt(opts.height, 'height', 400);
      const xs = axisLabels(res, meta, kept[0]);
      const points = Array.from({ length: values.length }, (_, i) => ({ x: xs[i] ?? i, y: toNumber(values[i]) }));
      const linear = numeric(xs);
      return {
        kind: 'line', padding: PADDING_NO_LEGEND,
        width: width + PADDING_NO_LEGEND.left + PADDING_NO_LEGEND.right, height: height + PADDING.top + PADDING.bottom,
        vega: frame(title, width, height, PADDING_NO_LEGEND, {
          data: [{ name: 'line', values: points }],
          scales: [
            linear
              ? { name: 'x', type: 'linear', domain: { data: 'line', field: 'x' }, range: 'width', zero: false, nice: false }
              : { name: 'x', type: 'point', domain: { data: 'line', field: 'x' }, range: 'width' },
            { name: 'y', type: 'linear', domain: { data: 'line', field: 'y' }, range: 'height', nice: true, zero: false },
          ],
          axes: [
            { orient: 'bottom', scale: 'x', title: axisTitle(res, meta, kept[0]), labelOverlap: true,
              ...(linear ? {} : { values: tickValues(xs, width) }) },
            { orient: 'left', scale: 'y', title: `${op}${u ? ` (${u})` : ''}`, grid: true },
          ],
          marks: [{
            type: 'line', from: { data: 'line' },
            encode: { enter: {
              x: { scale: 'x', field: 'x' }, y: { scale: 'y', field: 'y' },
              defined: { signal: 'isValid(datum.y)' }, stroke: { value: '#4c78a8' }, strokeWidth: { value: 2 },
            } },
          }],
        }),
      };
    }
    if (kept.length !== 2) unsupported(`a ${kept.length}-D result has no picture yet: keep one axis (a line) or two (a heatmap)`);
    rows = axisLabels(res, meta, kept[0]);
    cols = axisLabels(res, meta, kept[1]);
    rowTitle = axisTitle(res, meta, kept[0]);
    colTitle = axisTitle(res, meta, kept[1]);
  }
  return heatmap({
    title, width, height: opts.height, scheme, op, u, rows, cols, values, rowTitle, colTitle,
    rowZeroAtBottom: ascending(rows) && op !== 'covariance' && op !== 'correlation',
  });
}

interface HeatmapInput {
  title: string; width: number; height: number | undefined; scheme: string; op: string; u: string;
  rows: (string | number)[]; cols: (string | number)[]; values: ArrayLike<unknown>;
  rowTitle: string; colTitle: string; rowZeroAtBottom: boolean;
}

function heatmap(h: HeatmapInput): PlotSpec {
  const { title, width, scheme, op, u, rows, cols, values, rowTitle, colTitle, rowZeroAtBottom } = h;
  const nr = rows.length, nc = cols.length;
  if (nr * nc !== values.length || nr === 0) unsupported(`the result holds ${values.length} values, not ${nr} x ${nc}`);
  const cw = Math.max(1, Math.floor(width / nc));
  const ch = h.height !== undefined ? Math.max(1, Math.floor(positiveInt(h.height, 'height', 400) / nr)) : cw;
  const cells = [];
  for (let r = 0; r < nr; r++) {
    for (let c = 0; c < nc; c++) cells.push({ r, c, v: toNumber(values[r * nc + c]) });
  }
  const rowIndex = rows.map((_, i) => i);
  const colIndex = cols.map((_, i) => i);
  const labelOf = (labels: (string | number)[]) => `[${labels.map((l) => JSON.stringify(l)).join(',')}][datum.value]`;
  const pw = cw * nc, ph = ch * nr;
  return {
    kind: 'heatmap', padding: PADDING, width: pw + PADDING.left + PADDING.right, height: ph + PADDING.top + PADDING.bottom,
    cell: { width: cw, height: ch, rows: nr, cols: nc, rowZeroAtBottom },
    vega: frame(title, pw, ph, PADDING, {
      data: [{ name: 'cells', values: cells }],
      scales: [
        { name: 'x', type: 'band', domain: colIndex, range: [0, pw], padding: 0 },
        { name: 'y', type: 'band', domain: rowIndex, range: [0, ph], reverse: rowZeroAtBottom, padding: 0 },
        { name: 'colour', type: 'linear', domain: { data: 'cells', field: 'v' }, range: { scheme }, zero: false, nice: false },
      ],
      axes: [
        { orient: 'bottom', scale: 'x', title: colTitle, values: tickValues(colIndex, pw), labelOverlap: true, encode: { labels: { update: { text: { signal: labelOf(cols) } } } } },
        { orient: 'left', scale: 'y', title: rowTitle, values: tickValues(rowIndex, ph), encode: { labels: { update: { text: { signal: labelOf(rows) } } } } },
      ],
      legends: [{ fill: 'colour', type: 'gradient', title: u || op, gradientLength: Math.min(ph, 240) }],
      marks: [{
        type: 'rect', from: { data: 'cells' },
        encode: { enter: {
          x: { scale: 'x', field: 'c' }, width: { value: cw }, y: { scale: 'y', field: 'r' }, height: { value: ch },
          fill: [{ test: 'isValid(datum.v)', scale: 'colour', field: 'v' }, { value: '#d9d9d9' }],
        } },
      }],
    }),
  };
}
