// TetWriter round trips checked by the independent model: every dtype x codec (raw, zstd, auto) x
// chunking (single tile, regular grid, clipped edges on every
// axis; rank 1..4), half written as whole data, half streamed as hand-cut tiles in shuffled order.
// Each file is read back through the SDK and by ../shared/conformance/runner/tet.py (numpy +
// libzstd, written from the spec): both must give exactly the bytes we wrote.
import { SHARED } from '../support/paths';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, TetWriter, type DTypeName, type TetTypedArray } from '../../lib/index';

const RUNNER = join(SHARED, 'conformance/runner');
const dir = mkdtempSync(join(tmpdir(), 'tet-writer-model-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DTYPES: DTypeName[] = ['f16', 'f32', 'f64', 'u8', 'i16', 'u16', 'i32', 'u32', 'i64', 'u64'];
const SIZE: Record<DTypeName, number> = { u8: 1, i16: 2, u16: 2, f16: 2, i32: 4, u32: 4, f32: 4, i64: 8, u64: 8, f64: 8 };
const NUMPY: Record<DTypeName, string> = {
  u8: '|u1', i16: '<i2', u16: '<u2', f16: '<f2', i32: '<i4', u32: '<u4', f32: '<f4', i64: '<i8', u64: '<u8', f64: '<f8',
};
const CODECS = ['raw', 'zstd', 'auto'] as const;

interface Layout { name: string; shape: number[]; chunk: number[]; constant?: boolean }
const LAYOUTS: Layout[] = [
  { name: 'r1_single', shape: [37], chunk: [37] },
  { name: 'r1_regular', shape: [40], chunk: [8] },
  { name: 'r1_clipped', shape: [37], chunk: [8] },
  { name: 'r2_single', shape: [6, 10], chunk: [6, 10] },
  { name: 'r2_regular', shape: [6, 10], chunk: [3, 5] },
  { name: 'r2_clipped', shape: [7, 11], chunk: [3, 4] },
  { name: 'r3_single', shape: [3, 4, 5], chunk: [3, 4, 5] },
  { name: 'r3_regular', shape: [4, 5, 6], chunk: [2, 5, 3] },
  { name: 'r3_clipped', shape: [5, 6, 7], chunk: [2, 4, 3] },
  { name: 'r4_single', shape: [2, 3, 4, 5], chunk: [2, 3, 4, 5] },
  { name: 'r4_regular', shape: [4, 4, 5, 6], chunk: [2, 2, 5, 3] },
  { name: 'r4_clipped', shape: [3, 5, 4, 7], chunk: [2, 3, 3, 4] },
  { name: 'r4_mixed', shape: [1, 9, 2, 10], chunk: [1, 4, 2, 3] },  // some axes regular, some clipped
  { name: 'r2_constant', shape: [64, 48], chunk: [32, 32], constant: true },  // clearly compressible
];

const prod = (v: number[]) => v.reduce((a, b) => a * b, 1);

// Deterministic bytes: every third element is random bits over the whole dtype range (NaN
// payloads, infinities, subnormals, extreme integers), the rest a smooth ramp so zstd/auto compress.
function makeBytes(dtype: DTypeName, n: number, seed: number): Uint8Array {
  const size = SIZE[dtype];
  const out = new Uint8Array(n * size);
  const dv = new DataView(out.buffer);
  let s = seed >>> 0 || 1;
  const rnd = () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return s & 0xff;
  };
  for (let i = 0; i < n; i++) {
    if (i % 3 === 0) {
      for (let b = 0; b < size; b++) out[i * size + b] = rnd();
      continue;
    }
    const k = i % 97;
    switch (dtype) {
      case 'u8': out[i] = k; break;
      case 'i16': dv.setInt16(i * 2, k - 48, true); break;
      case 'u16': dv.setUint16(i * 2, k * 31, true); break;
      case 'f16': dv.setUint16(i * 2, 0x3c00 + k, true); break;    // 1 + k/1024
      case 'i32': dv.setInt32(i * 4, (k - 48) * 1000, true); break;
      case 'u32': dv.setUint32(i * 4, k * 100000, true); break;
      case 'f32': dv.setFloat32(i * 4, k * 0.25 - 3, true); break;
      case 'i64': dv.setBigInt64(i * 8, BigInt(k - 48) * 10_000_000_000n, true); break;
      case 'u64': dv.setBigUint64(i * 8, BigInt(k) * 10_000_000_000n, true); break;
      case 'f64': dv.setFloat64(i * 8, k / 7 - 5, true); break;
    }
  }
  return out;
}

function typed(dtype: DTypeName, bytes: Uint8Array): TetTypedArray {
  const b = bytes.slice().buffer;
  switch (dtype) {
    case 'u8': return new Uint8Array(b);
    case 'i16': return new Int16Array(b);
    case 'u16': case 'f16': return new Uint16Array(b);  // f16 as exact bit patterns
    case 'i32': return new Int32Array(b);
    case 'u32': return new Uint32Array(b);
    case 'f32': return new Float32Array(b);
    case 'i64': return new BigInt64Array(b);
    case 'u64': return new BigUint64Array(b);
    case 'f64': return new Float64Array(b);
  }
}

// The clipped tile at grid `coords`, cut by hand from row-major bytes.
function cutTile(bytes: Uint8Array, size: number, shape: number[], chunk: number[], coords: number[]): Uint8Array {
  const lo = coords.map((c, a) => c * chunk[a]);
  const ext = lo.map((l, a) => Math.min(chunk[a], shape[a] - l));
  const out = new Uint8Array(prod(ext) * size);
  const strides = shape.map((_, a) => prod(shape.slice(a + 1)));
  let o = 0;
  const idx = new Array(ext.length).fill(0);
  for (let t = 0; t < prod(ext); t++) {
    let off = 0;
    for (let a = 0; a < ext.length; a++) off += (lo[a] + idx[a]) * strides[a];
    out.set(bytes.subarray(off * size, (off + 1) * size), o);
    o += size;
    for (let a = ext.length - 1; a >= 0; a--) {
      if (++idx[a] < ext[a]) break;
      idx[a] = 0;
    }
  }
  return out;
}

function gridCoords(grid: number[]): number[][] {
  const all: number[][] = [[]];
  for (const g of grid) {
    const next: number[][] = [];
    for (const prefix of all) for (let i = 0; i < g; i++) next.push([...prefix, i]);
    all.splice(0, all.length, ...next);
  }
  return all;
}

function shuffled<T>(v: T[], seed: number): T[] {
  const a = v.slice();
  let s = seed;
  for (let i = a.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) >>> 0;
    const j = s % (i + 1);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

// The independent model: tet.read (strict parse + decode of every tile) dumps each array as
// little-endian bytes, f16 also converted to f32 by numpy, and the tet.py summary.
const MODEL = String.raw`
import sys, json, base64
sys.path.insert(0, sys.argv[1])
import numpy as np
import tet
out = {}
for path in sys.argv[2:]:
    f = tet.read(path)
    arrays = {}
    for name in f.names():
        a = np.ascontiguousarray(f[name])
        d = f.dataset(name)
        arrays[name] = {
            'dtype': a.dtype.str, 'shape': list(a.shape),
            'b64': base64.b64encode(a.astype(a.dtype.newbyteorder('<')).tobytes()).decode(),
            'f32': base64.b64encode(a.astype('<f4').tobytes()).decode() if a.dtype == np.float16 else None,
            'codecs': {'raw': sum(1 for c in d.chunks if c.codec == 0), 'zstd': sum(1 for c in d.chunks if c.codec == 1)},
            'zstd_not_smaller': sum(1 for c in d.chunks if c.codec == 1 and c.stored_byte_len >= c.raw_byte_len),
        }
    out[path] = arrays
print(json.dumps(out))
`;

interface ModelArray {
  dtype: string; shape: number[]; b64: string; f32: string | null; codecs: { raw: number; zstd: number }; zstd_not_smaller: number;
}

const files: { dtype: DTypeName; codec: (typeof CODECS)[number]; path: string; written: Map<string, Uint8Array> }[] = [];
let model: Record<string, Record<string, ModelArray>> = {};

beforeAll(async () => {
  let seed = 1;
  for (const dtype of DTYPES) {
    for (const codec of CODECS) {
      const path = join(dir, `${dtype}-${codec}.tet`);
      const written = new Map<string, Uint8Array>();
      const w = await TetWriter.create(path);
      const streamed: { l: Layout; bytes: Uint8Array }[] = [];
      LAYOUTS.forEach((l, i) => {
        const bytes = l.constant ? new Uint8Array(prod(l.shape) * SIZE[dtype]).fill(0x11) : makeBytes(dtype, prod(l.shape), seed++);
        written.set(l.name, bytes);
        if (i % 2 === 0) {
          w.addDataset({ name: l.name, dtype, shape: l.shape, chunkShape: l.chunk, codec, data: typed(dtype, bytes) });
        } else {
          w.addDataset({ name: l.name, dtype, shape: l.shape, chunkShape: l.chunk, codec });
          streamed.push({ l, bytes });
        }
      });
      for (const { l, bytes } of streamed) {
        const grid = l.shape.map((n, a) => Math.ceil(n / l.chunk[a]));
        for (const c of shuffled(gridCoords(grid), seed)) {
          await w.writeChunk(l.name, c, typed(dtype, cutTile(bytes, SIZE[dtype], l.shape, l.chunk, c)));
        }
      }
      await w.commit();
      files.push({ dtype, codec, path, written });
    }
  }
  const stdout = execFileSync('python3', ['-c', MODEL, RUNNER, ...files.map((f) => f.path)], { encoding: 'utf8', maxBuffer: 256 << 20 });
  model = JSON.parse(stdout);
}, 120_000);

const b64 = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength).toString('base64');
const bytesOf = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

describe('TetWriter round trips vs the independent model (tet.py)', () => {
  it('the model runner imports here (numpy + libzstd)', () => {
    const r = spawnSync('python3', ['-c', `import sys; sys.path.insert(0, ${JSON.stringify(RUNNER)}); import tet; print(len(tet.zstd_decompress(tet.zstd_compress(b'x' * 1000), 1000)))`], { encoding: 'utf8' });
    expect([r.status, r.stdout.trim()]).toEqual([0, '1000']);
  });

  for (const dtype of DTYPES) {
    for (const codec of CODECS) {
      it(`${dtype} / ${codec}: ${LAYOUTS.length} chunkings read back exactly by the SDK and by tet.py`, async () => {
        const f = files.find((x) => x.dtype === dtype && x.codec === codec)!;
        const m = model[f.path];
        expect(Object.keys(m).sort()).toEqual(LAYOUTS.map((l) => l.name).sort());
        const file = await open(f.path);
        try {
          for (const l of LAYOUTS) {
            const wrote = f.written.get(l.name)!;
            const grid = l.shape.map((n, a) => Math.ceil(n / l.chunk[a]));
            const tiles = prod(grid);
            // the model
            const a = m[l.name];
            expect([l.name, a.dtype, a.shape]).toEqual([l.name, NUMPY[dtype], l.shape]);
            expect(a.b64 === b64(wrote), `${dtype}/${codec}/${l.name}: tet.py bytes differ from the written bytes`).toBe(true);
            if (codec === 'raw') expect(a.codecs).toEqual({ raw: tiles, zstd: 0 });
            if (codec === 'zstd') expect(a.codecs).toEqual({ raw: 0, zstd: tiles });
            if (codec === 'auto') expect(a.codecs.raw + a.codecs.zstd).toBe(tiles);
            // the SDK
            const info = file.dataset(l.name);
            expect([info.dtype, info.shape, info.chunkShape, info.grid, info.chunkCount]).toEqual([dtype, l.shape, l.chunk, grid, tiles]);
            expect(info.codecs).toEqual(a.codecs);
            const r = await file.read(l.name);
            expect(r.shape).toEqual(l.shape);
            // f16 reads widen to Float32Array: compare with numpy's float16 -> float32 conversion
            const want = dtype === 'f16' ? a.f32! : b64(wrote);
            expect(b64(bytesOf(r.data)) === want, `${dtype}/${codec}/${l.name}: SDK read differs`).toBe(true);
          }
        } finally {
          file.close();
        }
      });
    }
  }

  it('auto stores zstd only where it is smaller: constant tiles compress, no zstd tile grew', () => {
    for (const dtype of DTYPES) {
      const auto = model[files.find((x) => x.dtype === dtype && x.codec === 'auto')!.path];
      expect([dtype, auto.r2_constant.codecs]).toEqual([dtype, { raw: 0, zstd: 4 }]);
      for (const [name, a] of Object.entries(auto)) expect([dtype, name, a.zstd_not_smaller]).toEqual([dtype, name, 0]);
    }
  });

  it('`python3 tet.py FILE` summarizes every written file without error', () => {
    for (const f of files) {
      const r = spawnSync('python3', [join(RUNNER, 'tet.py'), f.path], { encoding: 'utf8' });
      expect([f.path, r.status, r.stderr]).toEqual([f.path, 0, '']);
      const s = JSON.parse(r.stdout) as { dataset_count: number; footer_error: unknown; datasets: { name: string; dtype: string; shape: number[]; chunk_shape: number[]; chunks: number; codecs: string[] }[] };
      expect([s.dataset_count, s.footer_error]).toEqual([LAYOUTS.length, null]);
      for (const l of LAYOUTS) {
        const d = s.datasets.find((x) => x.name === l.name)!;
        expect([d.dtype, d.shape, d.chunk_shape, d.chunks]).toEqual([f.dtype, l.shape, l.chunk, prod(l.shape.map((n, a) => Math.ceil(n / l.chunk[a])))]);
        if (f.codec !== 'auto') expect(d.codecs).toEqual([f.codec]);
      }
    }
  }, 60_000);
});
