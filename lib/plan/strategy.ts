// Memory strategy and fold I/O mode (spec: memory budget and execution strategies; adaptive
// fold I/O).
import { TetBudgetError } from '../errors';
import type { IoModeName, StrategyName } from './encode';
import type { ReductionName } from '../query/document';
import { MATERIALIZE_OPS } from '../query/document';

/** Out-of-core when logical bytes exceed this share of available RAM (IN_CORE_IO_HEADROOM_BPS). */
export const IN_CORE_HEADROOM_BPS = 8500;

/** `out_of_core` when the selection exceeds 85 % of available RAM; `unknown` when RAM cannot be probed. */
export type IoRegime = 'in_core' | 'out_of_core' | 'unknown';

export function chooseStrategy(op: ReductionName | null, spill: boolean, logicalBytes: number,
  budgetBytes: number): StrategyName {
  if (op) {
    if (!MATERIALIZE_OPS.has(op)) return 'streaming_fold';
    return logicalBytes <= budgetBytes ? 'in_memory_materialize' : 'temp_spill_materialize';
  }
  if (spill) return 'mmap_spill';
  if (logicalBytes <= budgetBytes) return 'capped_in_memory';
  throw new TetBudgetError('TET_BUDGET_EXCEEDED',
    `the selection needs ${logicalBytes} bytes but the memory budget is ${budgetBytes} bytes; ` +
    'raise execution.memory_budget_bytes / memory_budget_percent, add a reduction (e.g. "mean": []), ' +
    'or export with "spill": "path"');
}

export function ioRegime(logicalBytes: number, hostAvailableRamBytes: number | null): IoRegime {
  if (!hostAvailableRamBytes) return 'unknown';
  return logicalBytes * 10000 > hostAvailableRamBytes * IN_CORE_HEADROOM_BPS ? 'out_of_core' : 'in_core';
}

export interface IoModeInput {
  strategy: StrategyName;
  regime: IoRegime;
  /** Whole dataset, unit step, every chunk raw: eligible for one contiguous byte stream. */
  fullDenseRaw: boolean;
  foldParallel?: boolean;
  chunkCount: number;
}

export function chooseIoMode(i: IoModeInput): IoModeName {
  if (i.foldParallel === false) return 'sequential_chunks';
  if (i.strategy === 'streaming_fold' && i.regime === 'out_of_core' && i.fullDenseRaw && i.foldParallel !== true) {
    return 'linear_scan';
  }
  return i.chunkCount > 1 ? 'parallel_chunks' : 'sequential_chunks';
}
