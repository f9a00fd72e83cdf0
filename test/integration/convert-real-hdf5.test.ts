// HDF5 / NetCDF-4 files made by h5py (+ hdf5plugin), PyTables and netCDF4-python, generated at test
// time by test/support/sources/hdf5_make.py, converted and compared value for value (NaN-aware), name
// for name and attribute for attribute with what h5py / netCDF4-python read: compression plugins
// (lzf, lz4, bitshuffle, bzip2, zstd, blosc with every inner codec), filters that cannot be decoded
// (skipped, never garbage), netCDF-C's `_nc4_non_coord_` names, group attributes, undecodable
// attributes (one notice each, no HDF5 trace, later conversions unaffected), bitfields, external /
// hard / soft links, 0-length axes and a 2,000-dataset file opened with --include.
import { SOURCES } from '../support/paths';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open } from '../../lib';
import { convert } from '../../lib/convert';
import { openHdf5 } from '../../lib/convert/hdf5';
import type { SourceReader } from '../../lib/convert/types';
import { decodePy, footerOf, halfToNumber, PYTHON, pythonAvailable, type PyArray } from '../support/convert-support';

const work = mkdtempSync(join(tmpdir(), 'tet-h5-real-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const have = pythonAvailable() && (() => {
  try {
    execFileSync(PYTHON, ['-c', 'import hdf5plugin, tables'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

interface Dumped { attrs: Record<string, unknown>; shape: number[]; dtype?: string; b64?: string; dims?: string[] }
type H5Dump = { datasets: Record<string, Dumped>; groups: Record<string, Record<string, unknown>> };
let expected: Record<string, any>;

beforeAll(() => {
  if (!have) return;
  const text = execFileSync(PYTHON, [join(SOURCES, 'hdf5_make.py'), work],
    { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'ignore'] });
  expected = JSON.parse(text);
}, 120_000);

/** Python's JSON spelling of attribute values -> the converter's ('nan' -> 'NaN', ...). */
function normAttr(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normAttr);
  if (v === 'nan') return 'NaN';
  if (v === 'inf') return 'Infinity';
  if (v === '-inf') return '-Infinity';
  return v;
}
function normAttrs(a: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(a).map(([k, v]) => [k, normAttr(v)]));
}

/** Values as comparable strings: NaN-aware, exact for 64-bit integers. */
function key(x: number | bigint): string {
  return typeof x === 'bigint' ? x.toString() : Number.isNaN(x) ? 'NaN' : Object.is(x, -0) ? '-0' : String(x);
}

async function readTet(file: string) {
  const f = await open(file);
  try {
    const out = new Map<string, { dtype: string; shape: number[]; values: string[] }>();
    for (const d of f.datasets) {
      const { data } = await f.read(d.name);
      const values = d.dtype === 'f16' && data instanceof Uint16Array
        ? Array.from(data as Uint16Array, (h) => key(halfToNumber(h)))
        : Array.from(data as ArrayLike<number | bigint>, key);
      out.set(d.name, { dtype: d.dtype, shape: d.shape, values });
    }
    return { sets: out, metadata: f.metadata as any };
  } finally {
    f.close();
  }
}

function pyValues(d: Dumped): string[] {
  return decodePy(d as unknown as PyArray).map(key);
}

async function withReader<T>(file: string, opts: Parameters<typeof openHdf5>[1], fn: (r: SourceReader) => Promise<T> | T): Promise<T> {
  const r = await openHdf5(file, opts);
  try {
    return await fn(r);
  } finally {
    r.close();
  }
}

/** Runs fn with process.stderr writes captured. */
async function capturingStderr<T>(fn: () => Promise<T>): Promise<{ value: T; stderr: string }> {
  const chunks: string[] = [];
  const orig = process.stderr.write;
  process.stderr.write = ((s: string | Uint8Array, ...rest: unknown[]) => {
    chunks.push(typeof s === 'string' ? s : Buffer.from(s).toString());
    (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
    return true;
  }) as typeof process.stderr.write;
  try {
    const value = await fn();
    return { value, stderr: chunks.join('') };
  } finally {
    process.stderr.write = orig;
  }
}

describe.skipIf(!have)('HDF5 compression filters', () => {
  it('lzf, lz4, bitshuffle, bzip2, zstd, gzip+shuffle decode to h5py\'s values; an unknown filter is skipped', async () => {
    const src = join(work, 'filters.h5');
    const want: H5Dump = expected.filters;
    const skippedVars = await withReader(src, {}, (r) => r.variables.filter((v) => v.skipReason));
    expect(skippedVars.map((v) => [v.name, v.skipCode])).toEqual([['unknown_filter', 'TET_CONVERT_UNSUPPORTED_FILTER']]);
    expect(skippedVars[0].skipReason).toContain('40999');
    const out = join(work, 'filters.tet');
    const { value: report, stderr } = await capturingStderr(() => convert(src, out, { codec: 'raw' }));
    expect(stderr).not.toMatch(/HDF5-DIAG|Aborted/);
    expect(report.skipped.map((s) => s.name)).toEqual(['unknown_filter']);
    const { sets } = await readTet(out);
    const names = Object.keys(want.datasets).filter((n) => n !== 'unknown_filter').sort();
    expect([...sets.keys()].sort()).toEqual(names);
    for (const n of names) expect(sets.get(n)!.values, n).toEqual(pyValues(want.datasets[n]));
  });

  it('blosc (PyTables) with blosclz / lz4 / lz4hc / zstd and shuffle / bitshuffle decodes; zlib is skipped by name and id', async () => {
    const src = join(work, 'blosc.h5');
    const want: H5Dump = expected.blosc;
    const skipped = await withReader(src, {}, (r) => r.variables.filter((v) => v.skipReason)
      .map((v) => ({ name: v.name, code: v.skipCode, reason: v.skipReason })));
    expect(skipped.map((s) => s.name).sort()).toEqual(['blosc_zlib_bitshuffle', 'blosc_zlib_none', 'blosc_zlib_shuffle']);
    for (const s of skipped) {
      expect(s.code).toBe('TET_CONVERT_UNSUPPORTED_FILTER');
      expect(s.reason).toMatch(/blosc \(32001\).*zlib/);
    }
    const out = join(work, 'blosc.tet');
    const { value: report, stderr } = await capturingStderr(() => convert(src, out, { codec: 'zstd', exclude: ['lying_blosc'] }));
    expect(stderr).not.toMatch(/HDF5-DIAG|Aborted/);
    expect(report.datasets.length).toBe(12);
    expect(report.datasets.map((d) => d.name)).not.toContain('lying_blosc');
    const { sets } = await readTet(out);
    for (const [n, d] of sets) expect(d.values, n).toEqual(pyValues(want.datasets[n]));
  });

  it('a blosc chunk the plugin aborts on fails that conversion with TET_CONVERT_UNSUPPORTED_FILTER; the next conversion works', async () => {
    const src = join(work, 'blosc.h5');
    let err: any;
    await capturingStderr(async () => {
      try { await convert(src, join(work, 'lying.tet'), { include: ['lying_blosc'] }); } catch (e) { err = e; }
      return null;
    });
    expect(err?.code).toBe('TET_CONVERT_UNSUPPORTED_FILTER');
    expect(err.message).toMatch(/lying_blosc.*blosc \(32001\)/);
    const out = join(work, 'after-abort.tet');
    await convert(src, out, { include: ['blosc_lz4_shuffle'] });
    const { sets } = await readTet(out);
    expect(sets.get('blosc_lz4_shuffle')!.values).toEqual(pyValues(expected.blosc.datasets.blosc_lz4_shuffle));
  });

  it('a forced read through a filter that cannot decode throws TET_CONVERT_UNSUPPORTED_FILTER, and the next conversion works', async () => {
    const { stderr } = await capturingStderr(async () => {
      for (const [file, name] of [['filters.h5', 'unknown_filter'], ['blosc.h5', 'blosc_zlib_shuffle']]) {
        const r = await openHdf5(join(work, file));
        const v = r.variables.find((x) => x.name === name)!;
        let err: any;
        try { await r.read(v, [0, 0], [2, 2]); } catch (e) { err = e; }
        r.close();
        expect(err?.code, name).toMatch(/^TET_CONVERT_(UNSUPPORTED_FILTER|READ)$/);
        expect(err.message).toContain(name);
      }
      return null;
    });
    expect(stderr).not.toMatch(/HDF5-DIAG/);
    const out = join(work, 'after-abort.tet');
    await convert(join(work, 'filters.h5'), out, { include: ['lz4'] });
    const { sets } = await readTet(out);
    expect(sets.get('lz4')!.values).toEqual(pyValues(expected.filters.datasets.lz4));
  });
});

describe.skipIf(!have)('NetCDF-4 structure', () => {
  it('netCDF-C _nc4_non_coord_ names are shown as the variable name; group attributes; 0-length unlimited axis', async () => {
    const src = join(work, 'names.nc');
    const want = expected.names;
    await withReader(src, {}, (r) => {
      expect(r.kind).toBe('netcdf4');
      const visible = r.variables.filter((v) => !v.hidden);
      expect(visible.map((v) => v.name).sort()).toEqual(Object.keys(want.vars).sort());
      for (const v of visible) {
        expect(v.dimNames, v.name).toEqual(want.vars[v.name].dims);
        expect(v.attrs, v.name).toEqual(normAttrs(want.vars[v.name].attrs));
      }
      expect(r.groupAttrs).toEqual(Object.fromEntries(Object.entries(want.groups).map(([k, v]) => [k, normAttrs(v as any)])));
      const empty = visible.filter((v) => v.skipCode === 'TET_CONVERT_EMPTY').map((v) => [v.name, v.skipReason]);
      expect(empty.sort()).toEqual([['t_empty', '0-length axis time'], ['time', '0-length axis time']]);
    });
    const out = join(work, 'names.tet');
    const report = await convert(src, out, { codec: 'raw' });
    expect(report.skipped.map((s) => s.name).sort()).toEqual(['t_empty', 'time']);
    const { sets, metadata } = await readTet(out);
    expect([...sets.keys()].sort()).toEqual(['a', 'grp/sub/v', 'x', 'y']);
    expect(metadata.datasets.a.dim_names).toEqual(['y', 'a']);
    expect(metadata.datasets.a.attrs).toEqual({ note: 'non-coord' });
    for (const [n, d] of sets) expect(d.values, n).toEqual(pyValues(want.vars[n]));
    expect(metadata.datasets.x.dim_names).toEqual(['x', 'y']);
    expect(metadata.datasets.x.coords.y.labels).toEqual([10, 20, 30, 40]);
  });
});

describe.skipIf(!have)('HDF5 structure', () => {
  it('group attributes, bitfields as unsigned integers, links and empty datasets', async () => {
    const src = join(work, 'struct.h5');
    const want = expected.struct;
    const notices: string[] = [];
    await withReader(src, { notice: (m) => notices.push(m) }, (r) => {
      expect(r.groupAttrs).toEqual(Object.fromEntries(Object.entries(want.groups).map(([k, v]) => [k, normAttrs(v as any)])));
      expect(r.globalAttrs).toEqual({ root_note: 'root' });
      const byName = new Map(r.variables.map((v) => [v.name, v]));
      expect([...byName.keys()].sort()).toEqual(['alias', 'bits16', 'bits32', 'bits64', 'bits8', 'empty', 'empty2d', 'grid/sub/data', 'orig', 'soft']);
      expect(byName.get('bits16')!.dtype).toBe('u16');
      expect(byName.get('bits64')!.dtype).toBe('u64');
      // One dataset reached through three links is converted once, under the first name.
      expect(byName.get('alias')!.skipReason).toBeUndefined();
      expect(byName.get('orig')!.skipCode).toBe('TET_CONVERT_DUPLICATE_LINK');
      expect(byName.get('soft')!.skipCode).toBe('TET_CONVERT_DUPLICATE_LINK');
      expect(byName.get('empty')!.skipCode).toBe('TET_CONVERT_EMPTY');
      expect(byName.get('empty')!.skipReason).toBe('0-length axis 0');
      expect(byName.get('empty2d')!.skipReason).toBe('0-length axis 1');
    });
    expect(notices.filter((n) => /external link/.test(n)).sort()).toEqual([
      'external link broken_ext -> missing.h5:/x not followed (use --follow-external-links)',
      'external link ext -> target.h5:/remote not followed (use --follow-external-links)',
      'external link extgroup -> target.h5:/rg not followed (use --follow-external-links)',
    ]);
    expect(notices.some((n) => n.includes('dangling') && n.includes('/nothere'))).toBe(true);

    // Included by name, the hard link's other names convert the same data.
    await withReader(src, { keep: (n) => n === 'orig' }, (r) => {
      expect(r.variables.find((v) => v.name === 'orig')!.skipReason).toBeUndefined();
    });

    const followed: string[] = [];
    await withReader(src, { followExternalLinks: true, notice: (m) => followed.push(m) }, async (r) => {
      const ext = r.variables.find((v) => v.name === 'ext')!;
      expect(Array.from(await r.read(ext, [0], [6]) as Float64Array)).toEqual([0, 0.25, 0.5, 0.75, 1, 1.25]);
      expect(r.variables.find((v) => v.name === 'extgroup/inner')!.dtype).toBe('i16');
    });
    expect(followed.filter((n) => /external link/.test(n))).toEqual(['external link broken_ext -> missing.h5:/x: target not found']);

    const out = join(work, 'struct.tet');
    await convert(src, out, { codec: 'raw' });
    const { sets } = await readTet(out);
    for (const k of ['bits8', 'bits16', 'bits32', 'bits64']) expect(sets.get(k)!.values, k).toEqual(want.bits[k]);
    expect(sets.get('grid/sub/data')!.values).toEqual(pyValues(want.datasets['grid/sub/data']));
    expect(sets.has('orig') || sets.has('soft')).toBe(false);
  });

  it('undecodable attributes: one notice each, no HDF5 trace, the rest kept as h5py reads them, later conversions unaffected', async () => {
    const src = join(work, 'oddattrs.h5');
    const want = expected.oddattrs;
    const notices: string[] = [];
    const { stderr } = await capturingStderr(async () => {
      await withReader(src, { notice: (m) => notices.push(m) }, (r) => {
        const x = r.variables.find((v) => v.name === 'x')!;
        expect(x.attrs).toEqual(normAttrs(want.datasets.x.attrs));
        expect(r.groupAttrs).toEqual({ g: { fine: 'group ok' } });
      });
      await convert(src, join(work, 'odd1.tet'));
      await convert(src, join(work, 'odd2.tet'));
      return null;
    });
    expect(stderr).toBe('');
    const dropped = ['compound', 'vlen_int', 'ref', 'regref', 'opaque', 'longdouble'];
    for (const name of dropped) {
      expect(notices.filter((n) => n.startsWith(`attribute '${name}' of /x:`)), name).toHaveLength(1);
    }
    expect(notices.filter((n) => n.startsWith("attribute 'compound' of /g:"))).toHaveLength(1);
    expect(notices).toHaveLength(dropped.length + 1);
    const { sets, metadata } = await readTet(join(work, 'odd2.tet'));
    expect(sets.get('x')!.values).toEqual(pyValues(want.datasets.x));
    expect(metadata.datasets.x.attrs).toEqual(normAttrs(want.datasets.x.attrs));
  });

  it('2,000 datasets sharing a dimension scale: --include resolves the kept one with its scale', async () => {
    const src = join(work, 'many.h5');
    await withReader(src, { keep: (n) => n === 'g13/v1357' }, async (r) => {
      expect(r.variables.length).toBe(2001);
      const v = r.variables.find((x) => x.name === 'g13/v1357')!;
      expect(v.dimNames).toEqual(['x']);
      expect(v.coordVars[0]?.name).toBe('x');
      expect(v.attrs).toEqual({ units: 'm' });
      expect(Array.from(await r.read(v.coordVars[0]!, [0], [10]) as Float64Array)).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
    });
    const out = join(work, 'many.tet');
    const report = await convert(src, out, { include: ['g13/v1357'] });
    expect(report.datasets.map((d) => d.name)).toEqual(['g13/v1357']);
    const { sets } = await readTet(out);
    expect(sets.get('g13/v1357')!.values).toEqual(Array.from({ length: 10 }, (_, i) => String(1357 + i)));
    expect(footerOf(out).metadata.datasets['g13/v1357'].coords.x.labels).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
  });
});
