// Device routing without a GPU: each scenario runs in a child process (the addon loads the
// device module once per process) with its own environment: no module, a module without a
// driver, a module whose runtime refuses, a module restricting dtypes; and every token there.
// The tokens' schema check stays in lib/ (TET_QUERY_INVALID before native is asked).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../lib/binding';

const ROOT = packageRoot();
// The addon the SDK loads (node-gyp-build: build/Release in a source build, prebuilds/ where
// prebuildify moved it, as in CI).
const ADDON = (createRequire(import.meta.url)('node-gyp-build') as { path(dir: string): string }).path(ROOT);
const STUB = join(ROOT, 'build', 'Release', 'tetration_cuda_stub.so');

type Route = { requested: string; used: string; reason?: string; pipeline: boolean; multi: boolean; gpu: boolean; ordinal: number };
type Host = { devices: unknown[]; deviceBackend: string; deviceStatus: string; deviceDetail: string; buildFlags: string };

// Routes each request in a fresh process with `env`; returns hostInfo and the routes.
function inChild(env: Record<string, string>, reqs: object[]): { host: Host; routes: Route[] } {
  const script = `const b = require(${JSON.stringify(ADDON)});
const reqs = ${JSON.stringify(reqs)};
console.log(JSON.stringify({ host: b.hostInfo(), routes: reqs.map((r) => b.routeDevice(r)) }));`;
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TET_CUDA')));
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...clean, ...env } });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

const BIG = 1 << 30;
const req = (token: string, extra: object = {}) => ({ token, op: 1, dtype: 1, scalar: true, logicalBytes: BIG, chunks: 8, outElements: 1, ...extra });
const GPU_TOKENS = ['cuda', 'cuda:0', 'cuda:3', 'cuda:multi', 'auto'];

describe('device routing (native), no GPU', () => {
  it('the addon and the stub module are built', () => {
    expect(existsSync(ADDON)).toBe(true);
    expect(existsSync(STUB)).toBe(true);
  });

  it('no module: every GPU token runs on the CPU with gpu_feature_disabled; cpu / small auto / no op keep their reasons', () => {
    for (const env of [{ TET_CUDA_MODULE: join(ROOT, 'no-such-module.so') }, { TET_CUDA_MODULE: 'off' }]) {
      const { host, routes } = inChild(env, [...GPU_TOKENS.map((t) => req(t)), req('cpu'), req('auto', { logicalBytes: 1000 }),
        req('cuda', { op: 0 }), req('metal'), req('rocm:multi')]);
      expect(host.devices).toEqual([]);
      expect(host.deviceBackend).toBe('');
      expect(host.deviceStatus).toBe('gpu_feature_disabled');
      expect(host.buildFlags).toBe('cuda=off metal=off');
      for (const r of routes.slice(0, GPU_TOKENS.length)) expect(r).toMatchObject({ used: 'cpu', reason: 'gpu_feature_disabled', gpu: false });
      const [cpu, small, noOp, metal, rocm] = routes.slice(GPU_TOKENS.length);
      expect(cpu).toMatchObject({ used: 'cpu', gpu: false });
      expect(cpu.reason).toBeUndefined();
      expect(small.reason).toBe('auto_below_size_threshold');
      expect(noOp.reason).toBe('preview_or_spill_only');
      expect(metal.reason).toBe('gpu_feature_disabled');
      expect(rocm.reason).toBe('gpu_feature_disabled');
    }
  });

  it('a module but no driver: gpu_driver_unavailable', () => {
    const { host, routes } = inChild({ TET_CUDA_MODULE: STUB, TET_CUDA_DRIVER: '/nonexistent/libcuda.so.1' }, GPU_TOKENS.map((t) => req(t)));
    expect(host.deviceStatus).toBe('gpu_driver_unavailable');
    expect(host.deviceBackend).toBe('host-stub');
    expect(host.deviceDetail).toContain('/nonexistent/libcuda.so.1');
    for (const r of routes) expect(r).toMatchObject({ used: 'cpu', reason: 'gpu_driver_unavailable' });
  });

  it('a driver whose runtime refuses, or no device: gpu_driver_unavailable / gpu_no_device', () => {
    const refused = inChild({ TET_CUDA_MODULE: STUB, TET_CUDA_DRIVER: STUB, TET_CUDA_STUB_INIT_FAIL: '1' }, [req('cuda')]);
    expect(refused.routes[0]).toMatchObject({ used: 'cpu', reason: 'gpu_driver_unavailable' });
    const none = inChild({ TET_CUDA_MODULE: STUB, TET_CUDA_DRIVER: STUB, TET_CUDA_STUB_DEVICES: '0' }, [req('cuda')]);
    expect(none.host.deviceStatus).toBe('gpu_no_device');
    expect(none.routes[0].reason).toBe('gpu_no_device');
  });

  it('a module that is not one: gpu_module_incompatible', () => {
    // the addon itself loads, but exports no tet_cuda_get_api
    const { host, routes } = inChild({ TET_CUDA_MODULE: ADDON, TET_CUDA_DRIVER: STUB }, [req('cuda')]);
    expect(host.deviceStatus).toBe('gpu_module_incompatible');
    expect(routes[0].reason).toBe('gpu_module_incompatible');
  });

  it('a usable module: every token, every capability reason', () => {
    const f64 = 2, f16 = 9;
    const { host, routes } = inChild({ TET_CUDA_MODULE: STUB, TET_CUDA_DRIVER: STUB, TET_CUDA_STUB_DEVICES: '2',
      TET_CUDA_STUB_DTYPES: String(0x7fe & ~(1 << f64)), TET_CUDA_STUB_VRAM: String(1 << 20) }, [
      req('cuda'), req('cuda:1'), req('cuda:2'), req('cuda:multi'), req('auto'), req('auto', { logicalBytes: 64 * 2 ** 20 - 1 }),
      req('cuda', { dtype: f64 }), req('cuda', { dtype: f16 }), req('cuda', { op: 14 }), req('cuda', { op: 18 }), req('cuda', { op: 21 }),
      req('cuda', { scalar: false, outElements: 10 }), req('cuda', { chunks: 1 }),
      req('cuda', { scalar: false, outElements: 2 ** 20 }),
    ]);
    expect(host.devices).toHaveLength(2);
    const [c, c1, c2, multi, auto, smallAuto, dF64, dF16, arg, nullCount, median, partial, oneChunk, bigPartial] = routes;
    expect(c).toMatchObject({ used: 'cuda:0', gpu: true, ordinal: 0, pipeline: true, multi: false });
    expect(c.reason).toBeUndefined();
    expect(c1).toMatchObject({ used: 'cuda:1', gpu: true, ordinal: 1 });
    expect(c2).toMatchObject({ used: 'cpu', reason: 'gpu_device_not_found' });
    expect(multi).toMatchObject({ used: 'cuda:multi', gpu: true, multi: true, ordinal: 0xffffffff });
    expect(auto).toMatchObject({ used: 'cuda:0', gpu: true });
    expect(smallAuto).toMatchObject({ used: 'cpu', reason: 'auto_below_size_threshold' });
    expect(dF64).toMatchObject({ used: 'cpu', reason: 'gpu_unsupported_dtype' });
    expect(dF16).toMatchObject({ used: 'cuda:0', gpu: true });
    for (const r of [arg, nullCount, median]) expect(r).toMatchObject({ used: 'cpu', reason: 'gpu_unsupported_op' });
    expect(oneChunk).toMatchObject({ gpu: true, pipeline: false });
    // partial folds: on the device while their states fit in half of its (1 MiB) memory
    expect(partial).toMatchObject({ used: 'cuda:0', gpu: true });
    expect(bigPartial).toMatchObject({ used: 'cpu', reason: 'gpu_vram_exceeded' });
  });
});
