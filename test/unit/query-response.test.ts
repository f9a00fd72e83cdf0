import { describe, expect, it } from 'vitest';
import { f32Text, toJsonText } from '../../lib/response';
import { formatQueryResponse, statsView, planView, quietLine } from '../../lib/cli/format';
import { buildExecutedResponse } from '../../lib/response/build';
import { aggregateResult } from '../../lib/response/result';
import { operationFields } from '../../lib/response/wire';
import { compileExecution, planAgainstTarget } from '../../lib/plan/compile';
import { validateQuery } from '../../lib/query';
import type { NativeQueryResult } from '../../lib/native';
import type { DatasetInfo, QueryTarget } from '../../lib/types';

describe('JSON serializer', () => {
  it('non-finite numbers become strings, bigint exact digits', () => {
    expect(toJsonText({ a: NaN, b: Infinity, c: -Infinity, d: 1.5, e: 2n ** 64n - 1n })).toBe(
      '{"a":"NaN","b":"Infinity","c":"-Infinity","d":1.5,"e":18446744073709551615}');
    expect(JSON.parse(toJsonText({ e: -(2n ** 63n) })).e).toBe(-9223372036854775808);
  });
  it('typed arrays: Float32Array in shortest f32 form, BigInt arrays exact', () => {
    expect(toJsonText(new Float32Array([0.1, 1, NaN, 3.4028234663852886e38]))).toBe('[0.1,1,"NaN",3.4028235e+38]');
    expect(toJsonText(new BigUint64Array([18446744073709551615n]))).toBe('[18446744073709551615]');
    expect(toJsonText(new Float64Array([0.1, -0]))).toBe('[0.1,0]');
    expect(f32Text(Math.fround(285.7901153564453))).toBe('285.7901');
  });
  it('omits undefined members, escapes strings, pretty-prints objects', () => {
    expect(toJsonText({ a: undefined, b: 'x"\n' })).toBe('{"b":"x\\"\\n"}');
    expect(toJsonText({ a: [1, 2], b: { c: true } }, 2)).toBe('{\n  "a": [1, 2],\n  "b": {\n    "c": true\n  }\n}');
    expect(JSON.parse(toJsonText({ a: [{ b: 1 }, { c: [] }] }, 2))).toEqual({ a: [{ b: 1 }, { c: [] }] });
  });
});

describe('response building and views', () => {
  const ds: DatasetInfo = {
    name: 'a', id: 0, dtype: 'u64', shape: [2, 3], chunkShape: [2, 2], grid: [1, 2], chunkCount: 2,
    codecs: { raw: 2, zstd: 0 }, logicalBytes: 48, storedBytes: 48,
  };
  const target: QueryTarget = { path: '/x/a.tet', datasets: [ds], metadata: {},
    fileExecution: { memory_budget_percent_bps: 0, memory_budget_bytes: 0 }, native: null };
  const stats = { strategy: 0, ioMode: 0, threadsUsed: 2, simd: 'avx2', chunksRead: 2, storedBytesRead: 48, spillBytes: 0, seconds: 0.001 };
  const run = (q: object, result: Partial<NativeQueryResult>) => {
    const planned = planAgainstTarget(target, validateQuery(q));
    const compiled = compileExecution(planned, target, { preview: 4, hostAvailableRamBytes: 1 << 30 });
    return buildExecutedResponse(planned, compiled, {
      reducedShape: [], values: new Float64Array(1), histEdges: new Float64Array(0), covOrder: 0,
      preview: new BigUint64Array([1n, 2n, 3n, 4n]), stats, ...result,
    });
  };

  it('scalar u64 max beyond 2^53 stays exact', () => {
    const r = run({ dataset: 'a', max: [] }, { values: new BigUint64Array([18446744073709551615n]) });
    expect(r.status).toBe('executed');
    expect(r.execution!.operation_max).toBe(18446744073709551615n);
    expect(toJsonText(r)).toContain('"operation_max":18446744073709551615');
    expect(r.execution!.u64_preview).toEqual(new BigUint64Array([1n, 2n, 3n, 4n]));
    expect(r.execution!.memory_strategy).toBe('streaming_fold');
    expect(r.execution!.fold_parallel).toBe(true);
  });
  it('partial results and reduced shape', () => {
    const r = run({ dataset: 'a', all_finite: 0 }, { values: new Uint8Array([1, 0, 1]), reducedShape: [3] });
    expect(r.execution!.operation_reduced_all_finite).toEqual([true, false, true]);
    expect(r.execution!.operation_reduced_shape).toEqual([3]);
    const c = run({ dataset: 'a', count: [1] }, { values: new BigUint64Array([3n, 3n]), reducedShape: [2] });
    expect(c.execution!.operation_reduced_count).toEqual([3, 3]);
    const h = run({ dataset: 'a', histogram: { bins: 2 } }, { values: new BigUint64Array([4n, 2n]), histEdges: new Float64Array([1, 3.5, 6]) });
    expect(h.execution!.operation_histogram_counts).toEqual([4, 2]);
    expect(h.execution!.operation_histogram_edges).toEqual([1, 3.5, 6]);
    const q = run({ dataset: 'a', arg_max: [] }, { values: new BigUint64Array([5n]) });
    expect(q.execution!.operation_argmax_index).toBe(5);
    // issue 14: the reference's quiet keys (dataset bare, status=ok, elements = elements reduced)
    expect(quietLine(q)).toBe('dataset=a status=ok elements=6 op=arg_max argmax_index=5');
  });
  it('stats drops previews and chunk rows; plan drops execution', () => {
    const r = run({ dataset: 'a', sum: [] }, { values: new Float64Array([21]) });
    const s = statsView(r) as { execution: Record<string, unknown>; read_plan: Record<string, unknown> };
    expect(s.execution.operation_sum).toBe(21);
    expect(s.execution.u64_preview).toBeUndefined();
    expect(s.read_plan.chunks).toBeUndefined();
    expect(s.read_plan.chunk_count).toBe(2);
    expect((planView(r) as { execution?: unknown }).execution).toBeUndefined();
    for (const f of ['full', 'json', 'stats', 'plan'] as const) expect(() => JSON.parse(formatQueryResponse(r, f))).not.toThrow();
    expect(formatQueryResponse(r, 'table')).toContain('operation_sum');
  });
});

describe('typed aggregate result and its wire flattening', () => {
  const native = (values: NativeQueryResult['values'], reducedShape: number[] = [], covOrder = 0, histEdges = new Float64Array(0)) =>
    ({ values, reducedShape, covOrder, histEdges, preview: new Float32Array(0), stats: {} }) as unknown as NativeQueryResult;

  it('partial histogram: shape is kept axes then bins; the wire keeps the spec fields', () => {
    const counts = new BigUint64Array([1n, 2n, 3n, 4n, 5n, 6n]);
    const r = aggregateResult({ name: 'histogram', scalar: false, axes: [1], bins: 3 }, native(counts, [2]));
    expect(r).toMatchObject({ op: 'histogram', scalar: false, axes: [1], shape: [2, 3], bins: 3 });
    expect(r.values).toBe(counts);  // no per-element copy
    expect(operationFields(r)).toEqual({
      operation: 'histogram', operation_histogram_bins: 3, operation_reduced_histogram_counts: [1, 2, 3, 4, 5, 6],
      operation_reduced_shape: [2], operation_reduced_axes: [1],
    });
  });
  it('covariance is an order x order matrix; scalar quantile keeps q; big integers stay exact', () => {
    const cov = aggregateResult({ name: 'covariance', scalar: true, axes: [], obsAxis: 0 }, native(new Float64Array([1, 2, 2, 5]), [], 2));
    expect(cov.shape).toEqual([2, 2]);
    expect(operationFields(cov)).toEqual({ operation: 'covariance', operation_covariance: [1, 2, 2, 5], operation_covariance_order: 2 });
    const q = aggregateResult({ name: 'quantile', scalar: true, axes: [0], q: 0.25 }, native(new Float64Array([7.5])));
    expect(operationFields(q)).toEqual({ operation: 'quantile', operation_quantile_q: 0.25, operation_quantile: 7.5 });
    const max = aggregateResult({ name: 'max', scalar: true, axes: [0] }, native(new BigInt64Array([2n ** 62n])));
    expect(operationFields(max).operation_max).toBe(2n ** 62n);
  });
});
