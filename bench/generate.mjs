// Generates the benchmark data once per size into bench/data/<size>/ and caches it (a
// manifest.json written last marks a complete set). Files:
//   f32.tet f32.zstd.tet f64.tet i32.tet  .tet via the project's TetWriter (dist/index.cjs)
//   f32.zarr/                              Zarr v3, same chunk grid, bytes codec (zarrita reads it)
//   f32.h5                                 HDF5, same chunk grid (h5wasm)
//   f32.npy f64.npy i32.npy                row-major .npy for numpy memmap
//   small.tet                              64×64 f32, for process start-up wall time
//   refs.json + *.f64                      numpy (f64) reference results for every case
// Usage: node bench/generate.mjs [--size 1G] [--writer auto|tetwriter|direct]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dtypeInfo, fillBlock, geometry, GiB, parseSize, sizeLabel, cases } from './lib/datasets.mjs';
import { createDirectTetWriter } from './lib/tetfile.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(HERE);
const require = createRequire(import.meta.url);
export const GENERATOR_VERSION = 3;

export function dataDir(bytes) {
  return path.join(HERE, 'data', sizeLabel(bytes));
}

/** Returns the manifest of a complete data set for `bytes`, generating it when missing. */
export async function ensureData(bytes, { writer = 'auto', probe, log = console.error } = {}) {
  const dir = dataDir(bytes);
  const manifestPath = path.join(dir, 'manifest.json');
  if (writer === 'auto') writer = tetWriterLoadable() ? 'tetwriter' : 'direct';
  if (fs.existsSync(manifestPath)) {
    const m = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
    if (m.version === GENERATOR_VERSION && m.bytes === bytes && m.writerKind === writer) return m;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  const geo = geometry(bytes);
  const sink = writer === 'direct' ? directSinks(probe) : tetWriterSinks();
  log(`[gen] ${sizeLabel(bytes)} into ${path.relative(ROOT, dir)} (writer: ${sink.name})`);
  const h5wasm = await import('h5wasm/node');
  await h5wasm.ready;
  for (const dt of ['f32', 'f64', 'i32']) {
    const g = geo[dt];
    const withPeers = dt === 'f32';
    const outs = [await sink.open(path.join(dir, `${dt}.tet`), g, 'raw')];
    if (withPeers) outs.push(await sink.open(path.join(dir, `${dt}.zstd.tet`), g, 'zstd'));
    const npy = openNpy(path.join(dir, `${dt}.npy`), g);
    const zarr = withPeers ? openZarr(path.join(dir, `${dt}.zarr`), g) : null;
    // HDF5: h5wasm creates a dataset from data, so the first block creates it (extensible along
    // rows) and every later block grows it.
    const h5file = withPeers ? new h5wasm.File(path.join(dir, `${dt}.h5`), 'w') : null;
    let h5ds = null;
    const [rows, cols] = g.shape;
    const [cr, cc] = g.chunkShape;
    const block = new (dtypeInfo(dt).Array)(cr * cols);
    const tile = new (dtypeInfo(dt).Array)(cr * cc);
    for (let gr = 0; gr < g.grid[0]; gr++) {
      fillBlock(g, gr * cr, (gr + 1) * cr, 0, cols, block);
      npy.append(block);
      if (h5file && !h5ds) {
        h5ds = h5file.create_dataset({ name: 'data', data: block, shape: [cr, cols], maxshape: [rows, cols], dtype: dtypeInfo(dt).h5, chunks: g.chunkShape });
      } else if (h5ds) {
        h5ds.resize([(gr + 1) * cr, cols]);
        h5ds.write_slice([[gr * cr, (gr + 1) * cr], [0, cols]], block);
      }
      for (let gc = 0; gc < g.grid[1]; gc++) {
        for (let r = 0; r < cr; r++) tile.set(block.subarray(r * cols + gc * cc, r * cols + (gc + 1) * cc), r * cc);
        for (const o of outs) await o.writeChunk([gr, gc], tile);
        if (zarr) zarr.writeChunk([gr, gc], tile);
      }
    }
    npy.close();
    if (zarr) zarr.close();
    if (h5file) h5file.close();
    for (const o of outs) await o.commit();
    log(`[gen] ${dt} ${g.shape.join('×')} tiles ${g.chunkShape.join('×')} done (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    if (rows !== g.grid[0] * cr) throw new Error('geometry: grid does not tile the rows');
  }
  const small = { dtype: 'f32', shape: [64, 64], chunkShape: [64, 64], grid: [1, 1] };
  const smallOut = await sink.open(path.join(dir, 'small.tet'), small, 'raw');
  await smallOut.writeChunk([0, 0], fillBlock(small, 0, 64, 0, 64, new Float32Array(4096)));
  await smallOut.commit();
  log('[gen] numpy references…');
  const ref = spawnSync('python3', [path.join(HERE, 'trials', 'reference.py'), dir, JSON.stringify(cases(geo))], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (ref.status !== 0) throw new Error(`reference.py failed (exit ${ref.status})`);
  const manifest = { version: GENERATOR_VERSION, bytes, geometry: geo, writer: sink.name, writerKind: writer, generatedSeconds: (performance.now() - t0) / 1000, at: new Date().toISOString() };
  fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 1));
  log(`[gen] done in ${manifest.generatedSeconds.toFixed(1)} s`);
  return manifest;
}

// ---- .tet sinks ------------------------------------------------------------------------------
// Default: the project's TetWriter (what users write with). The spec-direct writer is kept for
// builds without the addon (the probe and peers still run) and as a producer independent of
// the code under test; `--writer direct` selects it explicitly.
function tetWriterLoadable() {
  try {
    const { TetWriter } = require(path.join(ROOT, 'dist', 'index.cjs'));
    require(path.join(ROOT, 'dist', 'index.cjs')).hostInfo?.();
    return typeof TetWriter === 'function';
  } catch {
    return false;
  }
}

function tetWriterSinks() {
  const { TetWriter } = require(path.join(ROOT, 'dist', 'index.cjs'));
  return {
    name: 'TetWriter',
    async open(file, g, codec) {
      const w = await TetWriter.create(file);
      w.addDataset({ name: 'data', dtype: g.dtype, shape: g.shape, chunkShape: g.chunkShape, codec, level: 3 });
      return {
        // The tile buffer is reused by the caller: hand the writer a copy and wait for it.
        writeChunk: (coords, tile) => w.writeChunk('data', coords, tile.slice()),
        commit: () => w.commit(),
      };
    },
  };
}

function directSinks(probe) {
  const tmp = path.join(HERE, '.scratch', `zstd-${process.pid}`);
  const compress = (bytes) => {
    fs.writeFileSync(`${tmp}.in`, bytes);
    const r = spawnSync(probe, ['compress', '3', `${tmp}.in`, `${tmp}.out`], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('probe compress failed');
    const out = fs.readFileSync(`${tmp}.out`);
    fs.rmSync(`${tmp}.in`);
    fs.rmSync(`${tmp}.out`);
    return out;
  };
  return {
    name: 'direct (layout_v1.md)',
    async open(file, g, codec) {
      const w = createDirectTetWriter(file, { dtype: g.dtype, shape: g.shape, chunkShape: g.chunkShape, codec, compress });
      return {
        writeChunk: async (coords, tile) => w.writeChunk(coords, Buffer.from(tile.buffer, tile.byteOffset, tile.byteLength)),
        commit: async () => w.commit(),
      };
    },
  };
}

// ---- peers -----------------------------------------------------------------------------------
export function openNpy(file, g) {
  const descr = dtypeInfo(g.dtype).numpy;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${g.shape.join(', ')}), }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  Buffer.from([0x93]).copy(pre, 0);
  pre.write('NUMPY', 1, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, Buffer.concat([pre, Buffer.from(header, 'latin1')]));
  return {
    append(arr) { fs.writeSync(fd, new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength)); },
    close() { fs.closeSync(fd); },
  };
}

function openZarr(dir, g) {
  fs.mkdirSync(dir, { recursive: true });
  const meta = {
    zarr_format: 3, node_type: 'array', shape: g.shape, data_type: dtypeInfo(g.dtype).zarr,
    chunk_grid: { name: 'regular', configuration: { chunk_shape: g.chunkShape } },
    chunk_key_encoding: { name: 'default', configuration: { separator: '/' } },
    fill_value: 0, codecs: [{ name: 'bytes', configuration: { endian: 'little' } }], attributes: {},
  };
  fs.writeFileSync(path.join(dir, 'zarr.json'), JSON.stringify(meta));
  return {
    writeChunk(coords, tile) {
      const d = path.join(dir, 'c', String(coords[0]));
      fs.mkdirSync(d, { recursive: true });
      fs.writeFileSync(path.join(d, String(coords[1])), new Uint8Array(tile.buffer, tile.byteOffset, tile.byteLength));
    },
    close() {},
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const args = process.argv.slice(2);
  const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
  const bytes = parseSize(opt('--size', process.env.TET_BENCH_SIZE ?? '1G'));
  const { ensureProbe } = await import('./lib/build.mjs');
  await ensureData(bytes, { writer: opt('--writer', 'auto'), probe: ensureProbe() });
  void GiB;
}
