// convert() of array sources writes axis tables (spec tables_and_filters.md §3): NetCDF-4,
// NetCDF classic, HDF5 (h5py dimension scales) and Zarr v2 sources made by
// test/support/sources/axis_tables.py, whose expectations come from netCDF4-python's
// mask-and-scale, cftime.num2date, numpy datetime64 arithmetic and the raw bytes of the strings.
// Every column is compared value by value through readColumn (nulls by the valid mask), the
// tensors against numpy's values, and `tables: false` / `--no-tables` leave the tensors unchanged.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convert, open } from '../../lib/index';
import { PYTHON, pythonAvailable } from '../support/convert-support';
import { ROOT, SOURCES } from '../support/paths';

const work = mkdtempSync(join(tmpdir(), 'tet-axis-tables-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const have = pythonAvailable() && spawnSync(PYTHON, ['-c', 'import cftime, zarr, numcodecs']).status === 0;

type Value = number | string | null;
interface ExpectedColumn { kind: string; unit?: string; values: Value[] }
interface ExpectedTable { axis: [string, string]; rows: number; columns: Record<string, ExpectedColumn> }
interface ExpectedSource { temperature: Value[]; tables: Record<string, ExpectedTable> }
let expected: Record<string, ExpectedSource>;

beforeAll(() => {
  if (!have) return;
  const text = execFileSync(PYTHON, [join(SOURCES, 'axis_tables.py'), work], { encoding: 'utf8', maxBuffer: 1 << 26 });
  expected = JSON.parse(text);
}, 60_000);

/** Checks every table of `file` against the generator's expectation, value by value. */
async function expectTables(file: string, exp: ExpectedSource) {
  const f = await open(file);
  try {
    expect(f.tables.map((t) => t.name).sort()).toEqual(Object.keys(exp.tables).sort());
    for (const [name, t] of Object.entries(exp.tables)) {
      const info = f.table(name);
      expect(info.axis?.dataset, name).toBe(t.axis[0]);
      expect(f.metadata.datasets?.[t.axis[0]]?.dim_names?.[info.axis!.index], name).toBe(t.axis[1]);
      expect(info.rows, name).toBe(t.rows);
      expect(info.columns.map((c) => c.name), name).toEqual(Object.keys(t.columns));
      for (const [col, c] of Object.entries(t.columns)) {
        const label = `${name}.${col}`;
        const meta = info.columns.find((x) => x.name === col)!;
        expect(meta.kind, label).toBe(c.kind);
        if (c.kind === 'timestamp') expect([meta.unit, meta.tz], label).toEqual([c.unit, 'UTC']);
        const got = await f.readColumn(name, col);
        expect(got.rows, label).toBe(t.rows);
        c.values.forEach((e, i) => {
          const at = `${label}[${i}]`;
          if (e === null) { expect(got.valid?.[i], at).toBe(0); return; }
          if (got.valid) expect(got.valid[i], at).toBe(1);
          const v = (got.values as ArrayLike<unknown>)[i];
          if (c.kind === 'int' || c.kind === 'timestamp') expect(v, at).toBe(BigInt(e));
          else if (c.kind === 'float') expect(v, at).toBe(typeof e === 'string' ? Number(e) : e);
          else expect(v, at).toBe(e);
        });
        expect(meta.nullCount, label).toBe(c.values.filter((x) => x === null).length);
      }
    }
  } finally {
    f.close();
  }
}

async function tensor(file: string): Promise<number[]> {
  const f = await open(file);
  try {
    return Array.from((await f.read('temperature')).data as Float32Array);
  } finally {
    f.close();
  }
}

const SOURCES_UNDER_TEST = ['weather4.nc', 'classic.nc', 'scales.h5', 'weather.zarr'];

describe.skipIf(!have)('axis tables of converted array sources', () => {
  it.each(SOURCES_UNDER_TEST)('%s: one table per dimension, every value as the Python readers decode it', async (name) => {
    const out = join(work, `${name}.tet`);
    const notices: string[] = [];
    const report = await convert(join(work, name), out, { unpack: true, codec: 'raw', onNotice: (m) => notices.push(m) });
    const exp = expected[name];
    expect(report.tables?.map((t) => [t.name, t.rows, t.axis?.dataset, t.axis?.dim]).sort())
      .toEqual(Object.entries(exp.tables).map(([n, t]) => [n, t.rows, ...t.axis]).sort());
    await expectTables(out, exp);
    expect(await tensor(out)).toEqual(exp.temperature.map(Number));
    if (name === 'weather4.nc') {
      expect(notices.some((m) => /model_time.*calendar 'noleap'.*kept as numbers/.test(m)), notices.join('\n')).toBe(true);
    }
    if (name === 'scales.h5') {
      expect(notices.some((m) => /column big .*exceeds the int range/.test(m)), notices.join('\n')).toBe(true);
    }
  });

  it('tables: false writes no table and the same tensors', async () => {
    for (const name of SOURCES_UNDER_TEST) {
      const out = join(work, `${name}.none.tet`);
      const report = await convert(join(work, name), out, { unpack: true, codec: 'raw', tables: false });
      expect(report.tables, name).toBeUndefined();
      const f = await open(out);
      try {
        expect(f.tables, name).toEqual([]);
      } finally {
        f.close();
      }
      expect(await tensor(out), name).toEqual(expected[name].temperature.map(Number));
    }
  });

  it('--keep-packed: the stored values, like the datasets, and no nulls', async () => {
    const out = join(work, 'packed.tet');
    await convert(join(work, 'weather4.nc'), out, { unpack: false, codec: 'raw' });
    const f = await open(out);
    try {
      // The values axis_tables.py writes (-999 is elevation's fill, -1 lat's missing value).
      const elevation = await f.readColumn('station', 'elevation');
      expect([elevation.kind, elevation.valid]).toEqual(['int', undefined]);
      expect(Array.from(elevation.values as BigInt64Array)).toEqual([34n, -999n, 408n, 36n, 57n]);
      const lat = await f.readColumn('station', 'lat');
      expect((lat.values as Float64Array)[1]).toBe(-1);
      // pressure stays the stored int16: round((p - 1000) / 0.1).
      expect(Array.from((await f.readColumn('station', 'pressure')).values as BigInt64Array)).toEqual([132n, 0n, -445n, 101n, -100n]);
    } finally {
      f.close();
    }
  });

  it('--include / --exclude filter the columns; the coordinate variable stays', async () => {
    const out = join(work, 'filtered.tet');
    await convert(join(work, 'weather4.nc'), out, { unpack: true, codec: 'raw', exclude: ['station', 'lat', 'name'] });
    const f = await open(out);
    try {
      // `station` is the coordinate variable of temperature's station axis: still its first column.
      expect(f.table('station').columns.map((c) => c.name)).toEqual(['station', 'elevation', 'lon', 'code', 'pressure']);
    } finally {
      f.close();
    }
  });

  it('the CLI prints the tables and --no-tables turns them off', () => {
    const cli = join(ROOT, 'bin', 'tet.js');
    if (!existsSync(join(ROOT, 'dist', 'cli.cjs'))) return; // built by npm run build:ts
    const src = join(work, 'classic.nc');
    const r = spawnSync(process.execPath, [cli, 'convert', src, join(work, 'cli.tet'), '--no-progress'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ {2}table time {2}6 rows, axis time of temperature: time timestamp\(us, UTC\)$/m);
    expect(r.stdout).toMatch(/^ {2}table station {2}5 rows, axis station of temperature: name str, elevation int$/m);
    const n = spawnSync(process.execPath, [cli, 'convert', src, join(work, 'cli-none.tet'), '--no-tables', '--json'], { encoding: 'utf8' });
    expect(n.status, n.stderr).toBe(0);
    expect(JSON.parse(n.stdout).tables).toBeUndefined();
  });
});
