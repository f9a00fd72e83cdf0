// Issue 14, "Drop-in for the reference `tet`": the reference's response fields, CLI texts, `tet
// info` / `tet qhist` options, `tet convert` defaults and error key words. Every expectation is
// written from the issue's wording and from the files' bytes (parsed here per layout_v1.md, not
// through lib/), never from our own output.
import { ROOT, SHARED } from '../support/paths';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectSource } from '../../lib/convert/detect';
import { convert, open, TetWriter } from '../../lib/index';

const BIN = join(ROOT, 'bin', 'tet.js');
const FIX = join(SHARED, 'conformance', 'fixtures');
const SIX = join(FIX, 'one_to_six_f32.tet');       // f32 [[1,2,3],[4,5,6]], tiles [2,2] -> grid [1,2], raw
const ZSTD3 = join(FIX, 'f64_r3_zstd.tet');         // f64 "pressure" [9,10,11], tiles [4,4,4], 27 zstd tiles
const MIXED = join(FIX, 'f32_r3_mixed.tet');        // f32 "field" [12,10,9], tiles [5,4,4], raw 18 + zstd 9
const work = mkdtempSync(join(tmpdir(), 'tet-compat-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist/cli.cjs'))) throw new Error('dist/cli.cjs is missing: run `npm run build:ts` first');
});

interface Run { rc: number | null; out: string; err: string }

function tetIn(env: NodeJS.ProcessEnv, args: string[], input?: string): Run {
  const r = spawnSync(process.execPath, [BIN, ...args], { env, input, encoding: 'utf8', timeout: 60_000 });
  return { rc: r.status, out: r.stdout, err: r.stderr };
}
const quietEnv = { ...process.env, XDG_CACHE_HOME: join(work, 'cache-default'), TET_NO_QUERY_HISTORY: '1' };
const tet = (...args: string[]) => tetIn(quietEnv, args);
const json = (...args: string[]) => {
  const r = tet(...args, '--format', 'json');
  expect(r.rc, r.err).toBe(0);
  return JSON.parse(r.out);
};

// ---- the file, read independently (layout_v1.md) ----
interface IndexRow { dataset: number; coords: number[]; stored: number }
function superblockOf(path: string) {
  const b = readFileSync(path);
  return {
    magic: b.toString('latin1', 0, 4), layout_version: b.readUInt32LE(4), dataset_count: b.readUInt32LE(8),
    flags: b.readUInt32LE(12), chunk_index_offset: Number(b.readBigUInt64LE(16)), chunk_index_length: Number(b.readBigUInt64LE(24)),
  };
}
function indexRows(path: string): IndexRow[] {
  const b = readFileSync(path);
  const sb = superblockOf(path);
  if (sb.chunk_index_length === 0) return [];
  const n = Number(b.readBigUInt64LE(sb.chunk_index_offset + 8));
  const rows: IndexRow[] = [];
  for (let r = 0; r < n; r++) {
    const at = sb.chunk_index_offset + 32 + r * 104;
    rows.push({
      dataset: Number(b.readBigUInt64LE(at)),
      coords: Array.from({ length: 8 }, (_, k) => Number(b.readBigUInt64LE(at + 8 + 8 * k))),
      stored: Number(b.readBigUInt64LE(at + 88)),
    });
  }
  return rows;
}

describe('response fields of the reference (in addition to ours)', () => {
  it('top level: accepted, dataset, selection_axes (count), tet_file', () => {
    const r = json('query', '{"dataset":"a","sum":[]}', '-t', SIX, '-x');
    expect(r).toMatchObject({ status: 'executed', accepted: true, dataset: 'a', selection_axes: 0, tet_file: SIX });
    const s = json('query', '{"dataset":"a","sum":[],"selection":[{"start":0,"stop":1},{}]}', '-t', SIX);
    expect(s).toMatchObject({ status: 'planned', accepted: true, dataset: 'a', selection_axes: 2, tet_file: SIX });
    const v = json('query', '{"dataset":"a","sum":[]}');
    expect(v).toMatchObject({ status: 'validated', accepted: true, dataset: 'a', selection_axes: 0, tet_file: null });
    // ours are kept
    expect(r.query).toEqual({ dataset: 'a', sum: [] });
    expect(r.catalog.file).toBe(SIX);
  });

  it('catalog: matched, dataset_index, chunk_index_rows, dataset_<dtype>_bytes for every dtype', () => {
    const c = json('query', '{"dataset":"a"}', '-t', SIX).catalog;
    expect(c).toMatchObject({ matched: true, dataset_index: 0, chunk_index_rows: indexRows(SIX).length, dataset_f32_bytes: 4 * 6 });
    expect(c.dataset_resolution).toBe('matched');  // ours
    const u = tet('query', '{"dataset":"nope"}', '-t', SIX, '--format', 'json');
    expect(u.rc).toBe(1);
    expect(JSON.parse(u.out).catalog).toMatchObject({ matched: false, chunk_index_rows: 2 });
    // dtypes other than f32/f64: element size x element count, under the dtype's name
    const cases: [string, string, number][] = [
      ['i32_r1.tet', 'i32', 4], ['u16_r4_zstd.tet', 'u16', 2], ['i64_r2_mixed.tet', 'i64', 8],
      ['f16_r2.tet', 'f16', 2], ['i16_r5_mixed.tet', 'i16', 2], ['u64_r1_zstd.tet', 'u64', 8],
    ];
    for (const [file, dtype, size] of cases) {
      const info = JSON.parse(tet('info', join(FIX, file), '--json').out);
      const ds = info.datasets[0];
      const cat = json('query', JSON.stringify({ dataset: ds.name }), '-t', join(FIX, file)).catalog;
      const n = ds.shape.reduce((a: number, b: number) => a * b, 1);
      expect(cat.dtype, file).toBe(dtype);
      expect(cat[`dataset_${dtype}_bytes`], file).toBe(size * n);
      expect(cat.chunk_index_rows, file).toBe(indexRows(join(FIX, file)).length);
      for (const other of ['f32', 'f64', 'i32', 'i64', 'u8', 'u16', 'i16', 'u32', 'f16', 'u64'].filter((d) => d !== dtype)) {
        expect(cat[`dataset_${other}_bytes`], `${file} ${other}`).toBeUndefined();
      }
    }
  });

  it('read_plan.chunks[i].chunk_index are the grid coordinates', () => {
    const rp = json('query', '{"dataset":"a"}', '-t', SIX).read_plan;
    expect(rp.chunks.map((c: { chunk_index: number[] }) => c.chunk_index)).toEqual([[0, 0], [0, 1]]);
    expect(rp.chunks.map((c: { coords: number[] }) => c.coords)).toEqual([[0, 0], [0, 1]]);  // ours
  });

  it('read_plan.total_stored_bytes: stored bytes of the touched chunks (raw, zstd, mixed; strided)', () => {
    const sum = (file: string, keep: (c: number[]) => boolean) =>
      indexRows(file).filter((r) => keep(r.coords)).reduce((s, r) => s + r.stored, 0);
    // raw: the whole dataset, then only tile (0,0) of 2x2 f32
    expect(json('query', '{"dataset":"a"}', '-t', SIX).read_plan.total_stored_bytes).toBe(24);
    expect(json('query', '{"dataset":"a","selection":[{},{"start":0,"stop":2}]}', '-t', SIX).read_plan.total_stored_bytes).toBe(16);
    for (const [file, name] of [[ZSTD3, 'pressure'], [MIXED, 'field']] as const) {
      const plan = (sel: object[]) => json('query', JSON.stringify({ dataset: name, selection: sel }), '-t', file).read_plan;
      expect(plan([{}, {}, {}]).total_stored_bytes, file).toBe(sum(file, () => true));
      // axis 0 [0,4) -> tile row 0; axis 1 [4,8) -> tile 1 (both datasets use 4-row tiles on axis 1)
      expect(plan([{ start: 0, stop: 4 }, { start: 4, stop: 8 }, {}]).total_stored_bytes, file)
        .toBe(sum(file, (c) => c[0] === 0 && c[1] === 1));
      // step 8 on axis 2 (positions 0, 8): tiles 0 and 2 only (tile 1 is skipped)
      expect(plan([{}, {}, { step: 8 }]).total_stored_bytes, file).toBe(sum(file, (c) => c[2] === 0 || c[2] === 2));
    }
  });

  it('the chunk index is read once, and a file changed since open is TET_IO_FILE_CHANGED', async () => {
    const copy = join(work, 'zstd-copy.tet');
    writeFileSync(copy, readFileSync(ZSTD3));
    const f = await open(copy);
    try {
      const sel = [{ start: 0, stop: 4 }, { start: 4, stop: 8 }, null];
      const want = indexRows(copy).filter((r) => r.coords[0] === 0 && r.coords[1] === 1).reduce((s, r) => s + r.stored, 0);
      expect(f.plan({ dataset: 'pressure', selection: sel }).read_plan?.total_stored_bytes).toBe(want);
      // a second handle whose file grows before its first partial plan reads the index
      const h = await open(copy);
      writeFileSync(copy, Buffer.concat([readFileSync(ZSTD3), Buffer.alloc(8)]));
      // the first handle read the index already: it still answers
      expect(f.plan({ dataset: 'pressure', selection: sel }).read_plan?.total_stored_bytes).toBe(want);
      expect(() => h.plan({ dataset: 'pressure', selection: sel })).toThrow(expect.objectContaining({ code: 'TET_IO_FILE_CHANGED' }));
      h.close();
    } finally {
      f.close();
    }
  });

  it('execution.total_bytes_read_from_disk counts both passes when there are two', () => {
    const ex = (q: object, preview: string) => json('query', JSON.stringify(q), '-t', SIX, '-x', '--preview', preview).execution;
    for (const op of ['mean', 'median']) {
      // one pass over both tiles (24 bytes stored), no preview
      expect(ex({ dataset: 'a', [op]: [] }, '0').total_bytes_read_from_disk, op).toBe(24);
      // preview of all 6 values (both tiles) + the operation's pass
      expect(ex({ dataset: 'a', [op]: [] }, '6').total_bytes_read_from_disk, op).toBe(48);
    }
    // preview only: a single pass
    expect(ex({ dataset: 'a' }, '6').total_bytes_read_from_disk).toBe(24);
  });

  it('execution.<dtype>_preview_truncated', () => {
    expect(json('query', '{"dataset":"a","sum":[]}', '-t', SIX, '-x', '--preview', '2').execution.f32_preview_truncated).toBe(true);
    expect(json('query', '{"dataset":"a","sum":[]}', '-t', SIX, '-x').execution.f32_preview_truncated).toBe(false);
    const i32 = json('query', '{"dataset":"counts","sum":[]}', '-t', join(FIX, 'i32_r1.tet'), '-x').execution;
    expect(i32.i32_preview_truncated).toBe(true);   // 64 of 1000
    expect(i32.f32_preview_truncated).toBeUndefined();
  });

  it('execution.operation_element_count for every reduction: the number of elements reduced', () => {
    const ops: Record<string, unknown> = {
      sum: [], mean: [], min: [], max: [], count: [], var: [], std: [], product: [], norm_l1: [], norm_l2: [],
      all_finite: [], any_nan: [], any_inf: [], arg_min: [], arg_max: [], nan_count: [], inf_count: [],
      null_count: { fill: 3 }, nan_mean: [], nan_std: [], median: [], quantile: { q: 0.5 }, histogram: { bins: 3 },
      covariance: { axis: 0 }, correlation: { axis: 0 },
    };
    for (const [op, arg] of Object.entries(ops)) {
      const ex = json('query', JSON.stringify({ dataset: 'a', [op]: arg }), '-t', SIX, '-x', '--preview', '0').execution;
      expect(ex.operation_element_count, op).toBe(6);
    }
    // partial reductions and strided selections: still every element reduced
    expect(json('query', '{"dataset":"a","sum":0}', '-t', SIX, '-x').execution.operation_element_count).toBe(6);
    expect(json('query', '{"dataset":"a","max":1,"selection":[{},{"step":2}]}', '-t', SIX, '-x').execution.operation_element_count).toBe(4);
    expect(json('query', '{"dataset":"a","median":0,"selection":[{"start":1,"stop":2},{}]}', '-t', SIX, '-x').execution.operation_element_count).toBe(3);
  });
});

describe('CLI texts of the reference', () => {
  it('quiet line (-q): the reference keys', () => {
    expect(tet('query', '{"dataset":"a","count":[]}', '-t', SIX, '-x', '-q').out).toMatch(/^dataset=a status=ok elements=6( |\n)/);
    expect(tet('query', '{"dataset":"a","mean":[]}', '-t', SIX, '-x', '-q').out).toMatch(/^dataset=a status=ok elements=6 .*mean=3\.5/);
    expect(tet('query', '{"dataset":"a","sum":0}', '-t', SIX, '-x', '-q').out).toContain(' axes=[0] values=[5,7,9] reduced_shape=3');
    expect(tet('query', '{"dataset":"a","sum":0}', '-t', SIX, '-q').out).toMatch(/^dataset=a status=ok .*logical_shape=2×3/);
    const nf = tet('query', '{"dataset":"nope"}', '-t', SIX, '-q');
    expect(nf.out).toMatch(/^dataset=nope status=not_found available=\[a\]\n$/);
    expect(nf.rc).toBe(1);
    expect(tet('query', '{"dataset":"a","sum":[]}', '-q').out).toMatch(/^dataset=a status=\w+ hint=pass --tet/);
    expect(tet('query', '{"dataset":"a"}', '-t', SIX, '-x', '-q', '--preview', '4').out)
      .toMatch(/^dataset=a status=preview preview=4 f32 sample=\[1,2,3,4\]/);
  });

  it('--format plan is pretty-printed', () => {
    const r = tet('query', '{"dataset":"a","sum":[]}', '-t', SIX, '--format', 'plan');
    expect(r.out.split('\n').length).toBeGreaterThan(10);
    expect(r.out).toMatch(/^\{\n  "/);
    expect(JSON.parse(r.out).read_plan.chunk_count).toBe(2);
  });

  it('unknown dataset: a hint block on stderr (hint / available datasets / tip: run `tet info FILE`)', () => {
    const r = tet('query', '{"dataset":"nope","sum":[]}', '-t', SIX, '-x');
    expect(r.rc).toBe(1);
    const lines = r.err.split('\n');
    const h = lines.findIndex((l) => l.startsWith('hint: dataset '));
    expect(h, r.err).toBeGreaterThanOrEqual(0);
    expect(lines[h]).toMatch(/^hint: dataset "?nope"? not found/);
    expect(lines[h + 1]).toBe('available datasets:');
    expect(lines[h + 2].trim()).toBe('a');
    expect(lines.find((l) => l.startsWith('tip: '))).toContain(`tet info ${SIX}`);
    expect(JSON.parse(r.out).status).toBe('unmatched');  // stdout keeps the response
  });
});

describe('tet info (reference options)', () => {
  const multi = join(work, 'multi.tet');
  beforeAll(async () => {
    const w = await TetWriter.create(multi);
    for (const name of ['temp_air', 'Temp_sea', 'wind']) w.addDataset({ name, dtype: 'f32', shape: [4], chunkShape: [2], codec: 'raw' });
    for (const name of ['temp_air', 'Temp_sea', 'wind']) {
      await w.writeChunk(name, [0], new Float32Array(2));
      await w.writeChunk(name, [1], new Float32Array(2));
    }
    await w.commit();
  });

  it('catalog.dataset_index is the position in the catalog; chunk_index_rows counts every dataset\'s rows', () => {
    const c = json('query', '{"dataset":"wind"}', '-t', multi).catalog;
    expect(c).toMatchObject({ dataset_index: 2, chunk_index_rows: indexRows(multi).length });
    expect(indexRows(multi)).toHaveLength(6);
  });

  it('a `datasets:` heading', () => {
    const r = tet('info', multi);
    expect(r.rc, r.err).toBe(0);
    expect(r.out.split('\n')).toContain('datasets:');
  });

  it('--json has a superblock object (the 32-byte superblock\'s fields)', () => {
    for (const file of [multi, SIX, ZSTD3]) {
      const j = JSON.parse(tet('info', file, '--json').out);
      expect(j.superblock, file).toEqual(superblockOf(file));
      expect(j.superblock.magic).toBe('TETR');
    }
  });

  it('-q: one line `path=... datasets=N ...`', () => {
    const r = tet('info', multi, '-q');
    expect(r.rc, r.err).toBe(0);
    expect(r.out.split('\n').filter(Boolean)).toHaveLength(1);
    expect(r.out).toMatch(new RegExp(`^path=${multi.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} datasets=3 `));
  });

  it('--grep S filters datasets (filter: grep~S)', () => {
    const t = tet('info', multi, '--grep', 'temp');
    expect(t.out).toContain('filter: grep~temp');
    expect(t.out).toContain('temp_air');
    expect(t.out).toContain('Temp_sea');
    expect(t.out).not.toMatch(/│ wind /);
    const j = JSON.parse(tet('info', multi, '--json', '--grep', 'wind').out);
    expect(j.datasets.map((d: { name: string }) => d.name)).toEqual(['wind']);
    expect(j.filter).toBe('grep~wind');
    expect(tet('info', multi, '-q', '--grep', 'temp').out).toMatch(/ datasets=2 /);
  });
});

describe('tet qhist (reference behaviour)', () => {
  const cacheFor = (name: string) => {
    const env = { ...process.env, XDG_CACHE_HOME: join(work, `cache-${name}`) } as NodeJS.ProcessEnv;
    delete env.TET_NO_QUERY_HISTORY;
    delete env.TET_QUERY_HISTORY_MAX;
    return env;
  };
  const entries = (env: NodeJS.ProcessEnv, ...args: string[]) =>
    JSON.parse(tetIn(env, ['qhist', 'list', '--all', '--json', ...args]).out).entries as
      { n: number; mode: string; query: { dataset: string }; tet: string | null }[];

  it('newest first (1 = newest) for list and run N; consecutive duplicates recorded once', () => {
    const env = cacheFor('order');
    for (const op of ['sum', 'mean', 'mean', 'mean', 'max']) tetIn(env, ['query', `{"dataset":"a","${op}":[]}`, '-t', SIX, '-x', '-q']);
    const e = entries(env);
    expect(e.map((x) => Object.keys(x.query).find((k) => k !== 'dataset'))).toEqual(['max', 'mean', 'sum']);
    expect(e.map((x) => x.n)).toEqual([1, 2, 3]);
    const text = tetIn(env, ['qhist', 'list']).out.split('\n').filter((l) => /^\d+\t/.test(l));
    expect(text[0]).toMatch(/^1\t.*"max":\[\]/);
    expect(tetIn(env, ['qhist', 'run', '1', '-q']).out).toMatch(/ max=6\n$/);
    expect(tetIn(env, ['qhist', 'run', '3', '-q']).out).toMatch(/ sum=21\n$/);
    // a non-consecutive repeat is recorded again
    tetIn(env, ['query', '{"dataset":"a","sum":[]}', '-t', SIX, '-x', '-q']);
    expect(entries(env)).toHaveLength(4);
  });

  it('default retention 50', () => {
    const env = cacheFor('retention');
    const file = join(work, 'cache-retention', 'tetration', 'query_history.jsonl');
    mkdirSync(join(work, 'cache-retention', 'tetration'), { recursive: true });
    const line = (i: number) => JSON.stringify({ at: '2026-01-01T00:00:00Z', tet: null, execute: false, query: { dataset: `d${i}` } });
    writeFileSync(file, Array.from({ length: 60 }, (_, i) => line(i)).join('\n') + '\n');
    tetIn(env, ['query', '{"dataset":"a","sum":[]}', '-t', SIX, '-q']);
    const e = entries(env);
    expect(e).toHaveLength(50);
    expect(e[0].query.dataset).toBe('a');
    expect(e[49].query.dataset).toBe('d11');
  });

  it('qhist --clear; TET_NO_QUERY_HISTORY=1 disables recording', () => {
    const env = cacheFor('clear');
    tetIn(env, ['query', '{"dataset":"a","sum":[]}', '-t', SIX, '-q']);
    expect(entries(env)).toHaveLength(1);
    const c = tetIn(env, ['qhist', '--clear']);
    expect(c.rc, c.err).toBe(0);
    expect(entries(env)).toHaveLength(0);
    tetIn({ ...env, TET_NO_QUERY_HISTORY: '1' }, ['query', '{"dataset":"a","sum":[]}', '-t', SIX, '-q']);
    expect(entries(env)).toHaveLength(0);
    tetIn(env, ['query', '{"dataset":"a","sum":[]}', '-t', SIX, '-q']);
    expect(entries(env)).toHaveLength(1);
  });

  it('list --all, --dataset, --mode x|plan, --grep (filter: line), --json (mode + settings); text: mode column, legend, replay hint', () => {
    const env = cacheFor('filters');
    for (let i = 0; i < 25; i++) tetIn(env, ['query', `{"dataset":"a","quantile":{"q":${(i + 1) / 100}}}`, '-t', SIX, ...(i % 2 ? ['-x'] : []), '-q']);
    tetIn(env, ['query', '{"dataset":"b","sum":[]}', '-q']);
    const rows = (...args: string[]) => tetIn(env, ['qhist', 'list', ...args]).out.split('\n').filter((l) => /^\d+\t/.test(l));
    expect(rows('--all')).toHaveLength(26);
    expect(rows().length).toBeLessThan(26);   // --all shows what the default list leaves out
    expect(rows('--dataset', 'b')).toHaveLength(1);
    expect(rows('--mode', 'x')).toHaveLength(12);
    expect(rows('--mode', 'plan', '--all')).toHaveLength(14);
    const g = tetIn(env, ['qhist', 'list', '--grep', '"q":0.25']);
    expect(g.out).toMatch(/^filter: .*grep~"q":0\.25/m);
    expect(g.out.split('\n').filter((l) => /^\d+\t/.test(l))).toHaveLength(1);
    // mode column, legend, replay hint
    const text = tetIn(env, ['qhist', 'list', '--all']).out;
    expect(text).toMatch(/^1\tplan\t/m);     // {"dataset":"b"} without -t
    expect(text).toMatch(/^3\tx\t/m);        // the last -x quantile
    expect(text).toMatch(/^mode: x = had -x/m);
    expect(text).toMatch(/^replay: /m);
    const j = JSON.parse(tetIn(env, ['qhist', 'list', '--json', '--all']).out);
    expect(j.entries[0]).toMatchObject({ n: 1, mode: 'plan', query: { dataset: 'b' } });
    expect(j.entries[2]).toMatchObject({ n: 3, mode: 'x' });
    expect(j.settings).toMatchObject({ max: 50, recording: true });
    expect(typeof j.settings.path).toBe('string');
  });
});

describe('tet convert: CF unpacking by default, --keep-packed, detection by extension', () => {
  /** CDF-1: x(4); t(x) short, scale_factor 0.5f, add_offset 10f, _FillValue -1s; d(x) short, scale_factor 0.25 (double). */
  function packedCdf(): Buffer {
    const u32 = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32BE(n); return b; };
    const pad = (b: Buffer) => Buffer.concat([b, Buffer.alloc((4 - (b.length % 4)) % 4)]);
    const name = (s: string) => Buffer.concat([u32(Buffer.byteLength(s)), pad(Buffer.from(s))]);
    const f32 = (v: number) => { const b = Buffer.alloc(4); b.writeFloatBE(v); return b; };
    const f64 = (v: number) => { const b = Buffer.alloc(8); b.writeDoubleBE(v); return b; };
    const i16 = (vs: number[]) => { const b = Buffer.alloc(2 * vs.length); vs.forEach((v, i) => b.writeInt16BE(v, 2 * i)); return b; };
    const attr = (n: string, type: number, count: number, v: Buffer) => Buffer.concat([name(n), u32(type), u32(count), pad(v)]);
    const header = (begins: number[]) => Buffer.concat([
      Buffer.from('CDF\x01', 'latin1'), u32(0),
      u32(10), u32(1), name('x'), u32(4),
      u32(0), u32(0),
      u32(11), u32(2),
      name('t'), u32(1), u32(0), u32(12), u32(3),
      attr('scale_factor', 5, 1, f32(0.5)), attr('add_offset', 5, 1, f32(10)), attr('_FillValue', 3, 1, i16([-1])),
      u32(3), u32(8), u32(begins[0]),
      name('d'), u32(1), u32(0), u32(12), u32(1), attr('scale_factor', 6, 1, f64(0.25)),
      u32(3), u32(8), u32(begins[1]),
    ]);
    const h = header([0, 0]).length;
    return Buffer.concat([header([h, h + 8]), i16([0, -1, 2, 4]), i16([4, 8, -4, 0])]);
  }
  const src = join(work, 'packed.nc');
  beforeAll(() => writeFileSync(src, packedCdf()));

  it('default: scale_factor / add_offset applied, _FillValue -> NaN; f32 unless the packing needs f64', async () => {
    const out = join(work, 'unpacked.tet');
    const r = tet('convert', src, out, '-q');
    expect(r.rc, r.err).toBe(0);
    const f = await open(out);
    try {
      expect(f.dataset('t').dtype).toBe('f32');          // short + f32 attributes
      expect(Array.from((await f.read('t')).data as Float32Array)).toEqual([10, NaN, 11, 12]);
      expect(f.dataset('d').dtype).toBe('f64');          // a double scale_factor needs f64
      expect(Array.from((await f.read('d')).data as Float64Array)).toEqual([1, 2, -1, 0]);
      expect(f.metadata.datasets?.t?.attrs?.scale_factor).toBeUndefined();
    } finally {
      f.close();
    }
  });

  it('--keep-packed: the stored values and the CF attributes', async () => {
    const out = join(work, 'packed.tet');
    const r = tet('convert', src, out, '-q', '--keep-packed');
    expect(r.rc, r.err).toBe(0);
    const f = await open(out);
    try {
      expect(f.dataset('t').dtype).toBe('i16');
      expect(Array.from((await f.read('t')).data as Int16Array)).toEqual([0, -1, 2, 4]);
      expect(f.metadata.datasets?.t?.attrs).toMatchObject({ scale_factor: 0.5, add_offset: 10, _FillValue: -1 });
    } finally {
      f.close();
    }
    expect(tet('convert', src, join(work, 'x.tet'), '--keep-packed', '--unpack').rc).toBe(2);
  });

  it('detection falls back on the extension (case-insensitive) while the content cannot be read yet', () => {
    const cases: [string, string][] = [['a.h5', 'hdf5'], ['b.HDF5', 'hdf5'], ['c.He5', 'hdf5'], ['d.nc4', 'hdf5'],
      ['e.NC', 'netcdf3'], ['f.cdf', 'netcdf3']];
    for (const [name, kind] of cases) {
      const p = join(work, name);
      writeFileSync(p, '');                                  // not written yet
      expect(detectSource(p), name).toBe(kind);
      writeFileSync(p, Buffer.from([0x89, 0x48, 0x44]));     // the first bytes of an HDF5 signature
      expect(detectSource(p), name).toBe(kind);
    }
    // content wins over the extension
    const cdfNamedH5 = join(work, 'classic.h5');
    writeFileSync(cdfNamedH5, packedCdf());
    expect(detectSource(cdfNamedH5)).toBe('netcdf3');
  });

  it('a clear error when neither works (and .gz is noted)', async () => {
    const unknown = join(work, 'empty.bin');
    writeFileSync(unknown, '');
    const e = (() => { try { detectSource(unknown); return null; } catch (err) { return err as Error & { code: string }; } })();
    expect(e?.code).toBe('TET_CONVERT_UNKNOWN_FORMAT');
    expect(e?.message).toContain('.h5 .hdf5 .he5 .nc .nc4 .cdf .zarr');
    const gzEmpty = join(work, 'x.nc.gz');
    writeFileSync(gzEmpty, '');
    expect(() => detectSource(gzEmpty)).toThrow(/\.gz/);
    const gz = join(work, 'y.nc.gz');
    writeFileSync(gz, gzipSync(packedCdf()));
    expect(() => detectSource(gz)).toThrow(/gzip.*decompress/i);
    // an empty .h5 is taken as HDF5 by its extension; the reader's failure says so
    const emptyH5 = join(work, 'empty.h5');
    writeFileSync(emptyH5, '');
    const err = await convert(emptyH5, join(work, 'never.tet')).then(() => null, (x: Error & { code: string }) => x);
    expect(err?.code).toMatch(/^TET_CONVERT_/);
    expect(err?.message).toMatch(/extension/);
    expect(existsSync(join(work, 'never.tet'))).toBe(false);
  });
});

describe("error messages keep ours and add the reference's key words", () => {
  it('zstd decode ... chunk_index', () => {
    for (const f of ['m_zstd_corrupt.tet', 'm_zstd_checksum.tet', 'm_zstd_truncated.tet']) {
      const r = tet('query', '{"dataset":"a","sum":[]}', '-t', join(FIX, f), '-x');
      expect(r.rc, f).toBe(1);
      expect(r.err, f).toMatch(/^error: .*zstd decode.*/);
      expect(r.err, f).toMatch(/chunk_index/);
    }
  });
  it('maximum size, selection rank, exactly N axes, allowed root', () => {
    const big = join(work, 'big.json');
    writeFileSync(big, JSON.stringify({ dataset: 'a', sum: [], pad: 'x'.repeat(2 * 1024 * 1024) }));
    expect(tet('query', big, '-t', SIX).err).toMatch(/^error: .*maximum size/);
    expect(tetIn(quietEnv, ['query', '-'], `{"dataset":"a","sum":[],"pad":"${'x'.repeat(1100000)}"}`).err).toMatch(/maximum size/);
    const rank = tet('query', '{"dataset":"a","sum":[],"selection":[{}]}', '-t', SIX);
    expect(rank.err).toMatch(/selection rank/);
    expect(rank.err).toMatch(/exactly 2 axes/);
    const spill = tet('query', JSON.stringify({ dataset: 'a', spill: '/proc/nope.bin' }), '-t', SIX, '-x');
    expect(spill.rc).toBe(1);
    expect(spill.err).toMatch(/allowed root/);
  });
});
