// Facts about the machine the native core runs on (cores, RAM, SIMD ISA, build flags).
import { binding } from './binding';
import type { HostInfo } from './types';

/** Cores, RAM (total and available), the SIMD level the folds use, and the addon's build flags. */
export function hostInfo(): HostInfo {
  return binding().hostInfo();
}
