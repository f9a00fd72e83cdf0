// Notebook display (tslab and any Jupyter-style front end): a TetFile shows a summary table of
// its datasets; an executed query response shows a summary table and, when its result has one,
// its picture (lib/plot). `display(x)` sends the rich output through tslab's display API when
// running inside a tslab kernel and returns it either way; `toHTML(x)` is the HTML alone.
import { inspect } from 'node:util';
import { TetError } from './errors';
import type { TetFile } from './file';
import { renderPlot } from './plot/render';
import { plotSpec, type PlotOptions } from './plot/spec';
import type { QueryResponse } from './response/types';

/** What a notebook shows for an object: HTML, and a PNG picture when there is one. */
export interface RichOutput {
  html: string;
  png?: Uint8Array;
}

interface TslabDisplay {
  html(s: string): void;
  png(b: Uint8Array): void;
}

const escape = (s: unknown): string => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function table(header: string[], rows: unknown[][]): string {
  const th = header.map((h) => `<th style="text-align:left">${escape(h)}</th>`).join('');
  const tr = rows.map((r) => `<tr>${r.map((c) => `<td>${escape(c)}</td>`).join('')}</tr>`).join('');
  return `<table class="tetration"><thead><tr>${th}</tr></thead><tbody>${tr}</tbody></table>`;
}

function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n, u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return u === 0 ? `${n} B` : `${v.toFixed(1)} ${units[u]}`;
}

function isFile(x: unknown): x is TetFile {
  return typeof x === 'object' && x !== null && Array.isArray((x as TetFile).datasets) && typeof (x as TetFile).query === 'function';
}

function isResponse(x: unknown): x is QueryResponse {
  return typeof x === 'object' && x !== null && typeof (x as QueryResponse).status === 'string' && 'query' in (x as object);
}

function fileHtml(f: TetFile): string {
  const meta = f.metadata.datasets ?? {};
  const rows = f.datasets.map((d) => [
    d.name, d.dtype, d.shape.join(' × '), (meta[d.name]?.dim_names ?? []).join(', '), d.chunkShape.join(' × '),
    d.chunkCount, Object.entries(d.codecs).filter(([, n]) => n > 0).map(([c, n]) => `${c} ${n}`).join(', '),
    bytes(d.logicalBytes), bytes(d.storedBytes),
  ]);
  return `<div><b>${escape(f.path)}</b>: ${f.datasets.length} dataset${f.datasets.length === 1 ? '' : 's'}` +
    table(['dataset', 'dtype', 'shape', 'dims', 'chunks', 'tiles', 'codecs', 'logical', 'stored'], rows) + '</div>';
}

function resultCells(r: QueryResponse): [string, unknown][] {
  const ex = r.execution;
  if (!ex) return [];
  const cells: [string, unknown][] = [];
  for (const [k, v] of Object.entries(ex)) {
    if (!k.startsWith('operation') || k === 'operation') continue;
    const arr = ArrayBuffer.isView(v) || Array.isArray(v) ? Array.from(v as ArrayLike<unknown>) : null;
    cells.push([k, arr ? `[${arr.slice(0, 8).map(String).join(', ')}${arr.length > 8 ? `, … (${arr.length})` : ''}]` : v]);
  }
  return cells;
}

function responseHtml(r: QueryResponse): string {
  const ex = r.execution;
  const head: [string, unknown][] = [
    ['dataset', r.query.dataset], ['status', r.status],
    ...(ex?.operation ? [['operation', ex.operation] as [string, unknown]] : []),
    ...(r.read_plan ? [['selection', r.read_plan.logical_selection_shape.join(' × ')] as [string, unknown],
      ['chunks touched', r.read_plan.chunk_count] as [string, unknown]] : []),
    ...resultCells(r),
    ...(ex ? [['seconds', ex.seconds.toFixed(4)] as [string, unknown], ['threads', ex.threads] as [string, unknown],
      ['simd', ex.simd] as [string, unknown]] : []),
  ];
  return table(['field', 'value'], head);
}

/** The HTML a notebook shows for a TetFile or a query response. */
export function toHTML(x: TetFile | QueryResponse): string {
  if (isFile(x)) return fileHtml(x);
  if (isResponse(x)) return responseHtml(x);
  throw new TetError('TET_PLOT_UNSUPPORTED', 'toHTML / display show a TetFile or a query response');
}

/** tslab's display API when this runs inside a tslab kernel (whose require serves 'tslab'), else null. */
function tslabDisplay(): TslabDisplay | null {
  const kernel = (globalThis as { __tslab__?: { require?: (id: string) => unknown } }).__tslab__;
  if (typeof kernel?.require !== 'function') return null;
  try {
    return (kernel.require('tslab') as { display?: TslabDisplay }).display ?? null;
  } catch {
    return null;
  }
}

/**
 * Shows `x` in the notebook: a TetFile as a table of its datasets; a query response as a summary
 * table plus its picture (when the result has one; `plot` options as for renderPlot, e.g. the
 * dataset's `metadata` for coordinate labels). Returns what it showed, also outside tslab.
 */
export async function display(x: TetFile | QueryResponse, plot: Omit<PlotOptions, 'format'> = {}): Promise<RichOutput> {
  const out: RichOutput = { html: toHTML(x) };
  // A notebook prints a cell's last value: keep that line short (the rich output is shown already).
  Object.defineProperty(out, inspect.custom, {
    value: () => `[tetration display: html ${out.html.length} chars${out.png ? `, png ${out.png.length} bytes` : ''}]`,
  });
  if (isResponse(x) && x.status === 'executed') {
    let drawable = true;
    try {
      plotSpec(x, plot);
    } catch (err) {
      if (!(err instanceof TetError) || err.code !== 'TET_PLOT_UNSUPPORTED') throw err;
      drawable = false;
    }
    if (drawable) out.png = await renderPlot(x, { ...plot, format: 'png' });
  }
  const tslab = tslabDisplay();
  if (tslab) {
    tslab.html(out.html);
    if (out.png) tslab.png(out.png);
  }
  return out;
}
