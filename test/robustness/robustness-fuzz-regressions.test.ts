// Fuzz regressions (test/fixtures/fuzz-regressions/) replayed through the addon, as users
// reach the core: file images from open_fuzz / query_fuzz are opened and queried via the SDK;
// plan_fuzz inputs are executed against the same catalog the fuzzer used (its writer sample,
// rebuilt here with TetWriter). Anything but a TetError (or a clean result) fails the test.
import { FIXTURES } from '../support/paths';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { open, TetError, TetWriter } from '../../lib/index';
import { packageRoot } from '../../lib/binding';

const REG = join(FIXTURES, 'fuzz-regressions');
const dir = mkdtempSync(join(tmpdir(), 'tet-fuzzreg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const inputs = (target: string) => (existsSync(join(REG, target)) ? readdirSync(join(REG, target)).filter((n) => !n.endsWith('.md')) : []);

async function onlyTetErrors(label: string, fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (!(err instanceof TetError) && !(err && typeof err === 'object' && 'code' in err && /^TET_/.test(String((err as { code: unknown }).code)))) {
      throw new Error(`${label}: non-TetError ${String(err)}`, { cause: err });
    }
  }
}

describe('file-image regressions (open_fuzz, query_fuzz) through the SDK', () => {
  const files = [...inputs('open_fuzz').map((n) => ['open_fuzz', n]), ...inputs('query_fuzz').map((n) => ['query_fuzz', n])];
  it.skipIf(files.length === 0).each(files)('%s/%s', async (target, name) => {
    const path = join(dir, `${target}-${name}.tet`);
    writeFileSync(path, readFileSync(join(REG, target, name)));
    await onlyTetErrors('open', async () => {
      const f = await open(path);
      try {
        for (const ds of f.datasets.slice(0, 3)) {
          if (ds.logicalBytes > 1 << 20) continue;
          for (const q of [{ sum: [] }, { min: [] }, { median: [] }, { histogram: { bins: 7 } }, { mean: [0] }]) {
            await onlyTetErrors(`${ds.name} ${JSON.stringify(q)}`, () => f.query({ dataset: ds.name, ...q }, { preview: 64 }));
          }
          await onlyTetErrors(`${ds.name} read`, () => f.read(ds.name));
        }
      } finally {
        f.close();
      }
    });
  });
});

// native/fuzz/fuzz_common.h writer_sample(): same datasets, shapes, chunking, codecs and values.
async function writerSample(path: string): Promise<void> {
  const specs = [
    { name: 'temp', dtype: 'f32', shape: [5, 7, 3], chunk: [2, 3, 2], codec: 'zstd' },
    { name: 'counts', dtype: 'i64', shape: [9, 4], chunk: [4, 4], codec: 'raw' },
    { name: 'half', dtype: 'f16', shape: [33], chunk: [8], codec: 'auto' },
    { name: 'mask', dtype: 'u8', shape: [2, 3, 2, 5], chunk: [1, 2, 2, 3], codec: 'raw' },
    { name: 'grid', dtype: 'u16', shape: [6, 6], chunk: [6, 6], codec: 'zstd' },
  ] as const;
  const w = await TetWriter.create(path);
  for (const s of specs) {
    const n = s.shape.reduce((a, b) => a * b, 1);
    const v = (g: number) => (g % 7 === 3 ? -1.5 * g : g * 0.25);
    const data = s.dtype === 'f32' || s.dtype === 'f16' ? Float32Array.from({ length: n }, (_, g) => v(g))
      : s.dtype === 'i64' ? BigInt64Array.from({ length: n }, (_, g) => BigInt(Math.trunc(v(g) * 4)))
        : s.dtype === 'u8' ? Uint8Array.from({ length: n }, (_, g) => (g * 37) & 0xff)
          : Uint16Array.from({ length: n }, (_, g) => (g * 1000) & 0xffff);
    w.addDataset({ name: s.name, dtype: s.dtype, shape: [...s.shape], chunkShape: [...s.chunk], codec: s.codec, data });
  }
  await w.commit();
}

describe('plan regressions (plan_fuzz) executed through the addon', () => {
  const plans = inputs('plan_fuzz');
  it.skipIf(plans.length === 0)('every plan resolves or rejects with a TET_* code', async () => {
    const path = join(dir, 'writer-sample.tet');
    await writerSample(path);
    const root = packageRoot();
    const b = require(require.resolve('node-gyp-build', { paths: [root] }))(root) as {
      execute(f: unknown, plan: Uint8Array, c: null): Promise<unknown>;
    };
    const f = await open(path);
    expect(f.datasets.map((d) => d.name)).toEqual(['temp', 'counts', 'half', 'mask', 'grid']);
    for (const name of plans) {
      const bytes = new Uint8Array(readFileSync(join(REG, 'plan_fuzz', name)));
      // Spill strategies (3, 2) name host paths; the fuzzer does not execute them either.
      const strategy = bytes.length >= 72 ? new DataView(bytes.buffer).getUint32(68, true) : 0;
      if (strategy === 2 || strategy === 3) continue;
      await onlyTetErrors(name, () => b.execute(f.native, bytes, null));
    }
    f.close();
  });
});
