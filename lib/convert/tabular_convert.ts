// convert() for tabular sources: a CSV, Parquet or Arrow IPC file becomes one standalone table of
// a new .tet file (named after the file stem, or `table`), streamed batch by batch through the
// writer's table appends (constant memory per block in native; one source batch in JS).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TetError } from '../errors';
import type { ColumnSchema, PhysicalBatch } from '../tables/types';
import { TetWriter } from '../writer';
import { readTabular, TABULAR_EXTENSIONS, type TabularFormat } from './tabular';
import { ProgressThrottle } from '../progress';
import type { ConvertOptions, ConvertProgress, ConvertReport } from './types';

/** The tabular format `src` has by content or extension, or null when it is not tabular. */
export function tabularFormatOf(src: string, head: Buffer): TabularFormat | null {
  if (head.length >= 4 && head.toString('latin1', 0, 4) === 'PAR1') return 'parquet';
  if (head.length >= 6 && head.toString('latin1', 0, 6) === 'ARROW1') return 'arrow';
  return TABULAR_EXTENSIONS[path.extname(src).toLowerCase()] ?? null;
}

/** The table name for a source: `opts.table`, else the file stem. */
export function tableNameFor(src: string, opts: ConvertOptions): string {
  if (opts.table !== undefined) return opts.table;
  const base = path.basename(src);
  const ext = path.extname(base);
  return ext ? base.slice(0, -ext.length) : base;
}

export async function convertTabular(src: string, out: string, format: TabularFormat, opts: ConvertOptions,
  notice: (m: string) => void): Promise<ConvertReport> {
  const source = await readTabular(src, {
    format, ...(opts.columns ? { columns: opts.columns } : {}),
    ...(opts.skipUnsupported !== undefined ? { skipUnsupported: opts.skipUnsupported } : {}),
  });
  const skipped: ConvertReport['skipped'] = source.skipped.map((s) => ({ name: s.column, reason: `unsupported type ${s.type}`, code: 'TET_CONVERT_UNSUPPORTED_TYPE' }));
  for (const s of skipped) notice(`skipped column ${s.name}: ${s.reason}`);
  const names = source.columnNames.filter((n) => n in source.schema);
  if (names.length === 0) throw new TetError('TET_CONVERT_EMPTY', `${src}: no column of a supported type to convert`);
  const schema: Record<string, ColumnSchema> = {};
  for (const n of names) schema[n] = source.schema[n];
  const name = tableNameFor(src, opts);
  const fileBytes = fs.statSync(src).size;
  const writer = await TetWriter.create(out);
  let rows = 0;
  const progress = opts.onProgress && source.rows ? new ProgressThrottle<ConvertProgress>(opts.onProgress) : null;
  try {
    const table = writer.addTable({ name, schema });
    for await (const batch of source.batches) {
      const cols: PhysicalBatch[] = names.map((n) => batch[n]);
      const n = cols[0]?.rows ?? 0;
      await table.appendPhysical(n, cols);
      rows += n;
      // Source bytes by the share of rows read (the readers stream; rows are known up front for
      // Parquet and, after the inference pass, CSV). Arrow streams state no total: no events.
      if (progress && source.rows) {
        progress.update(Math.round(fileBytes * Math.min(1, rows / source.rows)), fileBytes, { dataset: name, chunksDone: rows, chunksTotal: source.rows });
      }
    }
    writer.addHistory({ op: 'convert', source: src, params: { format, table: name } });
    await writer.commit();
    progress?.finish(fileBytes, { dataset: name, chunksDone: rows, chunksTotal: rows });
  } catch (err) {
    writer.abort();
    throw err;
  }
  return {
    source: src, kind: format, output: out, datasets: [], skipped, notices: [],
    tables: [{ name, rows, columns: names.map((n) => ({ name: n, ...schema[n] })) }],
  };
}
