// Query layer public surface: parsing, validation, schema, and the run/plan entry points.
export { parseQueryText, parseQueryFile, detectQueryFormat } from './parse';
export type { QueryFormat } from './parse';
export { validateQuery, queryJsonSchema } from './validate';
export { runQuery, planQuery, toQueryDocument, DEFAULT_PREVIEW } from './run';
export type { RunQueryOptions } from './run';
export { queryOperation, REDUCTION_KEYS, SIMPLE_OPS, PARAM_OPS, MATERIALIZE_OPS } from './document';
export type {
  QueryDocument, QueryOperation, AxisSpec, AxisToken, SelectionAxisWire, ExecutionHints,
  NullCountParams, QuantileParams, HistogramParams, AxisParams, ReductionName,
} from './document';
export { QUERY_LIMITS } from './limits';
export { runQueryPartial, mergePartials, mergeRound, runSharded, MAX_SHARD_ROUNDS } from './shard';
export type { QueryPartialOptions, MergePartialsOptions, MergeRoundResult } from './shard';
