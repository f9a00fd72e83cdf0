// Evaluating a query's `where` before planning (lib/plan/where.ts resolves it; this runs the
// native tableWhere, one call per stored axis table, off the JS thread and cancellable).
import { binding } from '../binding';
import { runNative } from '../engine';
import { TetCancelledError, toTetError } from '../errors';
import type { NativeFileHandle } from '../native';
import { evaluateWhere, evaluateWhereSync, whereRequest, type EvaluatedWhere } from '../plan/where';
import type { QueryDocument } from '../query/document';
import type { QueryTarget } from '../types';

/** The query's evaluated where (undefined without one, or when the dataset is not matched). */
export async function where(target: QueryTarget, doc: QueryDocument, signal?: AbortSignal,
  handle = target.native as NativeFileHandle): Promise<EvaluatedWhere | undefined> {
  const req = whereRequest(target, doc);
  if (!req) return undefined;
  return evaluateWhere(req, (table, wire) => {
    if (signal?.aborted) throw new TetCancelledError('TET_CANCELLED', 'the query was cancelled');
    return runNative(signal, (token) => binding().tableWhere(handle, table, wire, token));
  });
}

/** The same on the JS thread (planQuery). */
export function whereSync(target: QueryTarget, doc: QueryDocument): EvaluatedWhere | undefined {
  const req = whereRequest(target, doc);
  if (!req) return undefined;
  const handle = target.native as NativeFileHandle;
  return evaluateWhereSync(req, (table, wire) => {
    try {
      return binding().tableWhereSync(handle, table, wire);
    } catch (err) {
      throw toTetError(err);
    }
  });
}
