// The table-query planner (spec tables_and_filters.md §4.3-§4.5): a validated `"table": ...`
// document against the file's table catalog -> the native plan object of `fileTableQuery`
// (native/query/table_query.h). Names resolve here (unknown table / column errors list what
// exists), literals and group-by parameters go to their column's stored form (literals.ts), and
// every kind rule the spec names is checked before any work. Pure: no addon.

import { TetQueryError } from '../errors';
import { OP_CODE } from '../ops.generated';
import {
  groupKeys, queryOperation, type QueryDocument, type QueryOperation, type ReductionName, type WherePredicate,
} from '../query/document';
import type { TableColumnInfo, TableInfo } from '../tables/io';
import { storedKeyTransform, storedPredicate, type StoredKeyTransform, type StoredPredicate } from './literals';

/** Rows a `columns` query returns without `limit`; the most it may ask for. */
export const DEFAULT_ROWS_LIMIT = 1000;
export const MAX_ROWS_LIMIT = 1_000_000;

/** A group key of the native plan. */
export type NativeGroupKey = { column: string } & (
  | { transform: 'none' }
  | { transform: 'bucket'; bucket: string }
  | { transform: 'width_int'; width: bigint }
  | { transform: 'width_float'; width: number });

/** The plan object `fileTableQuery` takes. */
export type NativeTablePlan = {
  table: string;
  where: StoredPredicate[];
  threads?: number;
  memoryBudgetBytes?: number;
} & (
  | { mode: 'reduce'; op: number; countRows: boolean; column?: string; q?: number; bins?: number; histMin?: number; histMax?: number;
      groupBy: NativeGroupKey[];
      /** Also each row's group (tensor group_by over an axis table; group_by and no where). */
      rowGroups?: boolean }
  | { mode: 'rows'; columns: string[]; limit: number; offset: number; orderBy: { column: string; desc: boolean }[] });

/** A table query resolved against the catalog. */
export interface PlannedTableQuery {
  doc: QueryDocument;
  table: TableInfo;
  /** The reduction (null for a `columns` query). */
  operation: (QueryOperation & { name: ReductionName }) | null;
  /** The reduced column (null: `count` of rows, or a `columns` query). */
  column: TableColumnInfo | null;
  groupColumns: TableColumnInfo[];
  /** A `columns` query's columns, in the order asked. */
  columns: TableColumnInfo[];
  native: NativeTablePlan;
}

const NON_NUMERIC_OK: ReadonlySet<string> = new Set(['min', 'max', 'count', 'null_count']);

function names(xs: readonly { name: string }[]): string {
  return xs.length === 0 ? 'none' : xs.map((x) => JSON.stringify(x.name)).join(', ');
}

/** The table named `name`; TET_QUERY_UNKNOWN_TABLE (listing the tables) otherwise. */
export function resolveTable(tables: readonly TableInfo[], name: string): TableInfo {
  const t = tables.find((x) => x.name === name);
  if (!t) throw new TetQueryError('TET_QUERY_UNKNOWN_TABLE', `query $.table: the file has no table ${JSON.stringify(name)} (tables: ${names(tables)})`);
  return t;
}

/** Column `name` of `table`; TET_QUERY_UNKNOWN_COLUMN (listing the columns) otherwise. */
export function resolveColumn(table: TableInfo, name: string, at: string): TableColumnInfo {
  const c = table.columns.find((x) => x.name === name);
  if (!c) {
    throw new TetQueryError('TET_QUERY_UNKNOWN_COLUMN',
      `query ${at}: table ${JSON.stringify(table.name)} has no column ${JSON.stringify(name)} (columns: ${names(table.columns)})`);
  }
  return c;
}

function columnKindError(op: string, c: TableColumnInfo): TetQueryError {
  return new TetQueryError('TET_QUERY_COLUMN_KIND',
    `query $.${op}: ${op} does not apply to ${c.kind} column ${JSON.stringify(c.name)} (on str, date, timestamp and time columns: min, max, count, null_count)`);
}

/** The reduction's column checked against the op's kind rules (spec §4.5). */
function checkReductionKind(op: ReductionName, c: TableColumnInfo): void {
  const numeric = c.kind === 'int' || c.kind === 'float' || c.kind === 'bool';
  if (!numeric && !NON_NUMERIC_OK.has(op)) throw columnKindError(op, c);
  if (op === 'histogram' && c.kind === 'bool') throw columnKindError(op, c);
}

/** A group key in the form `fileTableQuery` takes. */
export function nativeGroupKey(column: string, t: StoredKeyTransform): NativeGroupKey {
  switch (t.type) {
    case 'none': return { column, transform: 'none' };
    case 'bucket': return { column, transform: 'bucket', bucket: t.bucket };
    case 'width_int': return { column, transform: 'width_int', width: t.width };
    case 'width_float': return { column, transform: 'width_float', width: t.width };
  }
}

/** Plans a validated table query (`isTableQuery(doc)`) against the file's tables. */
export function planTableQuery(tables: readonly TableInfo[], doc: QueryDocument): PlannedTableQuery {
  const table = resolveTable(tables, doc.table!);
  const where = (doc.where ?? []).map((p: WherePredicate, i) =>
    storedPredicate(resolveColumn(table, p.column, `$.where[${i}].column`), p, `query $.where[${i}]`));
  const exec = doc.execution ?? {};
  const limits = {
    ...(exec.threads !== undefined ? { threads: exec.threads } : {}),
    ...(exec.memory_budget_bytes !== undefined ? { memoryBudgetBytes: exec.memory_budget_bytes } : {}),
  };
  const op = queryOperation(doc);
  if (op === null) {
    const columns = (doc.columns ?? []).map((n, i) => resolveColumn(table, n, `$.columns[${i}]`));
    const orderBy = (doc.order_by ?? []).map((o, i) => ({ column: resolveColumn(table, o.column, `$.order_by[${i}].column`).name, desc: o.desc === true }));
    const limit = doc.limit ?? DEFAULT_ROWS_LIMIT;
    if (!Number.isSafeInteger(limit) || limit < 0 || limit > MAX_ROWS_LIMIT) {
      throw new TetQueryError('TET_QUERY_INVALID', `query $.limit: expected an integer in [0, ${MAX_ROWS_LIMIT}], found ${String(limit)}`);
    }
    const offset = doc.offset ?? 0;
    if (!Number.isSafeInteger(offset) || offset < 0) throw new TetQueryError('TET_QUERY_INVALID', `query $.offset: expected a non-negative integer, found ${String(offset)}`);
    return {
      doc, table, operation: null, column: null, groupColumns: [], columns,
      native: { table: table.name, where, ...limits, mode: 'rows', columns: columns.map((c) => c.name), limit, offset, orderBy },
    };
  }
  const name = op.name;
  const column = op.column !== undefined ? resolveColumn(table, op.column, `$.${name}.column`) : null;
  if (column) checkReductionKind(name, column);
  const keys = groupKeys(doc);
  const groupColumns = keys.map((k, i) => resolveColumn(table, k.column, `$.group_by${Array.isArray(doc.group_by) ? `[${i}]` : ''}.column`));
  const groupBy = keys.map((k, i) => nativeGroupKey(groupColumns[i].name,
    storedKeyTransform(groupColumns[i], k, `query $.group_by${Array.isArray(doc.group_by) ? `[${i}]` : ''}`)));
  const native: NativeTablePlan = {
    table: table.name, where, ...limits, mode: 'reduce', op: OP_CODE[name], countRows: column === null,
    ...(column ? { column: column.name } : {}),
    ...(op.q !== undefined ? { q: op.q } : {}),
    ...(op.bins !== undefined ? { bins: op.bins } : {}),
    ...(op.range ? { histMin: op.range.min, histMax: op.range.max } : {}),
    groupBy,
  };
  return { doc, table, operation: { ...op, name }, column, groupColumns, columns: [], native };
}
