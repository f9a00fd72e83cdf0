// validateQuery: structural checks (compiled JSON Schema, see schema/query.schema.json) plus the
// rules a schema cannot say well (one reduction key, nested "operation", start < stop, ...).
// Catalog-dependent checks (rank, axis range, labels) happen in lib/plan.
import { TetQueryError } from '../errors';
import { schemaValidator } from './schema-validator';
import type { QuerySchemaError } from './generated/validate.js';
import querySchema from '../../schema/query.schema.json';
import { QUERY_LIMITS } from './limits';
import {
  groupKeys, MULTI_REDUCTION_OPS, predicateOp, queryReductions, REDUCTION_KEYS, TABLE_ONLY_KEYS, TOP_LEVEL_KEYS,
  WHERE_OPS, type QueryDocument,
} from './document';
import { describeFound, jsonPathFromPointer, queryError } from './errors';
import { checkIndexAxisKeys, checkIndexList } from './indices';

/** The JSON Schema (draft-07) of the query wire; also shipped as dist/query-schema.json. */
export const queryJsonSchema: Readonly<Record<string, unknown>> = querySchema;

/** A device token (execution.device, `--device`, the SDK's `device` option): the schema's own pattern. */
export const DEVICE_TOKEN = new RegExp(querySchema.definitions.execution.properties.device.pattern);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v);
}

/** Depth of a value tree, without recursion (a hostile tree must not overflow the stack). */
export function valueDepth(value: unknown, limit: number): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d > max) max = d;
    if (max > limit) return max;
    for (const child of Array.isArray(v) ? v : Object.values(v as object)) stack.push([child, d + 1]);
  }
  return max;
}

function valueAt(root: unknown, pointer: string): unknown {
  let v: unknown = root;
  for (const raw of pointer.split('/').slice(1)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return v;
}

function schemaError(root: unknown, err: QuerySchemaError): TetQueryError {
  const path = jsonPathFromPointer(err.instancePath);
  const found = valueAt(root, err.instancePath);
  if (err.keyword === 'additionalProperties') {
    const key = String(err.params.additionalProperty);
    const allowed = Object.keys((err.parentSchema?.properties as object | undefined) ?? {}).join(', ');
    return new TetQueryError('TET_QUERY_UNKNOWN_KEY',
      `query ${path}: unknown key ${describeFound(key)} (allowed: ${allowed})`);
  }
  if (err.keyword === 'required') {
    return new TetQueryError('TET_QUERY_MISSING_KEY',
      `query ${path}: missing required key ${describeFound(err.params.missingProperty)}`);
  }
  if (err.keyword === 'dependencies') {
    return new TetQueryError('TET_QUERY_INVALID',
      `query ${path}: "${String(err.params.property)}" requires "${String(err.params.missingProperty)}" (histogram min and max go together)`);
  }
  // The description of the failing schema (ajv verbose errors carry it) says what was
  // expected in domain words.
  const desc = err.parentSchema?.description;
  const expected = typeof desc === 'string' ? desc : err.message ?? `a value satisfying ${err.keyword}`;
  // Index lists: TET_QUERY_SELECTION, naming the axis (and the position, in the path).
  const idx = /^\/selection\/(\d+)\/indices(?:\/(\d+))?$/.exec(err.instancePath);
  if (idx) {
    const what = Array.isArray(found) ? `a list of ${found.length} entries` : describeFound(found);
    return new TetQueryError('TET_QUERY_SELECTION',
      `query ${path}: expected ${expected} (axis ${idx[1]}), found ${what}`);
  }
  return queryError('TET_QUERY_INVALID', path, expected, found);
}

/**
 * Checks an already-parsed value against the query wire and returns it as a QueryDocument
 * (a deep copy). Throws TetQueryError (TET_QUERY_*) naming the JSON path, the expectation and
 * what was found.
 */
export function validateQuery(value: unknown): QueryDocument {
  if (!isPlainObject(value)) {
    throw queryError('TET_QUERY_NOT_OBJECT', '$', 'a query object such as {"dataset": "t", "mean": []}', value);
  }
  const depth = valueDepth(value, QUERY_LIMITS.maxDepth);
  if (depth > QUERY_LIMITS.maxDepth) {
    throw new TetQueryError('TET_QUERY_TOO_DEEP',
      `query $: nesting depth exceeds the limit of ${QUERY_LIMITS.maxDepth}`);
  }
  for (const nested of ['operation', 'output'] as const) {
    if (Object.prototype.hasOwnProperty.call(value, nested)) {
      const hint = nested === 'operation'
        ? 'write the reduction as a top-level key, e.g. {"dataset": "t", "mean": [0]}'
        : 'write the export path as a top-level key, e.g. {"dataset": "t", "spill": "slice.bin"}';
      throw new TetQueryError('TET_QUERY_NESTED_OPERATION',
        `query $.${nested}: nested "${nested}" objects are not part of the flat query wire; ${hint}`);
    }
  }
  const unknown = Object.keys(value).filter((k) => !TOP_LEVEL_KEYS.includes(k));
  if (unknown.length) {
    throw new TetQueryError('TET_QUERY_UNKNOWN_KEY',
      `query $: unknown key ${describeFound(unknown[0])} (allowed: ${TOP_LEVEL_KEYS.join(', ')})`);
  }
  const reductions = REDUCTION_KEYS.filter((k) => Object.prototype.hasOwnProperty.call(value, k));
  if (reductions.length > 1) {
    throw new TetQueryError('TET_QUERY_MULTIPLE_REDUCTIONS',
      `query $: expected at most one reduction key, found ${reductions.length} (${reductions.join(', ')})`);
  }
  checkTarget(value);
  const schemaValidate = schemaValidator();
  if (!schemaValidate(value)) {
    const errs = schemaValidate.errors ?? [];
    // The last error of a failed anyOf is the anyOf itself: its description covers the branches.
    const err = errs.find((e) => e.keyword !== 'anyOf' && !errs.some((o) => o.keyword === 'anyOf'
      && e.instancePath.startsWith(o.instancePath))) ?? errs[errs.length - 1];
    if (err) throw schemaError(value, err);
    throw new TetQueryError('TET_QUERY_INVALID', 'query $: does not match the query schema');
  }
  checkSemantics(value as QueryDocument);
  return structuredClone(value) as QueryDocument;
}

function checkTarget(value: Record<string, unknown>): void {
  const has = (k: string) => Object.prototype.hasOwnProperty.call(value, k);
  if (!has('dataset') && !has('table')) {
    throw new TetQueryError('TET_QUERY_MISSING_KEY', 'query $: missing required key "dataset" (or "table" for a table query)');
  }
  if (has('dataset') && has('table')) {
    throw new TetQueryError('TET_QUERY_INVALID', 'query $: expected exactly one of "dataset" and "table", found both');
  }
}

// Ops that group_by does not take (spec §4.2, §4.5), and the ones a table query does not take.
const NOT_GROUPED = new Set(['arg_min', 'arg_max', 'histogram', 'covariance', 'correlation']);
const NOT_ON_TABLES = new Set(['arg_min', 'arg_max', 'covariance', 'correlation']);

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function checkWhere(doc: QueryDocument): void {
  (doc.where ?? []).forEach((p, i) => {
    const ops = WHERE_OPS.filter((k) => (p as unknown as Record<string, unknown>)[k] !== undefined);
    if (ops.length !== 1) {
      throw new TetQueryError('TET_QUERY_WHERE_OP',
        `query $.where[${i}]: expected exactly one op (${WHERE_OPS.join(', ')}), found ${ops.length ? ops.join(', ') : 'none'}`);
    }
    if (doc.table !== undefined && p.axis !== undefined) {
      throw new TetQueryError('TET_QUERY_WHERE_OP',
        `query $.where[${i}].axis: a table query's predicates name columns of the table; "axis" is for dataset queries`);
    }
    void predicateOp(p);
  });
}

function checkGroupBy(doc: QueryDocument, reduction: string | undefined): void {
  if (doc.group_by === undefined) return;
  if (Array.isArray(doc.group_by) && doc.table === undefined) {
    throw new TetQueryError('TET_QUERY_GROUP_BY',
      'query $.group_by: a list of group keys (composite keys) is for table queries; a dataset query groups by one key');
  }
  groupKeys(doc).forEach((k, i) => {
    const at = Array.isArray(doc.group_by) ? `$.group_by[${i}]` : '$.group_by';
    if (k.bucket !== undefined && k.width !== undefined) {
      throw new TetQueryError('TET_QUERY_GROUP_BY', `query ${at}: expected "bucket" or "width", found both`);
    }
    if (k.width !== undefined && !Number.isFinite(k.width)) {
      throw new TetQueryError('TET_QUERY_GROUP_BY', `query ${at}.width: expected a positive finite number, found ${describeFound(k.width)}`);
    }
    if (doc.table !== undefined && k.axis !== undefined) {
      throw new TetQueryError('TET_QUERY_GROUP_BY', `query ${at}.axis: a table query groups by its own columns; "axis" is for dataset queries`);
    }
  });
  if (reduction === undefined) {
    throw new TetQueryError('TET_QUERY_GROUP_BY', 'query $.group_by: expected a reduction to compute per group, found none');
  }
  if (NOT_GROUPED.has(reduction)) {
    throw new TetQueryError('TET_QUERY_GROUP_BY',
      `query $.group_by: ${reduction} does not take group_by (every tier A/B reduction but arg_min / arg_max, plus median and quantile, do)`);
  }
  if (doc.columns !== undefined) {
    throw new TetQueryError('TET_QUERY_GROUP_BY', 'query $.group_by: "columns" returns rows and does not take group_by');
  }
}

function checkTableQuery(doc: QueryDocument, reduction: string | undefined): void {
  for (const k of ['selection', 'spill'] as const) {
    if (doc[k] !== undefined) {
      const hint = k === 'selection' ? ' (filter rows with "where", page with "offset" / "limit")' : '';
      throw new TetQueryError('TET_QUERY_INVALID', `query $.${k}: a table query does not take "${k}"${hint}`);
    }
  }
  if (reduction !== undefined && NOT_ON_TABLES.has(reduction)) {
    throw new TetQueryError('TET_QUERY_UNSUPPORTED', `query $.${reduction}: ${reduction} is not a table reduction`);
  }
  if (reduction !== undefined && doc.columns !== undefined) {
    throw new TetQueryError('TET_QUERY_INVALID', `query $: expected a reduction or "columns", found both (${reduction}, columns)`);
  }
  if (reduction === undefined && doc.columns === undefined) {
    throw new TetQueryError('TET_QUERY_MISSING_KEY',
      'query $: a table query needs a reduction such as {"sum": {"column": "x"}} or "columns": [names]');
  }
  if (doc.columns === undefined) {
    const stray = (['limit', 'offset', 'order_by'] as const).find((k) => doc[k] !== undefined);
    if (stray) throw new TetQueryError('TET_QUERY_INVALID', `query $.${stray}: "${stray}" goes with "columns"`);
  } else {
    const seen = new Set<string>();
    doc.columns.forEach((c, i) => {
      if (seen.has(c)) throw queryError('TET_QUERY_INVALID', `$.columns[${i}]`, 'distinct column names', c);
      seen.add(c);
    });
  }
  if (reduction !== undefined) {
    const v = (doc as Record<string, unknown>)[reduction];
    const rowsCount = reduction === 'count' && (Array.isArray(v) ? v.length === 0 : isObj(v) && v.column === undefined);
    if (!rowsCount && !(isObj(v) && typeof v.column === 'string')) {
      throw queryError('TET_QUERY_INVALID', `$.${reduction}`,
        reduction === 'count' ? '{"column": name}, or [] / {} to count rows' : '{"column": name} (a table reduction names its column)', v);
    }
    if (isObj(v) && (v.axis !== undefined || v.axes !== undefined || v.fill !== undefined)) {
      throw queryError('TET_QUERY_INVALID', `$.${reduction}`, 'a table reduction without axis, axes or fill', v);
    }
  }
}

function checkDatasetQuery(doc: QueryDocument, reduction: string | undefined): void {
  const stray = TABLE_ONLY_KEYS.find((k) => doc[k] !== undefined);
  if (stray) throw new TetQueryError('TET_QUERY_INVALID', `query $.${stray}: "${stray}" is for table queries ("table": name)`);
  if (reduction !== undefined) {
    const v = (doc as Record<string, unknown>)[reduction];
    if (isObj(v) && v.column !== undefined) {
      throw new TetQueryError('TET_QUERY_INVALID',
        `query $.${reduction}.column: a dataset query reduces axes, not columns ("column" is for table queries)`);
    }
  }
}

// `reductions` (several streaming reductions in one pass): alone, on a dataset, without
// group_by or spill, each name a streaming reduction.
function checkReductions(doc: QueryDocument, reduction: string | undefined): void {
  const r = queryReductions(doc);
  if (!r) return;
  if (reduction !== undefined) {
    throw new TetQueryError('TET_QUERY_MULTIPLE_REDUCTIONS',
      `query $: expected "reductions" or one reduction key, found both (reductions, ${reduction}); list ${reduction} in "reductions"`);
  }
  if (doc.table !== undefined) {
    throw new TetQueryError('TET_QUERY_UNSUPPORTED', 'query $.reductions: a table query takes one reduction key; "reductions" is for dataset queries');
  }
  for (const k of ['group_by', 'spill'] as const) {
    if (doc[k] !== undefined) {
      throw new TetQueryError('TET_QUERY_UNSUPPORTED', `query $.reductions: "reductions" does not take "${k}"; write one reduction key per query`);
    }
  }
  const at = Array.isArray(doc.reductions) ? '$.reductions' : '$.reductions.ops';
  r.ops.forEach((op, i) => {
    if (!(MULTI_REDUCTION_OPS as readonly string[]).includes(op)) {
      throw new TetQueryError('TET_QUERY_UNSUPPORTED',
        `query ${at}[${i}]: expected a streaming reduction (${MULTI_REDUCTION_OPS.join(', ')}), found ${describeFound(op)}` +
        ((REDUCTION_KEYS as readonly string[]).includes(op) ? `; run ${op} as its own query` : ''));
    }
  });
}

function checkSemantics(doc: QueryDocument): void {
  const reduction = REDUCTION_KEYS.find((k) => doc[k] !== undefined);
  checkReductions(doc, reduction);
  if (doc.table !== undefined) {
    if (doc.table.trim().length === 0) throw queryError('TET_QUERY_INVALID', '$.table', 'a non-empty table name', doc.table);
    checkTableQuery(doc, reduction);
  } else {
    if (doc.dataset!.trim().length === 0) {
      throw queryError('TET_QUERY_INVALID', '$.dataset', 'a non-empty dataset name', doc.dataset);
    }
    checkDatasetQuery(doc, reduction);
  }
  checkWhere(doc);
  checkGroupBy(doc, reduction);
  (doc.selection ?? []).forEach((axis, i) => {
    if (!axis) return;
    const at = `$.selection[${i}]`;
    checkIndexAxisKeys(axis as Record<string, unknown>, i);
    if (axis.indices != null) checkIndexList(axis.indices, i);
    for (const [idx, label] of [['start', 'start_label'], ['stop', 'stop_label']] as const) {
      if (axis[idx] != null && axis[label] != null) {
        throw new TetQueryError('TET_QUERY_SELECTION',
          `query ${at}: expected either "${idx}" or "${label}", found both`);
      }
    }
    if (axis.start != null && axis.stop != null && !(axis.start < axis.stop)) {
      throw new TetQueryError('TET_QUERY_SELECTION',
        `query ${at}: expected start < stop, found start ${axis.start} and stop ${axis.stop}`);
    }
  });
  for (const key of ['quantile', 'histogram', 'null_count', 'covariance', 'correlation'] as const) {
    const p = doc[key];
    if (isPlainObject(p) && p.axis !== undefined && p.axes !== undefined) {
      throw new TetQueryError('TET_QUERY_INVALID',
        `query $.${key}: expected either "axis" or "axes", found both`);
    }
  }
  const h = doc.histogram;
  if (h && h.min !== undefined && h.max !== undefined) {
    if (!Number.isFinite(h.min) || !Number.isFinite(h.max) || !(h.min < h.max)) {
      throw new TetQueryError('TET_QUERY_INVALID',
        `query $.histogram: expected finite min < max, found min ${h.min} and max ${h.max}`);
    }
  }
  const ex = doc.execution;
  if (ex && ex.memory_budget_percent !== undefined && ex.memory_budget_percent_bps !== undefined) {
    throw new TetQueryError('TET_QUERY_INVALID',
      'query $.execution: expected memory_budget_percent or memory_budget_percent_bps, found both');
  }
  if (doc.spill !== undefined && REDUCTION_KEYS.some((k) => doc[k] !== undefined)) {
    throw new TetQueryError('TET_QUERY_INVALID',
      'query $.spill: expected no reduction key with "spill" (spill exports the whole selection), found both');
  }
}
