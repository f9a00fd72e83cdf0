// Regenerates samples/weather.tet, the small file the README's quick start queries.
// Deterministic: a smooth seasonal/latitudinal temperature field plus seeded noise.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TetWriter } from '../dist/index.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [T, LAT, LON] = [120, 32, 64];
let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) - 0.5;

const temperature = new Float32Array(T * LAT * LON);
const lats = Array.from({ length: LAT }, (_, i) => -77.5 + i * 5);
const lons = Array.from({ length: LON }, (_, j) => -177.1875 + j * 5.625);
for (let t = 0; t < T; t++)
  for (let i = 0; i < LAT; i++)
    for (let j = 0; j < LON; j++) {
      const season = 8 * Math.sin((2 * Math.PI * t) / 30) * Math.sign(lats[i]);
      temperature[(t * LAT + i) * LON + j] =
        288 - 30 * Math.sin((lats[i] * Math.PI) / 180) ** 2 + season + 2 * Math.cos((lons[j] * Math.PI) / 90) + 3 * rand();
    }
const days = Array.from({ length: T }, (_, t) => new Date(Date.UTC(2024, 0, 1 + t)).toISOString().slice(0, 10));

const out = path.join(root, 'samples', 'weather.tet');
const w = await TetWriter.create(out);
w.addDataset({ name: 'temperature', dtype: 'f32', shape: [T, LAT, LON], chunkShape: [30, 16, 32], codec: 'zstd', level: 9, data: temperature });
w.setMetadata('temperature', {
  dim_names: ['time', 'lat', 'lon'],
  coords: { time: { labels: days }, lat: { labels: lats }, lon: { labels: lons } },
  attrs: { units: 'K', long_name: 'near-surface air temperature (synthetic)' },
});
w.addHistory({ op: 'create', source: 'scripts/make-sample.mjs', params: { seed: 42 } });
await w.commit();
console.log(`wrote ${out}`);
