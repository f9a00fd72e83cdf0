// The device path end to end through the SDK with the host stub as the CUDA module
// (cuda/host_stub.cpp: the module ABI on the CPU with the device backend's shared arithmetic).
// This file runs in its own process (vitest pool 'forks'), so the environment set here is what
// the addon sees when it first loads the device module. GPU queries must equal the CPU's bit for
// bit, report where they ran, and fall back to the CPU (never fail) on device errors.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostInfo, open, TetWriter, type TetFile } from '../../lib/index';
import { packageRoot } from '../../lib/binding';

const STUB = join(packageRoot(), 'build', 'Release', 'tetration_cuda_stub.so');
process.env.TET_CUDA_MODULE = STUB;
process.env.TET_CUDA_DRIVER = STUB;  // any loadable library stands in for libcuda.so.1
process.env.TET_CUDA_STUB_DEVICES = '2';

const dir = mkdtempSync(join(tmpdir(), 'tet-device-'));
let file: TetFile;

beforeAll(async () => {
  expect(existsSync(STUB), `${STUB} (binding.gyp target tetration_cuda_stub)`).toBe(true);
  const w = await TetWriter.create(join(dir, 'd.tet'));
  const n = 300 * 200;
  const f32 = Float32Array.from({ length: n }, (_, i) => (i % 97 === 0 ? NaN : Math.sin(i) * 1000));
  const i64 = BigInt64Array.from({ length: n }, (_, i) => BigInt(i) * 1000003n - 9000000000n);
  w.addDataset({ name: 'f', dtype: 'f32', shape: [300, 200], chunkShape: [64, 64], data: f32 });
  w.addDataset({ name: 'z', dtype: 'f64', shape: [300, 200], chunkShape: [100, 100], codec: 'zstd',
    data: Float64Array.from(f32, (v, i) => v * 1.5 + i) });
  w.addDataset({ name: 'i', dtype: 'i64', shape: [n], chunkShape: [7000], data: i64 });
  await w.commit();
  file = await open(join(dir, 'd.tet'));
});
afterAll(() => { file?.close(); rmSync(dir, { recursive: true, force: true }); });

const OPS = ['sum', 'mean', 'min', 'max', 'count', 'var', 'std', 'product', 'norm_l1', 'norm_l2', 'all_finite', 'any_nan',
  'any_inf', 'nan_count', 'inf_count', 'nan_mean', 'nan_std'];

describe('device module: host stub', () => {
  it('hostInfo lists the stub devices', () => {
    const h = hostInfo();
    expect(h.deviceBackend).toBe('host-stub');
    expect(h.deviceStatus).toBe('');
    expect(h.buildFlags).toBe('cuda=on metal=off');
    expect(h.devices.map((d) => [d.ordinal, d.name])).toEqual([[0, 'host stub 0'], [1, 'host stub 1']]);
    expect(h.devices[0].totalBytes).toBe(16 * 2 ** 30);
  });

  for (const ds of ['f', 'z', 'i']) {
    it(`every device op on ${ds}: cuda, cuda:1, cuda:multi equal cpu`, async () => {
      for (const op of OPS) {
        const q = { dataset: ds, [op]: [] };
        const cpu = await file.query(q, { preview: 0, device: 'cpu' });
        for (const token of ['cuda', 'cuda:1', 'cuda:multi']) {
          const r = await file.query(q, { preview: 0, device: token });
          const ex = r.execution!;
          expect(ex.device_requested).toBe(token);
          expect(ex.device_used, `${op} ${token}`).toBe(token === 'cuda' ? 'cuda:0' : token);
          expect(ex.device_fallback_reason).toBeUndefined();
          expect(ex.device_gpu_multi).toBe(token === 'cuda:multi');
          expect(ex.device_gpu_pipeline).toBe(true);
          const pick = (e: Record<string, unknown>) => Object.fromEntries(Object.entries(e).filter(([k]) => k.startsWith('operation_')));
          expect(pick(ex as never), `${op} on ${ds} via ${token}`).toEqual(pick(cpu.execution as never));
        }
      }
    });
  }

  it('a strided selection folds on the device too', async () => {
    const q = { dataset: 'f', var: [], selection: [{ start: 3, stop: 290, step: 3 }, { start: 1, step: 2 }] };
    const cpu = await file.query(q, { preview: 0 });
    const gpu = await file.query(q, { preview: 0, device: 'cuda' });
    expect(gpu.execution!.device_used).toBe('cuda:0');
    expect(gpu.execution!.operation_var).toBe(cpu.execution!.operation_var);
  });

  for (const ds of ['f', 'z']) {
    it(`every device op as a partial reduction on ${ds} (axis 0, axis 1, strided): cuda equals cpu`, async () => {
      const selections = [undefined, [{ start: 5, stop: 290, step: 3 }, { start: 1, step: 2 }]];
      for (const op of OPS) {
        for (const axes of [[0], [1]]) {
          for (const selection of selections) {
            const q = { dataset: ds, [op]: axes, ...(selection ? { selection } : {}) };
            const cpu = await file.query(q, { preview: 0, device: 'cpu' });
            const gpu = await file.query(q, { preview: 0, device: 'cuda:1' });
            const what = `${op} over ${axes} of ${ds}${selection ? ' (strided)' : ''}`;
            expect(gpu.execution!.device_used, what).toBe('cuda:1');
            expect(gpu.execution!.device_fallback_reason, what).toBeUndefined();
            const pick = (e: Record<string, unknown>) => Object.fromEntries(Object.entries(e).filter(([k]) => k.startsWith('operation_')));
            expect(pick(gpu.execution as never), what).toEqual(pick(cpu.execution as never));
          }
        }
      }
    });
  }

  it('hand-computed: column means of a known grid on the device', async () => {
    // d[r][c] = r * 200 + c (the writer's row-major order): the mean over rows of column c is
    // 200 * 149.5 + c
    const w = await TetWriter.create(join(dir, 'grid.tet'));
    w.addDataset({ name: 'g', dtype: 'f64', shape: [300, 200], chunkShape: [64, 64],
      data: Float64Array.from({ length: 300 * 200 }, (_, i) => i) });
    await w.commit();
    const g = await open(join(dir, 'grid.tet'));
    try {
      const r = await g.query({ dataset: 'g', mean: [0] }, { preview: 0, device: 'cuda' });
      expect(r.execution!.device_used).toBe('cuda:0');
      const means = r.execution!.operation_reduced_mean as Float64Array;
      expect(Array.from(means)).toEqual(Array.from({ length: 200 }, (_, c) => 200 * 149.5 + c));
    } finally {
      g.close();
    }
  });

  it('ops and shapes the module does not offer run on the CPU with the reason', async () => {
    for (const [q, reason] of [
      [{ dataset: 'f', arg_max: [] }, 'gpu_unsupported_op'],
      [{ dataset: 'f', median: [] }, 'gpu_unsupported_op'],
      [{ dataset: 'f', mean: [] }, 'auto_below_size_threshold'],
    ] as const) {
      const token = reason === 'auto_below_size_threshold' ? 'auto' : 'cuda';
      const r = await file.query(q, { preview: 0, device: token });
      expect(r.execution!.device_used).toBe('cpu');
      expect(r.execution!.device_fallback_reason).toBe(reason);
    }
    const far = await file.query({ dataset: 'f', sum: [] }, { preview: 0, device: 'cuda:2' });
    expect(far.execution!.device_fallback_reason).toBe('gpu_device_not_found');
  });

  it('runtime device failures fall back to the CPU: same values, the reason in the response', async () => {
    const q = { dataset: 'z', std: [] };
    const cpu = await file.query(q, { preview: 0 });
    for (const [mode, reason] of [['runtime', 'gpu_runtime_error'], ['vram', 'gpu_vram_exceeded']]) {
      process.env.TET_CUDA_STUB_FAIL = mode;
      try {
        const r = await file.query(q, { preview: 0, device: 'cuda' });
        expect(r.execution!.device_used).toBe('cpu');
        expect(r.execution!.device_fallback_reason).toBe(reason);
        expect(r.execution!.operation_std).toBe(cpu.execution!.operation_std);
      } finally {
        delete process.env.TET_CUDA_STUB_FAIL;
      }
    }
  });
});
