// Running queries: plan, execute, shard and merge (lib/run/README.md).
export { runQuery, planQuery, compileForRun, DEFAULT_PREVIEW } from './run';
export type { RunQueryOptions } from './run';
export { runQueryPartial, mergePartials } from './shard';
export type { QueryPartialOptions, MergePartialsOptions } from './shard';
