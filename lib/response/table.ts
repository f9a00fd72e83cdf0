// (planned table query, native result) -> QueryResponse (spec tables_and_filters.md §4.4): the
// reduction's `operation_<field>` (names from lib/ops.generated.ts, as for tensors), grouped
// results as `group_keys` / `group_counts` / `operation_grouped_<op>` (flat), `where_plan` keyed
// by the table's name, and a `columns` query's `rows`. Values are in their column kind's JSON
// form (lib/tables/values.ts): timestamps RFC 3339, dates "YYYY-MM-DD"; integers are numbers,
// bigint beyond 2^53 (as tensor results are; json.ts prints their exact digits); float NaN stays
// a number (printed "NaN" by json.ts).
import type { NativeTableQueryResult, NativeValueColumn } from '../native';
import type { PlannedTableQuery } from '../plan/table';
import { SCALAR_FIELD } from '../ops.generated';
import type { TableColumnInfo } from '../tables/io';
import { decodeStrings } from '../tables/normalize';
import type { ResolvedColumnSchema } from '../tables/types';
import { valueToJson } from '../tables/values';
import type { ExecutionSection, QueryResponse, TableValue } from './types';

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** An integer as a number when exact, else a bigint. */
function exactInt(v: bigint): number | bigint {
  return v >= -SAFE && v <= SAFE ? Number(v) : v;
}

function schemaOf(c: TableColumnInfo): ResolvedColumnSchema {
  return c.kind === 'timestamp'
    ? { kind: 'timestamp', unit: c.unit ?? 'us', tz: c.tz ?? 'UTC', nullable: true }
    : { kind: c.kind, nullable: true };
}

/**
 * The values of a native result column in JSON form. `schema` is the column the values come
 * from (keys, rows, min / max); absent entries (valid 0) are null, or NaN for a numeric
 * min / max over nothing (`emptyNaN`).
 */
export function columnValues(col: NativeValueColumn, schema: TableColumnInfo | null, emptyNaN = false): TableValue[] {
  const n = col.type === 'str' ? col.offsets.length - 1 : col.data.length;
  const strs = col.type === 'str' ? decodeStrings(col.bytes, col.offsets, n) : null;
  const s = schema ? schemaOf(schema) : null;
  const out = new Array<TableValue>(n);
  for (let i = 0; i < n; i++) {
    if (col.valid && col.valid[i] === 0) {
      out[i] = emptyNaN ? NaN : null;
      continue;
    }
    switch (col.type) {
      case 'bool': out[i] = col.data[i] !== 0; break;
      case 'u64': out[i] = Number(col.data[i]); break;
      case 'f64': out[i] = col.data[i]; break;
      case 'i128': out[i] = exactInt(BigInt(col.data[i])); break;
      case 'str': out[i] = strs![i]; break;
      case 'i64': out[i] = s && s.kind !== 'int' ? valueToJson(s, col.data[i]) : exactInt(col.data[i]); break;
    }
  }
  return out;
}

function whereSection(planned: PlannedTableQuery, r: NativeTableQueryResult): Partial<ExecutionSection> {
  if (!r.where) return {};
  return { where_plan: { [planned.table.name]: { ...r.where } } };
}

/** The executed response of a table query. */
export function tableResponse(planned: PlannedTableQuery, tetFile: string, r: NativeTableQueryResult): QueryResponse {
  // The tensor-only fields (memory strategy, chunks, preview) have no meaning here.
  const execution = {
    threads: r.threads,
    seconds: r.seconds,
    table_rows: planned.table.rows,
    rows_selected: r.rowsSelected,
    ...whereSection(planned, r),
  } as Partial<ExecutionSection> as ExecutionSection;
  const op = planned.operation;
  if (op === null) {
    const cols = planned.columns.map((c, k) => columnValues(r.rows![k], c));
    const n = r.rowNumbers!.length;
    const rows = new Array<Record<string, TableValue>>(n);
    for (let i = 0; i < n; i++) {
      const row: Record<string, TableValue> = {};
      planned.columns.forEach((c, k) => { row[c.name] = cols[k][i]; });
      rows[i] = row;
    }
    execution.rows = rows;
  } else {
    const e = execution as unknown as Record<string, unknown>;
    e.operation = op.name;
    if (planned.column) e.operation_column = planned.column.name;
    if (op.q !== undefined) e.operation_quantile_q = op.q;
    const extremum = op.name === 'min' || op.name === 'max';
    const numeric = planned.column !== null && (planned.column.kind === 'int' || planned.column.kind === 'float');
    const values = columnValues(r.values!, extremum ? planned.column : null, extremum && numeric);
    if (op.name === 'histogram') {
      e.operation_histogram_bins = op.bins;
      e.operation_histogram_counts = values;
      e.operation_histogram_edges = Array.from(r.histEdges ?? []);
    } else if (planned.groupColumns.length === 0) {
      e[(SCALAR_FIELD as Record<string, string>)[op.name]] = values[0];
    } else {
      const keys = planned.groupColumns.map((c, k) => columnValues(r.groupKeys![k], c));
      const g = r.groupCounts!.length;
      e.group_keys = keys.length === 1 ? keys[0] : Array.from({ length: g }, (_, i) => keys.map((k) => k[i]));
      e.group_counts = Array.from(r.groupCounts!);
      e[`operation_grouped_${op.name}`] = values;
      e.operation_reduced_shape = [g];
    }
  }
  return {
    status: 'executed', accepted: true, dataset: planned.table.name, table: planned.table.name, tet_file: tetFile,
    selection_axes: 0, query: planned.doc, execution,
  };
}
