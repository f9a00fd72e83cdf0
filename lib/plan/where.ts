// `where` on tensor queries (spec tables_and_filters.md §4.1, §4.4, §4.5): each predicate is
// resolved to one axis of the dataset and one of that axis's tables (a stored axis table, or the
// implicit one the footer's coordinate labels make), its literals converted to the column's
// stored form; predicates are grouped per (axis, table) so that each stored table is evaluated
// by one native call (lib/run/where.ts) and each labels table here, in TS. Each axis then keeps
// the ascending positions where all its predicates hold, intersected with that axis's
// `selection` (box with step, labels, index list) into an index-list axis of plan v2.
//
// Pure: the native evaluation is injected (lib/plan imports no addon).
import { TetQueryError } from '../errors';
import type { NativeTableWhere, NativeWherePlan } from '../native';
import { predicateOp, WHERE_OPS, type QueryDocument, type WhereOpName, type WherePredicate } from '../query/document';
import type { TableInfo } from '../tables/io';
import type { ResolvedColumnSchema } from '../tables/types';
import { literalFromJson, type PhysicalScalar } from '../tables/values';
import type { DatasetInfo, DatasetMetadata, QueryTarget } from '../types';
import { resolveAxisToken } from './axes';
import { datasetMetadata, dimNames } from './metadata';
import type { AxisRange, ResolvedSelection } from './selection';

/** The document's `where` list (absent or empty: no filter). */
export function whereOf(doc: QueryDocument): readonly WherePredicate[] {
  return doc.where ?? [];
}

/** One predicate against its column: the op and its literals in stored form. */
export interface LoweredPredicate {
  /** Its index in the document's `where` (for messages). */
  index: number;
  column: string;
  schema: ResolvedColumnSchema;
  op: WhereOpName;
  /** eq ne lt le gt ge prefix */
  value?: PhysicalScalar;
  /** in / not_in */
  set?: PhysicalScalar[];
  /** range: null = unbounded */
  lo?: PhysicalScalar | null;
  hi?: PhysicalScalar | null;
  /** is_null / is_nan */
  flag?: boolean;
}

/** The implicit axis table of footer coordinate labels: one column named after the dim. */
export interface LabelsTable {
  column: string;
  kind: 'str' | 'float';
  values: readonly (string | number)[];
}

/** Where one axis's predicates are evaluated: a stored axis table or the labels table. */
export type WhereSource = { kind: 'table'; table: TableInfo } | { kind: 'labels'; labels: LabelsTable };

/** The predicates of one (axis, table) pair. */
export interface WhereGroup {
  source: WhereSource;
  predicates: LoweredPredicate[];
}

/** The filtered axes of a query (ascending), each with its groups. */
export interface WhereRequest {
  axes: { axis: number; key: string; length: number; groups: WhereGroup[] }[];
}

/** `execution.where_plan` of one filtered axis (spec §4.4) plus the payload bytes it read. */
export interface WherePlanEntry {
  rows: number;
  selected: number;
  blocks: number;
  blocks_zonemap_resolved: number;
  blocks_index_pruned: number;
  blocks_decoded: number;
  payload_bytes_read: number;
}

/** An evaluated where: per filtered axis the ascending positions, and where_plan by axis key. */
export interface EvaluatedWhere {
  positions: Map<number, number[]>;
  plan: Record<string, WherePlanEntry>;
}

// ---- literals ------------------------------------------------------------------------------------

/**
 * The stored form of one literal for a column (lib/tables/values.ts literalFromJson, the one
 * converter, which lib/plan/literals.ts wraps for table queries too). Errors name the document path.
 */
export function storedLiteral(schema: ResolvedColumnSchema, x: unknown, at: string): PhysicalScalar {
  try {
    return literalFromJson(schema, x);
  } catch (err) {
    if (err instanceof TetQueryError) throw new TetQueryError(err.code, `query ${at}: ${err.message}`);
    throw err;
  }
}

function resolvedSchema(c: { kind: ResolvedColumnSchema['kind']; unit?: string; tz?: string; nullable?: boolean }): ResolvedColumnSchema {
  if (c.kind === 'timestamp') {
    return { kind: 'timestamp', unit: (c.unit ?? 'us') as 'us', tz: (c.tz ?? 'UTC') as 'UTC', nullable: c.nullable ?? true };
  }
  return { kind: c.kind, nullable: c.nullable ?? true };
}

/** Lowers predicate `i` against its column's schema: op checks, stored literals. */
export function lowerPredicate(p: WherePredicate, i: number, schema: ResolvedColumnSchema): LoweredPredicate {
  const at = `$.where[${i}]`;
  const op = predicateOp(p);  // validated: exactly one
  const out: LoweredPredicate = { index: i, column: p.column, schema, op };
  const v = (p as unknown as Record<string, unknown>)[op];
  if (op === 'prefix' && schema.kind !== 'str') {
    throw new TetQueryError('TET_QUERY_WHERE_OP', `query ${at}.prefix: applies to str columns only; column ${JSON.stringify(p.column)} is ${schema.kind}`);
  }
  if (op === 'is_nan' && schema.kind !== 'float') {
    throw new TetQueryError('TET_QUERY_WHERE_OP', `query ${at}.is_nan: applies to float columns only; column ${JSON.stringify(p.column)} is ${schema.kind}`);
  }
  switch (op) {
    case 'is_null':
    case 'is_nan':
      if (typeof v !== 'boolean') throw new TetQueryError('TET_QUERY_INVALID', `query ${at}.${op}: expected true or false`);
      out.flag = v;
      break;
    case 'in':
    case 'not_in':
      if (!Array.isArray(v)) throw new TetQueryError('TET_QUERY_INVALID', `query ${at}.${op}: expected an array of values`);
      out.set = v.map((x, k) => storedLiteral(schema, x, `${at}.${op}[${k}]`));
      break;
    case 'range': {
      if (!Array.isArray(v) || v.length !== 2) throw new TetQueryError('TET_QUERY_INVALID', `query ${at}.range: expected [lo, hi]`);
      out.lo = v[0] === null ? null : storedLiteral(schema, v[0], `${at}.range[0]`);
      out.hi = v[1] === null ? null : storedLiteral(schema, v[1], `${at}.range[1]`);
      break;
    }
    default:
      out.value = storedLiteral(schema, v, `${at}.${op}`);
  }
  return out;
}

// ---- resolution ------------------------------------------------------------------------------------

/** The implicit labels table of an axis (numbers → float column, else str), or null. */
export function labelsTable(meta: DatasetMetadata, ndim: number, axis: number): LabelsTable | null {
  const coords = meta.coords;
  if (!coords || typeof coords !== 'object') return null;
  const names = dimNames(meta, ndim);
  const column = names ? names[axis] : String(axis);
  for (const k of [...(names ? [names[axis]] : []), String(axis)]) {
    if (!Object.prototype.hasOwnProperty.call(coords, k)) continue;
    const labels = (coords[k] as { labels?: unknown } | undefined)?.labels;
    if (!Array.isArray(labels)) continue;
    const numeric = labels.every((x) => typeof x === 'number');
    return { column, kind: numeric ? 'float' : 'str', values: numeric ? labels as number[] : labels.map((x) => String(x)) };
  }
  return null;
}

/** An axis with one of its tables (a stored axis table, or the labels table when it has none). */
export interface Candidate { axis: number; source: WhereSource }

function sourceColumns(s: WhereSource): string[] {
  return s.kind === 'table' ? s.table.columns.map((c) => c.name) : [s.labels.column];
}
function sourceName(s: WhereSource): string {
  return s.kind === 'table' ? `table ${JSON.stringify(s.table.name)}` : 'coordinate labels';
}
function schemaIn(s: WhereSource, column: string): ResolvedColumnSchema | null {
  if (s.kind === 'labels') return s.labels.column === column ? { kind: s.labels.kind, nullable: false } : null;
  const c = s.table.columns.find((x) => x.name === column);
  return c ? resolvedSchema(c) : null;
}

/** Axis key of where_plan: the dim name, or the decimal index without dim_names. */
export function axisKey(meta: DatasetMetadata, ndim: number, axis: number): string {
  const names = dimNames(meta, ndim);
  return names ? names[axis] : String(axis);
}

function describeSources(cands: readonly Candidate[], key: (a: number) => string): string {
  if (cands.length === 0) return 'the dataset has no axis tables and no coordinate labels';
  return cands.map((c) => `axis ${JSON.stringify(key(c.axis))} (${sourceName(c.source)}: ${sourceColumns(c.source).join(', ')})`).join('; ');
}

/** Every axis's tables: its stored axis tables, or its labels table when it has none. */
export function axisCandidates(ds: DatasetInfo, meta: DatasetMetadata, tables: readonly TableInfo[]): Candidate[] {
  const ndim = ds.shape.length;
  const all: Candidate[] = [];
  for (let a = 0; a < ndim; a++) {
    const bound = tables.filter((t) => t.axis?.dataset === ds.name && t.axis.index === a);
    for (const t of bound) all.push({ axis: a, source: { kind: 'table', table: t } });
    if (bound.length === 0) {
      const labels = labelsTable(meta, ndim, a);
      if (labels) all.push({ axis: a, source: { kind: 'labels', labels } });
    }
  }
  return all;
}

/**
 * The axis and table of a column named by a predicate or a group key (`axis` optional: then
 * exactly one axis table of the dataset must have the column). Errors name the document path
 * `at`: TET_QUERY_UNKNOWN_DIMENSION / TET_QUERY_AXIS_OUT_OF_RANGE (bad `axis`),
 * TET_QUERY_WHERE_AXIS (the named axis has no table and no labels), TET_QUERY_UNKNOWN_COLUMN,
 * `ambiguous` (the column is on several tables; `hint` says what to do without an `axis`).
 */
export function resolveAxisColumn(all: readonly Candidate[], ds: DatasetInfo, meta: DatasetMetadata,
  ref: { axis?: string | number; column: string }, at: string, ambiguous: 'TET_QUERY_WHERE_AXIS' | 'TET_QUERY_GROUP_BY',
  hint: string): Candidate {
  const ndim = ds.shape.length;
  const key = (a: number) => axisKey(meta, ndim, a);
  let cands = all;
  if (ref.axis !== undefined) {
    const a = resolveAxisToken(ref.axis, ndim, meta, `${at}.axis`);
    cands = all.filter((c) => c.axis === a);
    if (cands.length === 0) {
      throw new TetQueryError('TET_QUERY_WHERE_AXIS',
        `query ${at}.axis: axis ${JSON.stringify(key(a))} of dataset ${JSON.stringify(ds.name)} has no axis table and no coordinate labels ` +
        `(${describeSources(all, key)})`);
    }
  }
  const having = cands.filter((c) => schemaIn(c.source, ref.column) !== null);
  if (having.length === 0) {
    throw new TetQueryError('TET_QUERY_UNKNOWN_COLUMN',
      `query ${at}.column: expected a column of ${ref.axis !== undefined ? 'that axis\'s table' : 'an axis table of the dataset'}, ` +
      `found ${JSON.stringify(ref.column)} (${describeSources(cands, key)})`);
  }
  if (having.length > 1) {
    throw new TetQueryError(ambiguous,
      `query ${at}: column ${JSON.stringify(ref.column)} is in ${having.length} axis tables (${describeSources(having, key)}); ` +
      (ref.axis === undefined ? hint : 'rename one of the columns'));
  }
  return having[0];
}

/**
 * Resolves a where against a dataset: every predicate to an axis and a table (`axis` may be
 * omitted when exactly one axis table of the dataset has the column), its literals converted.
 * Errors: TET_QUERY_UNKNOWN_DIMENSION / TET_QUERY_AXIS_OUT_OF_RANGE (bad `axis`),
 * TET_QUERY_WHERE_AXIS (the axis has no table and no labels, or the column is on several axes
 * and `axis` is omitted, or on several tables of the named axis), TET_QUERY_UNKNOWN_COLUMN,
 * TET_QUERY_WHERE_OP, TET_QUERY_BAD_LITERAL.
 */
export function resolveWhere(where: readonly WherePredicate[], ds: DatasetInfo, meta: DatasetMetadata,
  tables: readonly TableInfo[]): WhereRequest {
  const ndim = ds.shape.length;
  const key = (a: number) => axisKey(meta, ndim, a);
  const all = axisCandidates(ds, meta, tables);
  const groups = new Map<Candidate, LoweredPredicate[]>();
  where.forEach((p, i) => {
    const c = resolveAxisColumn(all, ds, meta, p, `$.where[${i}]`, 'TET_QUERY_WHERE_AXIS', 'name the axis with "axis"');
    const lowered = lowerPredicate(p, i, schemaIn(c.source, p.column)!);
    const list = groups.get(c);
    if (list) list.push(lowered);
    else groups.set(c, [lowered]);
  });
  const axes: WhereRequest['axes'] = [];
  for (const [c, predicates] of groups) {
    let entry = axes.find((x) => x.axis === c.axis);
    if (!entry) axes.push(entry = { axis: c.axis, key: key(c.axis), length: ds.shape[c.axis], groups: [] });
    entry.groups.push({ source: c.source, predicates });
  }
  axes.sort((x, y) => x.axis - y.axis);
  return { axes };
}

/** The where request of a query against a target: null without a where or a matched dataset. */
export function whereRequest(target: QueryTarget, doc: QueryDocument): WhereRequest | null {
  const where = whereOf(doc);
  if (where.length === 0) return null;
  const ds = target.datasets.find((d) => d.name === doc.dataset);
  if (!ds) return null;
  return resolveWhere(where, ds, datasetMetadata(target.metadata, ds.name), target.tables ?? []);
}

// ---- the wire (native/cells/where_wire.h) -----------------------------------------------------------

const WIRE_MAGIC = 0x52485754;
const WIRE_VERSION = 1;
const LIT = { absent: 0, bool: 1, int: 2, float: 3, str: 4 } as const;

/** Encodes one group's predicates for the native tableWhere (literals already in stored form). */
export function encodeWhereWire(preds: readonly LoweredPredicate[]): Uint8Array {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  let total = 0;
  const push = (b: Uint8Array) => { parts.push(b); total += b.length; };
  const u32 = (x: number) => { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, x, true); push(b); };
  const literal = (schema: ResolvedColumnSchema, v: PhysicalScalar | null) => {
    if (v === null) return push(Uint8Array.of(LIT.absent));
    switch (schema.kind) {
      case 'bool': return push(Uint8Array.of(LIT.bool, v ? 1 : 0));
      case 'float': {
        const b = new Uint8Array(9);
        b[0] = LIT.float;
        new DataView(b.buffer).setFloat64(1, v as number, true);
        return push(b);
      }
      case 'str': {
        const s = enc.encode(v as string);
        push(Uint8Array.of(LIT.str));
        u32(s.length);
        return push(s);
      }
      default: {  // int, date, timestamp, time: i64
        const b = new Uint8Array(9);
        b[0] = LIT.int;
        new DataView(b.buffer).setBigInt64(1, BigInt(v as bigint), true);
        return push(b);
      }
    }
  };
  u32(WIRE_MAGIC); u32(WIRE_VERSION); u32(preds.length); u32(0);
  for (const p of preds) {
    push(Uint8Array.of(WHERE_OPS.indexOf(p.op), p.flag ? 1 : 0, 0, 0));
    const name = enc.encode(p.column);
    u32(name.length);
    push(name);
    if (p.op === 'in' || p.op === 'not_in') {
      u32(p.set!.length);
      for (const v of p.set!) literal(p.schema, v);
    } else if (p.op === 'range') {
      u32(2);
      literal(p.schema, p.lo ?? null);
      literal(p.schema, p.hi ?? null);
    } else if (p.op === 'is_null' || p.op === 'is_nan') {
      u32(0);
    } else {
      u32(1);
      literal(p.schema, p.value!);
    }
  }
  const out = new Uint8Array(total);
  let o = 0;
  for (const b of parts) { out.set(b, o); o += b.length; }
  return out;
}

// ---- the labels table, evaluated here --------------------------------------------------------------

const utf8 = (s: string) => Buffer.from(s, 'utf8');
/** Binary (UTF-8 byte) order, the str columns' order; JS string order (UTF-16) differs above U+FFFF. */
export function compareBytes(a: string, b: string): number {
  return Buffer.compare(utf8(a), utf8(b));
}

function labelMatches(p: LoweredPredicate, v: string | number): boolean {
  const isStr = typeof v === 'string';
  const cmp = (lit: PhysicalScalar): number => (isStr ? compareBytes(v, lit as string) : (v as number) - (lit as number));
  // IEEE through cmp: any NaN makes the difference NaN, and every comparison below false
  switch (p.op) {
    case 'eq': return cmp(p.value!) === 0;
    case 'ne': return !(cmp(p.value!) === 0);
    case 'lt': return cmp(p.value!) < 0;
    case 'le': return cmp(p.value!) <= 0;
    case 'gt': return cmp(p.value!) > 0;
    case 'ge': return cmp(p.value!) >= 0;
    case 'in': return p.set!.some((x) => cmp(x) === 0);
    case 'not_in': return !p.set!.some((x) => cmp(x) === 0);
    case 'range': {
      if (p.lo != null && p.hi != null && !(isStr ? compareBytes(p.lo as string, p.hi as string) < 0 : (p.lo as number) < (p.hi as number))) return false;
      if (!isStr && Number.isNaN(v)) return false;
      return (p.lo == null || cmp(p.lo) >= 0) && (p.hi == null || cmp(p.hi) < 0);
    }
    case 'prefix': return (v as string).startsWith(p.value as string);
    case 'is_null': return !p.flag;  // labels have no nulls
    case 'is_nan': return Number.isNaN(v as number) === p.flag;
  }
}

/** Evaluates predicates on a labels table: positions, and where_plan counts (every label is looked at). */
export function evaluateLabels(labels: LabelsTable, preds: readonly LoweredPredicate[]): NativeTableWhere {
  const n = labels.values.length;
  const runs: number[] = [];
  let selected = 0;
  for (let i = 0; i < n; i++) {
    const v = labels.values[i];
    if (!preds.every((p) => labelMatches(p, v))) continue;
    selected++;
    if (runs.length && runs[runs.length - 1] === i) runs[runs.length - 1] = i + 1;
    else runs.push(i, i + 1);
  }
  const blocks = Math.ceil(n / 2048);
  return {
    runs: Float64Array.from(runs),
    plan: { rows: n, selected, blocks, blocks_zonemap_resolved: 0, blocks_index_pruned: 0, blocks_decoded: blocks, payload_bytes_read: 0 },
  };
}

// ---- combining ---------------------------------------------------------------------------------------

function positionsOfRuns(runs: ArrayLike<number>): number[] {
  const out: number[] = [];
  for (let k = 0; k + 1 < runs.length; k += 2) for (let p = runs[k]; p < runs[k + 1]; p++) out.push(p);
  return out;
}

function intersectSorted(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0, j = 0; i < a.length && j < b.length;) {
    if (a[i] === b[j]) { out.push(a[i]); i++; j++; } else if (a[i] < b[j]) i++; else j++;
  }
  return out;
}

type TableEvaluator<R> = (table: string, wire: Uint8Array) => R;

function evaluateGroup<R>(g: WhereGroup, evalTable: TableEvaluator<R>): R | NativeTableWhere {
  return g.source.kind === 'labels' ? evaluateLabels(g.source.labels, g.predicates)
    : evalTable(g.source.table.name, encodeWhereWire(g.predicates));
}

/** One axis from its groups' results: the AND of their positions; their block counts added. */
function foldAxis(req: WhereRequest['axes'][number], results: readonly NativeTableWhere[], into: EvaluatedWhere): void {
  let positions: number[] | null = null;
  const plan: WherePlanEntry = {
    rows: req.length, selected: 0, blocks: 0, blocks_zonemap_resolved: 0, blocks_index_pruned: 0, blocks_decoded: 0, payload_bytes_read: 0,
  };
  for (const r of results) {
    addPlan(plan, r.plan);
    const p = positionsOfRuns(r.runs);
    positions = positions === null ? p : intersectSorted(positions, p);
  }
  plan.selected = positions!.length;
  into.positions.set(req.axis, positions!);
  into.plan[req.key] = plan;
}

/**
 * Evaluates a where request: `evalTable` runs one stored group natively (one call per table),
 * labels groups run here. Positions per axis are the AND over its groups; where_plan adds the
 * groups' block counts and takes `selected` after the AND (before `selection`).
 */
export async function evaluateWhere(req: WhereRequest, evalTable: TableEvaluator<Promise<NativeTableWhere>>): Promise<EvaluatedWhere> {
  const out: EvaluatedWhere = { positions: new Map(), plan: {} };
  for (const ax of req.axes) {
    const results: NativeTableWhere[] = [];
    for (const g of ax.groups) results.push(await evaluateGroup(g, evalTable));
    foldAxis(ax, results, out);
  }
  return out;
}

/** The same with a synchronous evaluator (planQuery). */
export function evaluateWhereSync(req: WhereRequest, evalTable: TableEvaluator<NativeTableWhere>): EvaluatedWhere {
  const out: EvaluatedWhere = { positions: new Map(), plan: {} };
  for (const ax of req.axes) foldAxis(ax, ax.groups.map((g) => evaluateGroup(g, evalTable)), out);
  return out;
}

function addPlan(into: WherePlanEntry, p: NativeWherePlan): void {
  into.blocks += p.blocks;
  into.blocks_zonemap_resolved += p.blocks_zonemap_resolved;
  into.blocks_index_pruned += p.blocks_index_pruned;
  into.blocks_decoded += p.blocks_decoded;
  into.payload_bytes_read += p.payload_bytes_read;
}

// ---- selection ∩ where ---------------------------------------------------------------------------------

/** The positions of `where` the axis selection `r` also selects, as an axis range (count 0 when none). */
export function intersectAxis(r: AxisRange, where: readonly number[]): AxisRange {
  let kept: number[];
  if (r.indices) {
    kept = intersectSorted(r.indices, where);
  } else {
    kept = [];
    for (const p of where) if (p >= r.start && p < r.stop && (p - r.start) % r.step === 0) kept.push(p);
  }
  if (kept.length === r.count) return r;  // the where keeps the whole axis selection
  const n = kept.length;
  return n === 0 ? { start: 0, stop: 0, step: 1, count: 0, indices: kept }
    : { start: kept[0], stop: kept[n - 1] + 1, step: 1, count: n, indices: kept };
}

/** The selection narrowed by an evaluated where (axes without predicates unchanged). */
export function applyWhere(sel: ResolvedSelection, where: EvaluatedWhere, shape: readonly number[]): ResolvedSelection {
  const axes = sel.axes.map((r, a) => (where.positions.has(a) ? intersectAxis(r, where.positions.get(a)!) : r));
  const outShape = axes.map((r) => r.count);
  return {
    axes,
    shape: outShape,
    elementCount: outShape.reduce((p, n) => p * n, 1),
    full: axes.every((r, a) => r.start === 0 && r.stop === shape[a] && r.step === 1 && r.count === shape[a] && !r.indices),
    unitStep: axes.every((r) => r.step === 1 && !r.indices),
    indexed: axes.some((r) => r.indices !== undefined),
  };
}
