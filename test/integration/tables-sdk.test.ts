// Tables through the SDK: TetWriter.addTable (one shot and streaming), TetFile.tables /
// readColumn / toArrow, the tensors of the same file unchanged, verify / repair on files with
// tables (crafted bad regions included), and `tet info`. Expected values are the inputs the test
// generates (an independent model), and the tensor bytes are checked by the conformance model.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TetWriter, open, repair, verify } from '../../lib/index';

const dir = mkdtempSync(join(tmpdir(), 'tet-tables-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const STATIONS = 300;
const countries = ['DE', 'FR', 'IT', null, 'ES'];
const stationCountry = Array.from({ length: STATIONS }, (_, i) => countries[i % countries.length]);
const elevation = Int32Array.from({ length: STATIONS }, (_, i) => (i * 37) % 4000 - 100);
const opened = Array.from({ length: STATIONS }, (_, i) => (i % 7 === 0 ? null : `19${70 + (i % 30)}-0${1 + (i % 9)}-1${i % 10}`));

async function writeSample(path: string, obsRows: number): Promise<{ temp: Float32Array; obs: { id: BigInt64Array; t: Float64Array; tValid: Uint8Array; ok: Uint8Array; name: string[] } }> {
  const w = await TetWriter.create(path);
  const temp = Float32Array.from({ length: 4 * STATIONS }, (_, i) => (i % 97) / 4);
  w.addDataset({ name: 'temperature', dtype: 'f32', shape: [4, STATIONS], chunkShape: [4, 100], data: temp });
  w.setMetadata('temperature', { dim_names: ['time', 'station'] });
  w.addTable({
    name: 'station',
    axis: { dataset: 'temperature', dim: 'station' },
    columns: {
      country: { kind: 'str', values: stationCountry },
      elevation_m: { kind: 'int', values: elevation },
      opened: { kind: 'date', values: opened },
    },
  });
  const t = w.addTable({
    name: 'obs',
    schema: { id: { kind: 'int' }, temp_c: { kind: 'float' }, qc_ok: { kind: 'bool' }, name: { kind: 'str' } },
  });
  const r = rng(7);
  const id = new BigInt64Array(obsRows);
  const tv = new Float64Array(obsRows);
  const tValid = new Uint8Array(obsRows);
  const ok = new Uint8Array(obsRows);
  const name: string[] = [];
  for (let i = 0; i < obsRows; i++) {
    id[i] = BigInt(i) * 3n - 2n ** 40n;
    tValid[i] = r() < 0.01 ? 0 : 1;
    tv[i] = tValid[i] ? Math.round((15 + 10 * Math.sin(i / 50) + r()) * 10) / 10 : 0;
    ok[i] = r() < 0.99 ? 1 : 0;
    name.push(`ST-${String(i % 1000).padStart(5, '0')}-${i % 3 ? 'DE' : 'FR'}`);
  }
  // Streaming in uneven batches (block boundaries fall inside batches).
  for (let at = 0; at < obsRows;) {
    const n = Math.min(obsRows - at, 3001 + (at % 7));
    await t.append({
      id: id.subarray(at, at + n), temp_c: tv.subarray(at, at + n), qc_ok: ok.subarray(at, at + n),
      name: name.slice(at, at + n), valid: { temp_c: tValid.subarray(at, at + n) },
    });
    at += n;
  }
  await w.commit();
  return { temp, obs: { id, t: tv, tValid, ok, name } };
}

describe('tables through the SDK', () => {
  const path = join(dir, 'sample.tet');
  const N = 20_000;
  let model: Awaited<ReturnType<typeof writeSample>>;

  it('writes one-shot and streaming tables and reads every column back', async () => {
    model = await writeSample(path, N);
    const f = await open(path);
    try {
      expect(f.tables.map((t) => t.name)).toEqual(['station', 'obs']);
      const st = f.table('station', { encodings: true });
      expect(st.rows).toBe(STATIONS);
      expect(st.axis).toEqual({ dataset: 'temperature', index: 1 });
      expect(st.columns.map((c) => [c.name, c.kind, c.nullCount])).toEqual([
        ['country', 'str', stationCountry.filter((x) => x === null).length],
        ['elevation_m', 'int', 0],
        ['opened', 'date', opened.filter((x) => x === null).length],
      ]);
      const country = await f.readColumn('station', 'country');
      expect(country.kind).toBe('str');
      const cv = country.values as string[];
      stationCountry.forEach((c, i) => {
        expect(country.valid?.[i] ?? 1).toBe(c === null ? 0 : 1);
        if (c !== null) expect(cv[i]).toBe(c);
      });
      const elev = await f.readColumn('station', 'elevation_m');
      expect(Array.from(elev.values as BigInt64Array, Number)).toEqual(Array.from(elevation));
      const od = await f.readColumn('station', 'opened');
      const days = od.values as Int32Array;
      opened.forEach((d, i) => {
        if (d === null) expect(od.valid?.[i]).toBe(0);
        else expect(days[i]).toBe(Math.round(Date.parse(`${d}T00:00:00Z`) / 86_400_000));
      });

      const obs = f.table('obs', { encodings: true });
      expect(obs.rows).toBe(N);
      expect(obs.axis).toBeUndefined();
      const id = await f.readColumn('obs', 'id');
      expect(id.values).toEqual(model.obs.id);
      const tc = await f.readColumn('obs', 'temp_c', { start: 1000, stop: 9000 });
      expect(tc.rows).toBe(8000);
      for (let i = 0; i < 8000; i++) {
        expect(tc.valid ? tc.valid[i] : 1).toBe(model.obs.tValid[1000 + i]);
        if (model.obs.tValid[1000 + i]) expect((tc.values as Float64Array)[i]).toBe(model.obs.t[1000 + i]);
      }
      const ok = await f.readColumn('obs', 'qc_ok');
      expect(Array.from(ok.values as Uint8Array)).toEqual(Array.from(model.obs.ok));
      const nm = await f.readColumn('obs', 'name', { start: N - 5000 });
      expect(nm.values).toEqual(model.obs.name.slice(N - 5000));
      // The encodings the builders chose are named (the id column is an arithmetic sequence).
      expect(obs.columns.find((c) => c.name === 'id')?.encodings).toEqual(['sequence']);
      expect(obs.columns.find((c) => c.name === 'qc_ok')?.encodings?.length).toBeGreaterThan(0);

      // The tensor of the same file is unchanged.
      const t = await f.read('temperature');
      expect(t.data).toEqual(model.temp);
    } finally {
      f.close();
    }
  });

  it('toArrow gives the same values as an Arrow table', async () => {
    const f = await open(path);
    try {
      const a = await f.toArrow('station');
      expect(a.numRows).toBe(STATIONS);
      expect(a.getChild('elevation_m')?.get(5)).toBe(BigInt(elevation[5]));
      expect(a.getChild('country')?.get(3)).toBeNull();
      expect(a.getChild('country')?.get(1)).toBe('FR');
      const o = await f.toArrow('obs', { start: 10, stop: 20, columns: ['id', 'name'] });
      expect(o.numRows).toBe(10);
      expect(o.schema.fields.map((x) => x.name)).toEqual(['id', 'name']);
      expect(o.getChild('name')?.get(0)).toBe(model.obs.name[10]);
    } finally {
      f.close();
    }
  });

  it('rejects bad input with typed errors', async () => {
    const w = await TetWriter.create(join(dir, 'bad.tet'));
    w.addDataset({ name: 'x', dtype: 'f32', shape: [10], data: new Float32Array(10) });
    expect(() => w.addTable({ name: 't', schema: { a: { kind: 'int' } }, columns: {} })).toThrow(/either columns/);
    expect(() => w.addTable({ name: 'ax', axis: { dataset: 'x', dim: 'nope' }, schema: { a: { kind: 'int' } } })).toThrow(/no dim named/);
    const t = w.addTable({ name: 't', schema: { a: { kind: 'int', nullable: false }, s: { kind: 'str' } } });
    await expect(t.append({ a: [1, 2], s: ['x'] })).rejects.toMatchObject({ code: 'TET_WRITE_ARGUMENT' });
    await expect(t.append({ a: [1, null], s: ['x', 'y'] })).rejects.toMatchObject({ code: 'TET_WRITE_ARGUMENT' });
    await expect(t.append({ a: [1], s: ['x'], extra: [1] })).rejects.toMatchObject({ code: 'TET_WRITE_ARGUMENT' });
    // An axis table with the wrong row count fails at commit.
    w.addTable({ name: 'x_axis', axis: { dataset: 'x', dim: 0 }, columns: { v: { kind: 'int', values: [1, 2, 3] } } });
    await expect(w.commit()).rejects.toMatchObject({ code: 'TET_WRITE_ARGUMENT' });
    w.abort();
    const f = await open(path);
    try {
      await expect(f.readColumn('nope', 'x')).rejects.toMatchObject({ code: 'TET_QUERY_UNKNOWN_TABLE' });
      await expect(f.readColumn('obs', 'nope')).rejects.toMatchObject({ code: 'TET_QUERY_UNKNOWN_COLUMN' });
      await expect(f.readColumn('obs', 'id', { start: 5, stop: N + 1 })).rejects.toMatchObject({ code: 'TET_QUERY_SELECTION' });
    } finally {
      f.close();
    }
  });

  it('verify passes, deep too; a damaged region is found and repaired away', async () => {
    expect((await verify(path)).ok).toBe(true);
    const deep = await verify(path, { deep: true });
    expect(deep.ok).toBe(true);
    expect(deep.tables).toBe(2);
    // Damage one payload byte inside the region (the footer's checksum no longer matches).
    const f = await open(path);
    const foot = JSON.parse(f.layout.footer.historyJson) as { cells: { offset: number; len: number } };
    f.close();
    const bytes = readFileSync(path);
    const damaged = join(dir, 'damaged.tet');
    bytes[foot.cells.offset + foot.cells.len - 100] ^= 0xff;
    writeFileSync(damaged, bytes);
    const report = await verify(damaged, { deep: true });
    expect(report.ok).toBe(false);
    expect(report.findings.every((x) => x.recommendation === 'cells_invalid')).toBe(true);
    const fixed = await repair(damaged, 'cells_invalid');
    expect(fixed.newLength).toBeLessThan(bytes.length);
    const after = await verify(damaged, { deep: true });
    expect(after.ok).toBe(true);
    const g = await open(damaged);
    try {
      expect(g.tables).toEqual([]);
      expect((await g.read('temperature')).data).toEqual(model.temp);
      expect(g.metadata.datasets?.temperature?.dim_names).toEqual(['time', 'station']);
    } finally {
      g.close();
    }
    await expect(repair(damaged, 'cells_invalid')).rejects.toMatchObject({ code: 'TET_QUERY_REPAIR_NOT_APPLICABLE' });
  });

  it('a v1 reader that knows nothing of tables reads every dataset exactly (conformance model)', () => {
    // tet.read: strict parse of superblock, directory, index, payload bounds and footer, and a
    // decode of every tile; it ignores the footer's "cells" key.
    const runner = join(__dirname, '../../../shared/conformance/runner');
    const py = spawnSync('python3', ['-c', `
import sys, json
sys.path.insert(0, sys.argv[1])
import numpy as np, tet
f = tet.read(sys.argv[2], strict=True, footer="strict")
a = np.ascontiguousarray(f["temperature"]).astype("<f4")
print(json.dumps({"names": f.names(), "values": a.ravel().tolist(), "shape": list(a.shape),
                  "dims": f.dataset_metadata("temperature").get("dim_names")}))
`, runner, path], { encoding: 'utf8' });
    expect(py.status, py.stderr).toBe(0);
    const got = JSON.parse(py.stdout) as { names: string[]; values: number[]; shape: number[]; dims: string[] };
    expect(got.names).toEqual(['temperature']);
    expect(got.shape).toEqual([4, STATIONS]);
    expect(got.values).toEqual(Array.from(model.temp));
    expect(got.dims).toEqual(['time', 'station']);
  });

  it('tet info lists the tables', () => {
    const cli = join(__dirname, '../../bin/tet.js');
    const text = execFileSync(process.execPath, [cli, 'info', path], { encoding: 'utf8' });
    expect(text).toMatch(/tables +2/);
    expect(text).toMatch(/table obs: 20000 rows, standalone/);
    expect(text).toMatch(/table station: 300 rows, axis 1 of temperature/);
    const json = JSON.parse(execFileSync(process.execPath, [cli, 'info', path, '--json'], { encoding: 'utf8' })) as { tables: { name: string; columns: { name: string; encodings: string[] }[] }[] };
    expect(json.tables[1].columns.find((c) => c.name === 'id')?.encodings).toEqual(['sequence']);
  });
});
