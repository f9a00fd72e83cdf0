// `tet query` and `tet qhist`: plan or run query documents, print them in one of the
// QueryOutputFormat views, and keep a client-side history of recent queries.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { TetError, TetIoError, TetQueryError } from '../errors';
import { open } from '../file';
import { mergeRound, parseQueryFile, parseQueryText, runQuery, runQueryPartial, validateQuery } from '../query';
import type { QueryDocument } from '../query';
import { appendHistory, readHistory } from '../query/history';
import { defaultPreviewFor, formatQueryResponse, QUERY_OUTPUT_FORMATS, type QueryOutputFormat } from './format';
import type { QueryResponse } from '../response';

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
  round?: string;
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
function readQueryArgument(arg: string | undefined, cmd: Command): QueryDocument {
  if (arg === undefined || arg === '-') {
    if (arg === undefined && process.stdin.isTTY) {
      cmd.error('error: no query given (pass a .json/.toml file, inline JSON/TOML, or pipe it on stdin)', { exitCode: 2 });
    }
    let text: string;
    try {
      text = readFileSync(0, 'utf8');
    } catch (e) {
      throw new TetQueryError('TET_QUERY_PARSE', `cannot read the query from stdin: ${(e as Error).message}`);
    }
    return parseQueryText(text);
  }
  const ext = extname(arg).toLowerCase();
  const looksLikeText = /^\s*\{/.test(arg) || arg.includes('\n') || arg.includes('=');
  if (!looksLikeText && (ext === '.json' || ext === '.toml' || (existsSync(arg) && statSync(arg).isFile()))) {
    return parseQueryFile(arg);
  }
  return parseQueryText(arg);
}

function print(resp: QueryResponse, format: QueryOutputFormat): void {
  process.stdout.write(formatQueryResponse(resp, format) + '\n');
}

function reportUnmatched(resp: QueryResponse): void {
  if (resp.status !== 'unmatched') return;
  const names = resp.catalog?.available_datasets.map((n) => JSON.stringify(n)).join(', ') || 'none';
  process.stderr.write(`error: dataset ${JSON.stringify(resp.query.dataset)} not found in ${resp.catalog?.file} (datasets: ${names})\n`);
  process.exitCode = 1;
}

async function queryFile(doc: QueryDocument, tet: string, o: {
  execute: boolean; format: QueryOutputFormat; preview?: number; spillAllow: string[]; device?: string;
}): Promise<QueryResponse> {
  const file = await open(tet);
  try {
    return await runQuery(file, doc, {
      execute: o.execute,
      preview: o.preview ?? defaultPreviewFor(o.format),
      spillAllow: o.spillAllow,
      ...(o.device ? { device: o.device } : {}),
    });
  } finally {
    file.close();
  }
}

function formatOption(): Option {
  return new Option('--format <format>', 'output: full (pretty JSON), json (one line), stats, plan, quiet, table')
    .choices(QUERY_OUTPUT_FORMATS as unknown as string[]).default('full');
}

export function registerQueryCommands(program: Command): void {
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
    .option('--partial-out <file>', 'write the shard\'s partial state here (merge the shards with `tet merge`)')
    .option('--round <file>', 'the round request `tet merge --round-out` wrote (rounds 2+ of median / quantile / histogram)')
    .action(async (queryArg: string | undefined, opts: QueryCliOptions, cmd: Command) => {
      const format: QueryOutputFormat = opts.quiet ? 'quiet' : opts.format;
      if (opts.execute && !opts.tet) cmd.error('error: -x/--execute needs -t/--tet FILE', { exitCode: 2 });
      if (opts.device && !opts.execute) cmd.error('error: --device needs -x/--execute', { exitCode: 2 });
      if ((opts.shard !== undefined) !== (opts.partialOut !== undefined)) {
        cmd.error('error: --shard and --partial-out go together', { exitCode: 2 });
      }
      if (opts.shard && !opts.execute) cmd.error('error: --shard needs -x/--execute', { exitCode: 2 });
      if (opts.round && !opts.shard) cmd.error('error: --round needs --shard I/N and --partial-out', { exitCode: 2 });
      const doc = readQueryArgument(queryArg, cmd);
      if (opts.shard && opts.partialOut) {
        let round: Uint8Array | undefined;
        if (opts.round) {
          try {
            round = new Uint8Array(readFileSync(opts.round));
          } catch (e) {
            throw new TetIoError('TET_IO_OPEN', `cannot read round request ${opts.round}: ${(e as Error).message}`);
          }
        }
        const file = await open(opts.tet!);
        try {
          const bytes = await runQueryPartial(file, doc, {
            ...(round ? { round } : {}),
            shard: opts.shard, preview: opts.preview ?? opts.previewF32 ?? defaultPreviewFor(format),
            spillAllow: opts.spillAllow, ...(opts.device ? { device: opts.device } : {}),
          });
          writeFileSync(opts.partialOut, bytes);
          if (format !== 'quiet') {
            process.stderr.write(`wrote shard ${opts.shard[0]}/${opts.shard[1]} (${bytes.length} bytes) to ${opts.partialOut}\n`);
          }
        } finally {
          file.close();
        }
        return;
      }
      if (opts.history) {
        appendHistory({ at: new Date().toISOString(), tet: opts.tet ? resolve(opts.tet) : null, execute: !!opts.execute, query: doc });
      }
      if (!opts.tet) {
        print({ status: 'validated', query: doc }, format);
        return;
      }
      const resp = await queryFile(doc, opts.tet, {
        execute: !!opts.execute, format, preview: opts.preview ?? opts.previewF32,
        spillAllow: opts.spillAllow, device: opts.device,
      });
      print(resp, format);
      reportUnmatched(resp);
    });

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
      const parts = files.map((f) => {
        try {
          return new Uint8Array(readFileSync(f));
        } catch (e) {
          throw new TetIoError('TET_IO_OPEN', `cannot read partial ${f}: ${(e as Error).message}`);
        }
      });
      const m = await mergeRound(parts);
      if (m.done) {
        print(m.result, format);
        return;
      }
      if (!opts.roundOut) {
        throw new TetError('TET_SHARD_ROUND_NEEDED', `the ${m.op} needs round ${m.roundNumber} of every shard: ` +
          'add --round-out R.tpr to write the round request, then run each shard with --round R.tpr');
      }
      writeFileSync(opts.roundOut, m.round);
      process.stderr.write(`round ${m.roundNumber} of the ${m.op} needs each shard again: tet query '${m.doc}' -t FILE -x ` +
        `--shard I/N --round ${opts.roundOut} --partial-out P.tps (then tet merge the new partials)\n`);
      process.exitCode = EXIT_ROUND_NEEDED;
    });

  const qhist = program
    .command('qhist')
    .alias('hist')
    .description('recent queries (JSONL in the platform cache; TET_QUERY_HISTORY_MAX entries)');
  qhist
    .command('list')
    .description('list recent queries, oldest first (N = number for `qhist run N`)')
    .option('-n, --last <n>', 'only the last N entries', nonNegativeInt)
    .action((opts: { last?: number }) => {
      const entries = readHistory();
      const first = opts.last !== undefined ? Math.max(0, entries.length - opts.last) : 0;
      for (let i = first; i < entries.length; i++) {
        const e = entries[i];
        process.stdout.write(`${i + 1}\t${e.at}\t${e.execute ? '-x ' : ''}${e.tet ?? '-'}\t${JSON.stringify(e.query)}\n`);
      }
    });
  qhist
    .command('run')
    .description('re-run history entry N (as listed by `qhist list`)')
    .argument('<n>', 'entry number', nonNegativeInt)
    .option('-t, --tet <file>', 'run against this file instead of the recorded one')
    .option('-x, --execute', 'execute even if the recorded run was plan-only')
    .option('--preview <n>', 'preview elements', nonNegativeInt)
    .addOption(formatOption())
    .option('-q, --quiet', 'one-line output')
    .option('--spill-allow <dir>', 'allow spill files under DIR (repeatable)', collect, [])
    .action(async (n: number, opts: { tet?: string; execute?: boolean; preview?: number; format: QueryOutputFormat;
      quiet?: boolean; spillAllow: string[] }, cmd: Command) => {
      const entries = readHistory();
      if (n < 1 || n > entries.length) {
        cmd.error(`error: expected a history entry in 1..${entries.length}, found ${n}`, { exitCode: 2 });
      }
      const entry = entries[n - 1];
      const format: QueryOutputFormat = opts.quiet ? 'quiet' : opts.format;
      const doc = validateQuery(entry.query);
      const tet = opts.tet ?? entry.tet;
      if (!tet) {
        print({ status: 'validated', query: doc }, format);
        return;
      }
      const resp = await queryFile(doc, tet, {
        execute: !!opts.execute || entry.execute, format, preview: opts.preview, spillAllow: opts.spillAllow,
      });
      print(resp, format);
      reportUnmatched(resp);
    });
}
