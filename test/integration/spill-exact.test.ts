// Spill export (`"spill"` through `tet query -x`) is byte-exact: the file holds the selection
// dtype-native little-endian (f16 stays 2-byte halfs), equal to numpy's `arr[sel].astype('<dt')
// .tobytes()` on the independent model's array (conformance/runner/tet.py) and to SDK read().
// Fixtures cover clipped edge tiles, zstd, mixed codecs, rank 4, i64/u64 beyond 2^53 and f16;
// selections cover full reads, strided and offset windows, and stops past the end (clamped).
import { ROOT, SHARED } from '../support/paths';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open } from '../../lib/index';

const BIN = join(ROOT, 'bin/tet.js');
const RUNNER = join(SHARED, 'conformance/runner');
const FIX = join(SHARED, 'conformance/fixtures');
const work = mkdtempSync(join(tmpdir(), 'tet-spill-exact-'));
const env = { ...process.env, XDG_CACHE_HOME: join(work, 'cache') };
afterAll(() => rmSync(work, { recursive: true, force: true }));

type Sel = { start?: number; stop?: number; step?: number };
interface Case { id: string; file: string; dataset: string; dtype: string; size: number; selection?: Sel[] }

const CASES: Case[] = [
  { id: 'f32_edges_full', file: 'f32_r2_edges.tet', dataset: 'temperature', dtype: 'f32', size: 4 },
  { id: 'f32_edges_window', file: 'f32_r2_edges.tet', dataset: 'temperature', dtype: 'f32', size: 4,
    selection: [{ start: 30, stop: 37 }, { start: 19, stop: 23 }] },                     // only clipped edge tiles
  { id: 'f32_edges_strided', file: 'f32_r2_edges.tet', dataset: 'temperature', dtype: 'f32', size: 4,
    selection: [{ start: 3, stop: 100, step: 7 }, { start: 1, stop: 23, step: 4 }] },    // stop past the end clamps
  { id: 'f64_zstd_full', file: 'f64_r3_zstd.tet', dataset: 'pressure', dtype: 'f64', size: 8 },
  { id: 'f64_zstd_strided', file: 'f64_r3_zstd.tet', dataset: 'pressure', dtype: 'f64', size: 8,
    selection: [{ step: 2 }, { start: 3, stop: 9 }, { start: 10, stop: 11 }] },
  { id: 'i64_mixed_full', file: 'i64_r2_mixed.tet', dataset: 'ticks', dtype: 'i64', size: 8 },
  { id: 'i64_mixed_strided', file: 'i64_r2_mixed.tet', dataset: 'ticks', dtype: 'i64', size: 8,
    selection: [{ start: 15, stop: 50, step: 3 }, { start: 0, stop: 40, step: 13 }] },
  { id: 'i64_2p53', file: 'bigint_i64_2p53.tet', dataset: 'neg', dtype: 'i64', size: 8, selection: [{ start: 7, stop: 33, step: 5 }, {}] },
  { id: 'u64_zstd', file: 'u64_r1_zstd.tet', dataset: 'big', dtype: 'u64', size: 8, selection: [{ start: 63, stop: 300, step: 2 }] },
  { id: 'u16_r4_full', file: 'u16_r4_zstd.tet', dataset: 'level', dtype: 'u16', size: 2 },
  { id: 'u16_r4_strided', file: 'u16_r4_zstd.tet', dataset: 'level', dtype: 'u16', size: 2,
    selection: [{ start: 1, stop: 5, step: 3 }, { step: 2 }, { start: 2, stop: 7 }, { start: 4, stop: 999, step: 3 }] },
  { id: 'i16_r5_mixed', file: 'i16_r5_mixed.tet', dataset: 'delta', dtype: 'i16', size: 2,
    selection: [{}, { start: 1, stop: 4 }, { step: 2 }, { start: 3, stop: 6 }, { start: 4, stop: 7, step: 2 }] },
  { id: 'f16_full', file: 'f16_r2.tet', dataset: 'half', dtype: 'f16', size: 2 },
  { id: 'f16_strided', file: 'f16_r2.tet', dataset: 'half', dtype: 'f16', size: 2, selection: [{ start: 6, stop: 20, step: 5 }, { start: 7, stop: 29, step: 3 }] },
  { id: 'u8_r3', file: 'u8_r3.tet', dataset: 'mask', dtype: 'u8', size: 1, selection: [{ step: 4 }, { start: 2, stop: 7 }, { start: 1, stop: 8, step: 2 }] },
  { id: 'big_f32_strided', file: 'big_f32.tet', dataset: 'data', dtype: 'f32', size: 4,
    selection: [{ start: 5, stop: 2995, step: 7 }, { start: 100, stop: 1400, step: 3 }] },           // many tiles
  { id: 'big_f64_window', file: 'big_f64.tet', dataset: 'data', dtype: 'f64', size: 8,
    selection: [{ start: 250, stop: 1200 }, { start: 60, stop: 1000, step: 2 }] },                   // mixed codecs
  { id: 'nonfinite_f32', file: 'nan_inf_f32.tet', dataset: 'obs', dtype: 'f32', size: 4 },
];

const NUMPY: Record<string, string> = { f16: '<f2', f32: '<f4', f64: '<f8', i64: '<i8', u64: '<u8', u16: '<u2', i16: '<i2', u8: '|u1' };

// numpy slices of the independent model's arrays: the spill bytes (dtype-native LE), the
// SDK's widened form for f16 (f32), and the selection shape
const MODEL = String.raw`
import sys, json, base64
sys.path.insert(0, sys.argv[1])
import numpy as np
import tet
cases = json.loads(sys.stdin.read())
cache = {}
out = {}
for c in cases:
    if c['file'] not in cache: cache[c['file']] = tet.read(c['file'])
    a = cache[c['file']][c['dataset']]
    sel = tuple(slice(s.get('start'), s.get('stop'), s.get('step')) for s in (c.get('selection') or [{}] * a.ndim))
    s = np.ascontiguousarray(a[sel])
    native = s.astype(np.dtype(c['np']))
    sdk = s.astype('<f4') if s.dtype == np.float16 else native
    out[c['id']] = {'shape': list(s.shape), 'dtype': a.dtype.str, 'spill': base64.b64encode(native.tobytes()).decode(),
                    'sdk': base64.b64encode(sdk.tobytes()).decode()}
print(json.dumps(out))
`;

let model: Record<string, { shape: number[]; dtype: string; spill: string; sdk: string }> = {};

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist/cli.cjs'))) throw new Error('dist/cli.cjs is missing: run `npm run build:ts` first');
  const input = JSON.stringify(CASES.map((c) => ({ ...c, file: join(FIX, c.file), np: NUMPY[c.dtype] })));
  model = JSON.parse(execFileSync('python3', ['-c', MODEL, RUNNER], { input, encoding: 'utf8', maxBuffer: 64 << 20 }));
});

function spill(file: string, doc: object, allow: string) {
  const r = spawnSync(process.execPath, [BIN, 'query', JSON.stringify(doc), '-t', file, '-x', '--format', 'stats', '--spill-allow', allow, '--no-history'],
    { env, encoding: 'utf8', timeout: 60_000 });
  expect([r.status, r.signal, r.stderr]).toEqual([0, null, '']);
  return JSON.parse(r.stdout) as { read_plan: { logical_selection_shape: number[] }; execution: Record<string, unknown> };
}

const bytesOf = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

describe('spill export is byte-exact', () => {
  it.each(CASES.map((c) => [c.id, c] as const))('%s', async (id, c) => {
    const m = model[id];
    expect(m.dtype).toBe(NUMPY[c.dtype]);
    const want = Buffer.from(m.spill, 'base64');
    const elements = m.shape.reduce((a, b) => a * b, 1);
    expect(want.length).toBe(elements * c.size);
    expect(elements).toBeGreaterThan(1);

    const out = join(work, `${id}.bin`);
    const resp = spill(join(FIX, c.file), { dataset: c.dataset, spill: out, ...(c.selection ? { selection: c.selection } : {}) }, work);
    expect(resp.read_plan.logical_selection_shape).toEqual(m.shape);
    expect(resp.execution).toMatchObject({ memory_strategy: 'mmap_spill', spill_path: out, spill_bytes: want.length });
    expect(statSync(out).size).toBe(want.length);
    const got = readFileSync(out);
    if (!got.equals(want)) {
      let i = 0;
      while (got[i] === want[i]) i++;
      throw new Error(`${id}: spill differs from numpy at byte ${i} (element ${Math.floor(i / c.size)})`);
    }

    // SDK read of the same selection (f16 widened to f32, compared with numpy's widening)
    const f = await open(join(FIX, c.file));
    try {
      const r = await f.read(c.dataset, c.selection);
      expect(r.shape).toEqual(m.shape);
      expect(bytesOf(r.data).equals(Buffer.from(m.sdk, 'base64')), `${id}: SDK read differs from numpy`).toBe(true);
      if (c.dtype !== 'f16') expect(bytesOf(r.data).equals(got)).toBe(true);
    } finally {
      f.close();
    }
  }, 60_000);

  it('a relative spill path lands beside the .tet (copied into a scratch tree)', () => {
    const tree = join(work, 'tree');
    mkdirSync(join(tree, 'out'), { recursive: true });
    copyFileSync(join(FIX, 'f32_r2_edges.tet'), join(tree, 'edges.tet'));
    const resp = spill(join(tree, 'edges.tet'), { dataset: 'temperature', spill: 'out/rel.bin', selection: CASES[2].selection }, tree);
    expect(resp.execution.spill_path).toBe(join(tree, 'out', 'rel.bin'));
    expect(readFileSync(join(tree, 'out', 'rel.bin')).equals(Buffer.from(model.f32_edges_strided.spill, 'base64'))).toBe(true);
  });
});
