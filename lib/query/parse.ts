// Query text -> value tree -> validated QueryDocument. JSON and TOML share one wire: TOML is
// converted to a plain JSON value tree first, then validateQuery runs.
import { readFileSync, statSync } from 'node:fs';
import { extname } from 'node:path';
import { TetIoError, TetQueryError } from '../errors';
import { lazyRequire } from '../lazy-require';
import { QUERY_LIMITS } from './limits';
import { validateQuery, valueDepth } from './validate';
import type { QueryDocument } from './document';

// The TOML parser, loaded by the first TOML document (JSON queries never need it).
const smolToml = lazyRequire<typeof import('smol-toml')>('smol-toml');

/** The text format of a query document. */
export type QueryFormat = 'json' | 'toml';

/** Leading `{` (after whitespace / BOM) means JSON, anything else TOML. */
export function detectQueryFormat(text: string): QueryFormat {
  return text.replace(/^\uFEFF/, '').trimStart().startsWith('{') ? 'json' : 'toml';
}

/**
 * Bracket nesting of the text outside strings and comments, stopping early past `limit`.
 * Runs before the parser so a hostile `[[[[…` cannot drive a recursive parser into the stack.
 */
export function textNestingDepth(text: string, format: QueryFormat, limit: number): number {
  let depth = 0;
  let max = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (c === '"' || (format === 'toml' && c === "'")) {
      const triple = format === 'toml' && text.startsWith(c.repeat(3), i);
      const close = triple ? c.repeat(3) : c;
      i += close.length;
      while (i < n && !text.startsWith(close, i)) {
        if (c === '"' && text[i] === '\\') i++;
        i++;
      }
      i += close.length;
      continue;
    }
    if (format === 'toml' && c === '#') {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    if (c === '[' || c === '{') {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === ']' || c === '}') {
      depth = Math.max(0, depth - 1);
    }
    i++;
  }
  return max;
}

function tomlToJson(value: unknown, path: string): unknown {
  // Iterative enough: depth was capped before parsing.
  if (value instanceof smolToml().TomlDate || value instanceof Date) {
    throw new TetQueryError('TET_QUERY_INVALID',
      `query ${path}: expected a JSON-compatible value, found a TOML date/time`);
  }
  if (typeof value === 'bigint') {
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new TetQueryError('TET_QUERY_INVALID',
        `query ${path}: expected an integer within ±2^53, found ${value}`);
    }
    return Number(value);
  }
  if (Array.isArray(value)) return value.map((v, i) => tomlToJson(v, `${path}[${i}]`));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = tomlToJson(v, `${path}.${k}`);
    return out;
  }
  return value;
}

function firstLine(msg: string): string {
  return msg.split('\n')[0].replace(/^Invalid TOML document:\s*/, '');
}

/** Parses JSON or TOML text (auto-detected unless `format` is given) and validates it. */
export function parseQueryText(text: string, format?: QueryFormat): QueryDocument {
  if (typeof text !== 'string') {
    throw new TetQueryError('TET_QUERY_PARSE', `query: expected text, found ${typeof text}`);
  }
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > QUERY_LIMITS.maxInputBytes) {
    throw new TetQueryError('TET_QUERY_TOO_LARGE',
      `query: expected at most ${QUERY_LIMITS.maxInputBytes} bytes (the maximum size), found ${bytes} bytes`);
  }
  const body = text.replace(/^\uFEFF/, '');
  const fmt = format ?? detectQueryFormat(body);
  // A little headroom: TOML [[table]] headers add transient brackets.
  if (textNestingDepth(body, fmt, QUERY_LIMITS.maxDepth + 2) > QUERY_LIMITS.maxDepth + 1) {
    throw new TetQueryError('TET_QUERY_TOO_DEEP',
      `query: nesting depth exceeds the limit of ${QUERY_LIMITS.maxDepth}`);
  }
  let value: unknown;
  if (fmt === 'json') {
    try {
      value = JSON.parse(body);
    } catch (e) {
      throw new TetQueryError('TET_QUERY_PARSE',
        `query JSON is malformed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
  } else {
    try {
      value = smolToml().parse(body);
    } catch (e) {
      const where = e && typeof e === 'object' && 'line' in e ? ` (line ${(e as { line: number }).line})` : '';
      throw new TetQueryError('TET_QUERY_PARSE',
        `query TOML is malformed${where}: ${firstLine(e instanceof Error ? e.message : String(e))}`, { cause: e });
    }
    // Dotted keys (a.b.c = 1, [a.b.c]) nest without brackets, so the text scan above cannot
    // see them: check the parsed tree (iteratively) before the recursive conversion.
    if (valueDepth(value, QUERY_LIMITS.maxDepth) > QUERY_LIMITS.maxDepth) {
      throw new TetQueryError('TET_QUERY_TOO_DEEP',
        `query: nesting depth exceeds the limit of ${QUERY_LIMITS.maxDepth}`);
    }
    value = tomlToJson(value, '$');
  }
  return validateQuery(value);
}

/** Reads a .json / .toml query file (format by extension, else auto-detect). */
export function parseQueryFile(path: string): QueryDocument {
  let text: string;
  try {
    const size = statSync(path).size;
    if (size > QUERY_LIMITS.maxInputBytes) {
      throw new TetQueryError('TET_QUERY_TOO_LARGE',
        `query file ${path}: expected at most ${QUERY_LIMITS.maxInputBytes} bytes (the maximum size), found ${size} bytes`);
    }
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if (e instanceof TetQueryError) throw e;
    const code = (e as NodeJS.ErrnoException)?.code ?? 'error';
    throw new TetIoError('TET_IO_OPEN', `cannot read query file ${path}: ${code}`, { cause: e });
  }
  const ext = extname(path).toLowerCase();
  return parseQueryText(text, ext === '.json' ? 'json' : ext === '.toml' ? 'toml' : undefined);
}

/** Query text (JSON/TOML, auto-detected) or an object -> validated document. */
export function toQueryDocument(input: string | object): QueryDocument {
  return typeof input === 'string' ? parseQueryText(input) : validateQuery(input);
}
