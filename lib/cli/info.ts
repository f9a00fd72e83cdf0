// `tet info`, `tet verify`, `tet repair`: inspect a file, check its health, fix what verify
// recommends. Uses the public SDK only.
import type { Command } from 'commander';
import type { DatasetInfo, RepairCode, TableInfo, TetFile, VerifyFinding, VerifyReport } from '../index';
import { formatBytes } from './bytes';
import { boxTable } from './box-table';
import { sdk } from './sdk';
import { writeErr, writeOut } from './out';

function out(text: string): void {
  writeOut(text.endsWith('\n') ? text : `${text}\n`);
}

function ratio(d: DatasetInfo): string {
  return d.storedBytes > 0 ? `${(d.logicalBytes / d.storedBytes).toFixed(2)}x` : '-';
}

function codecMix(d: DatasetInfo): string {
  const parts = [];
  if (d.codecs.raw) parts.push(`raw ${d.codecs.raw}`);
  if (d.codecs.zstd) parts.push(`zstd ${d.codecs.zstd}`);
  return parts.join(', ') || '-';
}

function dims(v: number[]): string {
  return v.join(' x ');
}

/** `--grep S`: datasets whose name contains S (case-insensitive); every dataset without it. */
function grepDatasets(file: TetFile, grep: string | undefined): readonly DatasetInfo[] {
  if (grep === undefined) return file.datasets;
  const needle = grep.toLowerCase();
  return file.datasets.filter((d) => d.name.toLowerCase().includes(needle));
}

/** The superblock's fields (layout v1: 32 bytes at offset 0; open() validated them). */
function superblock(file: TetFile): Record<string, unknown> {
  return {
    magic: 'TETR', layout_version: 1, dataset_count: file.datasets.length, flags: file.layout.flags,
    chunk_index_offset: file.layout.chunkIndexOffset, chunk_index_length: file.layout.chunkIndexLength,
  };
}

/** Each table with its columns' encodings, or the reason the tables cannot be read. */
function tablesOf(file: TetFile): { tables: TableInfo[]; error?: string } {
  try {
    return { tables: file.tables.map((t) => file.table(t.name, { encodings: true })) };
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    return { tables: [], error: typeof e?.code === 'string' ? `${e.code}: ${String(e.message)}` : String(err) };
  }
}

function bytesPerRow(c: TableInfo['columns'][number], rows: number): number | null {
  return rows > 0 ? c.payloadBytes / rows : null;
}

function tablesJson(file: TetFile): Record<string, unknown> {
  const { tables, error } = tablesOf(file);
  if (error) return { tables_error: error };
  if (tables.length === 0) return {};
  return {
    tables: tables.map((t) => ({
      name: t.name, rows: t.rows, binding: t.axis ? { dataset: t.axis.dataset, axis: t.axis.index } : null,
      columns: t.columns.map((c) => ({
        name: c.name, kind: c.kind, ...(c.unit ? { unit: c.unit, tz: c.tz } : {}), nullable: c.nullable,
        null_count: c.nullCount, encodings: c.encodings ?? [], payload_bytes: c.payloadBytes,
        bytes_per_row: bytesPerRow(c, t.rows), blocks: c.blocks,
      })),
    })),
  };
}

function printTables(file: TetFile): void {
  const { tables, error } = tablesOf(file);
  if (error) {
    out(`tables     unreadable (${error}) -> tet verify for details`);
    return;
  }
  if (tables.length === 0) return;
  out(`tables     ${tables.length}`);
  for (const t of tables) {
    const bound = t.axis ? `axis ${t.axis.index} of ${t.axis.dataset}` : 'standalone';
    out(`table ${t.name}: ${t.rows} rows, ${bound}`);
    out(boxTable(['column', 'kind', 'nulls', 'encodings', 'bytes', 'B/row'], t.columns.map((c) => {
      const kind = c.kind === 'timestamp' ? `timestamp[${c.unit}, ${c.tz}]` : c.kind;
      const bpr = bytesPerRow(c, t.rows);
      return [c.name, kind, String(c.nullCount), (c.encodings ?? []).join(', ') || '-', formatBytes(c.payloadBytes),
        bpr === null ? '-' : bpr.toFixed(2)];
    })));
  }
}

/** The JSON form of `tet info --json`. */
export function infoJson(file: TetFile, withHistory: boolean, grep?: string): Record<string, unknown> {
  const meta = file.metadata.datasets ?? {};
  const { datasets: _perDataset, ...fileMeta } = file.metadata;
  const shown = grepDatasets(file, grep);
  return {
    path: file.path,
    file_len: file.layout.fileLen,
    layout_version: 1,
    flags: file.layout.flags,
    superblock: superblock(file),
    chunk_index: { offset: file.layout.chunkIndexOffset, length: file.layout.chunkIndexLength },
    execution: file.fileExecution,
    footer: {
      present: file.layout.footer.present,
      metadata_spilled: file.layout.footer.metadataSpilled,
      payload_limit: file.layout.footer.payloadLimit,
      history_rows: file.history.length,
    },
    ...(grep !== undefined ? { filter: `grep~${grep}`, datasets_total: file.datasets.length } : {}),
    datasets: shown.map((d) => ({
      name: d.name, id: d.id, dtype: d.dtype, shape: d.shape, chunk_shape: d.chunkShape, grid: d.grid,
      chunk_count: d.chunkCount, codecs: d.codecs, logical_bytes: d.logicalBytes, stored_bytes: d.storedBytes,
      ratio: d.storedBytes > 0 ? d.logicalBytes / d.storedBytes : null,
      dim_names: meta[d.name]?.dim_names ?? null,
      coords: Object.fromEntries(Object.entries(meta[d.name]?.coords ?? {}).map(([k, c]) => [k, { labels: c.labels.length }])),
      attrs: meta[d.name]?.attrs ?? {},
    })),
    file_metadata: fileMeta,
    ...tablesJson(file),
    ...(withHistory ? { history: file.history } : {}),
  };
}

/** `tet info -q`: one line of key=value. */
function infoLine(file: TetFile, health: VerifyReport, grep?: string): string {
  const shown = grepDatasets(file, grep);
  const sum = (f: (d: DatasetInfo) => number) => shown.reduce((s, d) => s + f(d), 0);
  return [`path=${file.path}`, `datasets=${shown.length}`,
    ...(grep !== undefined ? [`filter=grep~${grep}`] : []),
    `chunks=${sum((d) => d.chunkCount)}`, `logical_bytes=${sum((d) => d.logicalBytes)}`,
    `stored_bytes=${sum((d) => d.storedBytes)}`, `file_len=${file.layout.fileLen}`, 'layout=1',
    `footer=${file.layout.footer.present ? 'yes' : 'no'}`,
    `health=${health.ok ? 'ok' : 'errors'}`].join(' ');
}

function printInfo(file: TetFile, withHistory: boolean, grep?: string): void {
  const l = file.layout;
  const e = file.fileExecution;
  out(`file       ${file.path}`);
  out(`size       ${formatBytes(l.fileLen)} (${l.fileLen} bytes), layout v1, flags 0x${l.flags.toString(16)}`);
  out(`index      offset ${l.chunkIndexOffset}, ${l.chunkIndexLength} bytes`);
  const pct = e.memory_budget_percent_bps ? `${e.memory_budget_percent_bps / 100}% of RAM` : 'default (25% of RAM)';
  const cap = e.memory_budget_bytes ? `, cap ${formatBytes(e.memory_budget_bytes)}` : '';
  out(`execution  memory budget ${pct}${cap}`);
  out(`footer     ${l.footer.present ? `present (history ${file.history.length} rows, metadata ${l.footer.metadataSpilled ? 'spilled' : 'inline'})` : 'none'}`);
  out(`datasets   ${file.datasets.length}`);
  const shown = grepDatasets(file, grep);
  if (grep !== undefined) out(`filter: grep~${grep} (${shown.length} of ${file.datasets.length} datasets)`);
  if (shown.length > 0) {
    out('datasets:');
    out(boxTable(['name', 'dtype', 'shape', 'chunk', 'grid', 'codecs', 'logical', 'stored', 'ratio'], shown.map((d) => [
      d.name, d.dtype, dims(d.shape), dims(d.chunkShape), `${dims(d.grid)} (${d.chunkCount})`, codecMix(d),
      formatBytes(d.logicalBytes), formatBytes(d.storedBytes), ratio(d)])));
  }
  const meta = file.metadata.datasets ?? {};
  for (const d of shown) {
    const m = meta[d.name];
    if (!m) continue;
    out(`${d.name}:`);
    if (m.dim_names) out(`  dims    ${m.dim_names.join(', ')}`);
    for (const [k, c] of Object.entries(m.coords ?? {})) {
      const sample = c.labels.slice(0, 3).map((x) => JSON.stringify(x)).join(', ');
      out(`  coords  ${k}: ${c.labels.length} labels (${sample}${c.labels.length > 3 ? ', ...' : ''})`);
    }
    for (const [k, v] of Object.entries(m.attrs ?? {})) out(`  attr    ${k} = ${JSON.stringify(v)}`);
  }
  const { datasets: _perDataset, ...fileMeta } = file.metadata;
  for (const [k, v] of Object.entries(fileMeta)) out(`metadata   ${k} = ${JSON.stringify(v)}`);
  printTables(file);
  if (withHistory) {
    if (file.history.length === 0) out('history    (none)');
    else {
      out(boxTable(['#', 'op', 'source', 'at'], file.history.map((h, i) => [String(i), h.op, h.source, h.at])));
    }
  }
}

function findingLine(f: VerifyFinding, path: string): string {
  const fix = f.recommendation ? ` -> tet repair ${path} --apply ${f.recommendation}` : '';
  return `${f.severity} [${f.code}] ${f.message}${fix}`;
}

function printVerify(r: VerifyReport, quiet: boolean): void {
  if (quiet) {
    for (const f of r.findings) out(findingLine(f, r.path));
    return;
  }
  out(`verify ${r.path}`);
  const errors = r.findings.filter((f) => f.severity === 'error').length;
  out(`  structure  ${r.structureOk ? `ok (${r.datasets} datasets, ${r.chunksTotal} chunks)` : 'FAILED'}`);
  if (r.structureOk) {
    const scope = r.chunksDecoded === r.chunksTotal ? 'all' : `first ${r.chunksDecoded} of ${r.chunksTotal} (use --deep for all)`;
    out(`  decode     ${scope} chunks checked`);
    out(`  footer     ${r.footer}`);
    if (r.tables) out(`  tables     ${r.tables} (${r.deep ? 'every block decoded' : 'every block checked; --deep decodes them'})`);
  }
  for (const f of r.findings) out(`  ${findingLine(f, r.path)}`);
  out(r.ok ? 'ok' : `${errors} error(s)`);
}

function healthJson(r: VerifyReport): Record<string, unknown> {
  return { ok: r.ok, chunks_total: r.chunksTotal, chunks_decoded: r.chunksDecoded, findings: r.findings };
}

function printHealth(r: VerifyReport): void {
  const scope = r.chunksDecoded === r.chunksTotal
    ? `all ${r.chunksTotal} tiles decoded`
    : `first ${r.chunksDecoded} of ${r.chunksTotal} tiles decoded; tet verify --deep checks all`;
  const errors = r.findings.filter((f) => f.severity === 'error').length;
  out(`health     ${r.ok ? 'ok' : `${errors} error(s)`} (${scope})`);
  for (const f of r.findings) out(`  ${findingLine(f, r.path)}`);
}

// Error findings: exit 1 with a one-line `error: ...` on stderr (the details are on stdout).
function failIfUnhealthy(r: VerifyReport): void {
  const errors = r.findings.filter((f) => f.severity === 'error');
  if (errors.length === 0) return;
  const first = errors[0];
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  writeErr(`error: ${r.path}: [${first.code}] ${first.message}${more}\n`);
  process.exitCode = 1;
}

// The repair codes for `tet repair --help`, without loading the SDK to list them: the type
// check below fails the build when the SDK's RepairCode gains a code this list lacks.
const REPAIR_CODES = ['footer_invalid', 'cells_invalid'] as const satisfies readonly RepairCode[];
const _everyRepairCode: Exclude<RepairCode, (typeof REPAIR_CODES)[number]> extends never ? true : never = true;
void _everyRepairCode;

/** `tet info`. */
export function registerInfoCommand(program: Command): void {
  program
    .command('info')
    .description('show datasets, chunking, codecs, metadata and footer of a .tet file')
    .argument('<file>', '.tet file')
    .option('--json', 'machine-readable output (with the superblock)')
    .option('--history', 'include the footer history')
    .option('-q, --quiet', 'one line: path=... datasets=N chunks=... health=...')
    .option('--grep <text>', 'only datasets whose name contains TEXT (case-insensitive)')
    .action(async (path: string, opts: { json?: boolean; history?: boolean; quiet?: boolean; grep?: string }) => {
      const { open, verify } = await sdk();
      const file = await open(path);
      // Structure was checked by open(); the quick tile check of `tet verify` (the first tiles:
      // QUICK_DECODE_CHUNKS, QUICK_DECODE_BYTES) catches payloads that only fail on decode. It decodes on a
      // worker thread while this one draws the description (~2 ms each for the sample).
      const checking = verify(file);
      let health: VerifyReport;
      try {
        const plain = !opts.json && !opts.quiet;
        if (plain) printInfo(file, opts.history ?? false, opts.grep);
        health = await checking;
        if (opts.json) out(JSON.stringify({ ...infoJson(file, opts.history ?? false, opts.grep), health: healthJson(health) }, null, 2));
        else if (opts.quiet) out(infoLine(file, health, opts.grep));
        else printHealth(health);
      } finally {
        await checking.catch(() => undefined);  // its failure, if any, is the one thrown above
        file.close();
      }
      failIfUnhealthy(health);
    });
}

/** `tet verify`. */
export function registerVerifyCommand(program: Command): void {
  program
    .command('verify')
    .description('check structure, chunk decoding, tensor sizes and footer; exit 1 on problems')
    .argument('<file>', '.tet file')
    .option('--deep', 'decode every chunk (default: the first 128, at most 64 MiB of compressed tiles decoded)')
    .option('-q, --quiet', 'print only problems')
    .option('--json', 'machine-readable output')
    .action(async (path: string, opts: { deep?: boolean; quiet?: boolean; json?: boolean }) => {
      const { verify } = await sdk();
      const report = await verify(path, { deep: opts.deep ?? false });
      if (opts.json) out(JSON.stringify(report, null, 2));
      else printVerify(report, opts.quiet ?? false);
      failIfUnhealthy(report);
    });
}

/** `tet repair`. */
export function registerRepairCommand(program: Command): void {
  program
    .command('repair')
    .description('show the repair plan for a file, or apply one fix (--apply footer_invalid | cells_invalid)')
    .argument('<file>', '.tet file')
    .option('--apply <code>', `apply a recommendation (${REPAIR_CODES.join(', ')})`)
    .action(async (path: string, opts: { apply?: string }) => {
      const { repair, verify } = await sdk();
      if (opts.apply) {
        const result = await repair(path, opts.apply);
        const without = result.applied === 'cells_invalid' ? 'its tables region' : 'its footer';
        out(`applied ${result.applied}: ${path} rewritten without ${without} (${result.newLength} bytes)`);
        const after = await verify(path);
        out(after.ok ? 'verify: ok' : `verify: still ${after.findings.length} problem(s); run tet verify ${path}`);
        if (!after.ok) process.exitCode = 1;
        return;
      }
      const report = await verify(path);
      const fixes = report.findings.filter((f) => f.recommendation);
      const unfixable = report.findings.filter((f) => !f.recommendation && f.severity === 'error');
      if (fixes.length === 0 && unfixable.length === 0) {
        out(`${path}: nothing to repair`);
        return;
      }
      for (const f of fixes) {
        out(`fix ${f.recommendation}: ${f.message}`);
        out(`  plan: drop the footer region and clear superblock flag bit 1 (atomic rewrite)`);
        out(`  run:  tet repair ${path} --apply ${f.recommendation}`);
      }
      for (const f of unfixable) out(`cannot repair [${f.code}] ${f.message}`);
      if (unfixable.length > 0) process.exitCode = 1;
    });
}
