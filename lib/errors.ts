// Error classes of the SDK. Every error carries a stable `code` (TET_<AREA>_<WHAT>) from
// native/include/tet/error_codes.def, shared with the native core; the class follows the code's
// area prefix, and `detail` says where (dataset, chunk, shard) when the raiser knows it.

import { ERROR_CODES, errorCodeInfo, type ErrorCode, type ErrorCodeClass } from './error-codes.generated';

/** Every stable code tetration raises (generated from native/include/tet/error_codes.def). */
export { ERROR_CODES };
/** A code listed in {@link ERROR_CODES}. */
export type KnownErrorCode = ErrorCode;

/**
 * Where an error happened, as data: set by the native core for chunk decode/index errors
 * (dataset, chunk coordinates, path) and reserved for sharded execution (shard, unit).
 */
export interface TetErrorDetail {
  /** Dataset name. */
  dataset?: string;
  /** Chunk grid coordinates, one per axis. */
  chunk?: number[];
  /** Shard number (sharded execution). */
  shard?: number;
  /** Work unit id within the plan. */
  unit?: number;
  /** File the error is about. */
  path?: string;
  [key: string]: unknown;
}

/** Options of every TetError constructor. */
export interface TetErrorOptions {
  cause?: unknown;
  detail?: TetErrorDetail;
}

/**
 * Every failure of the SDK: a stable `code` (see {@link ERROR_CODES}), a message saying what was
 * expected and what was found, and `detail` (where, as data) when known.
 */
export class TetError extends Error {
  readonly code: string;
  /** Structured context (dataset, chunk, shard, ...) when the raiser knows it. */
  readonly detail?: TetErrorDetail;
  constructor(code: string, message: string, options?: TetErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TetError';
    this.code = code;
    if (options?.detail !== undefined) this.detail = options.detail;
  }
}

/** Invalid query document, selection or plan (TET_QUERY_*, TET_PLAN_*). */
export class TetQueryError extends TetError {
  constructor(code: string, message: string, options?: TetErrorOptions) {
    super(code, message, options);
    this.name = 'TetQueryError';
  }
}

/** Malformed or corrupt file (TET_FORMAT_*, TET_INDEX_*, TET_PAYLOAD_*, TET_DECODE_*, TET_FOOTER_*). */
export class TetFormatError extends TetError {
  constructor(code: string, message: string, options?: TetErrorOptions) {
    super(code, message, options);
    this.name = 'TetFormatError';
  }
}

/** The work does not fit the memory budget (TET_BUDGET_*). */
export class TetBudgetError extends TetError {
  constructor(code: string, message: string, options?: TetErrorOptions) {
    super(code, message, options);
    this.name = 'TetBudgetError';
  }
}

/** File system and writer failures (TET_IO_*, TET_WRITE_*). */
export class TetIoError extends TetError {
  constructor(code: string, message: string, options?: TetErrorOptions) {
    super(code, message, options);
    this.name = 'TetIoError';
  }
}

/** The caller cancelled the operation (TET_CANCELLED). */
export class TetCancelledError extends TetError {
  constructor(code: string, message: string, options?: TetErrorOptions) {
    super(code, message, options);
    this.name = 'TetCancelledError';
  }
}

/** Converting to .tet or exporting from it failed (TET_CONVERT_*, TET_EXPORT_*). */
export class TetConvertError extends TetError {
  constructor(code: string, message: string, options?: TetErrorOptions) {
    super(code, message, options);
    this.name = 'TetConvertError';
  }
}

/** GPU backend failures (TET_DEVICE_*). */
export class TetDeviceError extends TetError {
  constructor(code: string, message: string, options?: TetErrorOptions) {
    super(code, message, options);
    this.name = 'TetDeviceError';
  }
}

type TetErrorClass = new (code: string, message: string, options?: TetErrorOptions) => TetError;

const CLASS_BY_PREFIX: readonly [string, TetErrorClass][] = [
  ['TET_QUERY_', TetQueryError], ['TET_PLAN_', TetQueryError],
  ['TET_FORMAT_', TetFormatError], ['TET_INDEX_', TetFormatError], ['TET_PAYLOAD_', TetFormatError],
  ['TET_DECODE_', TetFormatError], ['TET_FOOTER_', TetFormatError], ['TET_CELLS_', TetFormatError],
  ['TET_BUDGET_', TetBudgetError], ['TET_IO_', TetIoError], ['TET_WRITE_', TetIoError],
  ['TET_DEVICE_', TetDeviceError], ['TET_CONVERT_', TetConvertError], ['TET_EXPORT_', TetConvertError],
];

const CLASS_BY_NAME: { readonly [K in ErrorCodeClass]: TetErrorClass } = {
  Base: TetError, Query: TetQueryError, Format: TetFormatError, Budget: TetBudgetError, Io: TetIoError,
  Cancelled: TetCancelledError, Device: TetDeviceError, Convert: TetConvertError,
};

/** The class by the code's area prefix alone (the rule error_codes.def's class column follows). */
export function errorClassByPrefix(code: string): TetErrorClass {
  if (code === 'TET_CANCELLED') return TetCancelledError;
  for (const [prefix, cls] of CLASS_BY_PREFIX) if (code.startsWith(prefix)) return cls;
  return TetError;
}

/**
 * The TetError subclass for a code: its error_codes.def class, else the one its area prefix
 * names (TetError itself for TET_INTERNAL, TET_BINDING_*, TET_SHARD_* and unknown areas).
 */
export function errorClassFor(code: string): TetErrorClass {
  const info = errorCodeInfo();
  const known = Object.hasOwn(info, code) ? info[code as ErrorCode] : undefined;
  return known ? CLASS_BY_NAME[known.cls] : errorClassByPrefix(code);
}

/**
 * Wraps an error thrown by the addon (an Error with a `code`) in the matching TetError class.
 * Call it in the awaiting JS frame: the new error's stack is the caller's, the native error is
 * kept as `cause`.
 */
export function toTetError(err: unknown): TetError {
  if (err instanceof TetError) return err;
  const e = err as { code?: unknown; message?: unknown; detail?: unknown } | null;
  const code = typeof e?.code === 'string' && e.code.startsWith('TET_') ? e.code : 'TET_INTERNAL';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const detail = e?.detail !== null && typeof e?.detail === 'object' ? { ...(e.detail as TetErrorDetail) } : undefined;
  const Cls = errorClassFor(code);
  return new Cls(code, withReferenceWords(code, message, detail), detail ? { cause: err, detail } : { cause: err });
}

/** The reference tet's key words for a chunk decode failure ("zstd decode", "chunk_index"), added
 *  to the native message when it does not say them already. */
function withReferenceWords(code: string, message: string, detail: TetErrorDetail | undefined): string {
  if (code !== 'TET_DECODE_ZSTD') return message;
  let m = message;
  if (!/zstd decode/.test(m)) {
    const at = /chunk_index \([^)]*\): /.exec(m);
    m = at ? m.slice(0, at.index + at[0].length) + 'zstd decode failed: ' + m.slice(at.index + at[0].length)
      : `zstd decode failed: ${m}`;
  }
  if (!/chunk_index/.test(m) && Array.isArray(detail?.chunk)) m += ` (chunk_index (${detail.chunk.join(', ')}))`;
  return m;
}

/** A TetError whose `code` is narrowed to the given codes. */
export type TetErrorWithCode<C extends string> = TetError & { readonly code: C };

/**
 * Whether `err` is a TetError; with codes, only one whose `code` is among them, and TypeScript
 * narrows `err.code` to their union:
 *   if (isTetError(err, 'TET_DECODE_ZSTD', 'TET_DECODE_LENGTH')) err.code  // the two codes
 */
export function isTetError(err: unknown): err is TetError;
export function isTetError<const C extends KnownErrorCode>(err: unknown, ...codes: [C, ...C[]]): err is TetErrorWithCode<C>;
export function isTetError(err: unknown, ...codes: string[]): boolean {
  return err instanceof TetError && (codes.length === 0 || codes.includes(err.code));
}
