// The TS op tables are generated from native/fold/ops.def: the committed files must be up to
// date, and the generated tables must keep the wire codes and op sets the plan and query layers
// have always used (values written out here, independent of the generator).
import { ROOT } from '../support/paths';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OP_CODE } from '../../lib/plan/encode';
import { MATERIALIZE_OPS, PARAM_OPS, SIMPLE_OPS } from '../../lib/query/document';
import { PARTIAL_FIELD, SCALAR_FIELD } from '../../lib/response/wire';

const root = ROOT;

describe('ops.def generated tables', () => {
  it('lib/ops.generated.ts and the schema op keys are up to date with ops.def', () => {
    expect(() => execFileSync(process.execPath, [join(root, 'scripts', 'gen-ops.mjs'), '--check'], { stdio: 'pipe' }))
      .not.toThrow();
  });

  it('keeps the plan wire codes', () => {
    expect(OP_CODE).toEqual({
      none: 0, sum: 1, mean: 2, min: 3, max: 4, count: 5, var: 6, std: 7, product: 8,
      norm_l1: 9, norm_l2: 10, all_finite: 11, any_nan: 12, any_inf: 13, arg_min: 14, arg_max: 15,
      nan_count: 16, inf_count: 17, null_count: 18, nan_mean: 19, nan_std: 20,
      median: 21, quantile: 22, histogram: 23, covariance: 24, correlation: 25,
    });
  });

  it('keeps the document op sets and response fields', () => {
    expect([...SIMPLE_OPS]).toEqual([
      'sum', 'mean', 'min', 'max', 'count', 'var', 'std', 'product', 'norm_l1', 'norm_l2',
      'all_finite', 'any_nan', 'any_inf', 'arg_min', 'arg_max', 'nan_count', 'inf_count',
      'nan_mean', 'nan_std', 'median',
    ]);
    expect([...PARAM_OPS]).toEqual(['null_count', 'quantile', 'histogram', 'covariance', 'correlation']);
    expect([...MATERIALIZE_OPS].sort()).toEqual(['correlation', 'covariance', 'histogram', 'median', 'quantile']);
    expect(SCALAR_FIELD.count).toBe('operation_element_count');
    expect(SCALAR_FIELD.arg_min).toBe('operation_argmin_index');
    expect('histogram' in SCALAR_FIELD).toBe(false);
    expect(PARTIAL_FIELD.histogram).toBe('operation_reduced_histogram_counts');
    expect('covariance' in PARTIAL_FIELD).toBe(false);
    expect(Object.keys(SCALAR_FIELD)).toHaveLength(22);
    expect(Object.keys(PARTIAL_FIELD)).toHaveLength(23);
  });
});
