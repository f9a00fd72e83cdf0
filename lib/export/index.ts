// Public surface of the export module (re-exported by lib/index.ts). The exporter (and
// numcodecs' zstd) is imported by the first call: a chunk of its own where the bundle is split
// (dist/cli.cjs), so commands other than `tet export` never compile it.
import type { ExportZarrOptions, ExportZarrReport } from './zarr';

/** Exports datasets of `tetPath` to the Zarr v3 directory `outDir`. */
export async function exportZarr(tetPath: string, outDir: string, opts: ExportZarrOptions = {}): Promise<ExportZarrReport> {
  return (await import('./zarr')).exportZarr(tetPath, outDir, opts);
}

export type { ExportZarrOptions, ExportZarrReport } from './zarr';
