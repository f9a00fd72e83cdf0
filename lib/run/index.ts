// Running queries: plan, execute, shard and merge (lib/run/README.md).
export { runQuery, planQuery, compileForRun, DEFAULT_PREVIEW } from './run';
export type { RunQueryOptions } from './run';
export { runQueryPartial, mergePartials, mergeRound, runSharded, MAX_SHARD_ROUNDS } from './shard';
export type { QueryPartialOptions, MergePartialsOptions, MergeRoundResult } from './shard';
