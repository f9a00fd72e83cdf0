// Public API of the tetration package. Everything a user imports comes from here; internal
// modules (binding, plan encoding, native contract) stay private.
import { preloadBinding } from './binding';

export { open, openSync, TetFile } from './file';
export type { OpenOptions, ReadOptions, ReadResult, FileLayout, FooterInfo } from './file';
export { TetWriter } from './writer';
export type { DatasetSpec, WriterOptions, WriteCodec, HistoryInput, TableSpec, TableWriter } from './writer';
// Tables stored in .tet files (lib/tables)
export type { TableInfo, TableColumnInfo, ReadColumnOptions, TableBatch } from './tables/io';
export type { ColumnKind, ColumnSchema, ColumnInput, ColumnValues, ColumnTypedArray, TimeUnit, TimestampTz } from './tables/types';
export { verify, repair, REPAIR_CODES, QUICK_DECODE_BYTES, QUICK_DECODE_CHUNKS } from './health';
export type { VerifyReport, VerifyFinding, VerifyOptions, RepairCode, RepairResult, Severity } from './health';
export {
  TetError, TetQueryError, TetFormatError, TetBudgetError, TetIoError, TetCancelledError, TetDeviceError,
  TetConvertError, ERROR_CODES, isTetError,
} from './errors';
export type { KnownErrorCode, TetErrorDetail, TetErrorOptions, TetErrorWithCode } from './errors';
export type { ErrorCode } from './error-codes.generated';
export { hostInfo } from './host';
export { DTYPE_BY_TAG, DTYPE_TAG, DTYPE_SIZE } from './types';
export type * from './types';

// Queries (lib/query: documents; lib/run: running them; lib/response: what they return)
export { parseQueryText, parseQueryFile, validateQuery, queryJsonSchema, QUERY_LIMITS, WHERE_OPS } from './query';
export type {
  QueryDocument, QueryFormat, SelectionAxisWire, AxisSpec, AxisToken, AxisParams, ExecutionHints,
  NullCountParams, QuantileParams, HistogramParams, ReductionName,
  WherePredicate, WhereLiteral, WhereOpName, GroupBySpec, GroupByWire, ReductionsWire, TimeBucket, ColumnParams, OrderBySpec,
} from './query';
export type { SimpleOpName, ParamOpName } from './query/document';
export { runQuery, planQuery, mergePartials, mergeRound, runSharded, MAX_SHARD_ROUNDS } from './run';
export type { Progress, ProgressCallback } from './progress';
export { validatedResponse } from './response/build';
export type { RunQueryOptions, QueryPartialOptions, MergePartialsOptions, MergeRoundResult } from './run';
export { toJsonText, f32Text } from './response/json';
export type {
  QueryResponse, ExecutionSection, QueryStatus, CatalogSection, ReadPlan, ReadPlanAxis, ReadPlanChunk,
  ChunkTouchPolicy, ScalarValue, IntegerList, PartialValues, WherePlanEntry, TableValue,
} from './response';
export type { IoRegime } from './plan/strategy';
export type { BudgetSource } from './plan/budget';

// Notebook display (tslab), pictures, conversion and export: lib/extras.ts (the CommonJS build
// loads them on first use)
export { display, toHTML, renderPlot, plotSpec, convert, detectSource, exportZarr } from './extras';
export type { RichOutput } from './notebook';

// Pictures of results (lib/plot)
export type { PlotOptions, PlotSpec, PlotPadding } from './plot';

// Conversion and export (lib/convert, lib/export)
export type { ConvertOptions, ConvertProgress, ConvertReport, ConvertedDataset, CodecOption, SourceKind } from './convert';
export type { ExportZarrOptions, ExportZarrReport } from './export';

// The addon loads with the SDK (lib/binding.ts preloadBinding: a failure waits for first use).
preloadBinding();
