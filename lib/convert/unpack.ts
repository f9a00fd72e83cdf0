// CF decoding for `--unpack`, with netCDF4-python's rules (mask-and-scale):
//   1. `_Unsigned = "true"` on a signed integer variable: the stored bits are unsigned (the
//      missing/fill/valid attributes are reinterpreted the same way);
//   2. masked -> NaN: values equal to `missing_value` (any of them) or `_FillValue` (NaN-aware);
//      without `_FillValue`, the netCDF default fill of the stored type (not for 8-bit types);
//      values below `valid_min` / above `valid_max` (`valid_range` = [min, max] wins over both);
//      an attribute whose value does not survive a cast to the stored type is ignored, as
//      netCDF4-python does;
//   3. `scale_factor` / `add_offset`: x * scale + offset.
// The output is float (f32 when the stored type is at most 16 bits and every scale/offset
// attribute is f32, else f64) whenever it scales or masks; a variable that only needs the
// unsigned reinterpretation keeps integers (u8/u16/u32/u64).
import type { DTypeName, TetTypedArray } from '../types';
import { attrNumber } from './attrs';
import { f16BitsToNumber as f16ToNumber, storageArray } from './dtype';
import type { SourceVariable } from './types';

/** Attributes consumed by unpacking (dropped from the converted dataset's attrs). */
export const UNPACK_ATTRS = ['scale_factor', 'add_offset', '_FillValue', 'missing_value', 'valid_min', 'valid_max',
  'valid_range', '_Unsigned'] as const;

/** Stored element type as the source holds it: 'i8' for a byte variable the readers widen to i16. */
type StoredKind = 'i8' | DTypeName;

/** netCDF default fill values (netcdf.h NC_FILL_*) by stored type. */
const DEFAULT_FILL: Partial<Record<StoredKind, number>> = {
  /* eslint-disable no-loss-of-precision -- i64/u64 are not exact doubles; kept as netcdf.h spells them */
  i16: -32767, i32: -2147483647, i64: -9223372036854775806, u16: 65535, u32: 4294967295,
  u64: 18446744073709551614, f32: 9.969209968386869e36, f64: 9.969209968386869e36,
  /* eslint-enable no-loss-of-precision */
};

const INT_RANGE: Partial<Record<StoredKind, [number, number]>> = {
  i8: [-128, 127], u8: [0, 255], i16: [-32768, 32767], u16: [0, 65535], i32: [-2147483648, 2147483647],
  u32: [0, 4294967295], i64: [-(2 ** 63), 2 ** 63 - 1], u64: [0, 2 ** 64 - 1],
};
const UNSIGNED_OF: Partial<Record<StoredKind, StoredKind>> = { i8: 'u8', i16: 'u16', i32: 'u32', i64: 'u64' };
const BITS: Record<StoredKind, number> = { i8: 8, u8: 8, i16: 16, u16: 16, f16: 16, i32: 32, u32: 32, f32: 32, i64: 64, u64: 64, f64: 64 };

export interface UnpackPlan {
  /** Output dtype. */
  dtype: DTypeName;
  stored: StoredKind;
  /** Reinterpret stored signed integers as unsigned of the same width. */
  unsigned: boolean;
  scale: number;
  offset: number;
  /** scale_factor or add_offset present (else values are not multiplied / offset: -0 stays -0). */
  scaled: boolean;
  /** Exact values that become NaN (compared after the unsigned reinterpretation). */
  missing: number[];
  maskNaN: boolean;
  validMin: number | null;
  validMax: number | null;
  /** Output is float (NaN for masked values). */
  float: boolean;
  /** 64-bit stored integers: the same masking, exact (a double cannot hold every such value). */
  big?: { missing: Set<bigint>; validMin: bigint | null; validMax: bigint | null };
}

/** The element type the source stores (byte variables are read widened to i16). */
export function storedKind(v: SourceVariable): StoredKind {
  if (v.dtype === 'i16' && /^(byte|int8|[<>|=]?i1|[<>|=]?b)$/.test(v.sourceType)) return 'i8';
  return v.dtype!;
}

/** Value of `x` cast to `kind` as numpy would (integers wrap, f32 rounds), or null if not castable. */
function castTo(kind: StoredKind, x: number): number | null {
  if (Number.isNaN(x)) return kind === 'f32' || kind === 'f64' || kind === 'f16' ? NaN : null;
  if (kind === 'f64') return x;
  if (kind === 'f32') return Math.fround(x);
  if (kind === 'f16') return x;
  if (!Number.isFinite(x)) return null;
  return Math.trunc(x);
}

/** netCDF4-python's _check_safecast: every value survives the cast to the stored type. */
function safeValues(kind: StoredKind, value: unknown): number[] | null {
  if (value === undefined) return null;
  const items = Array.isArray(value) ? value : [value];
  const out: number[] = [];
  for (const item of items) {
    const x = attrNumber(item);
    if (x === undefined) return null;
    const c = castTo(kind, x);
    if (c === null) return null;
    if (!(Number.isNaN(x) && Number.isNaN(c)) && c !== x) return null;
    const range = INT_RANGE[kind];
    if (range && (c < range[0] || c > range[1])) return null;
    out.push(c);
  }
  return out;
}

const BIG_RANGE: Partial<Record<StoredKind, [bigint, bigint]>> = {
  i64: [-(2n ** 63n), 2n ** 63n - 1n], u64: [0n, 2n ** 64n - 1n],
};
const BIG_DEFAULT_FILL: Partial<Record<StoredKind, bigint>> = { i64: -9223372036854775806n, u64: 18446744073709551614n };

/** Exact values of a 64-bit integer attribute (numbers, or the decimal text the readers keep
 *  beyond 2^53), or null when one is not an integer of the stored type (netCDF4-python ignores it). */
function safeBigValues(kind: StoredKind, value: unknown): bigint[] | null {
  if (value === undefined) return null;
  const range = BIG_RANGE[kind]!;
  const out: bigint[] = [];
  for (const item of Array.isArray(value) ? value : [value]) {
    let b: bigint;
    if (typeof item === 'bigint') b = item;
    else if (typeof item === 'number' && Number.isInteger(item)) b = BigInt(item);
    else if (typeof item === 'string' && /^-?\d+$/.test(item)) b = BigInt(item);
    else return null;
    if (b < range[0] || b > range[1]) return null;
    out.push(b);
  }
  return out;
}

/** Two's-complement reinterpretation of a signed value of `bits` as unsigned. */
function asUnsigned(x: number, bits: number): number {
  return x < 0 ? x + 2 ** bits : x;
}

function isTrue(value: unknown): boolean {
  const s = Array.isArray(value) ? value[0] : value;
  return typeof s === 'string' ? s.trim().toLowerCase() === 'true' : s === 1 || s === true;
}

/** The unpacking of `v` under --unpack, or null when it has nothing to decode. */
export function unpackPlan(v: SourceVariable): UnpackPlan | null {
  if (!v.dtype) return null;
  const a = v.attrs;
  const stored = storedKind(v);
  const isFloat = stored === 'f16' || stored === 'f32' || stored === 'f64';
  const unsigned = !isFloat && isTrue(a._Unsigned) && UNSIGNED_OF[stored] !== undefined;
  const bits = BITS[stored];
  const view = (x: number) => (unsigned ? asUnsigned(x, bits) : x);
  const scale = attrNumber(a.scale_factor);
  const offset = attrNumber(a.add_offset);
  const scaled = scale !== undefined || offset !== undefined;
  const missing: number[] = [];
  let maskNaN = false;
  const push = (xs: number[] | null) => {
    for (const x of xs ?? []) { if (Number.isNaN(x)) maskNaN = true; else missing.push(view(x)); }
  };
  push(safeValues(stored, a.missing_value));
  const fill = safeValues(stored, a._FillValue);
  push(fill);
  let validMin: number | null = null;
  let validMax: number | null = null;
  const range = safeValues(stored, a.valid_range);
  if (range && range.length === 2) {
    [validMin, validMax] = [view(range[0]), view(range[1])];
  } else {
    const lo = safeValues(stored, a.valid_min);
    const hi = safeValues(stored, a.valid_max);
    if (lo) validMin = view(lo[0]);
    if (hi) validMax = view(hi[0]);
  }
  const explicitMask = missing.length > 0 || maskNaN || validMin !== null || validMax !== null;
  const float = scaled || explicitMask || isFloat;
  // The default fill masks only where the output can hold NaN, and never 8-bit types. It is
  // compared with the stored (signed) value, as netCDF4-python compares it.
  const defaultFill = fill === null && float ? DEFAULT_FILL[stored] : undefined;
  if (!scaled && !explicitMask && !unsigned && defaultFill === undefined) return null;
  if (!float) {
    return { dtype: UNSIGNED_OF[stored] as DTypeName, stored, unsigned, scale: 1, offset: 0, scaled: false, missing: [], maskNaN: false,
      validMin: null, validMax: null, float: false };
  }
  // (an unsigned view never equals the signed default fill, so it masks nothing there)
  if (defaultFill !== undefined && !unsigned) missing.push(defaultFill);
  let big: UnpackPlan['big'];
  if (BIG_RANGE[stored]) {
    const u = (b: bigint) => (unsigned ? BigInt.asUintN(64, b) : b);
    const set = new Set<bigint>();
    for (const k of ['missing_value', '_FillValue'] as const) for (const b of safeBigValues(stored, a[k]) ?? []) set.add(u(b));
    if (defaultFill !== undefined && !unsigned) set.add(BIG_DEFAULT_FILL[stored]!);
    const r = safeBigValues(stored, a.valid_range);
    const lo = r && r.length === 2 ? r[0] : safeBigValues(stored, a.valid_min)?.[0];
    const hi = r && r.length === 2 ? r[1] : safeBigValues(stored, a.valid_max)?.[0];
    big = { missing: set, validMin: lo === undefined ? null : u(lo), validMax: hi === undefined ? null : u(hi) };
  }
  const attrKinds = ['scale_factor', 'add_offset'].filter((k) => k in a).map((k) => v.attrTypes[k]);
  const narrow = bits <= 16 || stored === 'f32';
  const f32 = narrow && (scaled ? attrKinds.every((k) => k === 'f32') : stored !== 'f64' && bits <= 32);
  return { dtype: f32 ? 'f32' : 'f64', stored, unsigned, scale: scale ?? 1, offset: offset ?? 0, scaled,
    missing, maskNaN, validMin, validMax, float: true, ...(big ? { big } : {}) };
}


/** Decodes one slab of stored values (the reader's storage array) into `plan.dtype`. */
export function applyUnpack(raw: TetTypedArray, plan: UnpackPlan): TetTypedArray {
  const n = raw.length;
  const bits = BITS[plan.stored];
  if (!plan.float) {
    const out = storageArray(plan.dtype, n);
    if (out instanceof BigUint64Array) {
      const src = raw as BigInt64Array;
      for (let i = 0; i < n; i++) out[i] = BigInt.asUintN(64, src[i]);
    } else {
      const mod = 2 ** bits;
      for (let i = 0; i < n; i++) { const x = Number(raw[i]); (out as Uint32Array)[i] = x < 0 ? x + mod : x; }
    }
    return out;
  }
  const out = storageArray(plan.dtype, n) as Float32Array | Float64Array;
  const missing = new Set(plan.missing);
  const { validMin, validMax, maskNaN, unsigned } = plan;
  // Without scale_factor / add_offset the values are not computed on (netCDF4-python neither):
  // x * 1 + 0 would turn -0 into +0.
  const scale = plan.scaled ? plan.scale : 1;
  const offset = plan.scaled ? plan.offset : -0;
  const f16 = plan.stored === 'f16';
  const big = raw instanceof BigInt64Array || raw instanceof BigUint64Array;
  const mod = 2 ** bits;
  if (big && plan.big) {
    const { missing: mb, validMin: lo, validMax: hi } = plan.big;
    for (let i = 0; i < n; i++) {
      const b = unsigned ? BigInt.asUintN(64, (raw as BigInt64Array)[i]) : (raw as BigInt64Array)[i];
      const masked = mb.has(b) || (lo !== null && b < lo) || (hi !== null && b > hi);
      out[i] = masked ? NaN : Number(b) * scale + offset;
    }
    return out;
  }
  for (let i = 0; i < n; i++) {
    let x: number;
    if (big) x = unsigned ? Number(BigInt.asUintN(64, (raw as BigInt64Array)[i])) : Number((raw as BigInt64Array)[i]);
    else {
      x = f16 ? f16ToNumber(raw[i] as number) : (raw[i] as number);
      if (unsigned && x < 0) x += mod;
    }
    const masked = missing.has(x) || (maskNaN && Number.isNaN(x)) || (validMin !== null && x < validMin)
      || (validMax !== null && x > validMax);
    out[i] = masked ? NaN : x * scale + offset;
  }
  return out;
}

/** The attributes a converted dataset keeps after `plan`: everything unpacking consumed is
 *  dropped; an integer-only (unsigned) plan keeps fill/missing/valid values, reinterpreted. */
export function unpackedAttrs(attrs: Record<string, unknown>, plan: UnpackPlan): Record<string, unknown> {
  const out = { ...attrs };
  if (plan.float) {
    for (const k of UNPACK_ATTRS) delete out[k];
    return out;
  }
  delete out._Unsigned;
  const bits = BITS[plan.stored];
  const fix = (x: unknown) => (typeof x === 'number' ? asUnsigned(x, bits) : x);
  for (const k of ['_FillValue', 'missing_value', 'valid_min', 'valid_max', 'valid_range']) {
    if (k in out) out[k] = Array.isArray(out[k]) ? (out[k] as unknown[]).map(fix) : fix(out[k]);
  }
  return out;
}
