// Evaluating a tensor query's `group_by` before compiling (lib/plan/group.ts resolves it): the
// axis table's rows (the axis positions) grouped by the native table query — the same keys,
// buckets, widths and key order as table queries — off the JS thread and cancellable; a labels
// table is grouped in TS. Then narrowed to the groups present among the selected positions.
import { binding } from '../binding';
import { runNative } from '../engine';
import { TetCancelledError, TetError } from '../errors';
import type { NativeFileHandle } from '../native';
import type { PlannedQuery } from '../plan/compile';
import { OP_CODE } from '../plan/encode';
import { axisPositions, labelGroups, selectedGroups, type AxisGroups, type SelectedGroups, type TensorGroupBy } from '../plan/group';
import { nativeGroupKey } from '../plan/table';
import { columnValues } from '../response/table';

/** Every position's group along the group axis. */
export async function axisGroups(g: TensorGroupBy, planned: PlannedQuery, signal: AbortSignal | undefined,
  handle: NativeFileHandle): Promise<AxisGroups> {
  if (g.source.kind === 'labels') return labelGroups(g.source.labels, g.transform);
  if (signal?.aborted) throw new TetCancelledError('TET_CANCELLED', 'the query was cancelled');
  const exec = planned.doc.execution ?? {};
  const { table, column } = g.source;
  const r = await runNative(signal, (token) => binding().fileTableQuery(handle, {
    table: table.name, where: [], mode: 'reduce', op: OP_CODE.count, countRows: true,
    groupBy: [nativeGroupKey(column.name, g.transform)], rowGroups: true,
    ...(exec.threads !== undefined ? { threads: exec.threads } : {}),
    ...(exec.memory_budget_bytes !== undefined ? { memoryBudgetBytes: exec.memory_budget_bytes } : {}),
  }, token));
  const length = planned.dataset!.shape[g.axis];
  if (!r.groupKeys || !r.rowGroups || r.rowGroups.length !== length) {
    throw new TetError('TET_INTERNAL', `group_by: axis table ${JSON.stringify(table.name)} gave ${r.rowGroups?.length ?? 0} row groups for an axis of ${length}`);
  }
  return { keys: columnValues(r.groupKeys[0], column), rowGroups: r.rowGroups };
}

/** The groups present among the planned selection of the group axis. */
export async function groupsOf(planned: PlannedQuery, signal: AbortSignal | undefined, handle: NativeFileHandle): Promise<SelectedGroups> {
  const g = planned.groupBy!;
  const all = await axisGroups(g, planned, signal, handle);
  return selectedGroups(all, axisPositions(planned.selection!.axes[g.axis]));
}
