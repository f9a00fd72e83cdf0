// Pictures of results (lib/plot, tet query --plot): the README's main job (the January mean
// map) as SVG and PNG, rasterised and checked for its size and the colours at the cells that an
// independent computation (read() + a plain f64 mean here) finds to be the data's extremes.
import { ROOT } from '../support/paths';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, renderPlot, type QueryResponse, type TetFile } from '../../lib/index';
import { PLOT_PADDING, plotSpec } from '../../lib/plot';

const SAMPLE = join(ROOT, 'samples/weather.tet');
const MAIN_JOB = readFileSync(join(ROOT, 'samples/monthly_mean_map.toml'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'tet-plot-'));
let file: TetFile;
let map: QueryResponse;
beforeAll(async () => {
  file = await open(SAMPLE);
  map = await file.query(MAIN_JOB);
});
afterAll(() => {
  file?.close();
  rmSync(dir, { recursive: true, force: true });
});

const VIRIDIS_LOW = [0x44, 0x01, 0x54];   // #440154, the scheme's first colour
const VIRIDIS_HIGH = [0xfd, 0xe7, 0x25];  // #fde725, its last
const BAR = [0x4c, 0x78, 0xa8];

async function pixels(png: Uint8Array) {
  const { data, info } = await sharp(Buffer.from(png)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { info, at: (x: number, y: number) => [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)] };
}

function near(rgb: number[], want: number[], tol = 3) {
  expect(rgb.map((v, i) => Math.abs(v - want[i]) <= tol), `${rgb} vs ${want}`).toEqual([true, true, true]);
}

describe('renderPlot', () => {
  it('the main job is a 32 x 64 heatmap: size, and viridis ends at the independently found extremes', async () => {
    // January = time [0, 31); the mean over time of every (lat, lon), in f64 from the raw values.
    const { data, shape } = await file.read('temperature', [{ start: 0, stop: 31 }, {}, {}]);
    expect(shape).toEqual([31, 32, 64]);
    const means = new Float64Array(32 * 64);
    for (let t = 0; t < 31; t++) for (let k = 0; k < 32 * 64; k++) means[k] += (data as Float32Array)[t * 2048 + k];
    let lo = 0, hi = 0;
    for (let k = 0; k < means.length; k++) {
      if (means[k] < means[lo]) lo = k;
      if (means[k] > means[hi]) hi = k;
    }
    const png = await renderPlot(map, { format: 'png', metadata: file.metadata.datasets!.temperature });
    const { info, at } = await pixels(png);
    // Documented geometry: 640 px / 64 columns = 10 px cells, square; fixed padding.
    const cell = 10;
    expect(info.width).toBe(PLOT_PADDING.left + 64 * cell + PLOT_PADDING.right);
    expect(info.height).toBe(PLOT_PADDING.top + 32 * cell + PLOT_PADDING.bottom);
    // Latitude labels ascend, so row 0 (the southernmost) is drawn at the bottom.
    const centre = (k: number) => {
      const r = Math.floor(k / 64), c = k % 64;
      return [PLOT_PADDING.left + c * cell + cell / 2, PLOT_PADDING.top + (31 - r) * cell + cell / 2];
    };
    near(at(...(centre(hi) as [number, number])), VIRIDIS_HIGH);
    near(at(...(centre(lo) as [number, number])), VIRIDIS_LOW);
    // Outside the plot area: the white background.
    near(at(2, info.height - 2), [255, 255, 255], 0);
  });

  it('SVG: the same picture as text, with axis titles, the colour legend and coordinate labels', async () => {
    const svg = await renderPlot(map, { metadata: file.metadata.datasets!.temperature });
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('width="832"');
    expect(svg).toContain('height="412"');
    for (const text of ['>lat<', '>lon<', '>K<', '-77.5', '77.5', 'mean of temperature over time (K)']) expect(svg).toContain(text);
  });

  it('a histogram is bars (the tallest bin, counted independently, is drawn in the bar colour)', async () => {
    const h = await file.query({ dataset: 'temperature', histogram: { bins: 20, min: 240, max: 300 } });
    const { data } = await file.read('temperature', [{}, {}, {}]);
    const counts = new Array(20).fill(0);
    for (const v of data as Float32Array) if (v >= 240 && v <= 300) counts[Math.min(19, Math.floor((v - 240) / 3))] += 1;
    const top = counts.indexOf(Math.max(...counts));
    const png = await renderPlot(h, { format: 'png', width: 400, height: 300 });
    const { info, at } = await pixels(png);
    const spec = plotSpec(h, { width: 400, height: 300 });
    expect([info.width, info.height]).toEqual([spec.width, spec.height]);
    expect(spec.kind).toBe('histogram');
    const x = spec.padding.left + Math.round((top + 0.5) * 400 / 20);
    near(at(x, spec.padding.top + 300 - 5), BAR);
  });

  it('a 1-D result is a line over its coordinate labels; a scalar has no picture; bad options are typed errors', async () => {
    const series = await file.query({ dataset: 'temperature', mean: ['lat', 'lon'] });
    const spec = plotSpec(series, { metadata: file.metadata.datasets!.temperature });
    expect(spec.kind).toBe('line');
    const points = ((spec.vega.data as { values: { x: unknown }[] }[])[0]).values;
    expect(points).toHaveLength(120);
    expect(points[0].x).toBe('2024-01-01');
    const scalar = await file.query({ dataset: 'temperature', mean: [] });
    await expect(renderPlot(scalar)).rejects.toMatchObject({ code: 'TET_PLOT_UNSUPPORTED' });
    await expect(renderPlot(map, { format: 'gif' as 'svg' })).rejects.toMatchObject({ code: 'TET_PLOT_BAD_OPTION' });
    await expect(renderPlot(map, { width: 3 })).rejects.toMatchObject({ code: 'TET_PLOT_BAD_OPTION' });
    await expect(renderPlot(await file.query({ dataset: 'temperature', mean: [] }, { execute: false })))
      .rejects.toMatchObject({ code: 'TET_PLOT_UNSUPPORTED' });
  });

  it('a grouped result is bars per key (composite and null keys labelled); [G, K] is a heatmap with a row per key', async () => {
    // The plot layer reads only the response: a hand-made grouped table response (values chosen
    // so that the second group is the tallest bar and the first the shortest).
    const grouped = {
      status: 'executed', accepted: true, dataset: 'obs', table: 'obs', tet_file: 'x.tet', selection_axes: 0,
      query: { table: 'obs', mean: { column: 'temp_c' }, group_by: ['country', 'qc_ok'] },
      execution: {
        operation: 'mean', group_keys: [['AA', false], ['AA', true], [null, true]], group_counts: [3, 9, 2],
        operation_grouped_mean: [1, 5, 2.5], operation_reduced_shape: [3],
      },
    } as unknown as QueryResponse;
    const spec = plotSpec(grouped, { width: 300, height: 200 });
    expect(spec.kind).toBe('bars');
    expect(JSON.stringify(spec.vega)).toContain('AA · true');
    expect(JSON.stringify(spec.vega)).toContain('null · true');
    const { info, at } = await pixels(await renderPlot(grouped, { format: 'png', width: 300, height: 200 }));
    expect([info.width, info.height]).toEqual([spec.width, spec.height]);
    const band = 300 / 3;
    const top = (v: number) => spec.padding.top + 200 - Math.round(200 * v / 5);  // y domain [0, 5] (nice)
    near(at(spec.padding.left + Math.round(1.5 * band), top(5) + 3), BAR);       // the tallest bar reaches near the top
    near(at(spec.padding.left + Math.round(0.5 * band), top(5) + 3), [255, 255, 255], 40);  // the first is short: grid / background there
    near(at(spec.padding.left + Math.round(0.5 * band), spec.padding.top + 200 - 5), BAR);

    const map2 = {
      ...grouped, query: { dataset: 'temperature', mean: ['time'], group_by: 'lat.zone' },
      catalog: { dataset: 'temperature', shape: [4, 3, 2], dim_names: ['time', 'lat', 'lon'] },
      execution: { operation: 'mean', group_keys: ['north', 'south'], group_counts: [2, 1],
        operation_grouped_mean: [1, 2, 3, 4], operation_reduced_shape: [2, 2], operation_reduced_axes: [0] },
    } as unknown as QueryResponse;
    const hm = plotSpec(map2, { width: 200 });
    expect(hm.kind).toBe('heatmap');
    expect(hm.cell).toMatchObject({ rows: 2, cols: 2, width: 100 });
    const none = { ...grouped, execution: { ...grouped.execution, group_keys: [], operation_grouped_mean: [], operation_reduced_shape: [0] } } as unknown as QueryResponse;
    expect(() => plotSpec(none)).toThrow(expect.objectContaining({ code: 'TET_PLOT_UNSUPPORTED' }));
  });

  it('tet query -x --plot FILE.png writes the picture; other extensions are usage errors', async () => {
    const out = join(dir, 'jan.png');
    const r = spawnSync(process.execPath, [join(ROOT, 'dist/cli.cjs'), 'query', join(ROOT, 'samples/monthly_mean_map.toml'),
      '-t', SAMPLE, '-x', '--format', 'quiet', '--plot', out], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const { info } = await pixels(readFileSync(out));
    expect([info.width, info.height]).toEqual([832, 412]);
    const bad = spawnSync(process.execPath, [join(ROOT, 'dist/cli.cjs'), 'query', join(ROOT, 'samples/monthly_mean_map.toml'),
      '-t', SAMPLE, '-x', '--plot', join(dir, 'x.gif')], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('.svg or .png');
  });
});
