// Response layer public surface: QueryResponse types and JSON text (the CLI's formatters live in
// lib/cli/format.ts, so the SDK loads no CLI dependency).
export type {
  QueryResponse, QueryStatus, CatalogSection, ReadPlan, ReadPlanAxis, ExecutionSection,
  ChunkTouchPolicy, ScalarValue, IntegerList, PartialValues, WherePlanEntry, TableValue,
} from './types';
export type { ReadPlanChunk } from '../plan/chunks';
export { toJsonText, f32Text } from './json';
