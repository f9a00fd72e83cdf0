// h5wasm contender: one case on the HDF5 copy (same chunk grid), in its own process. Whole-array
// folds read one chunk-row of rows at a time (bounded memory); selections use Dataset.slice.
// usage: node h5wasm.mjs H5_FILE CASE_JSON MIN_SECONDS MAX_REPS
import h5wasm from 'h5wasm/node';
import { createFold, timeTrial, trialArgs } from './jsfold.mjs';

const { file, c, minSeconds, maxReps } = trialArgs();
await h5wasm.ready;
const f = new h5wasm.File(file, 'r');
const ds = f.get('data');
const [rows, cols] = ds.shape;
const cr = ds.metadata.chunks ? ds.metadata.chunks[0] : 1024;

async function once() {
  if (c.sel) {
    const data = ds.slice(c.sel.map(([a, b, s]) => [a, b, s]));
    const shape = c.sel.map(([a, b, s]) => Math.ceil((b - a) / s));
    const fold = createFold(c.op, shape);
    fold.add(data, 0, 0, shape[0], shape[1]);
    return fold.result();
  }
  const fold = createFold(c.op, [rows, cols]);
  for (let r = 0; r < rows; r += cr) {
    const h = Math.min(cr, rows - r);
    fold.add(ds.slice([[r, r + h], [0, cols]]), r, 0, h, cols);
  }
  return fold.result();
}

await timeTrial(once, minSeconds, maxReps);
