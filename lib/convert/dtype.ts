// Element types of the sources -> tetration dtypes, and the lossless conversions between them.
import type { DTypeName, TetTypedArray } from '../types';

/** Numpy-style type codes ('f4', 'i8', 'b1', ...) -> tetration dtype. i1 widens to i16, b1 -> u8. */
const BY_NUMPY: Record<string, DTypeName> = {
  f2: 'f16', f4: 'f32', f8: 'f64', i1: 'i16', i2: 'i16', i4: 'i32', i8: 'i64',
  u1: 'u8', u2: 'u16', u4: 'u32', u8: 'u64', b1: 'u8',
};

/** Zarr v3 data_type -> tetration dtype. */
const BY_ZARR3: Record<string, DTypeName> = {
  bool: 'u8', int8: 'i16', int16: 'i16', int32: 'i32', int64: 'i64', uint8: 'u8', uint16: 'u16',
  uint32: 'u32', uint64: 'u64', float16: 'f16', float32: 'f32', float64: 'f64',
};

export function dtypeFromNumpy(code: string): DTypeName | null {
  const m = /^[<>|=]?([fiub])(\d+)$/.exec(code);
  return m ? BY_NUMPY[m[1] + m[2]] ?? null : null;
}

export function dtypeFromZarr3(dataType: unknown): DTypeName | null {
  return typeof dataType === 'string' ? BY_ZARR3[dataType] ?? null : null;
}

/** An empty typed array constructor for a tetration dtype (f16 keeps its raw 16-bit patterns). */
export function storageArray(dtype: DTypeName, length: number): TetTypedArray {
  switch (dtype) {
    case 'f32': return new Float32Array(length);
    case 'f64': return new Float64Array(length);
    case 'i32': return new Int32Array(length);
    case 'i64': return new BigInt64Array(length);
    case 'u8': return new Uint8Array(length);
    case 'u16': case 'f16': return new Uint16Array(length);
    case 'i16': return new Int16Array(length);
    case 'u32': return new Uint32Array(length);
    case 'u64': return new BigUint64Array(length);
  }
}

/**
 * Copies `values` into the storage array of `dtype` (widening i8 -> i16, bool -> u8), or returns it
 * unchanged when it already has that representation.
 */
export function toStorage(dtype: DTypeName, values: ArrayLike<number | bigint | boolean>): TetTypedArray {
  const target = storageArray(dtype, 0);
  if (Object.getPrototypeOf(values) === Object.getPrototypeOf(target)) return values as unknown as TetTypedArray;
  const out = storageArray(dtype, values.length);
  if (out instanceof BigInt64Array || out instanceof BigUint64Array) {
    for (let i = 0; i < values.length; i++) (out as BigInt64Array)[i] = BigInt(values[i] as number | bigint);
  } else {
    for (let i = 0; i < values.length; i++) (out as Float64Array)[i] = Number(values[i]);
  }
  return out;
}

/** Little-endian bytes of a storage array (a view, no copy). */
export function storageBytes(values: TetTypedArray): Uint8Array {
  return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
}

/** Reinterprets little-endian bytes as the storage array of `dtype` (copies when misaligned). */
export function storageFromBytes(dtype: DTypeName, bytes: Uint8Array): TetTypedArray {
  const probe = storageArray(dtype, 0) as unknown as { BYTES_PER_ELEMENT: number; constructor: any };
  const size = probe.BYTES_PER_ELEMENT;
  const aligned = bytes.byteOffset % size === 0 ? bytes : bytes.slice();
  return new probe.constructor(aligned.buffer, aligned.byteOffset, aligned.byteLength / size);
}

/** The value of an IEEE binary16 bit pattern. */
export function f16BitsToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}
