// `tet query` and `tet qhist`: plan or run query documents, print them in one of the
// QueryOutputFormat views, and keep a client-side history of recent queries.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { DatasetMetadata, Progress, QueryDocument, QueryResponse } from '../index';
import {
  appendHistory, clearHistory, entryMode, historySettings, readHistory, type QueryHistoryEntry,
} from './history';
import { defaultPreviewFor, QUERY_OUTPUT_FORMATS, type QueryOutputFormat } from './output-formats';
import { progressBar } from './progress';
import { sdk, type TetSdk } from './sdk';
import { writeErr, writeOut } from './out';

function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!/^[0-9]+$/.test(value.trim()) || !Number.isSafeInteger(n)) {
    throw new InvalidArgumentError(`expected a non-negative integer, found ${JSON.stringify(value)}`);
  }
  return n;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

interface QueryCliOptions {
  tet?: string;
  execute?: boolean;
  preview?: number;
  previewF32?: number;
  format: QueryOutputFormat;
  quiet?: boolean;
  spillAllow: string[];
  device?: string;
  history: boolean;
  shard?: [number, number];
  partialOut?: string;
  plot?: string;
  round?: string;
  /** false with --no-progress. */
  progress: boolean;
}

/** --plot FILE: the picture's format from the file name (.svg or .png). */
function plotPath(value: string): string {
  if (!/\.(svg|png)$/i.test(value)) throw new InvalidArgumentError(`expected a .svg or .png file name, found ${JSON.stringify(value)}`);
  return value;
}

/** Writes the picture of an executed response (lib/plot) to `path`; the format follows the extension. */
async function writePlot(resp: QueryResponse, path: string, metadata?: DatasetMetadata): Promise<void> {
  const { renderPlot, TetIoError } = await sdk();
  const png = /\.png$/i.test(path);
  const picture = png ? await renderPlot(resp, { format: 'png', metadata }) : await renderPlot(resp, { format: 'svg', metadata });
  try {
    writeFileSync(path, picture);
  } catch (e) {
    throw new TetIoError('TET_IO_WRITE', `cannot write the picture to ${path}: ${(e as Error).message}`);
  }
}

/** `tet merge` exit status when the shards must run another round (tier C; see --round-out). */
export const EXIT_ROUND_NEEDED = 3;

function shardSpec(value: string): [number, number] {
  const m = /^\s*([0-9]+)\s*\/\s*([0-9]+)\s*$/.exec(value);
  const i = m ? Number(m[1]) : NaN, n = m ? Number(m[2]) : NaN;
  if (!m || !Number.isSafeInteger(i) || !Number.isSafeInteger(n) || n < 1 || i >= n) {
    throw new InvalidArgumentError(`expected I/N with 0 <= I < N (e.g. 2/3), found ${JSON.stringify(value)}`);
  }
  return [i, n];
}

/** QUERY argument -> document: '-' / omitted = stdin, an existing file or .json/.toml path, else inline text. */
function readQueryArgument(arg: string | undefined, cmd: Command, t: TetSdk): QueryDocument {
  if (arg === undefined || arg === '-') {
    if (arg === undefined && process.stdin.isTTY) {
      cmd.error('error: no query given (pass a .json/.toml file, inline JSON/TOML, or pipe it on stdin)', { exitCode: 2 });
    }
    let text: string;
    try {
      text = readFileSync(0, 'utf8');
    } catch (e) {
      throw new t.TetQueryError('TET_QUERY_PARSE', `cannot read the query from stdin: ${(e as Error).message}`);
    }
    return t.parseQueryText(text);
  }
  const ext = extname(arg).toLowerCase();
  const looksLikeText = /^\s*\{/.test(arg) || arg.includes('\n') || arg.includes('=');
  if (!looksLikeText && (ext === '.json' || ext === '.toml' || (existsSync(arg) && statSync(arg).isFile()))) {
    return t.parseQueryFile(arg);
  }
  return t.parseQueryText(arg);
}

/** Prints the response in `format` (the views of format.ts are loaded here, when first printed). */
async function print(resp: QueryResponse, format: QueryOutputFormat): Promise<void> {
  const { formatQueryResponse } = await import('./format');
  writeOut(formatQueryResponse(resp, format) + '\n');
}

/** Unknown dataset: our `error:` line, then the reference's hint block (stderr), exit 1. */
function reportUnmatched(resp: QueryResponse): void {
  if (resp.status !== 'unmatched') return;
  const available = resp.catalog?.available_datasets ?? [];
  const file = resp.catalog?.file ?? resp.tet_file ?? '';
  const names = available.map((n) => JSON.stringify(n)).join(', ') || 'none';
  writeErr(`error: dataset ${JSON.stringify(resp.query.dataset)} not found in ${file} (datasets: ${names})\n`
    + `hint: dataset ${JSON.stringify(resp.query.dataset)} not found in ${file}\n`
    + `available datasets:${available.length ? '' : ' (none)'}\n`
    + available.map((n) => `  ${n}\n`).join('')
    + `tip: run \`tet info ${file}\` to list datasets with their shapes and dtypes\n`);
  process.exitCode = 1;
}

async function queryFile(doc: QueryDocument, tet: string, o: {
  execute: boolean; format: QueryOutputFormat; preview?: number; spillAllow: string[]; device?: string; plot?: string;
  /** false: no progress bar (--no-progress); default true. */
  progress?: boolean;
}): Promise<QueryResponse> {
  const file = await (await sdk()).open(tet);
  const bar = o.execute ? progressBar(o.progress !== false && o.format !== 'quiet') : null;
  try {
    const resp = await file.query(doc, {
      execute: o.execute,
      preview: o.preview ?? defaultPreviewFor(o.format),
      spillAllow: o.spillAllow,
      ...(o.device ? { device: o.device } : {}),
      ...(bar ? { onProgress: (p: Progress) => bar.update(p) } : {}),
    });
    bar?.stop();
    if (o.plot && resp.status === 'executed') await writePlot(resp, o.plot, (doc.dataset !== undefined ? file.metadata.datasets?.[doc.dataset] : undefined));
    return resp;
  } finally {
    bar?.stop();
    file.close();
  }
}

function formatOption(): Option {
  return new Option('--format <format>', 'output: full (pretty JSON), json (one line), stats, plan, quiet, table')
    .choices(QUERY_OUTPUT_FORMATS as unknown as string[]).default('full');
}

/** `tet query`. */
export function registerQueryCommand(program: Command): void {
  program
    .command('query')
    .description('validate, plan (default) or execute (-x) a query document against a .tet file')
    .argument('[query]', 'query as a .json / .toml file, inline JSON or TOML text, or - for stdin (default)')
    .option('-t, --tet <file>', 'the .tet file to plan / run against')
    .option('-x, --execute', 'decode and compute (without it only the read plan is built)')
    .option('--preview <n>', 'preview elements (default 64 for full/json, 0 for stats/quiet/table)', nonNegativeInt)
    .option('--preview-f32 <n>', 'alias of --preview', nonNegativeInt)
    .addOption(formatOption())
    .option('-q, --quiet', 'one-line output (same as --format quiet)')
    .option('--spill-allow <dir>', 'allow spill files under DIR (repeatable)', collect, [])
    .option('--device <device>', 'cpu, auto, metal, cuda[:N|:multi], rocm[:N|:multi] (needs -x)')
    .option('--no-history', 'do not record this query in the query history')
    .option('--shard <i/n>', 'run only shard I (0-based) of N of the query (needs -x and --partial-out)', shardSpec)
    .option('--plot <file>', 'also draw the result as a picture: FILE.svg or FILE.png (needs -x)', plotPath)
    .option('--partial-out <file>', 'write the shard\'s partial state here (merge the shards with `tet merge`)')
    .option('--round <file>', 'the round request `tet merge --round-out` wrote (rounds 2+ of median / quantile / histogram)')
    .option('--no-progress', 'no progress bar (drawn on stderr with -x when it is a terminal, once a query has run 0.5 s)')
    .action(async (queryArg: string | undefined, opts: QueryCliOptions, cmd: Command) => {
      const format: QueryOutputFormat = opts.quiet ? 'quiet' : opts.format;
      if (opts.execute && !opts.tet) cmd.error('error: -x/--execute needs -t/--tet FILE', { exitCode: 2 });
      if (opts.device && !opts.execute) cmd.error('error: --device needs -x/--execute', { exitCode: 2 });
      if (opts.plot && (!opts.execute || opts.shard)) cmd.error('error: --plot needs -x/--execute and no --shard', { exitCode: 2 });
      if ((opts.shard !== undefined) !== (opts.partialOut !== undefined)) {
        cmd.error('error: --shard and --partial-out go together', { exitCode: 2 });
      }
      if (opts.shard && !opts.execute) cmd.error('error: --shard needs -x/--execute', { exitCode: 2 });
      if (opts.round && !opts.shard) cmd.error('error: --round needs --shard I/N and --partial-out', { exitCode: 2 });
      const t = await sdk();
      const doc = readQueryArgument(queryArg, cmd, t);
      if (opts.shard && opts.partialOut) {
        let round: Uint8Array | undefined;
        if (opts.round) {
          try {
            round = new Uint8Array(readFileSync(opts.round));
          } catch (e) {
            throw new t.TetIoError('TET_IO_OPEN', `cannot read round request ${opts.round}: ${(e as Error).message}`);
          }
        }
        const file = await t.open(opts.tet!);
        const bar = progressBar(opts.progress && format !== 'quiet');
        try {
          const bytes = await file.queryPartial(doc, {
            ...(round ? { round } : {}),
            shard: opts.shard, preview: opts.preview ?? opts.previewF32 ?? defaultPreviewFor(format),
            spillAllow: opts.spillAllow, ...(opts.device ? { device: opts.device } : {}),
            ...(bar ? { onProgress: (p: Progress) => bar.update(p) } : {}),
          });
          bar?.stop();
          writeFileSync(opts.partialOut, bytes);
          if (format !== 'quiet') {
            writeErr(`wrote shard ${opts.shard[0]}/${opts.shard[1]} (${bytes.length} bytes) to ${opts.partialOut}\n`);
          }
        } finally {
          bar?.stop();
          file.close();
        }
        return;
      }
      if (opts.history) {
        appendHistory({ at: new Date().toISOString(), tet: opts.tet ? resolve(opts.tet) : null, execute: !!opts.execute, query: doc });
      }
      if (!opts.tet) {
        await print(t.validatedResponse(doc), format);
        return;
      }
      const resp = await queryFile(doc, opts.tet, {
        execute: !!opts.execute, format, preview: opts.preview ?? opts.previewF32,
        spillAllow: opts.spillAllow, device: opts.device, plot: opts.plot, progress: opts.progress,
      });
      await print(resp, format);
      reportUnmatched(resp);
    });
}

/** `tet merge`. */
export function registerMergeCommand(program: Command): void {
  program
    .command('merge')
    .description('merge the partials of every shard of one query (`tet query -x --shard I/N --partial-out P`) and print its response; ' +
      `when the shards must run another round (median / quantile / histogram) write the round request to --round-out and exit ${EXIT_ROUND_NEEDED}`)
    .argument('<partials...>', 'partial files, one per shard, in any order (all of the same, latest round)')
    .addOption(formatOption())
    .option('-q, --quiet', 'one-line output (same as --format quiet)')
    .option('--round-out <file>', `where to write the next round request when one is needed (then exit status ${EXIT_ROUND_NEEDED})`)
    .action(async (files: string[], opts: { format: QueryOutputFormat; quiet?: boolean; roundOut?: string }) => {
      const format: QueryOutputFormat = opts.quiet ? 'quiet' : opts.format;
      const t = await sdk();
      const parts = files.map((f) => {
        try {
          return new Uint8Array(readFileSync(f));
        } catch (e) {
          throw new t.TetIoError('TET_IO_OPEN', `cannot read partial ${f}: ${(e as Error).message}`);
        }
      });
      const m = await t.mergeRound(parts);
      if (m.done) {
        await print(m.result, format);
        return;
      }
      if (!opts.roundOut) {
        throw new t.TetError('TET_SHARD_ROUND_NEEDED', `the ${m.op} needs round ${m.roundNumber} of every shard: ` +
          'add --round-out R.tpr to write the round request, then run each shard with --round R.tpr');
      }
      writeFileSync(opts.roundOut, m.round);
      writeErr(`round ${m.roundNumber} of the ${m.op} needs each shard again: tet query '${m.doc}' -t FILE -x ` +
        `--shard I/N --round ${opts.roundOut} --partial-out P.tps (then tet merge the new partials)\n`);
      process.exitCode = EXIT_ROUND_NEEDED;
    });
}

/** `tet qhist` (alias `hist`) and its `run`. */
export function registerHistoryCommand(program: Command): void {
  const qhist = program
    .command('qhist')
    .alias('hist')
    .description('recent queries, newest first (JSONL in the platform cache; TET_QUERY_HISTORY_MAX entries, default 50; TET_NO_QUERY_HISTORY=1 stops recording)')
    .option('--clear', 'delete the query history')
    .action((opts: { clear?: boolean }) => {
      if (opts.clear) {
        const n = clearHistory();
        writeOut(`cleared ${n} quer${n === 1 ? 'y' : 'ies'} from ${historySettings().path}\n`);
        return;
      }
      listHistory({});
    });
  qhist
    .command('list')
    .description(`list recent queries, newest first (N = number for \`qhist run N\`; the ${DEFAULT_LIST} newest unless --all / -n)`)
    .option('-n, --last <n>', 'only the N newest entries', nonNegativeInt)
    .option('--all', 'every recorded entry')
    .option('--dataset <name>', 'only queries of this dataset or table (exact name)')
    .option('--table <name>', 'only table queries of this table (exact name)')
    .addOption(new Option('--mode <mode>', 'only runs with -x (x) or without (plan)').choices(['x', 'plan']))
    .option('--grep <text>', 'only entries whose query or file contains TEXT (case-insensitive)')
    .option('--json', 'entries (with their mode) and the history settings as JSON')
    .action((opts: ListOptions) => listHistory(opts));
  qhist
    .command('run')
    .description('re-run history entry N (as listed by `qhist list`: 1 = newest)')
    .argument('<n>', 'entry number', nonNegativeInt)
    .option('-t, --tet <file>', 'run against this file instead of the recorded one')
    .option('-x, --execute', 'execute even if the recorded run was plan-only')
    .option('--preview <n>', 'preview elements', nonNegativeInt)
    .addOption(formatOption())
    .option('-q, --quiet', 'one-line output')
    .option('--spill-allow <dir>', 'allow spill files under DIR (repeatable)', collect, [])
    .action(async (n: number, opts: { tet?: string; execute?: boolean; preview?: number; format: QueryOutputFormat;
      quiet?: boolean; spillAllow: string[] }, cmd: Command) => {
      const entries = readHistory().reverse();  // 1 = newest, as `qhist list` numbers them
      if (n < 1 || n > entries.length) {
        cmd.error(`error: expected a history entry in 1..${entries.length} (1 = newest), found ${n}`, { exitCode: 2 });
      }
      const entry = entries[n - 1];
      const format: QueryOutputFormat = opts.quiet ? 'quiet' : opts.format;
      const t = await sdk();
      const doc = t.validateQuery(entry.query);
      const tet = opts.tet ?? entry.tet;
      if (!tet) {
        await print(t.validatedResponse(doc), format);
        return;
      }
      const resp = await queryFile(doc, tet, {
        execute: !!opts.execute || entry.execute, format, preview: opts.preview, spillAllow: opts.spillAllow,
      });
      await print(resp, format);
      reportUnmatched(resp);
    });
}

/** `qhist list` shows this many of the newest entries unless --all or -n. */
const DEFAULT_LIST = 20;

interface ListOptions {
  last?: number;
  all?: boolean;
  dataset?: string;
  table?: string;
  mode?: 'x' | 'plan';
  grep?: string;
  json?: boolean;
}

/** `tet qhist list` (and bare `tet qhist`): newest first, numbered for `qhist run N`. */
function listHistory(opts: ListOptions): void {
  const settings = historySettings();
  const numbered = readHistory().reverse().map((e, i) => ({ n: i + 1, e }));
  const grep = opts.grep?.toLowerCase();
  const target = (e: QueryHistoryEntry) => e.query.dataset ?? e.query.table;
  const matches = (e: QueryHistoryEntry) => (opts.dataset === undefined || target(e) === opts.dataset)
    && (opts.table === undefined || e.query.table === opts.table)
    && (opts.mode === undefined || entryMode(e) === opts.mode)
    && (grep === undefined || `${JSON.stringify(e.query)} ${e.tet ?? ''}`.toLowerCase().includes(grep));
  const filtered = numbered.filter(({ e }) => matches(e));
  const limit = opts.last ?? (opts.all ? Infinity : DEFAULT_LIST);
  const shown = filtered.slice(0, limit);
  const filter = [
    ...(opts.dataset !== undefined ? [`dataset=${opts.dataset}`] : []),
    ...(opts.table !== undefined ? [`table=${opts.table}`] : []),
    ...(opts.mode !== undefined ? [`mode=${opts.mode}`] : []),
    ...(opts.grep !== undefined ? [`grep~${opts.grep}`] : []),
  ];
  if (opts.json) {
    writeOut(JSON.stringify({
      settings,
      total: numbered.length,
      ...(filter.length ? { filter: { dataset: opts.dataset ?? null, table: opts.table ?? null, mode: opts.mode ?? null, grep: opts.grep ?? null } } : {}),
      matched: filtered.length,
      entries: shown.map(({ n, e }) => ({ n, at: e.at, mode: entryMode(e), execute: e.execute, tet: e.tet,
        dataset: e.query.dataset ?? null, ...(e.query.table !== undefined ? { table: e.query.table } : {}), query: e.query })),
    }, null, 2) + '\n');
    return;
  }
  const out: string[] = [];
  if (filter.length) out.push(`filter: ${filter.join(' ')} (${filtered.length} of ${numbered.length} entries)`);
  if (!settings.recording) out.push(`recording: off (${settings.disabled_by})`);
  if (shown.length === 0) {
    out.push(numbered.length ? 'no entry matches' : `no queries recorded yet (${settings.path})`);
  } else {
    out.push('#\tmode\tat\ttet\tquery');
    for (const { n, e } of shown) out.push(`${n}\t${entryMode(e)}\t${e.at}\t${e.tet ?? '-'}\t${JSON.stringify(e.query)}`);
    if (shown.length < filtered.length) out.push(`(${filtered.length - shown.length} older not shown; --all lists every entry)`);
    out.push('mode: x = had -x (executed), plan = planned or validated only');
    out.push('replay: tet qhist run N (1 = newest; -t FILE to run it against another file)');
  }
  writeOut(out.join('\n') + '\n');
}
