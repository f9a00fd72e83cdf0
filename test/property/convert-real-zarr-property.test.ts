// Property test: seeded random Zarr arrays (test/support/sources/zarr_property.py) — rank 1-4 shapes x
// every element type (big-endian too) x chunkings with clipped edges x order C/F x codecs, written by
// zarr-python (v2), plus hand-built v3 arrays with random transpose permutations — converted and
// read back through the SDK equal what zarr-python / numpy read, value for value (NaN-aware).
import { SOURCES } from '../support/paths';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { open } from '../../lib';
import { convert, type ConvertOptions } from '../../lib/convert';
import { PYTHON } from '../support/convert-support';

const SEED = Number(process.env.TET_ZARR_PROP_SEED ?? 20250611);

interface Case { desc: string; want?: { dtype: string; shape: number[]; b64: string }; skip?: string }

function zarrPythonAvailable(): boolean {
  try {
    execFileSync(PYTHON, ['-c', 'import zarr, numcodecs, numpy'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function values(e: NonNullable<Case['want']>): (number | bigint)[] {
  const buf = Buffer.from(e.b64, 'base64');
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const ctor = ({
    '|u1': Uint8Array, '<i2': Int16Array, '<u2': Uint16Array, '<i4': Int32Array, '<u4': Uint32Array,
    '<i8': BigInt64Array, '<u8': BigUint64Array, '<f4': Float32Array, '<f8': Float64Array,
  } as Record<string, any>)[e.dtype];
  if (!ctor) throw new Error(`dtype ${e.dtype}`);
  return Array.from(new ctor(ab) as ArrayLike<number | bigint>);
}

const work = mkdtempSync(join(tmpdir(), 'tet-zarr-prop-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.skipIf(!zarrPythonAvailable())(`random Zarr arrays round-trip (seed ${SEED})`, () => {
  let manifest: { v2: Record<string, Case>; v3: Record<string, Case> };

  it('zarr-python v2 (orders, codecs, dtypes) and hand-built v3 (transpose permutations)', async () => {
    manifest = JSON.parse(execFileSync(PYTHON, [join(SOURCES, 'zarr_property.py'), work, String(SEED)],
      { encoding: 'utf8', maxBuffer: 1 << 28 }));
    for (const [kind, cases] of Object.entries(manifest)) {
      const src = join(work, kind === 'v2' ? 'prop2.zarr' : 'prop3.zarr');
      // Whole-array slabs, then slabs of a few rows with tiles that cut across the source chunks.
      const runs: [string, ConvertOptions][] = [['whole', { codec: 'zstd' }], ['slabs', { codec: 'raw', slabBytes: 64, chunk: [3, 2, 2] }]];
      for (const [label, opts] of runs) {
        const out = join(work, `${kind}-${label}.tet`);
        const report = await convert(src, out, opts);
        const skipped = new Map(report.skipped.map((s) => [s.name, s]));
        const file = await open(out);
        try {
          for (const [name, c] of Object.entries(cases)) {
            const what = `${kind} ${label} ${name}: ${c.desc}`;
            if (c.skip) {
              expect(skipped.get(name)?.reason, what).toMatch(/bz2/);
              continue;
            }
            const got = await file.read(name);
            expect(got.shape, what).toEqual(c.want!.shape);
            expect(Array.from(got.data as ArrayLike<number | bigint>), what).toEqual(values(c.want!));
          }
          expect(file.datasets.length).toBe(Object.values(cases).filter((c) => !c.skip).length);
        } finally {
          file.close();
        }
      }
    }
  }, 120_000);
});
