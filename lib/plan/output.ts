// Output specs: what a plan writes out, computed in TS so the caller owns the memory. read()
// allocates its result from the spec and native pool threads write the selection into it in
// place (native/napi/file_methods.cpp ExecuteWorker); nothing selection-sized is allocated or
// copied natively. A partial reduction of a streaming op with 8-byte values (f64, u64, i64)
// gets its values array the same way (reductionOutputSpec): the native fold's finalize writes
// each output value into it once. Scalar results, booleans and tier-C ops stay native-built
// (they are small, or sized by the run).
import { kMaxLength } from 'node:buffer';
import { TetBudgetError } from '../errors';
import { OP_TIER, OP_VALUE } from '../ops.generated';
import type { DTypeName, TetTypedArray } from '../types';

type TypedArrayCtor = new (length: number) => TetTypedArray;

/** The typed array a dataset's values read into: f16 widens to f32, 64-bit integers are BigInt. */
const OUTPUT_CTOR: Readonly<Record<DTypeName, TypedArrayCtor>> = {
  f32: Float32Array, f16: Float32Array, f64: Float64Array, i32: Int32Array, i64: BigInt64Array,
  u8: Uint8Array, u16: Uint16Array, i16: Int16Array, u32: Uint32Array, u64: BigUint64Array,
};

export interface OutputSpec {
  dtype: DTypeName;       // the dataset's dtype
  length: number;         // elements
  elementBytes: number;   // of the output type (f16 → 4, or 2 as float16)
  bytes: number;
  /** f16 read as the stored binary16 bits, returned as a Float16Array (runtimes that have it). */
  float16?: boolean;
}

/** Float16Array where the runtime has it (Node 24+), else undefined. */
export function float16ArrayCtor(): (new (buffer: ArrayBufferLike, offset?: number, length?: number) => TetTypedArray) | undefined {
  return (globalThis as { Float16Array?: new (b: ArrayBufferLike, o?: number, l?: number) => TetTypedArray }).Float16Array;
}

/**
 * The single output of a read (materialize without a reduction) of `elementCount` elements;
 * `float16` (f16 datasets only) keeps the stored bits in a Float16Array instead of widening to f32.
 */
export function readOutputSpec(dtype: DTypeName, elementCount: number, float16 = false): OutputSpec {
  if (float16 && dtype === 'f16') return { dtype, length: elementCount, elementBytes: 2, bytes: elementCount * 2, float16: true };
  const elementBytes = (OUTPUT_CTOR[dtype] as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
  return { dtype, length: elementCount, elementBytes, bytes: elementCount * elementBytes };
}

const FLOAT_DTYPES: ReadonlySet<DTypeName> = new Set(['f16', 'f32', 'f64']);
const SIGNED_DTYPES: ReadonlySet<DTypeName> = new Set(['i16', 'i32', 'i64']);

/** The values array of a partial streaming reduction's `outputs` elements, or null when native builds it. */
export function reductionOutputSpec(op: keyof typeof OP_VALUE, dtype: DTypeName, scalar: boolean, outputs: number): ReductionOutputSpec | null {
  if (scalar || OP_TIER[op] !== 'stream') return null;
  const value = OP_VALUE[op];
  const kind = value === 'extremum' ? (FLOAT_DTYPES.has(dtype) ? 'f64' : SIGNED_DTYPES.has(dtype) ? 'i64' : 'u64') : value;
  if (kind === 'boolean') return null;
  return { kind, length: outputs, bytes: outputs * 8 };
}

export interface ReductionOutputSpec {
  kind: 'f64' | 'u64' | 'i64';
  length: number;
  bytes: number;
}

/** Allocates a reduction's values array (TET_BUDGET_EXCEEDED when it cannot be). */
export function allocateReductionOutput(spec: ReductionOutputSpec, what: string): Float64Array | BigUint64Array | BigInt64Array {
  if (spec.length > kMaxLength) {
    throw new TetBudgetError('TET_BUDGET_EXCEEDED', `${what}: ${spec.length} output values; a typed array holds at most ${kMaxLength}`);
  }
  try {
    return spec.kind === 'f64' ? new Float64Array(spec.length) : spec.kind === 'u64' ? new BigUint64Array(spec.length) : new BigInt64Array(spec.length);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    throw new TetBudgetError('TET_BUDGET_EXCEEDED', `${what}: cannot allocate ${spec.bytes} bytes for ${spec.length} output values (${err.message})`);
  }
}

/** Throws TET_BUDGET_EXCEEDED when one typed array cannot hold the output. */
export function checkOutput(spec: OutputSpec, what: string): void {
  if (spec.length > kMaxLength) {
    throw new TetBudgetError('TET_BUDGET_EXCEEDED', `${what}: the selection has ${spec.length} elements; ` +
      `a typed array holds at most ${kMaxLength}. Read a smaller window or use a query with a reduction`);
  }
}

/**
 * Allocates the output (zero-filled by V8). Refuses, before allocating, what one typed array
 * cannot hold, and turns an allocation failure into TET_BUDGET_EXCEEDED; `what` names the read.
 */
export function allocateOutput(spec: OutputSpec, what: string): TetTypedArray {
  checkOutput(spec, what);
  try {
    // float16: native writes the bits into a Uint16Array; TetFile.read views its buffer as Float16Array.
    return spec.float16 ? new Uint16Array(spec.length) : new OUTPUT_CTOR[spec.dtype](spec.length);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    throw new TetBudgetError('TET_BUDGET_EXCEEDED', `${what}: cannot allocate ${spec.bytes} bytes for ${spec.length} ` +
      `elements of ${spec.dtype} (${err.message}); read a smaller window or use a query with a reduction`);
  }
}
