// Presentation of a QueryResponse for `tet query --format …` (never mutates the response).
import Table from 'cli-table3';
import { f32Text, toJsonText, type ExecutionSection, type QueryResponse } from '../index';

export const QUERY_OUTPUT_FORMATS = ['full', 'json', 'stats', 'plan', 'quiet', 'table'] as const;
export type QueryOutputFormat = (typeof QUERY_OUTPUT_FORMATS)[number];

/** Default preview length per format (--preview omitted). */
export function defaultPreviewFor(format: QueryOutputFormat): number {
  return format === 'full' || format === 'json' ? 64 : 0;
}

function isPreviewKey(k: string): boolean {
  return k.endsWith('_preview');
}

function readPlanSummary(resp: QueryResponse): Record<string, unknown> | undefined {
  if (!resp.read_plan) return undefined;
  const { chunks: _chunks, chunks_truncated: _t, ...rest } = resp.read_plan;
  return rest;
}

/** Slim projection: catalog/read_plan summary + execution without preview arrays. */
export function statsView(resp: QueryResponse): Record<string, unknown> {
  const out: Record<string, unknown> = { status: resp.status, query: resp.query };
  if (resp.catalog) out.catalog = resp.catalog;
  const rp = readPlanSummary(resp);
  if (rp) out.read_plan = rp;
  if (resp.execution) {
    out.execution = Object.fromEntries(Object.entries(resp.execution).filter(([k]) => !isPreviewKey(k)));
  }
  return out;
}

export function planView(resp: QueryResponse): Record<string, unknown> {
  const out: Record<string, unknown> = { status: resp.status, query: resp.query };
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

export function quietLine(resp: QueryResponse): string {
  const parts = [`dataset=${JSON.stringify(resp.query.dataset)}`, `status=${resp.status}`];
  const ex = resp.execution;
  if (ex?.operation) parts.push(`op=${ex.operation}`);
  if (ex) {
    for (const [k, v] of operationEntries(ex)) {
      const name = k.replace(/^operation_/, '');
      if (v !== null && typeof v === 'object') {
        parts.push(`${name}=${sampleText(v as ArrayLike<unknown>)}`);
      } else {
        parts.push(`${name}=${scalarText(v)}`);
      }
    }
    if (!ex.operation) {
      parts.push(`strategy=${ex.memory_strategy}`);
      if (ex.spill_path) parts.push(`spill=${ex.spill_path}`, `spill_bytes=${ex.spill_bytes}`);
      const preview = Object.entries(ex).find(([k]) => isPreviewKey(k));
      if (preview && (preview[1] as ArrayLike<unknown>).length) parts.push(`preview=${sampleText(preview[1] as ArrayLike<unknown>)}`);
    }
  } else if (resp.read_plan) {
    parts.push(`elements=${resp.read_plan.logical_element_count}`, `chunks=${resp.read_plan.chunk_count}`);
  } else if (resp.status === 'unmatched' && resp.catalog) {
    parts.push(`available=${JSON.stringify(resp.catalog.available_datasets)}`);
  }
  return parts.join(' ');
}

function table(title: string, rows: [string, unknown][]): string {
  const t = new Table({ head: [title, ''], style: { head: [], border: [] }, wordWrap: true });
  for (const [k, v] of rows) {
    if (v === undefined) continue;
    const text = v !== null && typeof v === 'object' ? sampleText(v as ArrayLike<unknown>, 16) : scalarText(v);
    t.push([k, text.length > 100 ? text.slice(0, 97) + '...' : text]);
  }
  return t.toString();
}

export function tableText(resp: QueryResponse): string {
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
    const results = operationEntries(ex);
    if (results.length) out.push(table('result', results));
    const preview = Object.entries(ex).find(([k]) => isPreviewKey(k));
    if (preview && (preview[1] as ArrayLike<unknown>).length) out.push(table('preview', [[preview[0], preview[1]]]));
  }
  return out.join('\n');
}

/** stdout text for a response in the given format (no trailing newline). */
export function formatQueryResponse(resp: QueryResponse, format: QueryOutputFormat): string {
  switch (format) {
    case 'full': return toJsonText(resp, 2);
    case 'json': return toJsonText(resp);
    case 'stats': return toJsonText(statsView(resp));
    case 'plan': return toJsonText(planView(resp));
    case 'quiet': return quietLine(resp);
    case 'table': return tableText(resp);
    default: return toJsonText(resp, 2);
  }
}
