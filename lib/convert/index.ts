// Public surface of the convert module (re-exported by lib/index.ts). The converter and its
// readers (HDF5 through h5wasm, NetCDF classic, Zarr) are imported by the first call: where the
// bundle is split (dist/cli.cjs) they are a chunk of their own that `tet info` or `tet query`
// never compiles; detection (detect.ts, synchronous) stays here.
import type { ConvertOptions, ConvertReport, OpenOptions, SourceReader } from './types';

/**
 * Converts `src` (HDF5, NetCDF-4, NetCDF classic, Zarr v2/v3) into the .tet file `out`.
 * Nothing is left at `out` (or beside it) when it fails.
 */
export async function convert(src: string, out: string, opts: ConvertOptions = {}): Promise<ConvertReport> {
  return (await import('./convert')).convert(src, out, opts);
}

/** Opens a source of any supported kind (detected by content; by extension while the content
 *  cannot be read yet, and then a failing reader says so). */
export async function openSource(src: string, opts: OpenOptions = {}): Promise<SourceReader> {
  return (await import('./convert')).openSource(src, opts);
}

export { detectSource } from './detect';
export type {
  ConvertOptions, ConvertProgress, ConvertReport, ConvertedDataset, CodecOption, SourceKind,
  SourceReader, SourceVariable,
} from './types';
