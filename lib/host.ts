// Facts about the machine the native core runs on (cores, RAM, SIMD ISA, build flags).
import { binding } from './binding';
import type { HostInfo } from './types';

export function hostInfo(): HostInfo {
  return binding().hostInfo();
}
