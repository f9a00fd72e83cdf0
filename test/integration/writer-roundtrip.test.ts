// TetWriter: byte-exact reproduction of a reference file, round trips of every dtype with
// clipped edge tiles and each codec, f16 rounding, footer metadata, abort and misuse.
// Expected values are the written inputs, hand-computed f16 bit patterns and the reference
// file; raw files are also re-read with the independent spec-only reader.
import { ROOT, SHARED } from '../support/paths';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { open, TetIoError, TetWriter, type DTypeName, type TetTypedArray } from '../../lib/index';
import { f32ToF16Bits } from '../../lib/writer';
import { readIndependently } from '../support/sdk-independent-reader';

const dir = mkdtempSync(join(tmpdir(), 'tet-writer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const tmp = (name: string) => join(dir, `${serial++}-${name}`);

const REF = join(SHARED, 'fixtures/reference/tet');

describe('reference reproduction', () => {
  it('whole-data dataset reproduces sample.tet byte for byte', async () => {
    const path = tmp('sample.tet');
    const w = await TetWriter.create(path);
    w.addDataset({ name: 'temperature', dtype: 'f32', shape: [2, 3], chunkShape: [2, 2], data: new Float32Array([1, 2, 3, 4, 5, 6]) });
    await w.commit();
    expect(readFileSync(path).equals(readFileSync(join(REF, 'sample.tet')))).toBe(true);
  });

  it('streamed tiles in grid order reproduce sample.tet and large.tet', async () => {
    const sample = tmp('sample-stream.tet');
    const w = await TetWriter.create(sample);
    w.addDataset({ name: 'temperature', dtype: 'f32', shape: [2, 3], chunkShape: [2, 2] });
    await w.writeChunk('temperature', [0, 0], new Float32Array([1, 2, 4, 5]));
    await w.writeChunk('temperature', [0, 1], new Float32Array([3, 6]));
    await w.commit();
    expect(readFileSync(sample).equals(readFileSync(join(REF, 'sample.tet')))).toBe(true);

    const large = tmp('large.tet');
    const wl = await TetWriter.create(large);
    wl.addDataset({ name: 'a', dtype: 'f32', shape: [34, 64], chunkShape: [4, 4], data: Float32Array.from({ length: 34 * 64 }, (_, i) => i) });
    await wl.commit();
    expect(readFileSync(large).equals(readFileSync(join(REF, 'large.tet')))).toBe(true);
  });
});

const SHAPE = [5, 7];
const CHUNK = [2, 3];  // grid 3 x 3, clipped last row and column

function sampleData(dtype: DTypeName): { data: TetTypedArray; expected: (number | bigint)[] } {
  const n = SHAPE[0] * SHAPE[1];
  const idx = Array.from({ length: n }, (_, i) => i);
  switch (dtype) {
    case 'f32': {
      const v = idx.map((i) => Math.fround(i * 1.25 - 17.5));
      v[3] = NaN; v[4] = Infinity; v[5] = -Infinity; v[6] = Math.fround(3.4e38); v[7] = -0;
      return { data: Float32Array.from(v), expected: v };
    }
    case 'f64': {
      const v = idx.map((i) => i / 3 - 1e300 * (i % 2));
      v[2] = NaN; v[9] = Number.MIN_VALUE;
      return { data: Float64Array.from(v), expected: v };
    }
    case 'f16': {  // all exactly representable in binary16
      const v = idx.map((i) => (i - 17) * 0.5);
      v[0] = 65504; v[1] = -65504; v[2] = 2 ** -24; v[3] = Infinity;
      return { data: Float32Array.from(v), expected: v };
    }
    case 'i32': {
      const v = idx.map((i) => (i - 17) * 123457);
      v[0] = -(2 ** 31); v[1] = 2 ** 31 - 1;
      return { data: Int32Array.from(v), expected: v };
    }
    case 'u32': {
      const v = idx.map((i) => i * 99991);
      v[0] = 2 ** 32 - 1;
      return { data: Uint32Array.from(v), expected: v };
    }
    case 'i16': {
      const v = idx.map((i) => (i - 17) * 901);
      v[0] = -32768; v[1] = 32767;
      return { data: Int16Array.from(v), expected: v };
    }
    case 'u16': {
      const v = idx.map((i) => i * 1871);
      v[0] = 65535;
      return { data: Uint16Array.from(v), expected: v };
    }
    case 'u8': {
      const v = idx.map((i) => (i * 37) % 256);
      v[0] = 255;
      return { data: Uint8Array.from(v), expected: v };
    }
    case 'i64': {
      const v = idx.map((i) => BigInt(i - 17) * 9007199254740993n);
      v[0] = -(2n ** 63n); v[1] = 2n ** 63n - 1n;
      return { data: BigInt64Array.from(v), expected: v };
    }
    case 'u64': {
      const v = idx.map((i) => BigInt(i) * 18014398509481985n);
      v[0] = 2n ** 64n - 1n;
      return { data: BigUint64Array.from(v), expected: v };
    }
  }
}

const DTYPES: DTypeName[] = ['f32', 'f64', 'i32', 'i64', 'u8', 'u16', 'i16', 'u32', 'f16', 'u64'];
const same = (a: number | bigint, b: number | bigint) => Object.is(a, b) || a === b;

describe('round trips: every dtype, clipped edges, raw / zstd / auto', () => {
  for (const codec of ['raw', 'zstd', 'auto'] as const) {
    it.each(DTYPES)(`%s with codec ${codec}`, async (dtype) => {
      const { data, expected } = sampleData(dtype);
      const path = tmp(`${dtype}-${codec}.tet`);
      const w = await TetWriter.create(path);
      w.addDataset({ name: 'x', dtype, shape: SHAPE, chunkShape: CHUNK, codec, data });
      // a second, streamed dataset in the same file: tiles given out of grid order
      w.addDataset({ name: 'y', dtype, shape: [3], chunkShape: [2], codec });
      await w.writeChunk('y', [1], data.subarray(2, 3) as TetTypedArray);
      await w.writeChunk('y', [0], data.subarray(0, 2) as TetTypedArray);
      await w.commit();

      const f = await open(path);
      const info = f.dataset('x');
      expect([info.dtype, info.shape, info.chunkShape, info.grid, info.chunkCount]).toEqual([dtype, SHAPE, CHUNK, [3, 3], 9]);
      if (codec === 'raw') expect(info.codecs).toEqual({ raw: 9, zstd: 0 });
      if (codec === 'zstd') expect(info.codecs).toEqual({ raw: 0, zstd: 9 });
      const x = Array.from((await f.read('x')).data as ArrayLike<number | bigint>);
      expect(x.length).toBe(expected.length);
      x.forEach((v, i) => {
        if (!same(v, expected[i])) throw new Error(`${dtype}/${codec} x[${i}]: read ${v}, wrote ${expected[i]}`);
      });
      const y = Array.from((await f.read('y')).data as ArrayLike<number | bigint>);
      expect(y.every((v, i) => same(v, expected[i]))).toBe(true);
      f.close();
      if (codec === 'raw') {
        const ind = readIndependently(path).find((d) => d.name === 'x')!;
        expect(ind.values!.every((v, i) => same(v, expected[i]))).toBe(true);
      }
    });
  }

  it('auto keeps incompressible tiles raw and compresses constant ones', async () => {
    const path = tmp('auto.tet');
    const w = await TetWriter.create(path);
    let seed = 12345;
    const noise = Uint8Array.from({ length: 64 }, () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24);
    w.addDataset({ name: 'noise', dtype: 'u8', shape: [64], chunkShape: [64], codec: 'auto', data: noise });
    w.addDataset({ name: 'zeros', dtype: 'f64', shape: [4096], chunkShape: [1024], codec: 'auto', data: new Float64Array(4096) });
    await w.commit();
    const f = await open(path);
    expect(f.dataset('noise').codecs).toEqual({ raw: 1, zstd: 0 });
    expect(f.dataset('zeros').codecs).toEqual({ raw: 0, zstd: 4 });
    expect(f.dataset('zeros').storedBytes).toBeLessThan(4096 * 8 / 10);
    expect(Array.from((await f.read('noise')).data as Uint8Array)).toEqual(Array.from(noise));
    f.close();
  });
});

describe('f16', () => {
  it('float32 -> binary16 rounds to nearest even (hand-computed bit patterns)', () => {
    const cases: [number, number][] = [
      [1, 0x3c00], [-2, 0xc000], [0.5, 0x3800], [65504, 0x7bff], [65519, 0x7bff], [65520, 0x7c00],
      [1 + 2 ** -11, 0x3c00],          // halfway between 1 and 1+2^-10: even (1)
      [1 + 3 * 2 ** -11, 0x3c02],      // halfway between 1+2^-10 and 1+2^-9: even (1+2^-9)
      [1 + 2 ** -11 + 2 ** -20, 0x3c01],  // just above halfway
      [2 ** -14, 0x0400], [2 ** -24, 0x0001], [2 ** -25, 0x0000], [1.5 * 2 ** -25, 0x0001],
      [3 * 2 ** -25, 0x0002],          // 1.5 subnormal ulps: tie -> even (2)
      [-0, 0x8000], [Infinity, 0x7c00], [-Infinity, 0xfc00], [1e-10, 0x0000],
    ];
    for (const [value, bits] of cases) expect([value, f32ToF16Bits(value)]).toEqual([value, bits]);
    expect(f32ToF16Bits(NaN) & 0x7c00).toBe(0x7c00);
    expect(f32ToF16Bits(NaN) & 0x3ff).not.toBe(0);
  });

  it('f16 datasets accept Float32Array (rounded) or Uint16Array bits', async () => {
    const path = tmp('f16.tet');
    const w = await TetWriter.create(path);
    w.addDataset({ name: 'rounded', dtype: 'f16', shape: [3], chunkShape: [3], data: new Float32Array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 70000]) });
    w.addDataset({ name: 'bits', dtype: 'f16', shape: [2], chunkShape: [2], data: new Uint16Array([0x3555, 0xfbff]) });
    await w.commit();
    const ind = readIndependently(path);
    expect(ind.find((d) => d.name === 'rounded')!.values).toEqual([1, 1 + 2 ** -9, Infinity]);
    const f = await open(path);
    expect(Array.from((await f.read('rounded')).data as Float32Array)).toEqual([1, 1 + 2 ** -9, Infinity]);
    // 0x3555 = (1 + 341/1024) * 2^-2 ; 0xfbff = -65504
    expect(Array.from((await f.read('bits')).data as Float32Array)).toEqual([(1 + 341 / 1024) / 4, -65504]);
    f.close();
  });
});

describe('footer and execution settings', () => {
  it('metadata, history and execution settings round trip', async () => {
    const path = tmp('meta.tet');
    const w = await TetWriter.create(path, { execution: { memory_budget_percent_bps: 4000, memory_budget_bytes: 1 << 20 } });
    w.addDataset({ name: 't', dtype: 'f32', shape: [2, 3], chunkShape: [1, 3], data: new Float32Array(6) });
    w.setMetadata('t', { dim_names: ['time', 'station'], coords: { station: { labels: ['a', 'b', 'c'] } }, attrs: { units: 'K' } });
    w.setFileMetadata({ title: 'demo' });
    w.addHistory({ op: 'convert', source: 'x.h5', at: '2024-01-01T00:00:00Z', params: { level: 3 } });
    await w.commit();
    const f = await open(path);
    expect(f.fileExecution).toEqual({ memory_budget_percent_bps: 4000, memory_budget_bytes: 1048576 });
    expect(f.metadata).toEqual({ title: 'demo', datasets: { t: { dim_names: ['time', 'station'], coords: { station: { labels: ['a', 'b', 'c'] } }, attrs: { units: 'K' } } } });
    expect(f.history).toEqual([{ op: 'convert', source: 'x.h5', at: '2024-01-01T00:00:00Z', params: { level: 3 } }]);
    const labelled = await f.read('t', [{ start: 1 }, { start_label: 'b', stop_label: 'c' }]);
    expect(labelled.shape).toEqual([1, 1]);
    f.close();
  });

  it('metadata over 64 KiB is spilled and still resolves', async () => {
    const path = tmp('spill.tet');
    const n = 6000;
    const w = await TetWriter.create(path);
    w.addDataset({ name: 's', dtype: 'u8', shape: [n], chunkShape: [1000], data: new Uint8Array(n) });
    const labels = Array.from({ length: n }, (_, i) => `label-${String(i).padStart(8, '0')}`);
    w.setMetadata('s', { dim_names: ['i'], coords: { i: { labels } } });
    await w.commit();
    const f = await open(path);
    expect(f.layout.footer.metadataSpilled).toBe(true);
    expect(f.metadata.datasets?.s.coords?.i.labels).toEqual(labels);
    f.close();
  });
});

describe('abort and misuse', () => {
  it('abort leaves no file and no temp file behind', async () => {
    const sub = mkdtempSync(join(dir, 'abort-'));
    const path = join(sub, 'gone.tet');
    const w = await TetWriter.create(path);
    w.addDataset({ name: 'a', dtype: 'f64', shape: [4], chunkShape: [2] });
    await w.writeChunk('a', [0], new Float64Array([1, 2]));
    w.abort();
    w.abort();
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(sub)).toEqual([]);
    await expect(w.commit()).rejects.toMatchObject({ code: 'TET_WRITE_CLOSED' });
  });

  it('rejects wrong array types, tile sizes, coords and late datasets with TetIoError', async () => {
    const w = await TetWriter.create(tmp('misuse.tet'));
    w.addDataset({ name: 'a', dtype: 'i32', shape: [5], chunkShape: [2] });
    await expect(w.writeChunk('a', [0], new Float32Array(2))).rejects.toBeInstanceOf(TetIoError);
    await expect(w.writeChunk('a', [2], new Int32Array(2))).rejects.toThrow(/needs 1/);
    await expect(w.writeChunk('a', [3], new Int32Array(1))).rejects.toThrow(/outside grid/);
    await expect(w.writeChunk('b', [0], new Int32Array(2))).rejects.toThrow(/not declared/);
    expect(() => w.addDataset({ name: 'a', dtype: 'f32', shape: [1] })).toThrow(/declared twice/);
    await w.writeChunk('a', [0], new Int32Array([1, 2]));
    expect(() => w.addDataset({ name: 'late', dtype: 'f32', shape: [1] })).toThrow(expect.objectContaining({ code: 'TET_WRITE_SEALED' }));
    expect(() => w.addDataset({ name: 'q', dtype: 'f32' as DTypeName, shape: [0.5] })).toThrow(TetIoError);
    // missing tiles: the native writer refuses to commit an incomplete grid
    await expect(w.commit()).rejects.toMatchObject({ code: expect.stringMatching(/^TET_WRITE_/) });
    w.abort();
  });
});

describe('file size limit', () => {
  it('a write past RLIMIT_FSIZE fails with a TET_WRITE_* error instead of killing the process (SIGXFSZ ignored)', () => {
    const root = ROOT;
    const script = `
      const b = require(require.resolve('node-gyp-build', { paths: [${JSON.stringify(root)}] }))(${JSON.stringify(root)});
      (async () => {
        const w = b.writerCreate(${JSON.stringify(tmp('fsize.tet'))});
        const id = b.writerAddDataset(w, { name: 'a', dtype: 5, shape: [1 << 20], chunkShape: [1 << 16], codec: 0, level: 3 });
        try {
          for (let c = 0; c < 16; c++) await b.writerWriteChunk(w, id, [c], new Uint8Array(1 << 16));
          await b.writerCommit(w);
          console.log('committed');
        } catch (e) { console.log('error ' + e.code); b.writerAbort(w); }
      })();`;
    const r = spawnSync('bash', ['-c', `ulimit -f 64 && exec "${process.execPath}" -e "$0"`, script], { encoding: 'utf8' });
    expect(r.signal).toBeNull();
    expect(r.stdout.trim()).toMatch(/^error TET_WRITE_[A-Z_]+$/);
  });
});
