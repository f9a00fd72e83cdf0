// Exact sharded execution: queryPartial runs shard i of n of a query (its contiguous range of
// the query's work units) and returns the partial's bytes ("TPS1", native/exec/README.md);
// mergePartials validates a complete set (TET_SHARD_* errors) and returns the same response
// object runQuery gives for that query. The partial carries the canonical query document (part
// of its fingerprint) and the planned response, so the merge needs neither the file nor the doc.
// Fields that differ from the unsharded response: execution.seconds (the merge's own time),
// threads (max over shards), chunks_read / stored_bytes_read (summed over shards; shard 0 also
// counts the preview's tiles).
import { binding } from '../binding';
import { runCompiled } from '../engine';
import { TetCancelledError, TetError, TetQueryError, toTetError } from '../errors';
import type { NativeFileHandle } from '../native';
import { groupsRunSeparately, planAgainstTarget, type CompiledExecution, type PlannedQuery } from '../plan/compile';
import type { SelectedGroups } from '../plan/group';
import { toQueryDocument } from '../query/parse';
import { buildEmptyResponse, buildExecutedResponse, plannedResponse } from '../response/build';
import type { QueryResponse } from '../response/types';
import type { ProgressCallback } from '../progress';
import type { QueryTarget } from '../types';
import { compileForRun, emptyAnswer } from './run';
import { where } from './where';
import { groupsOf } from './group';

export interface QueryPartialOptions {
  /** `[i, n]`: shard i (0-based) of n. */
  shard: readonly [number, number];
  signal?: AbortSignal;
  /** Preview elements carried by shard 0 (default 64; 0 = none); all shards should agree. */
  preview?: number;
  spillAllow?: string[];
  device?: string;
  /**
   * Round request (tier-C ops: median, quantile, histogram without a range) from `mergeRound`
   * when it answered `{ done: false, round }`; absent for round 1.
   */
  round?: Uint8Array;
  /**
   * As a query's `onProgress` (RunQueryOptions), over this shard's share of the selection (its share
   * of the work units; exact for covariance and non-scalar median / quantile / histogram shards,
   * which read a sub-box).
   */
  onProgress?: ProgressCallback;
}

/** What `mergeRound` answers: the response, or the round request every shard must run next. */
export type MergeRoundResult =
  | { done: true; result: QueryResponse }
  | { done: false; round: Uint8Array; roundNumber: number; op: string; doc: string };

/** At most this many rounds (the deepest, a 64-bit quantile, needs 4). */
export const MAX_SHARD_ROUNDS = 8;

export interface MergePartialsOptions {
  signal?: AbortSignal;
}

/** What the merge needs to build the response (JSON, written by shard 0 and every other). */
interface PartialContext {
  v: 1;
  /** The planned response (status planned: query, catalog, read_plan). */
  response: QueryResponse;
  operation: PlannedQuery['operation'];
  dtype: string;
  fields: CompiledExecution['fields'];
  strategy: CompiledExecution['plan']['strategy'];
  ioMode: CompiledExecution['plan']['ioMode'];
  /** group_by: the groups' keys and counts (the ids travel in the plan's GROUP section). */
  groups?: { keys: SelectedGroups['keys']; counts: number[] };
}

/** The planned query a merge rebuilds from a partial's context. */
function plannedOf(c: PartialContext): PlannedQuery {
  return { doc: c.response.query, catalog: c.response.catalog, readPlan: c.response.read_plan,
    operation: c.operation, dataset: { dtype: c.dtype },
    ...(c.groups ? { groups: { ...c.groups, ids: new Uint32Array(0) } } : {}) } as unknown as PlannedQuery;
}

// JSON with bigint and non-finite numbers kept.
function encodeContext(c: PartialContext): string {
  return JSON.stringify(c, (_k, v) => {
    if (typeof v === 'bigint') return { $bigint: v.toString() };
    if (typeof v === 'number' && !Number.isFinite(v)) return { $num: String(v) };
    return v;
  });
}
function decodeContext(text: string): PartialContext {
  try {
    const c = JSON.parse(text, (_k, v) => {
      if (v && typeof v === 'object' && !Array.isArray(v)) {
        const keys = Object.keys(v);
        if (keys.length === 1 && keys[0] === '$bigint' && typeof v.$bigint === 'string') return BigInt(v.$bigint);
        if (keys.length === 1 && keys[0] === '$num' && typeof v.$num === 'string') return Number(v.$num);
      }
      return v;
    }) as PartialContext;
    if (!c || c.v !== 1 || typeof c.response !== 'object') throw new Error('unknown context version');
    return c;
  } catch (err) {
    throw new TetError('TET_SHARD_CORRUPT', `shard partial carries an unreadable response context: ${(err as Error).message}`);
  }
}

function checkShard(shard: unknown): [number, number] {
  const ok = Array.isArray(shard) && shard.length === 2 && shard.every((x) => Number.isSafeInteger(x) && x >= 0)
    && shard[1] >= 1 && shard[1] <= 0xffffffff && shard[0] < shard[1];
  if (!ok) {
    throw new TetError('TET_SHARD_MISMATCH',
      `shard must be [i, n] with integers 0 <= i < n, found ${JSON.stringify(shard)}`);
  }
  return [shard[0], shard[1]];
}

/** Runs shard `opts.shard = [i, n]` of a query; resolves with the partial's bytes. */
export async function runQueryPartial(target: QueryTarget, input: string | object, opts: QueryPartialOptions): Promise<Uint8Array> {
  const [i, n] = checkShard(opts.shard);
  const doc = toQueryDocument(input);
  if (doc.table !== undefined) {
    throw new TetQueryError('TET_QUERY_UNSUPPORTED',
      `a table query (table ${JSON.stringify(doc.table)}) does not run sharded: run it whole (one scan of the table answers it); --shard / queryPartial split dataset queries, with or without where and group_by`);
  }
  if (doc.reductions !== undefined) {
    throw new TetQueryError('TET_QUERY_UNSUPPORTED',
      '"reductions" does not run sharded: run it whole (one pass answers every reduction), or shard one reduction key per query');
  }
  // every shard evaluates the where the same (the same file), so their plans agree
  const planned = planAgainstTarget(target, doc, undefined, await where(target, doc, opts.signal));
  if (!planned.dataset) {
    const names = target.datasets.map((d) => JSON.stringify(d.name)).join(', ') || 'none';
    throw new TetQueryError('TET_QUERY_UNKNOWN_DATASET', `dataset ${JSON.stringify(doc.dataset)} not found (datasets: ${names})`);
  }
  if (!planned.operation) {
    throw new TetQueryError('TET_QUERY_UNSUPPORTED', 'only queries with an aggregate can run sharded (this one only reads / spills)');
  }
  if (opts.signal?.aborted) throw new TetCancelledError('TET_CANCELLED', 'the query was cancelled');
  if (planned.groupBy) {
    if (groupsRunSeparately(planned.operation)) {
      throw new TetQueryError('TET_QUERY_UNSUPPORTED', `a grouped ${planned.operation.name} does not run sharded (the streaming reductions do)`);
    }
    planned.groups = await groupsOf(planned, opts.signal, target.native as NativeFileHandle);
  }
  const native = binding();
  const compiled = compileForRun(planned, target, opts);
  const context: PartialContext = {
    v: 1, response: plannedResponse(planned), operation: planned.operation, dtype: planned.dataset.dtype,
    fields: compiled.fields, strategy: compiled.plan.strategy, ioMode: compiled.plan.ioMode,
    ...(planned.groups ? { groups: { keys: planned.groups.keys, counts: planned.groups.counts } } : {}),
  };
  if (opts.round !== undefined && !(opts.round instanceof Uint8Array)) {
    throw new TetError('TET_BINDING_BAD_ARGUMENT', 'round must be the Uint8Array mergeRound returned');
  }
  const round = opts.round === undefined ? undefined
    : opts.round.constructor === Uint8Array ? opts.round : new Uint8Array(opts.round);
  if (planned.selection!.elementCount === 0) {
    emptyAnswer(planned, compiled);  // throws where the unsharded query would (spill)
    return encodeEmptyPartial({ doc: JSON.stringify(doc), shard: [i, n], context: encodeContext(context) });
  }
  // which shard, and the round request, travel in the plan's SHARD section
  compiled.plan.shard = { begin: 0, end: 1, of: 1, index: i, count: n, ...(round ? { round } : {}) };
  return runCompiled(compiled, opts.signal, (bytes, token) => native.executePartial(target.native as NativeFileHandle,
    bytes, JSON.stringify(doc), encodeContext(context), token), opts.onProgress);
}

/**
 * Merges the partials of every shard of one round of a query (any order): the query's response
 * when it is complete, or (tier-C ops) the round request every shard must run next
 * (`queryPartial(doc, { shard, round })`), whose partials are merged in turn.
 */
export async function mergeRound(parts: readonly Uint8Array[], opts: MergePartialsOptions = {}): Promise<MergeRoundResult> {
  if (!Array.isArray(parts) || parts.some((p) => !(p instanceof Uint8Array))) {
    throw new TetError('TET_BINDING_BAD_ARGUMENT', 'mergeRound expects an array of Uint8Array partials');
  }
  if (opts.signal?.aborted) throw new TetCancelledError('TET_CANCELLED', 'the merge was cancelled');
  if (parts.some(isEmptyPartial)) return { done: true, result: mergeEmptyPartials(parts) };
  const t0 = process.hrtime.bigint();
  let merged;
  try {
    merged = await binding().mergePartials(parts.map((p) => (p.constructor === Uint8Array ? p : new Uint8Array(p))));
  } catch (err) {
    throw toTetError(err);
  }
  if (!merged.done) return { done: false, round: merged.round!, roundNumber: merged.roundNo!, op: merged.op, doc: merged.doc };
  const c = decodeContext(merged.context);
  const planned = plannedOf(c);
  const compiled = { fields: c.fields, plan: { strategy: c.strategy, ioMode: c.ioMode } } as unknown as CompiledExecution;
  merged.result!.stats.seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { done: true, result: buildExecutedResponse(planned, compiled, merged.result!) };
}

// ---- partials of a query whose `where` selects nothing ------------------------------------------
// The engine never runs such a query (plan wire v2 has no 0-length axis), so its shards return
// this small envelope instead of a native partial: "TPSE", then JSON { v, doc, shard, context }.
// The merge checks the set (one query, every shard once) and answers the empty values.

const EMPTY_PARTIAL_MAGIC = [0x54, 0x50, 0x53, 0x45];  // "TPSE"

interface EmptyPartial { v: 1; doc: string; shard: [number, number]; context: string }

function encodeEmptyPartial(p: Omit<EmptyPartial, 'v'>): Uint8Array {
  const body = new TextEncoder().encode(JSON.stringify({ v: 1, ...p }));
  const out = new Uint8Array(4 + body.length);
  out.set(EMPTY_PARTIAL_MAGIC, 0);
  out.set(body, 4);
  return out;
}

function isEmptyPartial(b: Uint8Array): boolean {
  return b.length >= 4 && EMPTY_PARTIAL_MAGIC.every((x, k) => b[k] === x);
}

function decodeEmptyPartial(b: Uint8Array): EmptyPartial {
  try {
    const p = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(b.subarray(4))) as EmptyPartial;
    if (p?.v !== 1 || typeof p.doc !== 'string' || typeof p.context !== 'string' || !Array.isArray(p.shard)) throw new Error('bad fields');
    return p;
  } catch (err) {
    throw new TetError('TET_SHARD_CORRUPT', `an empty-selection shard partial is unreadable: ${(err as Error).message}`);
  }
}

// A context without what the host measured when the shard was planned (its available RAM moves
// between shards run at different times): what must agree for the shards to be one query.
function queryIdentity(context: string): string {
  const c = decodeContext(context);
  const { host_available_ram_bytes: _measured, ...fields } = c.fields as unknown as Record<string, unknown>;
  // A budget that is a percentage of that RAM moves with it too (bytes given by the query or the file do not).
  if (typeof fields.memory_budget_source === 'string' && fields.memory_budget_source.endsWith('_percent')) delete fields.memory_budget_bytes;
  return encodeContext({ ...c, fields: fields as unknown as PartialContext['fields'] });
}

function mergeEmptyPartials(parts: readonly Uint8Array[]): QueryResponse {
  if (!parts.every(isEmptyPartial)) {
    throw new TetError('TET_SHARD_MISMATCH', 'the partials mix shards whose where selected nothing with shards that ran: not one query over one file');
  }
  const ps = parts.map(decodeEmptyPartial);
  const n = ps[0].shard[1];
  const seen = new Set<number>();
  const identity = ps.map((p) => queryIdentity(p.context));
  for (const [k, p] of ps.entries()) {
    if (p.doc !== ps[0].doc || identity[k] !== identity[0]) throw new TetError('TET_SHARD_MISMATCH', 'the partials come from different queries');
    if (p.shard[1] !== n) throw new TetError('TET_SHARD_MISMATCH', `shard ${p.shard[0]} of ${p.shard[1]} is from another split than ${n} shards`);
    if (seen.has(p.shard[0])) throw new TetError('TET_SHARD_DUPLICATE', `shard ${p.shard[0]} of ${n} is given twice`);
    seen.add(p.shard[0]);
  }
  if (seen.size !== n) throw new TetError('TET_SHARD_MISSING', `expected the partials of all ${n} shards, found ${seen.size}`);
  const c = decodeContext(ps[0].context);
  const planned = plannedOf(c);
  const compiled = { fields: c.fields, plan: { strategy: c.strategy, ioMode: c.ioMode, previewMax: 0 } } as unknown as CompiledExecution;
  return buildEmptyResponse(planned, compiled);
}

/**
 * Merges the partials of every shard of one query (any order) into the query's response.
 * Throws TET_SHARD_ROUND_NEEDED when the partials ask for another round (use mergeRound or
 * runSharded for tier-C ops).
 */
export async function mergePartials(parts: readonly Uint8Array[], opts: MergePartialsOptions = {}): Promise<QueryResponse> {
  const r = await mergeRound(parts, opts);
  if (r.done) return r.result;
  throw new TetError('TET_SHARD_ROUND_NEEDED', `the ${r.op} needs round ${r.roundNumber}: every shard must run again with ` +
    'the round request (use mergeRound / runSharded, or `tet merge --round-out R.tpr` and `tet query --round R.tpr`)');
}

/**
 * Runs a query on n shards through `runShard(i, round)` (which resolves with shard i's partial
 * for that round: e.g. `file.queryPartial(doc, { shard: [i, n], round })` in some process) and
 * merges round after round until the response is complete (at most MAX_SHARD_ROUNDS rounds).
 */
export async function runSharded(n: number, runShard: (i: number, round?: Uint8Array) => Promise<Uint8Array>,
  opts: MergePartialsOptions = {}): Promise<QueryResponse> {
  if (!Number.isSafeInteger(n) || n < 1 || n > 0xffffffff) {
    throw new TetError('TET_SHARD_MISMATCH', `runSharded needs a shard count n >= 1, found ${String(n)}`);
  }
  let round: Uint8Array | undefined;
  for (let r = 1; r <= MAX_SHARD_ROUNDS; r++) {
    const parts = await Promise.all(Array.from({ length: n }, (_x, i) => runShard(i, round)));
    const m = await mergeRound(parts, opts);
    if (m.done) return m.result;
    round = m.round;
  }
  throw new TetError('TET_SHARD_ROUND_NEEDED', `the sharded query still needs more rounds after ${MAX_SHARD_ROUNDS}`);
}
