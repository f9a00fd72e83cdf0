// Public API of the tetration package. Everything a user imports comes from here; internal
// modules (binding, plan encoding, native contract) stay private.
export { open, openSync, TetFile } from './file';
export type { OpenOptions, ReadOptions, ReadResult, FileLayout, FooterInfo } from './file';
export { TetWriter } from './writer';
export type { DatasetSpec, WriterOptions, WriteCodec, HistoryInput } from './writer';
export { verify, repair, REPAIR_CODES, QUICK_DECODE_CHUNKS } from './health';
export type { VerifyReport, VerifyFinding, VerifyOptions, RepairCode, RepairResult, Severity } from './health';
export {
  TetError, TetQueryError, TetFormatError, TetBudgetError, TetIoError, TetCancelledError, TetDeviceError,
  TetConvertError, ERROR_CODES, isTetError,
} from './errors';
export type { KnownErrorCode, TetErrorDetail, TetErrorOptions, TetErrorWithCode } from './errors';
export { hostInfo } from './host';
export { DTYPE_BY_TAG, DTYPE_TAG, DTYPE_SIZE } from './types';
export type * from './types';

// Queries (lib/query, lib/response)
export { parseQueryText, parseQueryFile, validateQuery, queryJsonSchema, runQuery, planQuery, QUERY_LIMITS, mergePartials, mergeRound, runSharded, MAX_SHARD_ROUNDS } from './query';
export type { QueryDocument, RunQueryOptions, QueryFormat, SelectionAxisWire, QueryPartialOptions, MergePartialsOptions, MergeRoundResult } from './query';
export { toJsonText } from './response';
export type { QueryResponse } from './response';

// Conversion and export (lib/convert, lib/export)
export { convert, detectSource } from './convert';
export type { ConvertOptions, ConvertProgress, ConvertReport, ConvertedDataset, CodecOption, SourceKind } from './convert';
export { exportZarr } from './export';
export type { ExportZarrOptions, ExportZarrReport } from './export';
