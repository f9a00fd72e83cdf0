// Property test, HDF5 side: 40 seeded random datasets (test/support/sources/hdf5_property.py) of rank
// 1-4 x every h5py numeric dtype (bool, int8, float16, big-endian) x contiguous / chunked
// (edge-clipped) x codecs (none, gzip+shuffle, lzf, lz4, bitshuffle, bzip2, zstd, blosc) written by
// h5py; converted, read back through the SDK and compared value for value (NaN-aware) with the
// source arrays.
import { SOURCES } from '../support/paths';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { open } from '../../lib';
import { convert } from '../../lib/convert';
import { decodePy, halfToNumber, PYTHON, pythonAvailable, TET_DTYPE_OF, type PyArray } from '../support/convert-support';

const work = mkdtempSync(join(tmpdir(), 'tet-h5-prop-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const have = pythonAvailable() && (() => {
  try {
    execFileSync(PYTHON, ['-c', 'import hdf5plugin, numcodecs'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function key(x: number | bigint): string {
  return typeof x === 'bigint' ? x.toString() : Number.isNaN(x) ? 'NaN' : Object.is(x, -0) ? '-0' : String(x);
}

describe.skipIf(!have)('HDF5 property round trip', () => {
  it('40 random shapes x dtypes x chunkings x codecs convert to the source values', async () => {
    const text = execFileSync(PYTHON, [join(SOURCES, 'hdf5_property.py'), work],
      { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'ignore'] });
    const want: Record<string, PyArray & { codec: string }> = JSON.parse(text);
    const out = join(work, 'prop.tet');
    // Small source chunks and slabs so that edge-clipped tiles and multi-slab reads occur.
    const report = await convert(join(work, 'prop.h5'), out, { codec: 'zstd', targetChunkBytes: 256, slabBytes: 512 });
    expect(report.skipped).toEqual([]);
    const f = await open(out);
    try {
      expect(f.datasets.map((d) => d.name).sort()).toEqual(Object.keys(want).sort());
      for (const d of f.datasets) {
        const w = want[d.name];
        expect(d.shape, d.name).toEqual(w.shape);
        expect(d.dtype, d.name).toBe(TET_DTYPE_OF[w.dtype.replace(/^[<>|=]/, '')]);
        const { data } = await f.read(d.name);
        const got = d.dtype === 'f16' && data instanceof Uint16Array ? Array.from(data as Uint16Array, (h) => key(halfToNumber(h)))
          : Array.from(data as ArrayLike<number | bigint>, key);
        expect(got, `${d.name} (${w.codec})`).toEqual(decodePy(w).map(key));
      }
    } finally {
      f.close();
    }
  });
});
