// Planning against a file's catalog: dataset resolution, selection, axes, touched chunks
// (read plan), then — for execution — budget, strategy, I/O mode and the compiled plan.
import { kMaxLength } from 'node:buffer';
import { TetBudgetError, TetError, TetQueryError } from '../errors';
import { DTYPE_SIZE, DTYPE_TAG, type DatasetInfo, type DatasetMetadata, type QueryTarget } from '../types';
import { queryOperation, type QueryDocument, type ReductionName } from '../query/document';
import { DEVICE_TOKEN } from '../query/validate';
import type { CatalogSection, PlannedExecutionFields, ReadPlan } from './types';
import { OP_CODE, type CompiledPlan, type OpName } from './encode';
import type { NativeBinding, NativeDeviceRoute } from '../native';
import { resolveAxes } from './axes';
import { resolveBudget, type ExecutionBudget } from './budget';
import { previewStoredBytes, touchedChunks, touchedChunksAlongAxis, touchedStoredBytes } from './chunks';
import { attrFillValue, datasetMetadata, dimNames } from './metadata';
import { resolveSelection, type ResolvedSelection } from './selection';
import { resolveSpillPath } from './spill';
import { chooseIoMode, chooseStrategy, ioRegime, type IoRegime } from './strategy';
import { applyWhere, whereOf, type EvaluatedWhere } from './where';
import { resolveTensorGroupBy, type SelectedGroups, type TensorGroupBy } from './group';

/** read_plan.chunks lists at most this many entries (chunk_count is always exact). */
export const MAX_LISTED_CHUNKS = 100_000;
/** `auto` device routing skips the GPU below this logical selection size (native tet::device::kAutoMinBytes
 *  decides; this mirrors it for documentation and tests). */
export const AUTO_DEVICE_MIN_BYTES = 64 * 1024 * 1024;

export interface ResolvedOperation {
  name: ReductionName;
  /** True for the `[]` form: one value over the whole selection. */
  scalar: boolean;
  /** Reduced axes (ascending); every axis for scalar ops; empty for covariance/correlation. */
  axes: number[];
  q?: number;
  bins?: number;
  range?: { min: number; max: number };
  fill?: number;
  obsAxis?: number;
}

/** A query resolved against a catalog: the domain plan (lib/response turns it into a response). */
export interface PlannedQuery {
  doc: QueryDocument;
  catalog: CatalogSection;
  /** Null when the dataset is not in the catalog. */
  readPlan: ReadPlan | null;
  /** Null when the dataset is not in the catalog (response status 'unmatched'). */
  dataset: DatasetInfo | null;
  meta: DatasetMetadata;
  /** The selection, narrowed by the `where` when there is one (an axis may then have count 0). */
  selection: ResolvedSelection | null;
  operation: ResolvedOperation | null;
  /** The evaluated `where` (positions per filtered axis, where_plan), when the query has one. */
  where?: EvaluatedWhere;
  /** group_by: the key's axis and table (its axis is in operation.axes), when the query has one. */
  groupBy?: TensorGroupBy;
  /** group_by: the groups present among the selected positions (lib/run fills it before compiling). */
  groups?: SelectedGroups;
}

/** Bytes per output cell a grouped fold holds (its state and the value), for the budget check. */
const GROUP_CELL_BYTES = 40;

/** Whether a grouped reduction runs per group (tier C: one selection per group), not as one grouped fold. */
export function groupsRunSeparately(op: ResolvedOperation): boolean {
  return op.name === 'median' || op.name === 'quantile';
}

function resolveOperation(doc: QueryDocument, ds: DatasetInfo, meta: DatasetMetadata): ResolvedOperation | null {
  const op = queryOperation(doc);
  if (!op) return null;
  const ndim = ds.shape.length;
  const at = `$.${op.name}`;
  if (op.name === 'covariance' || op.name === 'correlation') {
    if (ndim !== 2) {
      throw new TetQueryError('TET_QUERY_UNSUPPORTED',
        `query ${at}: expected a rank-2 dataset (observations x variables), found rank ${ndim}`);
    }
    const axes = resolveAxes(op.axes ?? [0], ndim, meta, at);
    if (axes.length !== 1) {
      throw new TetQueryError('TET_QUERY_INVALID', `query ${at}: expected exactly one observation axis, found ${axes.length}`);
    }
    return { name: op.name, scalar: true, axes: [], obsAxis: axes[0] };
  }
  const scalar = op.axes === null;
  const axes = scalar ? ds.shape.map((_, a) => a) : resolveAxes(op.axes!, ndim, meta, at);
  const out: ResolvedOperation = { name: op.name, scalar, axes };
  if (op.q !== undefined) out.q = op.q;
  if (op.name === 'median') out.q = 0.5;
  if (op.bins !== undefined) out.bins = op.bins;
  if (op.range) out.range = op.range;
  if (op.name === 'null_count') {
    const fill = op.fill ?? attrFillValue(meta);
    if (fill === undefined) {
      throw new TetQueryError('TET_QUERY_NO_FILL_VALUE',
        `query ${at}: expected a fill value ({"fill": <number>} or a _FillValue / missing_value / fill_value attr), found none`);
    }
    out.fill = fill;
  }
  return out;
}

function catalogSection(target: QueryTarget, name: string, ds: DatasetInfo | null, meta: DatasetMetadata): CatalogSection {
  const base: CatalogSection = {
    file: target.path,
    dataset: name,
    dataset_resolution: ds ? 'matched' : 'unmatched',
    matched: ds !== null,
    available_datasets: target.datasets.map((d) => d.name),
    chunk_index_rows: target.datasets.reduce((s, d) => s + d.chunkCount, 0),
  };
  if (!ds) return base;
  const elements = ds.shape.reduce((p, n) => p * n, 1);
  const names = dimNames(meta, ds.shape.length);
  return {
    ...base,
    dataset_id: ds.id,
    dataset_index: ds.id,
    dtype: ds.dtype,
    shape: ds.shape.slice(),
    chunk_shape: ds.chunkShape.slice(),
    grid: ds.grid.slice(),
    chunk_count: ds.chunkCount,
    codecs: { ...ds.codecs },
    logical_bytes: ds.logicalBytes,
    stored_bytes: ds.storedBytes,
    ...(names ? { dim_names: names.slice() } : {}),
    file_execution: { ...target.fileExecution },
    [`dataset_${ds.dtype}_bytes`]: DTYPE_SIZE[ds.dtype] * elements,
  };
}

/** Stored bytes of the touched chunks: the dataset's when every chunk is touched, the raw tile
 *  sizes without zstd chunks, else from the chunk index (target.chunkStoredBytes). */
function storedBytesOf(target: QueryTarget, ds: DatasetInfo, perAxis: Parameters<typeof touchedStoredBytes>[0],
  touched: number): number {
  if (touched === ds.chunkCount) return ds.storedBytes;
  const perChunk = ds.codecs.zstd > 0 ? target.chunkStoredBytes?.(ds.id) : undefined;
  return touchedStoredBytes(perAxis, ds.shape, ds.chunkShape, DTYPE_SIZE[ds.dtype], perChunk);
}

/**
 * Resolves the document against the target's catalog; no execution, no host probing. A query
 * with a `where` needs it evaluated first (lib/run/where.ts: `where`), which narrows the selection.
 */
export function planAgainstTarget(target: QueryTarget, doc: QueryDocument,
  chunkListLimit = MAX_LISTED_CHUNKS, where?: EvaluatedWhere): PlannedQuery {
  if (doc.table !== undefined) {
    throw new TetQueryError('TET_INTERNAL', 'a table query reached the dataset planner (lib/run routes it to lib/plan/table.ts)');
  }
  if (doc.reductions !== undefined) {
    throw new TetError('TET_INTERNAL', 'a "reductions" document reached the planner whole (lib/run/reductions.ts plans it per op)');
  }
  const ds = target.datasets.find((d) => d.name === doc.dataset) ?? null;
  const meta = ds ? datasetMetadata(target.metadata, ds.name) : {};
  const catalog = catalogSection(target, doc.dataset!, ds, meta);
  if (!ds) {
    return { doc, catalog, readPlan: null, dataset: null, meta, selection: null, operation: null };
  }
  if (whereOf(doc).length > 0 && !where) {
    throw new TetError('TET_INTERNAL', 'planAgainstTarget: a query with a where needs its evaluated where (lib/run/where.ts)');
  }
  const boxed = resolveSelection(doc.selection, ds.shape, meta);
  const selection = where ? applyWhere(boxed, where, ds.shape) : boxed;
  const operation = resolveOperation(doc, ds, meta);
  const groupBy = resolveTensorGroupBy(doc, operation?.name ?? null, ds, meta, () => target.tables ?? []);
  if (groupBy && operation) {
    // the group axis is always reduced within each group; `[]` reduces every other axis too
    operation.axes = [...new Set([...operation.axes, groupBy.axis])].sort((x, y) => x - y);
    operation.scalar = false;
  }
  const touched = touchedChunks(selection.axes, ds.shape, ds.chunkShape, chunkListLimit);
  const readPlan: ReadPlan = {
    dataset: ds.name,
    dataset_id: ds.id,
    dtype: ds.dtype,
    selection: selection.axes.map((r) => (r.indices
      ? { start: r.start, stop: r.stop, step: r.step, count: r.count, index_list: true as const }
      : { ...r })),
    logical_selection_shape: selection.shape.slice(),
    logical_element_count: selection.elementCount,
    logical_selection_bytes: selection.elementCount * DTYPE_SIZE[ds.dtype],
    chunk_touch_policy: selection.indexed ? 'index_list'
      : selection.unitStep ? 'dense_half_open_unit_step' : 'strided_half_open',
    chunk_count: touched.total,
    chunks_per_axis: touched.perAxis.map((l) => l.length),
    chunks: touched.chunks,
    chunks_truncated: touched.total > touched.chunks.length,
    total_stored_bytes: storedBytesOf(target, ds, touched.perAxis, touched.total),
    ...(where ? { where_plan: where.plan } : {}),
  };
  return { doc, catalog, readPlan, dataset: ds, meta, selection, operation, ...(where ? { where } : {}), ...(groupBy ? { groupBy } : {}) };
}

export interface ExecutionOptions {
  /** Preview elements to return (0 = none). */
  preview: number;
  spillAllow?: readonly string[];
  hostAvailableRamBytes: number;
  /** CLI --device (overrides execution.device). */
  device?: string;
  /** The routing decision for a device token: the native addon's (tet/device.h; lib/run passes
   *  it), or a test's stand-in. Needed when a device is requested. */
  routeDevice?: DeviceRouter;
  env?: NodeJS.ProcessEnv;
}

/** Native device routing (NativeBinding.routeDevice); plan/ does not load the addon itself. */
export type DeviceRouter = (req: Parameters<NativeBinding['routeDevice']>[0]) => NativeDeviceRoute;

export interface CompiledExecution {
  plan: CompiledPlan;
  budget: ExecutionBudget;
  regime: IoRegime;
  /** Execution fields known before running (strategy, budget, device routing, ...). */
  fields: PlannedExecutionFields;
  /** Stored bytes of the tiles the preview reads (for execution.total_bytes_read_from_disk);
   *  computed on demand (zstd tiles need the chunk index). */
  previewStoredBytes?: () => number;
}

type DeviceFields = Pick<PlannedExecutionFields,
  'device_requested' | 'device_used' | 'device_fallback_reason' | 'device_gpu_pipeline' | 'device_gpu_multi'>;

/**
 * Device routing: the token is checked against the schema here, the decision is native's
 * (native/include/tet/device.h: the loaded CUDA module, its devices and capabilities), and a GPU
 * decision travels in the plan's DEVICE section.
 */
function deviceRouting(requested: string | undefined, op: ResolvedOperation | null, ds: DatasetInfo,
  logicalBytes: number, chunks: number, outElements: number, router: DeviceRouter | undefined):
  { fields: DeviceFields; device?: CompiledPlan['device'] } {
  if (!requested) return { fields: {} };
  if (!DEVICE_TOKEN.test(requested)) {
    throw new TetQueryError('TET_QUERY_INVALID',
      `device: expected cpu, auto, metal, cuda, cuda:N, cuda:multi, rocm, rocm:N or rocm:multi, found ${JSON.stringify(requested)}`);
  }
  if (!router) throw new TetError('TET_INTERNAL', `device "${requested}": compileExecution needs options.routeDevice`);
  const r = router({
    token: requested, op: op ? OP_CODE[op.name as OpName] : 0, dtype: DTYPE_TAG[ds.dtype], scalar: op?.scalar ?? true,
    logicalBytes, chunks, outElements,
  });
  const fields: DeviceFields = {
    device_requested: requested, device_used: r.used, ...(r.reason ? { device_fallback_reason: r.reason } : {}),
    ...(requested !== 'cpu' ? { device_gpu_pipeline: r.pipeline, device_gpu_multi: r.multi } : {}),
  };
  return { fields, ...(r.gpu ? { device: { kind: 'gpu' as const, ordinal: r.ordinal } } : {}) };
}

/** Previews up to this many elements (the default preview) are not counted against the budget. */
const PREVIEW_OVERHEAD_ELEMENTS = 64;

/** Budget, strategy, I/O mode and the compiled native plan for a matched query. */
export function compileExecution(planned: PlannedQuery, target: QueryTarget, opts: ExecutionOptions): CompiledExecution {
  const ds = planned.dataset;
  const sel = planned.selection;
  const rp = planned.readPlan;
  if (!ds || !sel || !rp) throw new TetQueryError('TET_QUERY_UNKNOWN_DATASET', `dataset "${planned.doc.dataset}" is not in the catalog`);
  const op = planned.operation;
  const doc = planned.doc;
  const logicalBytes = rp.logical_selection_bytes;
  const budget = resolveBudget(doc.execution, target.fileExecution, opts.hostAvailableRamBytes);
  const strategy = chooseStrategy(op?.name ?? null, doc.spill !== undefined, logicalBytes, budget.bytes);
  const regime = ioRegime(logicalBytes, budget.hostAvailableRamBytes);
  const ioMode = chooseIoMode({
    strategy, regime, chunkCount: rp.chunk_count, foldParallel: doc.execution?.fold_parallel,
    fullDenseRaw: sel.full && ds.codecs.zstd === 0,
  });
  const spillPath = strategy === 'mmap_spill'
    ? resolveSpillPath(doc.spill!, target.path, opts.spillAllow ?? [], opts.env) : undefined;
  const preview = Math.max(0, Math.min(Math.floor(opts.preview), sel.elementCount));
  // The preview is a dense allocation of its own (f16 widens to f32): beyond the default size
  // (a fixed few hundred bytes, like any per-query overhead) it must fit the budget, so a tiny
  // file budget (conformance file_exec_tiny_budget.tet: 64 bytes) still runs with the default.
  const previewBytes = preview * (ds.dtype === 'f16' ? 4 : DTYPE_SIZE[ds.dtype]);
  if ((preview > PREVIEW_OVERHEAD_ELEMENTS && previewBytes > budget.bytes) || preview > kMaxLength) {
    throw new TetBudgetError('TET_BUDGET_EXCEEDED',
      `the preview of ${preview} elements needs ${previewBytes} bytes but the memory budget is ${budget.bytes} bytes ` +
      `(and a typed array holds at most ${kMaxLength} elements); ` +
      'ask for a smaller preview or raise execution.memory_budget_bytes / memory_budget_percent');
  }
  const kept = op ? sel.shape.filter((_, a) => !op.axes.includes(a)) : [];
  const groups = planned.groups;
  const outCells = kept.reduce((p, n) => p * n, 1) * (groups ? groups.keys.length : 1);
  if (groups && outCells * GROUP_CELL_BYTES > budget.bytes) {
    throw new TetBudgetError('TET_BUDGET_EXCEEDED',
      `group_by: ${groups.keys.length} groups x ${outCells / Math.max(1, groups.keys.length)} output cells need about ` +
      `${outCells * GROUP_CELL_BYTES} bytes of group states but the memory budget is ${budget.bytes} bytes; ` +
      'group by a coarser key (bucket / width), keep fewer axes, or raise execution.memory_budget_bytes');
  }
  const routing = deviceRouting(opts.device ?? doc.execution?.device, op, ds, logicalBytes, rp.chunk_count,
    outCells, opts.routeDevice);
  const group = groups && planned.groupBy && op && !groupsRunSeparately(op)
    ? { axis: planned.groupBy.axis, groups: groups.keys.length, ids: groups.ids } : undefined;
  const plan: CompiledPlan = {
    datasetId: ds.id,
    start: sel.axes.map((r) => r.start),
    step: sel.axes.map((r) => r.step),
    count: sel.axes.map((r) => r.count),
    ...(sel.indexed ? { indices: sel.axes.map((r) => r.indices ?? null) } : {}),
    op: (op?.name ?? 'none') as OpName,
    reduceAxes: op ? op.axes : [],
    strategy,
    ioMode,
    previewMax: preview,
    ...(op?.q !== undefined ? { q: op.q } : {}),
    ...(op?.bins !== undefined ? { bins: op.bins } : {}),
    ...(op?.range ? { histRange: op.range } : {}),
    ...(op?.fill !== undefined ? { fill: op.fill } : {}),
    ...(op?.obsAxis !== undefined ? { obsAxis: op.obsAxis } : {}),
    ...(doc.execution?.threads ? { threads: doc.execution.threads } : {}),
    ...(spillPath ? { spillPath } : {}),
    ...(routing.device ? { device: routing.device } : {}),
    ...(group ? { group } : {}),
  };
  const previewTiles = () => {
    const perAxis = sel.axes.map((r, a) => touchedChunksAlongAxis(r, ds.shape[a], ds.chunkShape[a]));
    const perChunk = ds.codecs.zstd > 0 ? target.chunkStoredBytes?.(ds.id) : undefined;
    return previewStoredBytes(perAxis, ds.shape, ds.chunkShape, DTYPE_SIZE[ds.dtype], preview, perChunk);
  };
  return {
    plan,
    budget,
    regime,
    previewStoredBytes: previewTiles,
    fields: {
      memory_budget_bytes: budget.bytes,
      memory_budget_source: budget.source,
      ...(budget.hostAvailableRamBytes !== null ? { host_available_ram_bytes: budget.hostAvailableRamBytes } : {}),
      logical_selection_bytes: logicalBytes,
      ...(ds.dtype === 'f32' ? { logical_selection_f32_bytes: 4 * sel.elementCount } : {}),
      io_regime: regime,
      preview_max: preview,
      ...routing.fields,
    },
  };
}
