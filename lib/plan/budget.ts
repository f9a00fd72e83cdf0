// ExecutionBudget: how much RAM dense in-memory paths may use. Precedence (highest wins):
// query memory_budget_bytes > file TIDX bytes > query percent (bps) > file percent bps
// (0 = 25%) of host available RAM; 256 MiB when host RAM is unknown.
import type { ExecutionHints } from '../query/document';
import type { FileExecution } from '../types';

export const DEFAULT_BUDGET_PERCENT_BPS = 2500;
export const UNKNOWN_HOST_BUDGET_BYTES = 256 * 1024 * 1024;

/** Which setting gave the memory budget (`execution.memory_budget_source`). */
export type BudgetSource = 'query_bytes' | 'file_bytes' | 'query_percent' | 'file_percent' | 'default_percent'
  | 'unknown_host_fallback';

export interface ExecutionBudget {
  bytes: number;
  source: BudgetSource;
  /** Basis points applied to host RAM (percent sources only). */
  percentBps?: number;
  /** Host available RAM at resolution; null when it could not be probed. */
  hostAvailableRamBytes: number | null;
}

export function resolveBudget(query: ExecutionHints | undefined, file: FileExecution | undefined,
  hostAvailableRamBytes: number): ExecutionBudget {
  const host = hostAvailableRamBytes > 0 ? hostAvailableRamBytes : null;
  if (query?.memory_budget_bytes) return { bytes: query.memory_budget_bytes, source: 'query_bytes', hostAvailableRamBytes: host };
  if (file && file.memory_budget_bytes > 0) return { bytes: file.memory_budget_bytes, source: 'file_bytes', hostAvailableRamBytes: host };
  let bps: number;
  let source: BudgetSource;
  if (query?.memory_budget_percent !== undefined) {
    bps = Math.round(query.memory_budget_percent * 100);
    source = 'query_percent';
  } else if (query?.memory_budget_percent_bps !== undefined) {
    bps = query.memory_budget_percent_bps;
    source = 'query_percent';
  } else if (file && file.memory_budget_percent_bps > 0) {
    bps = Math.min(file.memory_budget_percent_bps, 10000);
    source = 'file_percent';
  } else {
    bps = DEFAULT_BUDGET_PERCENT_BPS;
    source = 'default_percent';
  }
  if (host === null) return { bytes: UNKNOWN_HOST_BUDGET_BYTES, source: 'unknown_host_fallback', percentBps: bps, hostAvailableRamBytes: null };
  return { bytes: Math.floor((host * bps) / 10000), source, percentBps: bps, hostAvailableRamBytes: host };
}
