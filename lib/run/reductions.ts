// `reductions` (extension, docs/queries.md): several streaming reductions of one selection,
// answered from one pass. Each op is planned as the single-reduction document it stands for (so
// every check and error is that op's own), the first op's plan carries the others (AGG entries
// 2..n, CompiledPlan.more), native folds every op from each loaded unit, and the response holds
// each op's fields under its usual name, with `operation: "reductions"` and `operations`.
import { binding } from '../binding';
import { runCompiled } from '../engine';
import { TetCancelledError, TetQueryError } from '../errors';
import type { NativeFileHandle, NativeQueryResult } from '../native';
import { planAgainstTarget, type CompiledExecution, type PlannedQuery } from '../plan/compile';
import type { OpName } from '../plan/encode';
import { queryReductions, type QueryDocument } from '../query/document';
import { buildEmptyResponse, buildExecutedResponse, plannedResponse, resultFields } from '../response/build';
import { emptyResult, nullArgFields } from '../response/empty';
import type { ExecutionSection, QueryResponse } from '../response/types';
import type { QueryTarget } from '../types';
import { where } from './where';
import type { RunQueryOptions } from './run';

/** The single-reduction document `op` of a `reductions` document stands for (default: every axis). */
function opDoc(doc: QueryDocument, op: string, axes: unknown = []): QueryDocument {
  const { reductions: _r, ...base } = doc;
  return { ...base, [op]: axes } as QueryDocument;
}

/** The single-reduction document of a `reductions` document's first op (planning without running). */
export function firstReductionDoc(doc: QueryDocument): QueryDocument {
  return opDoc(doc, queryReductions(doc)!.ops[0]);
}

/** Runs a validated document with `reductions` (compileForRun passed in: no import cycle). */
export async function runReductions(target: QueryTarget, doc: QueryDocument, opts: RunQueryOptions,
  compileForRun: (p: PlannedQuery) => CompiledExecution): Promise<QueryResponse> {
  const r = queryReductions(doc)!;
  const handle = target.native as NativeFileHandle;
  const evaluated = doc.where !== undefined ? await where(target, doc, opts.signal, handle) : undefined;
  const plan = (op: string, axes?: unknown) => planAgainstTarget(target, opDoc(doc, op, axes), undefined, evaluated);
  if (r.axes !== null) {
    // The axis spec as written (its errors name $.<op>); every axis reduced is the scalar form.
    const p = plan(r.ops[0], r.axes);
    const ndim = p.dataset?.shape.length ?? 0;
    if (p.dataset && p.operation!.axes.length !== ndim) {
      throw new TetQueryError('TET_QUERY_UNSUPPORTED',
        `query $.reductions: reduces ${p.operation!.axes.length} of ${ndim} axes; "reductions" runs over every axis ` +
        '(a scalar per reduction) in this version; for a partial reduction write one reduction key per query');
    }
  }
  // One planned query per op: {...doc, [op]: []} (each op's own checks and errors).
  const planned = r.ops.map((op) => plan(op));
  const first = planned[0];
  if (!first.dataset || opts.execute === false) return { ...plannedResponse(first), query: doc };
  if (opts.signal?.aborted) throw new TetCancelledError('TET_CANCELLED', 'the query was cancelled');
  const compiled = compileForRun(first);
  compiled.plan.more = r.ops.slice(1) as OpName[];
  if (compiled.plan.device?.kind === 'gpu') {
    // The device modules fold one op per plan: the CPU answers, and the response says so.
    delete compiled.plan.device;
    compiled.fields = { ...compiled.fields, device_used: 'cpu', device_fallback_reason: 'gpu_unsupported_op' };
  }
  // The first op's response carries the execution section; the others add their result fields.
  const empty = first.selection!.elementCount === 0;
  let results: NativeQueryResult[];
  if (empty) {
    results = planned.map((p) => emptyResult(p, compiled));
  } else {
    const native = binding();
    const result = await runCompiled(compiled, opts.signal, (bytes, token) => native.execute(handle, bytes, token), opts.onProgress);
    const more = result.moreValues ?? [];
    if (more.length !== r.ops.length - 1) {
      throw new TetQueryError('TET_INTERNAL', `reductions: native returned ${more.length + 1} results for ${r.ops.length} reductions`);
    }
    results = [result, ...more.map((values) => ({ ...result, values }))];
  }
  const out = empty ? buildEmptyResponse(first, compiled) : buildExecutedResponse(first, compiled, results[0]);
  const execution = out.execution as ExecutionSection & Record<string, unknown>;
  for (let i = 1; i < planned.length; i++) {
    const fields = resultFields(planned[i], results[i]) as Record<string, unknown>;
    if (empty) nullArgFields(fields, r.ops[i], true);
    for (const [k, v] of Object.entries(fields)) if (!(k in execution)) execution[k] = v;
  }
  execution.operation = 'reductions';
  execution.operations = r.ops.slice();
  return { ...out, query: doc };
}
