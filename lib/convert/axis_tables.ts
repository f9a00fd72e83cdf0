// Axis tables of array sources (spec tables_and_filters.md §3): every dimension of a converted
// dataset gets a table named after it, bound to the first converted dataset with that axis, whose
// columns are the 1-D variables along exactly that dimension (the coordinate variable first).
// Numbers keep their values as the dataset gets them (CF unpacking under `unpack`), with masked
// values as nulls; CF time becomes `timestamp` UTC (cf_time.ts); text becomes `str`.
import * as path from 'node:path';
import { TetError } from '../errors';
import type { ColumnInput } from '../tables/types';
import { I64_MAX } from '../tables/values';
import type { TetTypedArray } from '../types';
import type { TetWriter } from '../writer';
import { cfTimeOf, cfTimestamps } from './cf_time';
import { f16BitsToNumber, storageArray } from './dtype';
import { describe } from './errors';
import type { ConvertReport, SourceReader, SourceVariable } from './types';
import { applyUnpack, unpackPlan } from './unpack';

/** Rows read from the source per call (bounds one read's buffer in the readers). */
const ROWS_PER_READ = 1 << 20;

type TableReport = NonNullable<ConvertReport['tables']>[number];

/** One axis table to write: the dataset axis it is bound to and its column variables. */
interface AxisTablePlan {
  name: string;
  dim: string;
  dataset: string;
  axis: number;
  rows: number;
  variables: SourceVariable[];
}

/** The group path of a variable ('' at the root). */
function groupOf(v: SourceVariable): string {
  const dir = path.posix.dirname(v.name);
  return dir === '.' ? '' : dir;
}

/** Whether `v` may be a column of the table of its first dimension: numeric and 1-D, a 1-D
 *  string array, or a char array (dim, strlen) - readable, and named along every axis. */
function columnShaped(v: SourceVariable, reader: SourceReader): boolean {
  if (!v.dimNames || v.skipCode) return false;
  if (v.text) return !!reader.readText && v.shape.length === (v.text === 'chars' ? 2 : 1);
  return !!v.dtype && !v.skipReason && v.shape.length === 1;
}

/**
 * The axis tables of the converted `datasets` (in conversion order): one per (group, dimension)
 * where a variable lies along it. A table is keyed by its coordinate variable's group (else the
 * dataset's) and named `dim` (`group/dim` inside a group), and bound to the first dataset of
 * rank ≥ 2 with that axis - the data the labels describe, not the 1-D variables that become its
 * columns - else to the first 1-D one. Its columns are the coordinate variable, then the 1-D
 * variables of that group along the dimension, in source order (those named like the dimension
 * first); `keep` (--include / --exclude) filters all but the coordinate.
 */
function planAxisTables(reader: SourceReader, datasets: SourceVariable[], keep: (name: string) => boolean): AxisTablePlan[] {
  const plans = new Map<string, AxisTablePlan>();
  for (const ds of [...datasets.filter((d) => d.shape.length > 1), ...datasets.filter((d) => d.shape.length <= 1)]) {
    ds.dimNames?.forEach((dim, axis) => {
      const cv = ds.coordVars[axis];
      const coord = cv && cv.dtype && !cv.skipReason && cv.shape.length === 1 && cv.shape[0] === ds.shape[axis] ? cv : null;
      const group = groupOf(coord ?? ds);
      const name = group ? `${group}/${dim}` : dim;
      if (!plans.has(name)) plans.set(name, { name, dim, dataset: ds.name, axis, rows: ds.shape[axis], variables: coord ? [coord] : [] });
    });
  }
  const candidates = reader.variables.filter((v) => !v.hidden && keep(v.name) && columnShaped(v, reader));
  const named = (v: SourceVariable) => path.posix.basename(v.name) === v.dimNames![0];
  for (const v of [...candidates.filter(named), ...candidates.filter((c) => !named(c))]) {
    const group = groupOf(v);
    const plan = plans.get(group ? `${group}/${v.dimNames![0]}` : v.dimNames![0]);
    if (plan && plan.rows === v.shape[0] && !plan.variables.includes(v)) plan.variables.push(v);
  }
  return [...plans.values()].filter((p) => p.variables.length > 0);
}

/** The whole of a 1-D numeric variable, read ROWS_PER_READ rows at a time. */
async function readNumbers(reader: SourceReader, v: SourceVariable, rows: number): Promise<TetTypedArray> {
  const out = storageArray(v.dtype!, rows);
  for (let start = 0; start < rows; start += ROWS_PER_READ) {
    const count = Math.min(ROWS_PER_READ, rows - start);
    const slab = await reader.read(v, [start], [count]);
    if (slab.length !== count) throw new Error(`the source returned ${slab.length} values for ${count} rows`);
    (out as unknown as { set(a: ArrayLike<number | bigint>, o: number): void }).set(slab as ArrayLike<number | bigint>, start);
  }
  return out;
}

async function readTexts(reader: SourceReader, v: SourceVariable, rows: number): Promise<(string | null)[]> {
  const out: (string | null)[] = [];
  for (let start = 0; start < rows; start += ROWS_PER_READ) {
    const count = Math.min(ROWS_PER_READ, rows - start);
    const part = await reader.readText!(v, start, count);
    if (part.length !== count) throw new Error(`the source returned ${part.length} strings for ${count} rows`);
    for (const s of part) out.push(s);
  }
  return out;
}

const BITS: Record<string, number> = { i8: 8, i16: 16, i32: 32, i64: 64 };

/** Values of a numeric column as the dataset gets them: integers (bigint, unsigned where
 *  `_Unsigned` says so) or floats, plus the rows unpacking masks (fill, missing, valid range). */
function numericValues(v: SourceVariable, raw: TetTypedArray, unpack: boolean):
  { ints: BigInt64Array | BigUint64Array | null; floats: Float64Array | null; valid: Uint8Array | null } {
  const n = raw.length;
  const integer = !['f16', 'f32', 'f64'].includes(v.dtype!);
  const plan = unpack ? unpackPlan(v) : null;
  const toBig = (a: TetTypedArray, unsignedBits: number): BigInt64Array | BigUint64Array => {
    if (a instanceof BigInt64Array) return unsignedBits ? BigUint64Array.from(a, (x) => BigInt.asUintN(64, x)) : a;
    if (a instanceof BigUint64Array) return a;
    const mod = 2 ** unsignedBits;
    return BigInt64Array.from(a as ArrayLike<number>, (x) => BigInt(unsignedBits && x < 0 ? x + mod : x));
  };
  if (!plan) {
    if (integer) return { ints: toBig(raw, 0), floats: null, valid: null };
    const floats = v.dtype === 'f16' ? Float64Array.from(raw as Uint16Array, f16BitsToNumber) : Float64Array.from(raw as Float32Array);
    return { ints: null, floats, valid: null };
  }
  if (!plan.float) return { ints: toBig(applyUnpack(raw, plan), 0), floats: null, valid: null };
  const decoded = applyUnpack(raw, plan) as Float32Array | Float64Array;
  // A masked row is a null; a NaN the source holds (and does not mask) stays a NaN.
  let valid: Uint8Array | null = null;
  const rawIsNaN = (i: number) => !integer && Number.isNaN(v.dtype === 'f16' ? f16BitsToNumber(raw[i] as number) : raw[i] as number);
  for (let i = 0; i < n; i++) {
    if (Number.isNaN(decoded[i]) && (plan.maskNaN || !rawIsNaN(i))) {
      valid ??= new Uint8Array(n).fill(1);
      valid[i] = 0;
    }
  }
  // Masked integers without scale / offset stay integers (the dataset's floats hold the same values).
  if (integer && !plan.scaled) return { ints: toBig(raw, plan.unsigned ? BITS[plan.stored] ?? 0 : 0), floats: null, valid };
  return { ints: null, floats: Float64Array.from(decoded), valid };
}

/** The column of `v`, or null (with a notice) when it cannot be one. */
async function columnOf(reader: SourceReader, v: SourceVariable, label: string, rows: number, unpack: boolean,
  notice: (m: string) => void): Promise<ColumnInput | null> {
  if (v.text) return { kind: 'str', values: await readTexts(reader, v, rows) };
  const { ints, floats, valid } = numericValues(v, await readNumbers(reader, v, rows), unpack);
  const masked = valid ? { valid } : {};
  const time = cfTimeOf(scalar(v.attrs.units), scalar(v.attrs.calendar));
  if (time && 'refused' in time) notice(`${label}: ${time.refused}; kept as numbers`);
  else if (time) {
    const t = cfTimestamps(time, (ints ?? floats)!, valid);
    if (t.rounded) notice(`${label}: ${t.rounded} time value(s) are no whole number of ns; rounded to µs`);
    if (t.outOfRange) notice(`${label}: ${t.outOfRange} time value(s) beyond the timestamp range; written as null`);
    return { kind: 'timestamp', unit: t.unit, tz: 'UTC', values: t.ticks, ...(t.valid ? { valid: t.valid } : {}) };
  }
  if (floats) return { kind: 'float', values: floats, ...masked };
  if (ints instanceof BigUint64Array) {
    const beyond = ints.findIndex((x) => x > I64_MAX);
    if (beyond >= 0) {
      notice(`${label}: value ${ints[beyond]} at row ${beyond} exceeds the int range (i64); column not written`);
      return null;
    }
    return { kind: 'int', values: BigInt64Array.from(ints, (x) => BigInt.asIntN(64, x)), ...masked };
  }
  return { kind: 'int', values: ints!, ...masked };
}

function scalar(value: unknown): unknown {
  return Array.isArray(value) && value.length === 1 ? value[0] : value;
}

/**
 * Writes the axis tables of the converted `datasets` into `writer` and reports them. A column
 * whose variable cannot be read is left out with a notice, never failing the conversion.
 */
export async function writeAxisTables(reader: SourceReader, writer: TetWriter, datasets: SourceVariable[],
  keep: (name: string) => boolean, unpack: boolean, notice: (m: string) => void): Promise<TableReport[]> {
  const reports: TableReport[] = [];
  for (const plan of planAxisTables(reader, datasets, keep)) {
    const bases = plan.variables.map((v) => path.posix.basename(v.name));
    const columns: Record<string, ColumnInput> = {};
    for (const [i, v] of plan.variables.entries()) {
      // Column names are variable names without their group; the full name where two clash.
      const name = bases.indexOf(bases[i]) === i && !(bases[i] in columns) ? bases[i] : v.name;
      const label = `axis table ${plan.name}: column ${name} (${v.name})`;
      try {
        const col = await columnOf(reader, v, label, plan.rows, unpack, notice);
        if (col) columns[name] = col;
      } catch (err) {
        notice(`${label} not written: ${err instanceof TetError ? err.message : describe(err)}`);
      }
    }
    if (Object.keys(columns).length === 0) continue;
    writer.addTable({ name: plan.name, axis: { dataset: plan.dataset, dim: plan.axis }, columns });
    reports.push({
      name: plan.name, rows: plan.rows, axis: { dataset: plan.dataset, dim: plan.dim },
      columns: Object.entries(columns).map(([name, c]) => ({ name, kind: c.kind, ...(c.kind === 'timestamp' ? { unit: c.unit, tz: c.tz } : {}) })),
    });
  }
  return reports;
}
