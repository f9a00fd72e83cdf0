// Pure pieces of lib/convert: name filters, tile choice, slab planning, detection by content.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseChunkShape, defaultChunkShape, gridCoords, slabAxes } from '../../lib/convert/chunking';
import { detectSource } from '../../lib/convert/detect';
import { nameFilter } from '../../lib/convert/glob';

const work = mkdtempSync(join(tmpdir(), 'tet-units-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('nameFilter', () => {
  it('exact names, * within a segment, ** across segments, include then exclude', () => {
    const f = nameFilter(['grp/*', 'top', '**/deep'], ['grp/skip*']);
    expect(['grp/a', 'grp/skip1', 'grp/x/y', 'top', 'topx', 'a/b/deep', 'deep'].filter(f)).toEqual(['grp/a', 'top', 'a/b/deep', 'deep']);
    expect(nameFilter()('anything/at/all')).toBe(true);
    expect(nameFilter(['/lead'])('lead')).toBe(true);
    expect(nameFilter(['a.b'])('axb')).toBe(false);
  });
});

describe('tiles', () => {
  it('default tiles keep trailing axes whole and cut the first axis that does not fit', () => {
    // 4 MiB of f32 = 1 Mi elements
    expect(defaultChunkShape([768, 1024, 1024], 'f32')).toEqual([1, 1024, 1024]);
    expect(defaultChunkShape([10, 3000, 3000], 'f64')).toEqual([1, 174, 3000]) // 524288 elements / 3000 per row;
    expect(defaultChunkShape([5, 6], 'f64')).toEqual([5, 6]);
  });
  it('keeps sensible source chunks, replaces tiny or huge ones, clamps the option to the shape', () => {
    expect(chooseChunkShape([32, 32, 32], 'f32', [8, 16, 16], undefined)).toEqual({ chunkShape: [8, 16, 16], origin: 'source' });
    expect(chooseChunkShape([100, 100], 'f32', [1, 1], undefined).origin).toBe('default');
    expect(chooseChunkShape([8192, 8192], 'f64', [8192, 8192], undefined).origin).toBe('default');
    expect(chooseChunkShape([10, 10], 'u8', [2, 2], [64, 3])).toEqual({ chunkShape: [10, 3], origin: 'option' });
    expect(chooseChunkShape([3, 5], 'i16', [2, 3], undefined).chunkShape).toEqual([3, 5]);
  });
  it('slabs: whole array when it fits, else one tile-row, else tile by tile', () => {
    expect(slabAxes([32, 32, 32], [8, 16, 16], 'f32', 1 << 20)).toBe(0);
    expect(slabAxes([768, 1024, 1024], [16, 256, 256], 'f32', 64 << 20)).toBe(1);
    expect(slabAxes([768, 1024, 1024], [16, 256, 256], 'f32', 16 << 20)).toBe(2);
    expect(slabAxes([768, 1024, 1024], [16, 256, 256], 'f32', 1)).toBe(3);
    expect([...gridCoords([2, 3])]).toEqual([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]);
    expect([...gridCoords([2, 0])]).toEqual([]);
  });
});

describe('detectSource', () => {
  it('by content, not extension', () => {
    const hdf = join(work, 'data.bin');
    writeFileSync(hdf, Buffer.concat([Buffer.from([0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(100)]));
    expect(detectSource(hdf)).toBe('hdf5');
    const userBlock = join(work, 'ub.h5');
    writeFileSync(userBlock, Buffer.concat([Buffer.alloc(512), Buffer.from([0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a])]));
    expect(detectSource(userBlock)).toBe('hdf5');
    for (const v of [1, 2, 5]) {
      const p = join(work, `c${v}.h5`);
      writeFileSync(p, Buffer.from([0x43, 0x44, 0x46, v, 0, 0, 0, 0]));
      expect(detectSource(p)).toBe('netcdf3');
    }
    const v3 = join(work, 'store');
    mkdirSync(v3);
    writeFileSync(join(v3, 'zarr.json'), JSON.stringify({ zarr_format: 3, node_type: 'group' }));
    expect(detectSource(v3)).toBe('zarr3');
    const v2 = join(work, 'store2');
    mkdirSync(v2);
    writeFileSync(join(v2, '.zgroup'), '{"zarr_format":2}');
    expect(detectSource(v2)).toBe('zarr2');
    const bad = join(work, 'x.nc');
    writeFileSync(bad, 'CDF\x07');
    expect(() => detectSource(bad)).toThrow(expect.objectContaining({ code: 'TET_CONVERT_UNKNOWN_FORMAT' }));
  });
});
