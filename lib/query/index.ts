// Query layer public surface: parsing, validation and the schema (documents only: running a
// query is lib/run).
export { parseQueryText, parseQueryFile, detectQueryFormat, toQueryDocument } from './parse';
export type { QueryFormat } from './parse';
export { validateQuery, queryJsonSchema } from './validate';
export { queryOperation, REDUCTION_KEYS, SIMPLE_OPS, PARAM_OPS, MATERIALIZE_OPS, WHERE_OPS } from './document';
export type {
  QueryDocument, QueryOperation, AxisSpec, AxisToken, SelectionAxisWire, ExecutionHints,
  NullCountParams, QuantileParams, HistogramParams, AxisParams, ReductionName,
  WherePredicate, WhereLiteral, WhereOpName, GroupBySpec, GroupByWire, ReductionsWire, TimeBucket, ColumnParams, OrderBySpec,
} from './document';
export { QUERY_LIMITS } from './limits';
