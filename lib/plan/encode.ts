// Encodes a compiled plan into the wire form the native core decodes (native/include/tet/plan.h).

import { OP_CODE } from './ops.generated';

export { OP_CODE };
export type OpName = keyof typeof OP_CODE;

export const STRATEGY_CODE = {
  streaming_fold: 0, in_memory_materialize: 1, temp_spill_materialize: 2, mmap_spill: 3, capped_in_memory: 4,
} as const;
export type StrategyName = keyof typeof STRATEGY_CODE;
export const STRATEGY_NAME: readonly StrategyName[] = Object.keys(STRATEGY_CODE) as StrategyName[];

export const IO_MODE_CODE = { parallel_chunks: 0, sequential_chunks: 1, linear_scan: 2 } as const;
export type IoModeName = keyof typeof IO_MODE_CODE;
export const IO_MODE_NAME: readonly IoModeName[] = Object.keys(IO_MODE_CODE) as IoModeName[];

export interface CompiledPlan {
  datasetId: number;
  /** Per axis: selected positions are start + i*step for 0 <= i < count. */
  start: number[];
  step: number[];
  count: number[];
  op: OpName;
  /** Reduced axes (scalar ops list every axis). */
  reduceAxes: number[];
  q?: number;
  bins?: number;
  histRange?: { min: number; max: number };
  fill?: number;
  obsAxis?: number;
  strategy: StrategyName;
  ioMode: IoModeName;
  threads?: number;
  previewMax: number;
  spillPath?: string;
  tempDir?: string;
}

const HEADER_BYTES = 288;

export function encodePlan(p: CompiledPlan): Uint8Array {
  const enc = new TextEncoder();
  const spill = enc.encode(p.spillPath ?? '');
  const temp = enc.encode(p.tempDir ?? '');
  const buf = new Uint8Array(HEADER_BYTES + spill.length + temp.length);
  const v = new DataView(buf.buffer);
  const ndim = p.start.length;
  let mask = 0;
  for (const a of p.reduceAxes) mask |= 1 << a;
  v.setUint32(0, 0x4e4c5054, true);
  v.setUint32(4, 1, true);
  v.setUint32(8, p.datasetId, true);
  v.setUint32(12, ndim, true);
  v.setUint32(16, OP_CODE[p.op], true);
  v.setUint32(20, mask, true);
  v.setUint32(24, p.bins ?? 0, true);
  v.setUint32(28, (p.histRange ? 1 : 0) | (p.fill !== undefined ? 2 : 0), true);
  v.setFloat64(32, p.q ?? 0.5, true);
  v.setFloat64(40, p.histRange?.min ?? 0, true);
  v.setFloat64(48, p.histRange?.max ?? 0, true);
  v.setFloat64(56, p.fill ?? 0, true);
  v.setUint32(64, p.obsAxis ?? 0, true);
  v.setUint32(68, STRATEGY_CODE[p.strategy], true);
  v.setUint32(72, IO_MODE_CODE[p.ioMode], true);
  v.setUint32(76, p.threads ?? 0, true);
  v.setBigUint64(80, BigInt(p.previewMax), true);
  for (let a = 0; a < 8; a++) {
    v.setBigUint64(88 + 8 * a, BigInt(a < ndim ? p.start[a] : 0), true);
    v.setBigUint64(152 + 8 * a, BigInt(a < ndim ? p.step[a] : 1), true);
    v.setBigUint64(216 + 8 * a, BigInt(a < ndim ? p.count[a] : 1), true);
  }
  v.setUint32(280, spill.length, true);
  v.setUint32(284, temp.length, true);
  buf.set(spill, HEADER_BYTES);
  buf.set(temp, HEADER_BYTES + spill.length);
  return buf;
}
