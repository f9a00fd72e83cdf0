import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { TetError, TetQueryError } from '../../lib/errors';
import { parseQueryText, validateQuery, queryJsonSchema, detectQueryFormat } from '../../lib/query';
import { queryOperation } from '../../lib/query/document';
import { textNestingDepth } from '../../lib/query/parse';
import { compileAll, validate } from '../../lib/query/generated/validate.js';

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(TetQueryError);
    return (e as TetQueryError).code;
  }
  throw new Error('expected a TetQueryError');
}

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected an error');
}

describe('format detection', () => {
  it('leading { is JSON, anything else TOML', () => {
    expect(detectQueryFormat('  {"dataset":"a"}')).toBe('json');
    expect(detectQueryFormat('\uFEFF{"dataset":"a"}')).toBe('json');
    expect(detectQueryFormat('dataset = "a"')).toBe('toml');
  });
});

describe('JSON and TOML forms of the spec examples are the same document', () => {
  const pairs: [string, string][] = [
    ['{"dataset":"temperature","mean":[]}', 'dataset = "temperature"\nmean = []'],
    ['{"dataset":"temperature","mean":0}', 'dataset = "temperature"\nmean = 0'],
    ['{"dataset":"temperature","sum":[0,1]}', 'dataset = "temperature"\nsum = [0, 1]'],
    ['{"dataset":"temperature","quantile":{"q":0.95,"axis":0}}', 'dataset = "temperature"\n[quantile]\nq = 0.95\naxis = 0'],
    ['{"dataset":"temperature","histogram":{"bins":10,"min":0,"max":1}}', 'dataset = "temperature"\nhistogram = { bins = 10, min = 0, max = 1 }'],
    ['{"dataset":"temperature","execution":{"memory_budget_percent":40}}', 'dataset = "temperature"\n[execution]\nmemory_budget_percent = 40'],
    ['{"dataset":"temperature","spill":"slice.bin"}', 'dataset = "temperature"\nspill = "slice.bin"'],
    ['{"dataset":"temperature","mean":[],"selection":[{"start":0,"stop":100,"step":2}]}',
      'dataset = "temperature"\nmean = []\n[[selection]]\nstart = 0\nstop = 100\nstep = 2'],
    ['{"dataset":"t","null_count":{"fill":99,"axis":0}}', 'dataset = "t"\nnull_count = { fill = 99, axis = 0 }'],
    ['{"dataset":"t","covariance":{"axis":0}}', 'dataset = "t"\n[covariance]\naxis = 0'],
  ];
  it.each(pairs)('%s', (json, toml) => {
    const a = parseQueryText(json);
    const b = parseQueryText(toml);
    expect(b).toEqual(a);
    expect(a).toEqual(JSON.parse(json));
  });
});

describe('operation normalization', () => {
  it('maps the wire forms to axis tokens', () => {
    expect(queryOperation(parseQueryText('{"dataset":"a","mean":[]}'))).toEqual({ name: 'mean', axes: null });
    expect(queryOperation(parseQueryText('{"dataset":"a","mean":0}'))).toEqual({ name: 'mean', axes: [0] });
    expect(queryOperation(parseQueryText('{"dataset":"a","mean":"time"}'))).toEqual({ name: 'mean', axes: ['time'] });
    expect(queryOperation(parseQueryText('{"dataset":"a","sum":[0,"1"]}'))).toEqual({ name: 'sum', axes: [0, '1'] });
    expect(queryOperation(parseQueryText('{"dataset":"a","quantile":{"q":0.25,"axes":[1]}}')))
      .toEqual({ name: 'quantile', axes: [1], q: 0.25 });
    expect(queryOperation(parseQueryText('{"dataset":"a","histogram":{"bins":4,"min":-1,"max":2}}')))
      .toEqual({ name: 'histogram', axes: null, bins: 4, range: { min: -1, max: 2 } });
    expect(queryOperation(parseQueryText('{"dataset":"a","correlation":1}'))).toEqual({ name: 'correlation', axes: [1] });
    expect(queryOperation(parseQueryText('{"dataset":"a","covariance":{}}'))).toEqual({ name: 'covariance', axes: [0] });
    expect(queryOperation(parseQueryText('{"dataset":"a","null_count":{"fill":-9}}'))).toEqual({ name: 'null_count', axes: null, fill: -9 });
    expect(queryOperation(parseQueryText('{"dataset":"a"}'))).toBeNull();
  });
});

describe('rejections (cases.json query_error / bad_query shapes)', () => {
  const bad: [string, unknown, string][] = [
    ['two reduction keys', { dataset: 't', sum: [], mean: [] }, 'TET_QUERY_MULTIPLE_REDUCTIONS'],
    ['nested operation', { dataset: 't', operation: { sum: [] } }, 'TET_QUERY_NESTED_OPERATION'],
    ['nested output', { dataset: 't', output: { spill: 'x' } }, 'TET_QUERY_NESTED_OPERATION'],
    ['unknown top-level key', { dataset: 't', sum: [], frobnicate: 1 }, 'TET_QUERY_UNKNOWN_KEY'],
    ['quantile q > 1', { dataset: 't', quantile: { q: 1.5 } }, 'TET_QUERY_INVALID'],
    ['quantile without q', { dataset: 't', quantile: { axis: 0 } }, 'TET_QUERY_MISSING_KEY'],
    ['histogram min without max', { dataset: 't', histogram: { bins: 4, min: 0 } }, 'TET_QUERY_INVALID'],
    ['histogram min >= max', { dataset: 't', histogram: { bins: 4, min: 1, max: 1 } }, 'TET_QUERY_INVALID'],
    ['histogram bins 0', { dataset: 't', histogram: { bins: 0 } }, 'TET_QUERY_INVALID'],
    ['empty dataset', { dataset: '', sum: [] }, 'TET_QUERY_INVALID'],
    ['blank dataset', { dataset: '   ', sum: [] }, 'TET_QUERY_INVALID'],
    ['missing dataset', { sum: [] }, 'TET_QUERY_MISSING_KEY'],
    ['step 0', { dataset: 't', selection: [{ start: 0, stop: 5, step: 0 }] }, 'TET_QUERY_INVALID'],
    ['negative start', { dataset: 't', selection: [{ start: -1, stop: 4 }] }, 'TET_QUERY_INVALID'],
    ['start == stop', { dataset: 't', selection: [{ start: 3, stop: 3 }] }, 'TET_QUERY_SELECTION'],
    ['start > stop', { dataset: 't', selection: [{ start: 9, stop: 4 }] }, 'TET_QUERY_SELECTION'],
    ['start and start_label', { dataset: 't', selection: [{ start: 1, start_label: 'a' }] }, 'TET_QUERY_SELECTION'],
    ['unknown selection key', { dataset: 't', selection: [{ begin: 1 }] }, 'TET_QUERY_UNKNOWN_KEY'],
    ['rank 9 selection', { dataset: 't', selection: new Array(9).fill(null) }, 'TET_QUERY_INVALID'],
    ['negative axis', { dataset: 't', sum: -1 }, 'TET_QUERY_INVALID'],
    ['float axis', { dataset: 't', sum: 1.5 }, 'TET_QUERY_INVALID'],
    ['layout_version 2', { dataset: 't', layout_version: 2 }, 'TET_QUERY_INVALID'],
    ['axis and axes', { dataset: 't', quantile: { q: 0.5, axis: 0, axes: [1] } }, 'TET_QUERY_INVALID'],
    ['both budget percents', { dataset: 't', execution: { memory_budget_percent: 10, memory_budget_percent_bps: 100 } }, 'TET_QUERY_INVALID'],
    ['bad device', { dataset: 't', execution: { device: 'tpu' } }, 'TET_QUERY_INVALID'],
    ['spill with reduction', { dataset: 't', spill: 'a.bin', sum: [] }, 'TET_QUERY_INVALID'],
    ['array document', [1, 2], 'TET_QUERY_NOT_OBJECT'],
    ['null document', null, 'TET_QUERY_NOT_OBJECT'],
    ['too long dataset name', { dataset: 'x'.repeat(1025) }, 'TET_QUERY_INVALID'],
    ['too long label', { dataset: 't', selection: [{ start_label: 'x'.repeat(4097) }] }, 'TET_QUERY_INVALID'],
    ['control chars in axis name', { dataset: 't', mean: 'a\u0001b' }, 'TET_QUERY_INVALID'],
  ];
  it.each(bad)('%s', (_name, value, code) => {
    expect(codeOf(() => validateQuery(value))).toBe(code);
  });

  it('messages name the JSON path, the expectation and what was found', () => {
    const m = messageOf(() => validateQuery({ dataset: 't', selection: [{}, { step: 0 }] }));
    expect(m).toContain('$.selection[1].step');
    expect(m).toContain('positive integer');
    expect(m).toContain('found 0');
    const u = messageOf(() => validateQuery({ dataset: 't', frobnicate: 1 }));
    expect(u).toContain('"frobnicate"');
    expect(u).toContain('allowed:');
    const n = messageOf(() => validateQuery({ dataset: 't', operation: { sum: [] } }));
    expect(n).toContain('top-level');
    const q = messageOf(() => validateQuery({ dataset: 't', quantile: { q: 1.5 } }));
    expect(q).toContain('$.quantile.q');
    expect(q).toContain('1.5');
    expect(messageOf(() => validateQuery({ dataset: 't', histogram: { bins: 2.5 } })))
      .toBe('query $.histogram.bins: expected a bin count between 1 and 1000000, found 2.5');
    expect(messageOf(() => validateQuery({ dataset: 't', sum: -1 }))).toMatch(/^query \$\.sum: expected an axis spec: .*found -1$/);
    expect(messageOf(() => validateQuery({ dataset: 't', execution: { foo: 1 } })))
      .toMatch(/^query \$\.execution: unknown key "foo" \(allowed: memory_budget_bytes, /);
  });

  it("the generated validator's compileAll (run by the package loader before it takes a code cache) changes no answer", () => {
    compileAll();  // every validation function called with no data: each fails, leaving errors behind
    expect(validate({ dataset: 't', mean: [], selection: [{ start: 1, stop: 5 }, {}] })).toBe(true);
    expect(validate.errors).toBeNull();
    expect(messageOf(() => validateQuery({ dataset: 't', selection: [{}, { step: 0 }] }))).toContain('$.selection[1].step');
    compileAll();
    expect(validateQuery({ dataset: 't', histogram: { bins: 3 } })).toEqual({ dataset: 't', histogram: { bins: 3 } });
  });
});

describe('limits', () => {
  it('rejects input over 1 MiB', () => {
    const text = '{"dataset":"' + 'a'.repeat(1 << 20) + '"}';
    expect(codeOf(() => parseQueryText(text))).toBe('TET_QUERY_TOO_LARGE');
  });
  it('rejects nesting deeper than 64 without overflowing the stack', () => {
    const deep = '{"dataset":"a","selection":' + '['.repeat(100000) + ']'.repeat(100000) + '}';
    expect(codeOf(() => parseQueryText(deep))).toBe('TET_QUERY_TOO_DEEP');
    const tomlDeep = 'dataset = "a"\nsum = ' + '['.repeat(500) + ']'.repeat(500);
    expect(codeOf(() => parseQueryText(tomlDeep))).toBe('TET_QUERY_TOO_DEEP');
    let v: unknown = 0;
    for (let i = 0; i < 100; i++) v = [v];
    expect(codeOf(() => validateQuery({ dataset: 'a', sum: v }))).toBe('TET_QUERY_TOO_DEEP');
  });
  it('bracket scanner ignores strings and comments', () => {
    expect(textNestingDepth('{"a":"[[[[["}', 'json', 64)).toBe(1);
    expect(textNestingDepth("a = '[[[['\n# [[[[\nb = [[1]]", 'toml', 64)).toBe(2);
  });
  it('malformed text is TET_QUERY_PARSE', () => {
    expect(codeOf(() => parseQueryText('{"dataset": '))).toBe('TET_QUERY_PARSE');
    expect(codeOf(() => parseQueryText('dataset = '))).toBe('TET_QUERY_PARSE');
    expect(codeOf(() => parseQueryText('dataset = "a"\nwhen = 1979-05-27'))).toBe('TET_QUERY_INVALID');
  });
});

describe('schema', () => {
  it('is a draft-07 object schema listing every top-level key', () => {
    expect(queryJsonSchema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    const props = Object.keys(queryJsonSchema.properties as object);
    for (const k of ['dataset', 'selection', 'execution', 'spill', 'sum', 'quantile', 'histogram', 'covariance', 'null_count']) {
      expect(props).toContain(k);
    }
  });
});

describe('property: parsing never throws anything but TetError', () => {
  const keys = ['dataset', 'sum', 'mean', 'quantile', 'histogram', 'selection', 'execution', 'spill', 'operation',
    'covariance', 'null_count', 'layout_version', 'q', 'bins', 'axis', 'axes', 'start', 'stop', 'step', 'x'];
  const value = fc.letrec((tie) => ({
    v: fc.oneof({ depthSize: 'small' },
      fc.constant(null), fc.boolean(), fc.integer({ min: -5, max: 20 }), fc.double(), fc.string({ maxLength: 8 }),
      fc.constantFrom(...keys),
      fc.array(tie('v'), { maxLength: 4 }),
      fc.dictionary(fc.constantFrom(...keys), tie('v'), { maxKeys: 5 })),
  })).v;

  it('random values through validateQuery', () => {
    fc.assert(fc.property(value, (v) => {
      try {
        validateQuery(v);
      } catch (e) {
        if (!(e instanceof TetError)) throw e;
      }
    }), { numRuns: 2000 });
  });

  it('random documents with a dataset key', () => {
    fc.assert(fc.property(fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: 4 }), (d) => {
      try {
        validateQuery({ dataset: 'a', ...d });
      } catch (e) {
        if (!(e instanceof TetError)) throw e;
      }
    }), { numRuns: 2000 });
  });

  it('random text through parseQueryText (JSON and TOML)', () => {
    fc.assert(fc.property(fc.string({ maxLength: 60 }), (s) => {
      for (const text of [s, '{' + s, 'dataset = "a"\n' + s]) {
        try {
          parseQueryText(text);
        } catch (e) {
          if (!(e instanceof TetError)) throw e;
        }
      }
    }), { numRuns: 2000 });
  });

  it('valid documents round-trip through JSON text', () => {
    const doc = fc.record({
      dataset: fc.string({ minLength: 1, maxLength: 10 }).filter((s) => s.trim().length > 0 && !/[\u0000-\u001f]/.test(s)),
      mean: fc.oneof(fc.constant([]), fc.integer({ min: 0, max: 7 }), fc.array(fc.integer({ min: 0, max: 7 }), { maxLength: 3 })),
    });
    fc.assert(fc.property(doc, (d) => {
      expect(parseQueryText(JSON.stringify(d))).toEqual(d);
    }), { numRuns: 300 });
  });
});
