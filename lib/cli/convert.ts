// `tet convert SRC OUT.tet` (HDF5 / NetCDF / Zarr -> .tet) and `tet export FILE.tet OUT.zarr`
// (.tet -> Zarr v3). Uses the public SDK only; progress bars on a TTY unless --quiet or
// --no-progress (convert: bytes, rate and ETA, lib/cli/progress.ts; export: chunks).
import { type Command, InvalidArgumentError, Option } from 'commander';
import { loadCliProgress, progressBar } from './progress';
import { sdk } from './sdk';
import { writeErr, writeOut } from './out';

function collect(value: string, previous: string[]): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];
}

function parseChunk(value: string): number[] {
  const parts = value.split(',').map((s) => s.trim());
  if (parts.length < 1 || parts.length > 8 || parts.some((p) => !/^\d+$/.test(p) || Number(p) < 1)) {
    throw new InvalidArgumentError(`expected 1..8 comma-separated positive integers, got ${JSON.stringify(value)}`);
  }
  return parts.map(Number);
}

function parseLevel(value: string): number {
  if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError(`expected an integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** `tet export`'s bar: chunks written of the total, per dataset. */
function chunkBar(enabled: boolean, unit: string) {
  if (!enabled || !process.stderr.isTTY) return null;
  const cliProgress = loadCliProgress();
  // The cursor stays visible (as lib/cli/progress.ts: Ctrl-C skips stop()).
  const bar = new cliProgress.SingleBar({
    format: `{bar} {percentage}% | {value}/{total} ${unit} | {dataset}`, stream: process.stderr, hideCursor: false,
    clearOnComplete: true,
  }, cliProgress.Presets.shades_classic);
  let started = false;
  return {
    update(done: number, total: number, dataset: string) {
      if (!started) { bar.start(total, 0, { dataset }); started = true; }
      bar.update(done, { dataset });
    },
    stop() { if (started) bar.stop(); },
  };
}

export function registerConvertCommands(program: Command): void {
  program
    .command('convert')
    .description('convert an HDF5, NetCDF (classic or NetCDF-4) or Zarr (v2/v3) source into a .tet file; a CSV, Parquet or Arrow IPC file into a .tet file with one table')
    .argument('<src>', 'source file or Zarr directory (format detected by content; by the extension .h5 .hdf5 .he5 .nc .nc4 .cdf .csv .tsv .parquet .arrow .feather while the content cannot be read yet)')
    .argument('<out>', 'output .tet file (written atomically)')
    .option('--include <names>', 'dataset names or globs to convert (repeatable, comma-separated)', collect, [])
    .option('--exclude <names>', 'dataset names or globs to skip (repeatable, comma-separated)', collect, [])
    .option('--chunk <shape>', 'tile shape for every dataset of that rank, e.g. 64,64,64', parseChunk)
    .addOption(new Option('--codec <codec>', 'tile codec').choices(['raw', 'zstd', 'auto']).default('auto'))
    .option('--level <n>', 'zstd level (-7..22)', parseLevel, 3)
    .option('--keep-packed', 'keep the stored (packed) values and every CF attribute (default: unpack, see --unpack)')
    .option('--unpack', 'decode CF packing (the default, as the reference tet and xarray): _Unsigned, scale_factor/add_offset, _FillValue/missing_value/valid_* as NaN; f32 unless the packing needs f64')
    .option('--follow-external-links', 'follow HDF5 external links into other files (default: reported, not followed)')
    .option('--table <name>', 'CSV / Parquet / Arrow sources: the table name (default: the file stem)')
    .option('--skip-unsupported', 'CSV / Parquet / Arrow sources: leave out columns of unsupported types (default: fail)')
    .option('--no-tables', 'HDF5 / NetCDF / Zarr sources: no axis tables (default: one per dimension, from the 1-D variables along it)')
    .option('--json', 'print the conversion report as JSON')
    .option('-q, --quiet', 'no progress bar and no notices')
    .option('--no-progress', 'no progress bar (drawn on stderr when it is a terminal, once a conversion has run 0.5 s)')
    .action(async (src: string, out: string, o: { include: string[]; exclude: string[]; chunk?: number[];
      codec: 'raw' | 'zstd' | 'auto'; level: number; unpack?: boolean; keepPacked?: boolean; followExternalLinks?: boolean;
      json?: boolean; quiet?: boolean; progress: boolean; table?: string; skipUnsupported?: boolean; tables: boolean }, cmd: Command) => {
      if (o.unpack && o.keepPacked) cmd.error('error: --unpack and --keep-packed exclude each other', { exitCode: 2 });
      const { convert } = await sdk();
      const bar = progressBar(!o.quiet && o.progress);
      const unit = /\.(csv|tsv|parquet|pq|arrows?|feather|ipc)$/i.test(src) ? 'rows' : 'tiles';
      try {
        const report = await convert(src, out, {
          include: o.include, exclude: o.exclude, chunk: o.chunk, codec: o.codec, level: o.level, unpack: !o.keepPacked,
          followExternalLinks: o.followExternalLinks, table: o.table, skipUnsupported: o.skipUnsupported, tables: o.tables,
          onProgress: (p) => bar?.update(p, `${p.dataset} (${p.chunksDone}/${p.chunksTotal} ${unit})`),
          onNotice: (m) => { if (!o.quiet) writeErr(`notice: ${m}\n`); },
        });
        bar?.stop();
        if (o.json) {
          writeOut(`${JSON.stringify(report, null, 2)}\n`);
        } else if (!o.quiet) {
          const kindOf = (c: { kind: string; unit?: string; tz?: string }) => (c.kind === 'timestamp' ? `timestamp(${c.unit}, ${c.tz})` : c.kind);
          const axisTables = report.tables?.filter((t) => t.axis) ?? [];
          if (report.datasets.length || axisTables.length || !report.tables) {
            writeOut(`${out}: ${report.datasets.length} dataset(s) from ${report.kind} source ${src}\n`);
            for (const d of report.datasets) {
              const dims = d.dimNames ? ` (${d.dimNames.join(', ')})` : '';
              writeOut(`  ${d.name}  ${d.sourceType} -> ${d.dtype}${d.unpacked ? ' unpacked' : ''}  ${d.shape.join('x')}${dims}  tiles ${d.chunkShape.join('x')}\n`);
            }
            for (const t of axisTables) {
              writeOut(`  table ${t.name}  ${t.rows} rows, axis ${t.axis!.dim} of ${t.axis!.dataset}: ${t.columns.map((c) => `${c.name} ${kindOf(c)}`).join(', ')}\n`);
            }
          } else {
            for (const t of report.tables) {
              writeOut(`${out}: table ${t.name}, ${t.rows} rows, from ${report.kind} source ${src}\n`);
              for (const c of t.columns) writeOut(`  ${c.name}  ${kindOf(c)}\n`);
            }
          }
        }
      } finally {
        bar?.stop();
      }
    });

  program
    .command('export')
    .description('export datasets of a .tet file to a Zarr v3 directory')
    .argument('<file>', '.tet file')
    .argument('<out>', 'output Zarr directory (created atomically)')
    .option('--dataset <name>', 'dataset to export (repeatable; default all)', collect, [])
    .addOption(new Option('--codec <codec>', 'chunk compression').choices(['zstd', 'raw']).default('zstd'))
    .option('--level <n>', 'zstd level (-7..22)', parseLevel, 3)
    .option('--force', 'replace an existing output directory')
    .option('--json', 'print the export report as JSON')
    .option('-q, --quiet', 'no progress bar')
    .option('--no-progress', 'no progress bar')
    .action(async (file: string, out: string, o: { dataset: string[]; codec: 'zstd' | 'raw'; level: number;
      force?: boolean; json?: boolean; quiet?: boolean; progress: boolean }) => {
      const { exportZarr } = await sdk();
      const bar = chunkBar(!o.quiet && o.progress, 'chunks');
      try {
        const report = await exportZarr(file, out, {
          datasets: o.dataset, codec: o.codec, level: o.level, overwrite: o.force,
          onProgress: (p) => bar?.update(p.chunksDone, p.chunksTotal, p.dataset),
        });
        bar?.stop();
        if (o.json) writeOut(`${JSON.stringify(report, null, 2)}\n`);
        else if (!o.quiet) {
          writeOut(`${out}: ${report.arrays.length} array(s), ${report.coordinates.length} coordinate array(s)\n`);
        }
      } finally {
        bar?.stop();
      }
    });
}
