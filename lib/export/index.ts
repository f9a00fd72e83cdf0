// Public surface of the export module (re-exported by lib/index.ts).
export { exportZarr } from './zarr';
export type { ExportZarrOptions, ExportZarrReport } from './zarr';
