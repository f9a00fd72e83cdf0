// Response layer public surface: QueryResponse types, JSON text, CLI formatters.
export type {
  QueryResponse, QueryStatus, CatalogSection, ReadPlan, ReadPlanAxis, ExecutionSection,
  ChunkTouchPolicy, ScalarValue, IntegerList, PartialValues,
} from './types';
export type { ReadPlanChunk } from '../plan/chunks';
export { toJsonText, f32Text } from './json';
export {
  formatQueryResponse, QUERY_OUTPUT_FORMATS, defaultPreviewFor, statsView, planView, quietLine,
} from './format';
export type { QueryOutputFormat } from './format';
