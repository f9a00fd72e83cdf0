// Pulls the case's result out of a tetration QueryResponse (SDK object or CLI --format json).
const SCALAR_FIELD = {
  sum: 'operation_sum', mean: 'operation_mean', min: 'operation_min', max: 'operation_max',
  var: 'operation_var', std: 'operation_std', arg_max: 'operation_argmax_index',
  median: 'operation_median', quantile99: 'operation_quantile',
};

export function tetResult(c, response) {
  const ex = response?.execution;
  if (!ex) throw new Error(`response has no execution section (status ${response?.status})`);
  if (c.op === 'minmax') {
    if (ex.operation_min === undefined || ex.operation_max === undefined) throw new Error('response has no operation_min / operation_max');
    return { vector: [Number(ex.operation_min), Number(ex.operation_max)] };
  }
  if (c.op === 'mean_axis0' || c.op === 'mean_axis1') {
    const v = ex.operation_reduced_mean;
    if (!v) throw new Error('response has no operation_reduced_mean');
    return { vector: Array.from(v, Number) };
  }
  const field = SCALAR_FIELD[c.op];
  const v = ex[field];
  if (v === undefined) throw new Error(`response has no ${field}`);
  return Number(v);
}
