// `tet export` never fails on a dataset name: legal Zarr node names (`c`, `zarr.json`-free paths,
// unicode, spaces) are kept as paths; names that cannot be node paths (NULs, `.`, `..`, `__x`,
// empty segments, an array that is also another's group) are mapped to legal paths that carry
// the original name in `tetration_name`, which `tet convert` reads back. Values are checked with
// an independent reader (numpy over the chunk files) and zarrita.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { convert } from '../../lib/convert';
import { exportZarr } from '../../lib/export';
import { legalSegment, zarrNodePaths } from '../../lib/export/names';
import { open, TetWriter } from '../../lib';
import { decodePy, pythonAvailable, pythonDump } from '../support/convert-support';

const work = mkdtempSync(join(tmpdir(), 'tet-export-names-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const NAMES = ['c', 'grp/c', 'a', 'a/b', 'a/b/c', 'température', 'with space', 'x\u0000y', 't\u0000\u0000', '.', '..', '__meta',
  'zarr.json', 'p//q', '/lead', 'trail/', 'con:colon', 'grp/zarr.json'];

describe('zarrNodePaths', () => {
  it('keeps legal paths, maps the rest to distinct legal paths, never an array inside an array', () => {
    const paths = zarrNodePaths(NAMES);
    expect(paths.get('c')).toBe('c');
    expect(paths.get('grp/c')).toBe('grp/c');
    expect(paths.get('a/b/c')).toBe('a/b/c');
    expect(paths.get('température')).toBe('température');
    expect(paths.get('with space')).toBe('with space');
    const all = [...paths.values()];
    expect(new Set(all).size).toBe(NAMES.length);
    for (const p of all) {
      expect(p.split('/').every(legalSegment), p).toBe(true);
      // no array path is a prefix (group) of another array path
      for (const q of all) if (q !== p) expect(q.startsWith(`${p}/`), `${p} inside ${q}`).toBe(false);
    }
  });
});

describe('tet export of awkward names', () => {
  it('exports every name, values readable by numpy and zarrita, names restored by tet convert', async () => {
    const src = join(work, 'names.tet');
    const w = await TetWriter.create(src);
    NAMES.forEach((name, i) => {
      w.addDataset({ name, dtype: 'i32', shape: [3], chunkShape: [2], data: Int32Array.from([i, i * 10, i * 100]) });
    });
    w.setMetadata('c', { attrs: { units: 'm' }, dim_names: ['x'], coords: { x: { labels: [0.5, 1.5, 2.5] } } });
    await w.commit();
    const zarr = join(work, 'names.zarr');
    const report = await exportZarr(src, zarr, { codec: 'raw' });
    expect(report.arrays.map((a) => a.name).sort()).toEqual([...NAMES].sort());

    // zarrita reads every array at the reported path.
    const zarrita = await import('zarrita');
    const { default: FileSystemStore } = await import('@zarrita/storage/fs');
    const root = zarrita.root(new FileSystemStore(zarr));
    for (const a of report.arrays) {
      const arr = await zarrita.open.v3(root.resolve(a.path), { kind: 'array' });
      const i = NAMES.indexOf(a.name);
      const got = await zarrita.get(arr);
      expect(Array.from(got.data as Int32Array), a.name).toEqual([i, i * 10, i * 100]);
      expect(arr.attrs.tetration_name ?? a.path, a.name).toBe(a.name);
    }
    if (pythonAvailable()) {
      const py = pythonDump('zarr3', zarr);
      for (const a of report.arrays) {
        const i = NAMES.indexOf(a.name);
        expect(decodePy(py[a.path]).map(Number), a.path).toEqual([i, i * 10, i * 100]);
      }
    }

    // Back to .tet: the original names.
    const back = join(work, 'back.tet');
    await convert(zarr, back, { codec: 'raw' });
    const f = await open(back);
    try {
      const names = f.datasets.map((d) => d.name).filter((n) => !n.endsWith('/x') && n !== 'x');
      expect(names.sort()).toEqual([...NAMES].sort());
      for (const name of NAMES) {
        const i = NAMES.indexOf(name);
        expect(Array.from((await f.read(name)).data as Int32Array), JSON.stringify(name)).toEqual([i, i * 10, i * 100]);
      }
      expect(f.metadata.datasets?.c?.coords).toEqual({ x: { labels: [0.5, 1.5, 2.5] } });
    } finally {
      f.close();
    }
  });
});
