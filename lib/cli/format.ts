// Presentation of a QueryResponse for `tet query --format …` (never mutates the response).
import { f32Text, toJsonText, type ExecutionSection, type QueryResponse, type WherePlanEntry } from '../index';
import { boxTable } from './box-table';
import type { QueryOutputFormat } from './output-formats';

export { QUERY_OUTPUT_FORMATS, defaultPreviewFor, type QueryOutputFormat } from './output-formats';

function isPreviewKey(k: string): boolean {
  return k.endsWith('_preview');
}

function readPlanSummary(resp: QueryResponse): Record<string, unknown> | undefined {
  if (!resp.read_plan) return undefined;
  const { chunks: _chunks, chunks_truncated: _t, where_plan: wherePlan, ...rest } = resp.read_plan;
  // an executed response shows the where_plan once, in its execution section
  return wherePlan && !resp.execution?.where_plan ? { ...rest, where_plan: wherePlan } : rest;
}

/** One line per filtered axis: how its where was settled (spec §4.4). */
function wherePlanRows(plan: Record<string, WherePlanEntry>): [string, unknown][] {
  return Object.entries(plan).map(([axis, p]) => [axis,
    `${p.selected} of ${p.rows} selected; ${p.blocks} blocks: ${p.blocks_zonemap_resolved} zone map, ` +
    `${p.blocks_index_pruned} index, ${p.blocks_decoded} decoded; ${p.payload_bytes_read} payload bytes`]);
}

/** The response's top-level fields before catalog / read_plan / execution (status, accepted, ...). */
function head(resp: QueryResponse): Record<string, unknown> {
  const { catalog: _c, read_plan: _r, execution: _e, ...rest } = resp;
  return rest;
}

/** Slim projection: catalog/read_plan summary + execution without preview arrays. */
export function statsView(resp: QueryResponse): Record<string, unknown> {
  const out: Record<string, unknown> = head(resp);
  if (resp.catalog) out.catalog = resp.catalog;
  const rp = readPlanSummary(resp);
  if (rp) out.read_plan = rp;
  if (resp.execution) {
    out.execution = Object.fromEntries(Object.entries(resp.execution).filter(([k]) => !isPreviewKey(k)));
  }
  return out;
}

export function planView(resp: QueryResponse): Record<string, unknown> {
  const out: Record<string, unknown> = head(resp);
  if (resp.catalog) out.catalog = resp.catalog;
  const rp = readPlanSummary(resp);
  if (rp) out.read_plan = rp;
  return out;
}

function scalarText(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'string') return String(v);
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  return toJsonText(v);
}

function sampleText(values: ArrayLike<unknown>, n = 8): string {
  const parts: string[] = [];
  for (let i = 0; i < Math.min(n, values.length); i++) {
    const x = values[i];
    parts.push(typeof x === 'number' && values instanceof Float32Array ? f32Text(x) : scalarText(x));
  }
  return '[' + parts.join(',') + (values.length > n ? ',…' : '') + ']';
}

/** The result fields of an execution (operation_*), in insertion order. */
export function operationEntries(ex: ExecutionSection): [string, unknown][] {
  return Object.entries(ex).filter(([k]) => k.startsWith('operation_') && k !== 'operation_reduced_axes');
}

/** A name as the quiet line writes it: bare when it has no space, quote, bracket or `=`, else JSON. */
function bareText(name: string): string {
  return /^[^\s"'=[\],]+$/u.test(name) ? name : JSON.stringify(name);
}

/** A shape as the reference writes it: extents joined by `×` (`2×3`; `1` for a scalar). */
export function shapeText(shape: readonly number[]): string {
  return shape.length ? shape.join('×') : '1';
}

/** Result fields the quiet line prints as `name=value` after `op=` (besides axes/values). */
function quietExtras(ex: ExecutionSection): [string, unknown][] {
  return operationEntries(ex).filter(([k]) => k !== 'operation_reduced_shape'
    && (k !== 'operation_element_count' || ex.operation === 'count'));
}

/**
 * `-q` / `--format quiet`: one line of `key=value` with the reference's keys:
 *   aggregate   dataset=a status=ok elements=6 op=mean mean=3.5
 *   partial     dataset=a status=ok elements=6 op=sum axes=[0] values=[5,7,9] reduced_shape=3
 *   preview     dataset=a status=preview preview=4 f32 sample=[1,2,3,4]
 *   spill       dataset=a status=ok elements=6 strategy=mmap_spill spill=PATH spill_bytes=24
 *   planned     dataset=a status=ok logical_shape=2×3 elements=6 chunks=2
 *   unmatched   dataset=x status=not_found available=[a,b]
 *   no file     dataset=a status=ok hint=pass --tet
 */
export function quietLine(resp: QueryResponse): string {
  if (resp.query.table !== undefined) return tableQuietLine(resp);
  const parts = [resp.query.table !== undefined ? `table=${bareText(resp.query.table)}` : `dataset=${bareText(resp.query.dataset!)}`];
  const ex = resp.execution;
  const rp = resp.read_plan;
  if (resp.status === 'unmatched') {
    parts.push('status=not_found', `available=[${(resp.catalog?.available_datasets ?? []).map(bareText).join(',')}]`);
  } else if (ex && rp) {
    if (ex.operation) {
      parts.push('status=ok', `elements=${scalarText(ex.operation_element_count ?? rp.logical_element_count)}`, `op=${ex.operation}`);
      const partialKey = Object.keys(ex).find((k) => (k.startsWith('operation_reduced_') || k.startsWith('operation_grouped_'))
        && k !== 'operation_reduced_shape' && k !== 'operation_reduced_axes');
      if (ex.group_keys) parts.push(`groups=${ex.group_keys.length}`, `keys=${sampleText(ex.group_keys.map(cellText))}`);
      if (partialKey) {
        parts.push(`axes=[${(ex.operation_reduced_axes ?? []).join(',')}]`,
          `values=${sampleText((ex as unknown as Record<string, ArrayLike<unknown>>)[partialKey])}`,
          `reduced_shape=${shapeText(ex.operation_reduced_shape ?? [])}`);
      }
      for (const [k, v] of quietExtras(ex)) {
        if (k === partialKey) continue;
        const name = k.replace(/^operation_/, '');
        parts.push(`${name}=${v !== null && typeof v === 'object' ? sampleText(v as ArrayLike<unknown>) : scalarText(v)}`);
      }
    } else if (ex.spill_path) {
      parts.push('status=ok', `elements=${rp.logical_element_count}`, `strategy=${ex.memory_strategy}`,
        `spill=${ex.spill_path}`, `spill_bytes=${ex.spill_bytes}`);
    } else {
      const preview = Object.entries(ex).find(([k]) => isPreviewKey(k));
      const values = (preview?.[1] ?? []) as ArrayLike<unknown>;
      parts.push('status=preview', `preview=${values.length} ${rp.dtype}`, `sample=${sampleText(values)}`);
    }
  } else if (rp) {
    parts.push('status=ok', `logical_shape=${shapeText(rp.logical_selection_shape)}`,
      `elements=${rp.logical_element_count}`, `chunks=${rp.chunk_count}`);
  } else {
    parts.push('status=ok', 'hint=pass --tet');
  }
  return parts.join(' ');
}

function table(title: string, rows: [string, unknown][]): string {
  const drawn: string[][] = [];
  for (const [k, v] of rows) {
    if (v === undefined) continue;
    const text = v !== null && typeof v === 'object' ? sampleText(v as ArrayLike<unknown>, 16) : scalarText(v);
    drawn.push([k, text.length > 100 ? text.slice(0, 97) + '...' : text]);
  }
  return boxTable([title, ''], drawn);
}

export function tableText(resp: QueryResponse): string {
  if (resp.query.table !== undefined) return tableQueryText(resp);
  const out: string[] = [];
  const c = resp.catalog;
  out.push(table('query', [
    ['status', resp.status], ['dataset', resp.query.dataset], ['file', c?.file],
    ['dtype', c?.dtype], ['shape', c?.shape && JSON.stringify(c.shape)],
    ['chunk_shape', c?.chunk_shape && JSON.stringify(c.chunk_shape)],
    ...(c?.dataset_resolution === 'unmatched' ? [['available', JSON.stringify(c.available_datasets)] as [string, unknown]] : []),
  ]));
  const rp = resp.read_plan;
  if (rp) {
    out.push(table('read_plan', [
      ['selection', rp.selection.map((r) => r.index_list ? `[${r.count} indices in ${r.start}:${r.stop}]` : `${r.start}:${r.stop}:${r.step}`).join(', ')],
      ['logical_selection_shape', JSON.stringify(rp.logical_selection_shape)],
      ['logical_element_count', rp.logical_element_count],
      ['logical_selection_bytes', rp.logical_selection_bytes],
      ['chunk_touch_policy', rp.chunk_touch_policy], ['chunk_count', rp.chunk_count],
      ['chunks_per_axis', JSON.stringify(rp.chunks_per_axis)],
    ]));
  }
  const wherePlan = resp.execution?.where_plan ?? rp?.where_plan;
  if (wherePlan) out.push(table('where_plan', wherePlanRows(wherePlan)));
  const ex = resp.execution;
  if (ex) {
    out.push(table('execution', [
      ['memory_strategy', ex.memory_strategy], ['io_mode', ex.io_mode], ['io_regime', ex.io_regime],
      ['memory_budget_bytes', ex.memory_budget_bytes], ['host_available_ram_bytes', ex.host_available_ram_bytes],
      ['threads', ex.threads], ['simd', ex.simd], ['chunks_read', ex.chunks_read],
      ['stored_bytes_read', ex.stored_bytes_read], ['seconds', ex.seconds],
      ['spill_path', ex.spill_path], ['spill_bytes', ex.spill_bytes],
      ['device_used', ex.device_used], ['device_fallback_reason', ex.device_fallback_reason],
    ]));
    const grouped = groupedEntry(ex);
    const results = operationEntries(ex).filter(([k]) => !(grouped && k === grouped[0]));
    if (results.length) out.push(table('result', results));
    if (grouped && ex.group_keys) out.push(tensorGroupsGrid(resp, ex, grouped));
    const preview = Object.entries(ex).find(([k]) => isPreviewKey(k));
    if (preview && (preview[1] as ArrayLike<unknown>).length) out.push(table('preview', [[preview[0], preview[1]]]));
  }
  return out.join('\n');
}

// ---- table queries (spec tables_and_filters.md §4.4: keys beside values, rows as a table) ----

/** A table query's value in its JSON form, as one cell of text (null as `null`). */
function cellText(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return v.map(cellText).join(', ');
  return scalarText(v);
}

/** The name of a group_by entry: the column, with its bucket or width. */
function groupKeyName(g: unknown): string {
  if (typeof g === 'string') return g;
  const o = g as { column: string; bucket?: string; width?: unknown };
  return o.bucket !== undefined ? `${o.column} (${o.bucket})` : o.width !== undefined ? `${o.column} (width ${String(o.width)})` : o.column;
}

/** The names of the query's group_by keys (a single key or a list). */
function groupByNames(resp: QueryResponse): string[] {
  const g = (resp.query as { group_by?: unknown }).group_by;
  return g === undefined ? [] : (Array.isArray(g) ? g : [g]).map(groupKeyName);
}

/**
 * A tensor query's groups as a grid: key, positions along the group axis, and the group's
 * values (one value for [G], a sample of the group's row of [G, ...kept] otherwise).
 */
function tensorGroupsGrid(resp: QueryResponse, ex: ExecutionSection, grouped: [string, ArrayLike<unknown>]): string {
  const keys = ex.group_keys!;
  const values = grouped[1];
  const inner = keys.length ? values.length / keys.length : 0;
  const rows = keys.map((k, i) => {
    const cell = inner === 1 ? cellText(values[i])
      : sampleText(Array.from({ length: inner }, (_x, j) => values[i * inner + j]));
    return [cellText(k), String(ex.group_counts?.[i] ?? ''), cell];
  });
  const name = grouped[0].replace(/^operation_grouped_/, '');
  const shape = ex.operation_reduced_shape ?? [];
  return grid([groupByNames(resp)[0] ?? 'key', 'positions', inner === 1 ? name : `${name} [${shapeText(shape.slice(1))}]`], rows);
}

/** The grouped result field (operation_grouped_<op>) of an execution, if any. */
function groupedEntry(ex: ExecutionSection): [string, ArrayLike<unknown>] | undefined {
  const e = Object.entries(ex).find(([k]) => k.startsWith('operation_grouped_'));
  return e as [string, ArrayLike<unknown>] | undefined;
}

/** Lines of a grid drawn at most `limit` rows deep; a last line says how many were left out. */
const GRID_ROWS = 1000;
function grid(head: string[], rows: string[][]): string {
  const more = rows.length > GRID_ROWS ? `\n… ${rows.length - GRID_ROWS} more rows (--format json prints them all)` : '';
  return boxTable(head, rows.slice(0, GRID_ROWS)) + more;
}

/**
 * `--format quiet` for a table query:
 *   reduction   table=obs status=ok rows=6 selected=5 op=sum sum=10
 *   grouped     table=obs status=ok rows=6 selected=6 op=sum groups=3 keys=[DE,FR,null] sum=[10,2,4]
 *               (composite keys as (DE,0))
 *   columns     table=obs status=ok rows=6 selected=5 returned=5 columns=[g,x]
 */
function tableQuietLine(resp: QueryResponse): string {
  const parts = [`table=${bareText(resp.query.table!)}`];
  const ex = resp.execution;
  if (!ex) return [...parts, 'status=ok', 'hint=pass --tet'].join(' ');
  parts.push('status=ok', `rows=${scalarText(ex.table_rows)}`, `selected=${scalarText(ex.rows_selected)}`);
  if (ex.rows) {
    const cols = (resp.query as { columns?: string[] }).columns ?? [];
    parts.push(`returned=${ex.rows.length}`, `columns=[${cols.map(bareText).join(',')}]`);
    return parts.join(' ');
  }
  if (ex.operation) parts.push(`op=${ex.operation}`);
  const grouped = groupedEntry(ex);
  if (grouped && ex.group_keys) {
    parts.push(`groups=${ex.group_keys.length}`, `keys=${sampleText(ex.group_keys.map((k) => (Array.isArray(k) ? `(${k.map(cellText).join(',')})` : cellText(k))))}`,
      `${grouped[0].replace(/^operation_grouped_/, '')}=${sampleText(grouped[1])}`);
    return parts.join(' ');
  }
  for (const [k, v] of operationEntries(ex)) {
    if (k === 'operation_column' || k === 'operation_reduced_shape') continue;
    parts.push(`${k.replace(/^operation_/, '')}=${v !== null && typeof v === 'object' ? sampleText(v as ArrayLike<unknown>) : scalarText(v)}`);
  }
  return parts.join(' ');
}

/** `--format table` for a table query: the query, the where plan, then the groups or rows. */
function tableQueryText(resp: QueryResponse): string {
  const out: string[] = [];
  const ex = resp.execution;
  out.push(table('query', [['status', resp.status], ['table', resp.query.table], ['file', resp.tet_file]]));
  if (!ex) return out.join('\n');
  const plan = ex.where_plan ? Object.values(ex.where_plan)[0] : undefined;
  out.push(table('execution', [
    ['threads', ex.threads], ['seconds', ex.seconds], ['table_rows', ex.table_rows], ['rows_selected', ex.rows_selected],
    ...(plan ? Object.entries(plan).map(([k, v]) => [`where_plan.${k}`, v] as [string, unknown]) : []),
  ]));
  if (ex.rows) {
    const cols = (resp.query as { columns?: string[] }).columns ?? Object.keys(ex.rows[0] ?? {});
    out.push(grid(cols, ex.rows.map((r) => cols.map((c) => cellText(r[c])))));
    return out.join('\n');
  }
  const grouped = groupedEntry(ex);
  if (grouped && ex.group_keys) {
    const by = groupByNames(resp);
    const values = grouped[1];
    const rows = ex.group_keys.map((k, i) => [
      ...(by.length > 1 && Array.isArray(k) ? k.map(cellText) : [cellText(k)]),
      String(ex.group_counts?.[i] ?? ''), cellText(values[i]),
    ]);
    out.push(grid([...(by.length ? by : ['key']), 'rows', grouped[0].replace(/^operation_grouped_/, '')], rows));
    return out.join('\n');
  }
  const results = operationEntries(ex).filter(([k]) => k !== 'operation_reduced_shape');
  if (results.length) out.push(table('result', results));
  return out.join('\n');
}

/** stdout text for a response in the given format (no trailing newline). */
export function formatQueryResponse(resp: QueryResponse, format: QueryOutputFormat): string {
  switch (format) {
    case 'full': return toJsonText(resp, 2);
    case 'json': return toJsonText(resp);
    case 'stats': return toJsonText(statsView(resp));
    case 'plan': return toJsonText(planView(resp), 2);
    case 'quiet': return quietLine(resp);
    case 'table': return tableText(resp);
    default: return toJsonText(resp, 2);
  }
}
