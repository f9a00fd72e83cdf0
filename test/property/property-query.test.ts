// Property tests for the query front end (spec: JSON security — input protections): random text,
// random JSON values and grammar-shaped documents (valid and invalid, deep, huge, odd unicode)
// through parseQueryText / validateQuery / TetFile.query. The only acceptable failure is a
// TetError with a TET_* code; valid documents survive a JSON round trip unchanged.
import { SHARED } from '../support/paths';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, parseQueryText, QUERY_LIMITS, TetError, type TetFile, validateQuery } from '../../lib/index';

const RUNS = Number(process.env.TET_PROPERTY_RUNS ?? 300);

function onlyTetErrors(fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof TetError)) throw new Error(`non-TetError escaped: ${String(err)}`, { cause: err });
    expect(err.code).toMatch(/^TET_[A-Z0-9_]+$/);
    expect(err.message.length).toBeGreaterThan(0);
  }
}

async function onlyTetErrorsAsync(fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (!(err instanceof TetError)) throw new Error(`non-TetError escaped: ${String(err)}`, { cause: err });
    expect(err.code).toMatch(/^TET_[A-Z0-9_]+$/);
  }
}

// Strings that stress names/labels: lone surrogates, NUL, bidi, combining marks, very long.
const oddString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('', ' ', '\u0000', '\ud800', '\udfff', 'a\u202eb', 'e\u0301', '\ufeff', 'temp', 'data', 'x'.repeat(5000), '0', '-1', '1e3', '__proto__', 'constructor'),
);
/** v with every -0 as 0 (what a JSON round trip of v gives back). */
function withoutNegativeZero(v: unknown): unknown {
  if (Object.is(v, -0)) return 0;
  if (Array.isArray(v)) return v.map(withoutNegativeZero);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, withoutNegativeZero(x)]));
  return v;
}
const oddNumber = fc.oneof(
  fc.integer({ min: -10, max: 50 }),
  fc.constantFrom(0, -0, 1.5, -1, 2 ** 31, 2 ** 53, 2 ** 64, Number.MAX_SAFE_INTEGER + 2, 1e308, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
  fc.double(),
);
const scalarish = fc.oneof(oddNumber, oddString, fc.boolean(), fc.constant(null));
const axisToken = fc.oneof(fc.integer({ min: -2, max: 9 }), fc.constantFrom('0', '1', 'time', 'x', 'y', '', ' 1', '01'), oddString);
const axisSpec = fc.oneof(fc.constant([]), axisToken, fc.array(axisToken, { maxLength: 10 }));
const selectionAxis = fc.oneof(
  fc.constant(null), fc.constant({}),
  fc.record({ start: oddNumber, stop: oddNumber, step: oddNumber }, { requiredKeys: [] }),
  fc.record({ start_label: scalarish, stop_label: scalarish }, { requiredKeys: [] }),
  fc.dictionary(oddString, scalarish, { maxKeys: 3 }),
);
const OPS = ['sum', 'mean', 'min', 'max', 'count', 'var', 'std', 'product', 'norm_l1', 'norm_l2', 'all_finite', 'any_nan',
  'any_inf', 'arg_min', 'arg_max', 'nan_count', 'inf_count', 'nan_mean', 'nan_std', 'median'];
const operation = fc.oneof(
  fc.tuple(fc.constantFrom(...OPS), axisSpec),
  fc.tuple(fc.constant('quantile'), fc.record({ q: oddNumber, axis: axisSpec }, { requiredKeys: [] })),
  fc.tuple(fc.constant('histogram'), fc.record({ bins: oddNumber, min: oddNumber, max: oddNumber, axes: axisSpec }, { requiredKeys: [] })),
  fc.tuple(fc.constant('null_count'), fc.oneof(axisSpec, fc.record({ fill: oddNumber, axis: axisSpec }, { requiredKeys: [] }))),
  fc.tuple(fc.constantFrom('covariance', 'correlation'), fc.oneof(axisToken, fc.record({ axis: axisSpec }, { requiredKeys: [] }))),
  fc.tuple(fc.constantFrom('operation', 'output', 'bogus', 'Sum'), scalarish),
);
const datasetName = fc.oneof(fc.constantFrom('data', 'a', 'temperature', 'counts'), oddString, oddNumber);
const queryDoc = fc
  .record({
    dataset: datasetName,
    selection: fc.oneof(fc.constant(null), fc.array(selectionAxis, { maxLength: 10 })),
    ops: fc.array(operation, { maxLength: 2 }),
    execution: fc.record({
      memory_budget_bytes: oddNumber, memory_budget_percent: oddNumber, threads: oddNumber, fold_parallel: fc.boolean(),
      device: fc.constantFrom('cpu', 'auto', 'cuda', 'metal', '', 'x'),
    }, { requiredKeys: [] }),
    spill: fc.constantFrom('out.bin', '../escape.bin', '/etc/passwd', '', 'sub/../../x.bin'),
    layout_version: fc.constantFrom(1, 2, '1', 0),
    extra: fc.dictionary(oddString, scalarish, { maxKeys: 2 }),
  }, { requiredKeys: ['dataset'] })
  .map(({ ops, extra, ...rest }) => {
    const doc: Record<string, unknown> = { ...extra, ...rest };
    for (const [k, v] of ops ?? []) doc[k] = v;
    return doc;
  });

// Documents the grammar accepts by construction (one op, a small axis list, a plain selection and
// execution block): the random grammar above yields a valid document only now and then, so the
// round-trip property draws from both and is never left with nothing to check.
const validDoc = fc
  .record({
    dataset: fc.constantFrom('data', 'a', 'temperature', 'counts'),
    op: fc.constantFrom(...OPS),
    axes: fc.uniqueArray(fc.integer({ min: 0, max: 3 }), { maxLength: 3 }),
    selection: fc.array(fc.record({ start: fc.integer({ min: 0, max: 9 }), stop: fc.integer({ min: 10, max: 99 }), step: fc.integer({ min: 1, max: 4 }) }, { requiredKeys: [] }), { maxLength: 3 }),
    execution: fc.record({ threads: fc.integer({ min: 1, max: 8 }), fold_parallel: fc.boolean(), device: fc.constantFrom('cpu', 'auto') }, { requiredKeys: [] }),
  }, { requiredKeys: ['dataset', 'op', 'axes'] })
  .map(({ op, axes, ...rest }) => ({ ...rest, [op]: axes }) as Record<string, unknown>);

describe('parseQueryText / validateQuery never throw anything but TetError', () => {
  it('random text (JSON-ish, TOML-ish, binary)', () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.json({ maxDepth: 4 }),
      fc.jsonValue({ maxDepth: 3 }).map((v) => `{"dataset": "x", "sum": ${JSON.stringify(v) ?? 'null'}}`),
      fc.string({ unit: 'grapheme', maxLength: 80 }).map((s) => `dataset = ${JSON.stringify(s)}\nsum = []\n`),
      fc.string({ unit: 'binary', maxLength: 80 }).map((s) => `dataset = "x"\n[${s}]\n`),
    );
    fc.assert(fc.property(text, (t) => onlyTetErrors(() => parseQueryText(t))), { numRuns: RUNS * 3 });
  });

  it('random JSON values and grammar-shaped documents', () => {
    fc.assert(fc.property(fc.oneof(fc.anything(), queryDoc), (v) => onlyTetErrors(() => validateQuery(v))), { numRuns: RUNS * 3 });
    fc.assert(fc.property(queryDoc, (d) => onlyTetErrors(() => parseQueryText(JSON.stringify(d)))), { numRuns: RUNS * 2 });
  });

  it('valid documents round-trip through JSON text unchanged', () => {
    let valid = 0;
    fc.assert(fc.property(fc.oneof(queryDoc, validDoc), (d) => {
      let doc;
      try {
        doc = validateQuery(d);
      } catch {
        return;
      }
      valid++;
      // JSON has no -0 (JSON.stringify writes it as 0): the text carries q = -0 as q = 0.
      expect(parseQueryText(JSON.stringify(doc))).toEqual(withoutNegativeZero(doc));
    }), { numRuns: RUNS * 3 });
    expect(valid).toBeGreaterThan(0);
  });

  it('deep nesting: JSON and TOML beyond the depth limit are TET_QUERY_* errors, not stack overflows', () => {
    for (const depth of [QUERY_LIMITS.maxDepth + 1, 1000, 50_000]) {
      const json = `{"dataset":"x","sum":${'['.repeat(depth)}${']'.repeat(depth)}}`;
      if (Buffer.byteLength(json) > QUERY_LIMITS.maxInputBytes) continue;
      expect(() => parseQueryText(json)).toThrow(TetError);
      const toml = `dataset = "x"\nsum = ${'['.repeat(depth)}${']'.repeat(depth)}\n`;
      expect(() => parseQueryText(toml, 'toml')).toThrow(TetError);
      const tomlTables = `dataset = "x"\n[${Array.from({ length: depth }, (_, i) => `a${i}`).join('.')}]\n`;
      if (Buffer.byteLength(tomlTables) <= QUERY_LIMITS.maxInputBytes) expect(() => parseQueryText(tomlTables, 'toml')).toThrow(TetError);
      let nested: unknown = [];
      for (let i = 0; i < depth; i++) nested = [nested];
      expect(() => validateQuery({ dataset: 'x', sum: nested })).toThrow(TetError);
    }
  });

  it('huge input: over the byte limit is TET_QUERY_TOO_LARGE before parsing; long names are capped', () => {
    const big = `{"dataset":"${'x'.repeat(QUERY_LIMITS.maxInputBytes)}","sum":[]}`;
    expect(() => parseQueryText(big)).toThrow(expect.objectContaining({ code: 'TET_QUERY_TOO_LARGE' }));
    const name = 'ü'.repeat(QUERY_LIMITS.maxDatasetNameLength + 1);
    onlyTetErrors(() => validateQuery({ dataset: name, sum: [] }));
    expect(() => validateQuery({ dataset: name, sum: [] })).toThrow(TetError);
    const wide = { dataset: 'x', sum: [], selection: Array.from({ length: 100_000 }, () => ({})) };
    expect(() => validateQuery(wide)).toThrow(TetError);
  });
});

describe('TetFile.query on real files never throws anything but TetError', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tet-prop-q-'));
  const files: TetFile[] = [];
  beforeAll(async () => {
    for (const name of ['multi_dataset.tet', 'f32_r3_mixed.tet', 'f16_r2.tet', 'u32_r2.tet', 'labels_r2.tet']) {
      const src = join(join(SHARED, 'conformance/fixtures'), name);
      try {
        copyFileSync(src, join(dir, name));
        files.push(await open(join(dir, name)));
      } catch { /* fixture absent in this checkout */ }
    }
    expect(files.length).toBeGreaterThan(2);
  });
  afterAll(() => {
    for (const f of files) f.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('grammar-shaped documents, with dataset names that exist', async () => {
    const withRealNames = fc.tuple(fc.nat(), queryDoc, fc.boolean(), fc.nat({ max: 200 })).map(([k, d, real, preview]) => {
      const f = files[k % files.length]!;
      if (real) d.dataset = f.datasets[k % f.datasets.length]!.name;
      return { f, d, preview };
    });
    // Mostly-valid documents too, so execution (not just validation) is exercised every run.
    const likelyValid = fc.tuple(fc.nat(), fc.constantFrom(...OPS, 'none'), fc.nat(), fc.nat({ max: 200 })).map(([k, op, r, preview]) => {
      const f = files[k % files.length]!;
      const ds = f.datasets[k % f.datasets.length]!;
      const selection = ds.shape.map((n, a) => ({ start: (r >> a) % n, stop: n, step: 1 + ((r >> (a + 3)) % 3) }));
      const d: Record<string, unknown> = { dataset: ds.name, selection };
      if (op !== 'none') d[op] = r % 2 ? [] : [(r >> 4) % ds.shape.length];
      return { f, d, preview };
    });
    let resolved = 0;
    const codes = new Map<string, number>();
    await fc.assert(fc.asyncProperty(fc.oneof(withRealNames, likelyValid), async ({ f, d, preview }) => {
      await onlyTetErrorsAsync(async () => {
        try {
          await f.query(d, { preview });
          resolved++;
        } catch (e) {
          codes.set((e as TetError).code, (codes.get((e as TetError).code) ?? 0) + 1);
          throw e;
        }
      });
      await onlyTetErrorsAsync(async () => f.query(JSON.stringify(d)));
    }), { numRuns: RUNS });
    expect(resolved, `no query resolved; errors: ${JSON.stringify([...codes])}`).toBeGreaterThan(0);
  }, 120_000);
});
