// Encodes a compiled plan into the wire form the native core decodes (native/include/tet/plan.h):
// plan wire v2, a 16-byte header and length-prefixed sections (SELECT, AGG, OUTPUT, EXEC, and
// SHARD / DEVICE when not the defaults, GROUP for group_by).

import { OP_CODE } from '../ops.generated';

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
  /** Per axis: an index list (sorted, unique, in range) replacing start/step/count, or null. */
  indices?: readonly (readonly number[] | null)[];
  op: OpName;
  /** More streaming ops folded in the same pass as `op` (AGG entries 2..n; scalar plans only). */
  more?: OpName[];
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
  /** OUTPUT flag: an f16 read keeps the stored binary16 bits (into a Uint16Array; lib/ views it as Float16Array). */
  f16Raw?: boolean;
  spillPath?: string;
  tempDir?: string;
  /**
   * SHARD: the unit range [begin, end) of `of` units (default: the whole plan); form 2 adds the
   * shard `index` of `count` of an exact sharded run and its round request (tier C, round >= 2).
   */
  shard?: { begin: number; end: number; of: number; index?: number; count?: number; round?: Uint8Array };
  /** DEVICE (default cpu, ordinal 0). */
  device?: { kind: 'cpu' | 'gpu'; ordinal?: number };
  /**
   * GROUP (group_by on a tensor): the group axis (also in reduceAxes), the group count and the
   * group id of each selected position of the axis, in selection order.
   */
  group?: { axis: number; groups: number; ids: Uint32Array };
}

export const PLAN_MAGIC = 0x4e4c5054;
export const PLAN_VERSION = 2;
export const SECTION = { select: 1, agg: 2, output: 3, exec: 4, shard: 5, device: 6, group: 7 } as const;
const AXIS_BOX = 0;
const AXIS_INDICES = 1;
const AXIS_RUNS = 2;
const AGG_BYTES = 48;
const TWO32 = 2 ** 32;

/**
 * An ascending index list as flat (start, count) unit-step runs when that is smaller than the
 * list (a `where` on a sorted column selects long runs), else null.
 */
export function indexRuns(idx: readonly number[]): number[] | null {
  const runs: number[] = [];
  for (let i = 0; i < idx.length; i++) {
    if (i > 0 && idx[i] === idx[i - 1] + 1) runs[runs.length - 1]++;
    else {
      if (2 * (runs.length / 2 + 1) > idx.length) return null;  // no smaller than the list itself
      runs.push(idx[i], 1);
    }
  }
  return runs;
}

const NO_BYTES = new Uint8Array(0);
/** A path's UTF-8 bytes; most plans have none (a fresh process's first TextEncoder costs ~0.05 ms). */
const utf8 = (s: string | undefined): Uint8Array => (s ? new TextEncoder().encode(s) : NO_BYTES);

export function encodePlan(p: CompiledPlan): Uint8Array {
  const spill = utf8(p.spillPath);
  const temp = utf8(p.tempDir);
  const ndim = p.start.length;
  const list = (a: number) => p.indices?.[a] ?? null;
  const runs = Array.from({ length: ndim }, (_x, a) => (list(a) ? indexRuns(list(a)!) : null));
  let selectBytes = 0;
  for (let a = 0; a < ndim; a++) selectBytes += 8 + (runs[a] ? 8 + 8 * runs[a]!.length : list(a) ? 8 + 8 * list(a)!.length : 24);
  const hasAgg = p.op !== 'none';
  const shardRun = p.shard !== undefined && (p.shard.count !== undefined || (p.shard.round?.length ?? 0) > 0);
  const shard = p.shard && (shardRun || !(p.shard.begin === 0 && p.shard.end === 1 && p.shard.of === 1)) ? p.shard : undefined;
  const round = shard?.round ?? new Uint8Array(0);
  const shardBytes = shardRun ? 40 + round.length : 24;
  const device = p.device && (p.device.kind !== 'cpu' || (p.device.ordinal ?? 0) !== 0) ? p.device : undefined;
  const more = hasAgg ? p.more ?? [] : [];
  const sizes = [selectBytes, 8 + (hasAgg ? AGG_BYTES * (1 + more.length) : 0), 16, 24 + spill.length + temp.length,
    shard ? shardBytes : -1, device ? 8 : -1, p.group ? 16 + 4 * p.group.ids.length : -1];
  const total = 16 + sizes.reduce((t, n) => t + (n < 0 ? 0 : 8 + n), 0);
  const buf = new Uint8Array(total);
  const v = new DataView(buf.buffer);
  let o = 0;
  const u32 = (x: number) => { v.setUint32(o, x, true); o += 4; };
  // u64 from a safe integer without BigInt (index lists can hold 2^24 entries)
  const u64 = (x: number) => { v.setUint32(o, x % TWO32, true); v.setUint32(o + 4, Math.floor(x / TWO32), true); o += 8; };
  const f64 = (x: number) => { v.setFloat64(o, x, true); o += 8; };
  const section = (tag: number, n: number) => { u32(tag); u32(n); };
  u32(PLAN_MAGIC);
  u32(PLAN_VERSION);
  u32(p.datasetId);
  u32(ndim);
  section(SECTION.select, sizes[0]);
  for (let a = 0; a < ndim; a++) {
    const idx = list(a);
    const r = runs[a];
    if (r) {
      u32(AXIS_RUNS); u32(0); u64(r.length / 2);
      for (let i = 0; i < r.length; i++) u64(r[i]);
    } else if (idx) {
      u32(AXIS_INDICES); u32(0); u64(idx.length);
      for (let i = 0; i < idx.length; i++) u64(idx[i]);
    } else {
      u32(AXIS_BOX); u32(0); u64(p.start[a]); u64(p.step[a]); u64(p.count[a]);
    }
  }
  section(SECTION.agg, sizes[1]);
  u32(hasAgg ? 1 + more.length : 0); u32(0);
  if (hasAgg) {
    u32(OP_CODE[p.op]);
    u32((p.histRange ? 1 : 0) | (p.fill !== undefined ? 2 : 0));
    u32(p.bins ?? 0);
    u32(p.obsAxis ?? 0);
    f64(p.q ?? 0.5);
    f64(p.histRange?.min ?? 0);
    f64(p.histRange?.max ?? 0);
    f64(p.fill ?? 0);
    for (const m of more) {
      u32(OP_CODE[m]); u32(0); u32(0); u32(0);
      f64(0.5); f64(0); f64(0); f64(0);
    }
  }
  let mask = 0;
  for (const a of p.reduceAxes) mask |= 1 << a;
  section(SECTION.output, sizes[2]);
  u32(mask >>> 0); u32(p.f16Raw ? 1 : 0); u64(p.previewMax);
  section(SECTION.exec, sizes[3]);
  u32(STRATEGY_CODE[p.strategy]); u32(IO_MODE_CODE[p.ioMode]); u32(p.threads ?? 0);
  u32(spill.length); u32(temp.length); u32(0);
  buf.set(spill, o); o += spill.length;
  buf.set(temp, o); o += temp.length;
  if (shard) {
    section(SECTION.shard, shardBytes);
    u64(shard.begin); u64(shard.end); u64(shard.of);
    if (shardRun) {
      u32(shard.index ?? 0); u32(shard.count ?? 0); u32(round.length); u32(0);
      buf.set(round, o); o += round.length;
    }
  }
  if (device) {
    section(SECTION.device, 8);
    u32(device.kind === 'gpu' ? 1 : 0); u32(device.ordinal ?? 0);
  }
  if (p.group) {
    section(SECTION.group, sizes[6]);
    u32(p.group.axis); u32(p.group.groups); u64(p.group.ids.length);
    for (let i = 0; i < p.group.ids.length; i++) u32(p.group.ids[i]);
  }
  if (o !== total) throw new Error(`encodePlan wrote ${o} of ${total} bytes`);
  return buf;
}
