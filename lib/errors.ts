// Error classes of the SDK. Every error carries a stable `code` (TET_<AREA>_<WHAT>) shared with
// the native core (native/include/tet/error.h): the class is chosen by the code's area prefix.

/**
 * Stable codes raised by this package, by area (the class follows the area prefix; see
 * errorClassFor). Mirrors native/include/tet/error.h and the TS layers.
 */
export const ERROR_CODES = [
  // TetFormatError: superblock / directory, chunk index, payloads, decoding, footer
  'TET_FORMAT_BAD_MAGIC', 'TET_FORMAT_BAD_VERSION', 'TET_FORMAT_BAD_FLAGS', 'TET_FORMAT_TRUNCATED',
  'TET_FORMAT_DIRECTORY', 'TET_FORMAT_BAD_DTYPE', 'TET_FORMAT_BAD_NDIM', 'TET_FORMAT_BAD_NAME',
  'TET_FORMAT_BAD_SHAPE', 'TET_FORMAT_CHUNK_SHAPE', 'TET_FORMAT_DUPLICATE_NAME', 'TET_FORMAT_INDEX_OFFSET',
  'TET_FORMAT_RESERVED',
  'TET_INDEX_BAD_MAGIC', 'TET_INDEX_BAD_VERSION', 'TET_INDEX_LENGTH', 'TET_INDEX_RESERVED', 'TET_INDEX_DATASET_ID',
  'TET_INDEX_CHUNK_OUT_OF_GRID', 'TET_INDEX_DUPLICATE_CHUNK', 'TET_INDEX_MISSING_CHUNK', 'TET_INDEX_BAD_CODEC',
  'TET_PAYLOAD_OUT_OF_BOUNDS', 'TET_PAYLOAD_LENGTH', 'TET_PAYLOAD_TENSOR_BYTES',
  'TET_DECODE_ZSTD', 'TET_DECODE_LENGTH',
  'TET_FOOTER_INVALID', 'TET_FOOTER_BAD_VERSION', 'TET_FOOTER_METADATA',
  // TetQueryError: query documents, selections, plans, repair requests
  'TET_QUERY_PARSE', 'TET_QUERY_INVALID', 'TET_QUERY_NOT_OBJECT', 'TET_QUERY_UNKNOWN_KEY', 'TET_QUERY_MISSING_KEY',
  'TET_QUERY_TOO_LARGE', 'TET_QUERY_TOO_DEEP', 'TET_QUERY_UNSUPPORTED', 'TET_QUERY_MULTIPLE_REDUCTIONS',
  'TET_QUERY_NESTED_OPERATION', 'TET_QUERY_UNKNOWN_DATASET', 'TET_QUERY_UNKNOWN_DIMENSION',
  'TET_QUERY_AXIS_OUT_OF_RANGE', 'TET_QUERY_DUPLICATE_AXIS', 'TET_QUERY_RANK_MISMATCH', 'TET_QUERY_SELECTION',
  'TET_QUERY_EMPTY_SELECTION', 'TET_QUERY_LABEL_NOT_FOUND', 'TET_QUERY_NO_FILL_VALUE', 'TET_QUERY_SPILL_NOT_ALLOWED',
  'TET_QUERY_REPAIR_CODE', 'TET_QUERY_REPAIR_NOT_APPLICABLE', 'TET_PLAN_INVALID',
  // TetBudgetError, TetCancelledError
  'TET_BUDGET_EXCEEDED', 'TET_CANCELLED',
  // TetIoError: file system and writing
  'TET_IO_OPEN', 'TET_IO_READ', 'TET_IO_WRITE', 'TET_IO_CLOSED', 'TET_IO_FILE_CHANGED',
  'TET_WRITE_IO', 'TET_WRITE_CLOSED', 'TET_WRITE_SEALED', 'TET_WRITE_ARGUMENT', 'TET_WRITE_BAD_NAME',
  'TET_WRITE_BAD_DTYPE', 'TET_WRITE_BAD_SHAPE', 'TET_WRITE_BAD_CHUNK_SHAPE', 'TET_WRITE_BAD_CODEC',
  'TET_WRITE_BAD_DATASET', 'TET_WRITE_BAD_COORDS', 'TET_WRITE_BAD_LENGTH', 'TET_WRITE_BAD_FOOTER',
  'TET_WRITE_DUPLICATE_CHUNK', 'TET_WRITE_MISSING_CHUNK', 'TET_WRITE_COMPRESS',
  // TetError: the addon itself
  'TET_BINDING_LOAD', 'TET_BINDING_BAD_ARGUMENT', 'TET_INTERNAL',
] as const;
export type KnownErrorCode = (typeof ERROR_CODES)[number];

export class TetError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TetError';
    this.code = code;
  }
}

/** Invalid query document, selection or plan (TET_QUERY_*, TET_PLAN_*). */
export class TetQueryError extends TetError {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'TetQueryError';
  }
}

/** Malformed or corrupt file (TET_FORMAT_*, TET_INDEX_*, TET_PAYLOAD_*, TET_DECODE_*, TET_FOOTER_*). */
export class TetFormatError extends TetError {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'TetFormatError';
  }
}

/** The work does not fit the memory budget (TET_BUDGET_*). */
export class TetBudgetError extends TetError {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'TetBudgetError';
  }
}

/** File system and writer failures (TET_IO_*, TET_WRITE_*). */
export class TetIoError extends TetError {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'TetIoError';
  }
}

/** The caller cancelled the operation (TET_CANCELLED). */
export class TetCancelledError extends TetError {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'TetCancelledError';
  }
}

/** GPU backend failures (TET_DEVICE_*). */
export class TetDeviceError extends TetError {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'TetDeviceError';
  }
}

type TetErrorClass = new (code: string, message: string, options?: { cause?: unknown }) => TetError;

const CLASS_BY_PREFIX: readonly [string, TetErrorClass][] = [
  ['TET_QUERY_', TetQueryError], ['TET_PLAN_', TetQueryError],
  ['TET_FORMAT_', TetFormatError], ['TET_INDEX_', TetFormatError], ['TET_PAYLOAD_', TetFormatError],
  ['TET_DECODE_', TetFormatError], ['TET_FOOTER_', TetFormatError],
  ['TET_BUDGET_', TetBudgetError], ['TET_IO_', TetIoError], ['TET_WRITE_', TetIoError],
  ['TET_DEVICE_', TetDeviceError],
];

/** The TetError subclass for a code (TetError itself for TET_INTERNAL, TET_BINDING_* and unknown areas). */
export function errorClassFor(code: string): TetErrorClass {
  if (code === 'TET_CANCELLED') return TetCancelledError;
  for (const [prefix, cls] of CLASS_BY_PREFIX) if (code.startsWith(prefix)) return cls;
  return TetError;
}

/**
 * Wraps an error thrown by the addon (an Error with a `code`) in the matching TetError class.
 * Call it in the awaiting JS frame: the new error's stack is the caller's, the native error is
 * kept as `cause`.
 */
export function toTetError(err: unknown): TetError {
  if (err instanceof TetError) return err;
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' && e.code.startsWith('TET_') ? e.code : 'TET_INTERNAL';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const Cls = errorClassFor(code);
  return new Cls(code, message, { cause: err });
}

export function isTetError(err: unknown): err is TetError {
  return err instanceof TetError;
}
