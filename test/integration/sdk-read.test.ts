// Reads through the SDK (open/openSync/TetFile.read) checked against expectations from outside
// the code under test: the reference README, an independent spec-only reader of raw tiles
// (sdk-independent-reader.ts) and the conformance cases (numpy model).
import { SHARED } from '../support/paths';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { open, openSync, TetFile, TetFormatError, TetIoError, TetQueryError, verify } from '../../lib/index';
import { readIndependently } from '../support/sdk-independent-reader';

const REF = join(SHARED, 'fixtures/reference/tet');
const CONF = join(SHARED, 'conformance');
const manifest = JSON.parse(readFileSync(join(CONF, 'manifest.json'), 'utf8')) as {
  files: { file: string; kind: string; datasets?: { name: string; dtype: string; shape: number[] }[]; oracle_reader_error?: string }[];
};
const cases = JSON.parse(readFileSync(join(CONF, 'cases.json'), 'utf8')) as {
  file: string; query: Record<string, unknown>; expected: unknown; compare?: Record<string, { mode: string; rtol?: number; atol?: number; repr?: string }>;
}[];
const valid = manifest.files.filter((f) => f.kind === 'valid');
const malformed = manifest.files.filter((f) => f.kind !== 'valid');

const ARRAY_OF: Record<string, string> = {
  f32: 'Float32Array', f16: 'Float32Array', f64: 'Float64Array', i32: 'Int32Array', i64: 'BigInt64Array',
  u8: 'Uint8Array', u16: 'Uint16Array', i16: 'Int16Array', u32: 'Uint32Array', u64: 'BigUint64Array',
};

const range = (n: number, from = 0) => Array.from({ length: n }, (_, i) => i + from);

describe('reference files (README values)', () => {
  it('sample.tet reads 1..6 as f32 [2,3]', async () => {
    const f = await open(join(REF, 'sample.tet'));
    expect(f.datasets.map((d) => [d.name, d.dtype, d.shape, d.chunkShape, d.grid, d.chunkCount])).toEqual([
      ['temperature', 'f32', [2, 3], [2, 2], [1, 2], 2],
    ]);
    const r = await f.read('temperature');
    expect(r.data).toBeInstanceOf(Float32Array);
    expect(r.shape).toEqual([2, 3]);
    expect(Array.from(r.data as Float32Array)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(f.metadata).toEqual({});
    expect(f.history).toEqual([]);
    f.close();
  });

  it('large.tet reads the row-major index 0..2175, also through strided selections', async () => {
    const f = openSync(join(REF, 'large.tet'));
    const ds = f.dataset('a');
    expect([ds.shape, ds.chunkShape, ds.chunkCount]).toEqual([[34, 64], [4, 4], 144]);
    const all = await f.read('a');
    expect(Array.from(all.data as Float32Array)).toEqual(range(2176));
    // rows 30..34 (clipped last chunk row), every 5th column from 3; stop past the end clamps
    const part = await f.read('a', [{ start: 30, stop: 100 }, { start: 3, step: 5 }]);
    const cols = range(13).map((i) => 3 + 5 * i);
    expect(part.shape).toEqual([4, 13]);
    expect(Array.from(part.data as Float32Array)).toEqual([30, 31, 32, 33].flatMap((r) => cols.map((c) => r * 64 + c)));
    f.close();
  });

  it('multichunk u8/u32/f16 read 1..6', async () => {
    for (const [file, ctor] of [['multichunk_u8.tet', Uint8Array], ['multichunk_u32.tet', Uint32Array], ['multichunk_f16.tet', Float32Array]] as const) {
      const f = await open(join(REF, file));
      const r = await f.read('a');
      expect(r.data).toBeInstanceOf(ctor);
      expect(Array.from(r.data as ArrayLike<number>)).toEqual([1, 2, 3, 4, 5, 6]);
      f.close();
    }
  });

  it('plan.tet (corrupt footer) fails with TET_FOOTER_*, opens with verifyFooter=false', async () => {
    const err = await open(join(REF, 'plan.tet')).catch((e) => e);
    expect(err).toBeInstanceOf(TetFormatError);
    expect(err.code).toMatch(/^TET_FOOTER_/);
    const f = await open(join(REF, 'plan.tet'), { verifyFooter: false });
    expect(Array.from((await f.read('a')).data as Float32Array)).toEqual([1, 2, 3, 4, 5, 6]);
    f.close();
  });

  it('verify() of an open file: the same report as by path, the file stays open', async () => {
    // sample.tet: healthy (2 tiles, no footer); plan.tet: its footer is corrupt, which a file
    // opened with verifyFooter=false does not know, so verify() checks it from the path.
    const f = await open(join(REF, 'sample.tet'));
    const byFile = await verify(f);
    expect(byFile).toEqual(await verify(join(REF, 'sample.tet')));
    expect(byFile).toMatchObject({ ok: true, structureOk: true, footer: 'absent', chunksDecoded: 2, findings: [] });
    expect(Array.from((await f.read('temperature')).data as Float32Array)).toEqual([1, 2, 3, 4, 5, 6]);
    f.close();
    const lax = await open(join(REF, 'plan.tet'), { verifyFooter: false });
    const report = await verify(lax);
    expect(report).toMatchObject({ ok: false, footer: 'invalid' });
    expect(report.findings.map((x) => x.recommendation)).toContain('footer_invalid');
    expect(Array.from((await lax.read('a')).data as Float32Array)).toEqual([1, 2, 3, 4, 5, 6]);
    lax.close();
  });
});

function closeTo(actual: number, expected: number, rtol: number, atol: number): boolean {
  if (Number.isNaN(expected)) return Number.isNaN(actual);
  if (!Number.isFinite(expected)) return actual === expected;
  return Math.abs(actual - expected) <= atol + rtol * Math.abs(expected);
}

// Scalar statistics computed from the values the SDK read (numpy semantics, ddof 0).
function scalarStat(op: string, xs: number[], q?: number): number | undefined {
  const n = xs.length;
  const sorted = () => [...xs].sort((a, b) => a - b);
  const quant = (p: number) => {
    const s = sorted();
    const pos = p * (n - 1);
    const lo = Math.floor(pos);
    const hi = Math.min(lo + 1, n - 1);
    return s[lo] + (s[hi] - s[lo]) * (pos - lo);
  };
  const mean = () => xs.reduce((a, b) => a + b, 0) / n;
  const variance = () => {
    const m = mean();
    return xs.reduce((a, b) => a + (b - m) ** 2, 0) / n;
  };
  switch (op) {
    case 'sum': return xs.reduce((a, b) => a + b, 0);
    case 'mean': return mean();
    case 'min': return xs.reduce((a, b) => Math.min(a, b));
    case 'max': return xs.reduce((a, b) => Math.max(a, b));
    case 'var': return variance();
    case 'std': return Math.sqrt(variance());
    case 'norm_l1': return xs.reduce((a, b) => a + Math.abs(b), 0);
    case 'norm_l2': return Math.sqrt(xs.reduce((a, b) => a + b * b, 0));
    case 'count': return n;
    case 'nan_count': return xs.filter(Number.isNaN).length;
    case 'inf_count': return xs.filter((x) => x === Infinity || x === -Infinity).length;
    case 'arg_min': return xs.indexOf(xs.reduce((a, b) => Math.min(a, b)));
    case 'arg_max': return xs.indexOf(xs.reduce((a, b) => Math.max(a, b)));
    case 'median': return quant(0.5);
    case 'quantile': return quant(q ?? 0.5);
    default: return undefined;
  }
}

const EXPECT_KEY: Record<string, string> = {
  sum: 'operation_sum', mean: 'operation_mean', min: 'operation_min', max: 'operation_max', var: 'operation_var',
  std: 'operation_std', norm_l1: 'operation_norm_l1', norm_l2: 'operation_norm_l2', count: 'operation_element_count',
  nan_count: 'operation_nan_count', inf_count: 'operation_inf_count', arg_min: 'operation_argmin_index',
  arg_max: 'operation_argmax_index', median: 'operation_median', quantile: 'operation_quantile',
};

const coverage: [string, number, number][] = [];

describe('conformance fixtures (kind == valid)', () => {
  afterAll(() => {
    // zstd-only files are covered by scalar cases; most files by both
    const uncovered = coverage.filter(([rel, raw, cases]) => raw + cases === 0 && !/empty/.test(rel));
    expect(uncovered).toEqual([]);
    if (process.env.TET_TEST_VERBOSE) console.log(coverage.reduce((n, c) => n + c[2], 0), "cases,", coverage.reduce((n, c) => n + c[1], 0), "raw datasets");
  });
  it.each(valid.map((f) => f.file))('%s: every dataset reads with the right shape, type and values', async (rel) => {
    const path = join(CONF, rel);
    const file = await open(path);
    const entry = valid.find((f) => f.file === rel)!;
    expect(file.datasets.map((d) => d.name)).toEqual((entry.datasets ?? []).map((d) => d.name));
    const independent = readIndependently(path);
    let checkedCases = 0;
    let checkedRaw = 0;
    for (const ds of file.datasets) {
      const r = await file.read(ds.name);
      expect(r.shape).toEqual(ds.shape);
      expect(r.data.constructor.name).toBe(ARRAY_OF[ds.dtype]);
      expect(r.data.length).toBe(ds.shape.reduce((a, b) => a * b, 1));
      const values = Array.from(r.data as ArrayLike<number | bigint>);
      // 1) raw-tiled datasets: element-wise against the independent reader
      const ind = independent.find((d) => d.name === ds.name)!;
      if (ind.values) {
        expect(values.length).toBe(ind.values.length);
        for (let i = 0; i < values.length; i++) {
          if (!Object.is(values[i], ind.values[i]) && values[i] !== ind.values[i]) {
            throw new Error(`${rel}/${ds.name}[${i}]: read ${values[i]}, independent reader ${ind.values[i]}`);
          }
        }
      }
      // 2) scalar conformance cases, read with the case's selection (covers zstd tiles and
      //    strided / clipped / labelled selections)
      for (const c of cases) {
        if (c.file !== rel || c.query.dataset !== ds.name || typeof c.expected !== 'object') continue;
        const opKeys = Object.keys(c.query).filter((k) => !['dataset', 'selection', 'execution'].includes(k));
        if (opKeys.length !== 1) continue;
        const op = opKeys[0];
        const arg = c.query[op] as unknown;
        const scalar = (Array.isArray(arg) && arg.length === 0) || (op === 'quantile' && typeof arg === 'object' && arg !== null && !('axes' in arg) && !('axis' in arg));
        if (!scalar || !(op in EXPECT_KEY)) continue;
        const key = EXPECT_KEY[op];
        const expected = (c.expected as Record<string, number>)[key];
        if (typeof expected !== 'number') continue;
        const sel = c.query.selection as Parameters<typeof file.read>[1];
        const xs = Array.from((await file.read(ds.name, sel)).data as ArrayLike<number | bigint>).map(Number);
        if (xs.some(Number.isNaN) && op !== 'nan_count') continue;
        const got = scalarStat(op, xs, (arg as { q?: number }).q)!;
        const cmp = c.compare?.[key] ?? { mode: 'exact' };
        const ok = cmp.mode === 'close' ? closeTo(got, expected, cmp.rtol ?? 0, cmp.atol ?? 0)
          : cmp.repr === 'f32' ? Math.fround(got) === Math.fround(expected) : got === expected;
        if (!ok) throw new Error(`${rel}/${ds.name} ${op} ${JSON.stringify(sel ?? null)}: from read values ${got}, conformance expects ${expected}`);
        checkedCases++;
      }
      if (ind.values) checkedRaw++;
    }
    file.close();
    // Every file with data got at least one outside check (element-wise or a conformance case).
    if (file.datasets.length > 0 && checkedRaw + checkedCases === 0) console.warn(`${rel}: only shape/type checked`);
    coverage.push([rel, checkedRaw, checkedCases]);
  });

  it('u64 and i64 values beyond 2^53 come back exactly as BigInt', async () => {
    const f = await open(join(CONF, 'fixtures/bigint_u64_top.tet'));
    const r = await f.read('top');
    const xs = Array.from(r.data as BigUint64Array);
    const max = xs.reduce((a, b) => (b > a ? b : a));
    expect(max).toBe(18446744073709551615n);
    // README: values 2^64-1 - k*2^20
    for (const x of xs) expect((18446744073709551615n - x) % (1n << 20n)).toBe(0n);
    f.close();
  });

  it('footer metadata and legacy history rows are surfaced', async () => {
    const weather = await open(join(CONF, 'fixtures/meta_weather.tet'));
    const meta = weather.metadata.datasets?.temperature;
    expect(meta?.dim_names).toEqual(['time', 'lat', 'lon']);
    expect(weather.history.length).toBeGreaterThan(0);
    weather.close();
    const legacy = await open(join(CONF, 'fixtures/meta_legacy_history.tet'));
    expect(legacy.history.length).toBeGreaterThan(0);
    for (const row of legacy.history) {
      expect(Object.keys(row).sort()).toEqual(expect.arrayContaining(['at', 'op', 'source']));
      expect(typeof row.op).toBe('string');
    }
    legacy.close();
    const budget = await open(join(CONF, 'fixtures/file_exec_budget.tet'));
    expect(budget.fileExecution).toEqual({ memory_budget_percent_bps: 4000, memory_budget_bytes: 1048576 });
    budget.close();
  });
});

describe('malformed fixtures', () => {
  it.each(malformed.map((f) => f.file))('%s is a TetFormatError with a TET_* code, on open or on read', async (rel) => {
    let err: unknown;
    try {
      const f = await open(join(CONF, rel));
      try {
        for (const d of f.datasets) await f.read(d.name);
      } finally {
        f.close();
      }
    } catch (e) {
      err = e;
    }
    expect(err, `${rel} should fail`).toBeInstanceOf(TetFormatError);
    const e = err as TetFormatError;
    expect(e.code).toMatch(/^TET_(FORMAT|INDEX|PAYLOAD|DECODE|FOOTER)_[A-Z_]+$/);
    expect(e.message.length).toBeGreaterThan(10);
    // the same failure synchronously
    if (!/zstd/.test(rel)) expect(() => openSync(join(CONF, rel))).toThrow(TetFormatError);
  });

  it('open() reads a small in-memory catalog on the calling thread, anything else on a job thread: the same file either way', async () => {
    const { binding } = await import('../../lib/binding');
    const b = binding();
    // meta_weather's catalog is all in memory once read; meta_spill's footer refers to metadata
    // elsewhere in the file, which the calling thread does not read.
    const fast = join(CONF, 'fixtures/meta_weather.tet'), slow = join(CONF, 'fixtures/meta_spill.tet');
    readFileSync(fast);
    readFileSync(slow);
    const handle = b.openFileResident(fast, true);
    expect(handle).toBeTypeOf('object');
    b.closeFile(handle!);
    expect(b.openFileResident(slow, true)).toBeUndefined();
    for (const path of [fast, slow]) {
      const a = await open(path), s = openSync(path);
      expect(a.datasets).toEqual(s.datasets);
      expect(a.metadata).toEqual(s.metadata);
      expect(a.history).toEqual(s.history);
      expect(a.layout).toEqual(s.layout);
      for (const d of a.datasets) expect(await a.read(d.name)).toEqual(await s.read(d.name));
      a.close();
      s.close();
    }
    const spilled = openSync(slow);
    expect(Object.keys(spilled.metadata).length).toBeGreaterThan(0);
    spilled.close();
  });

  it('a missing file is a TetIoError', async () => {
    const err = await open('/nonexistent/x.tet').catch((e) => e);
    expect(err).toBeInstanceOf(TetIoError);
    expect(err.code).toMatch(/^TET_IO_/);
  });
});

describe('TetFile behaviour', () => {
  it('query() and plan() run query documents against the file (README: sum of 1..6 = 21)', async () => {
    const f = await open(join(REF, 'multichunk_u32.tet'));
    const res = (await f.query({ dataset: 'a', sum: [] })) as unknown as Record<string, unknown>;
    expect(JSON.stringify(res)).toMatch(/"operation_sum":21\b/);
    const v = (await f.query('{"dataset": "a", "var": []}')) as unknown as Record<string, unknown>;
    const variance = Number(/"operation_var":([-0-9.e]+)/.exec(JSON.stringify(v))![1]);
    expect(variance).toBeCloseTo(35 / 12, 12);
    const planned = JSON.stringify(f.plan({ dataset: 'a', sum: [] }));
    expect(planned).toMatch(/planned/);
    f.close();
  });

  it('an aborted signal cancels a read with TetCancelledError', async () => {
    const f = await open(join(CONF, 'fixtures/big_f32.tet'));
    const ac = new AbortController();
    ac.abort();
    await expect(f.read('data', undefined, { signal: ac.signal })).rejects.toMatchObject({ code: 'TET_CANCELLED' });
    const ac2 = new AbortController();
    const pending = f.read('data', undefined, { signal: ac2.signal });
    ac2.abort();
    const outcome = await pending.then((r) => r.data.length, (e) => e.code);
    expect([3000 * 1500, 'TET_CANCELLED']).toContain(outcome);
    f.close();
  });

  it('bad selections and unknown datasets are TetQueryErrors, keeping the caller stack', async () => {
    const f = await open(join(REF, 'sample.tet'));
    for (const sel of [[{ start: 0, stop: 5, step: 0 }, {}], [{ start: 1, stop: 1 }, {}], [{ start: -1 }, {}], [{}]]) {
      const err = await f.read('temperature', sel).catch((e) => e);
      expect(err).toBeInstanceOf(TetQueryError);
      expect(err.code).toMatch(/^TET_QUERY_/);
    }
    await expect(f.read('nope')).rejects.toMatchObject({ code: 'TET_QUERY_UNKNOWN_DATASET' });
    f.close();
  });

  it('native errors keep the awaiting JS stack and the native error as cause', async () => {
    const err = await open(join(CONF, 'fixtures/m_bad_magic.tet')).catch((e) => e);
    expect(err.code).toBe('TET_FORMAT_BAD_MAGIC');
    expect(err.stack).toContain('sdk-read.test.ts');
    expect((err.cause as { code?: string }).code).toBe('TET_FORMAT_BAD_MAGIC');
  });

  it('close is idempotent; reads in flight finish, new reads reject TET_IO_CLOSED', async () => {
    const f = await open(join(REF, 'large.tet'));
    const inflight = [f.read('a'), f.read('a', [{ start: 1, stop: 2 }, {}])];
    f.close();
    f.close();
    const [all, row] = await Promise.all(inflight);
    expect(Array.from(all.data as Float32Array)).toEqual(range(2176));
    expect(Array.from(row.data as Float32Array)).toEqual(range(64, 64));
    expect(f.closed).toBe(true);
    await expect(f.read('a')).rejects.toMatchObject({ code: 'TET_IO_CLOSED' });
    expect(f).toBeInstanceOf(TetFile);
    expect(f.datasets[0].name).toBe('a');  // the catalog stays readable
  });
});
