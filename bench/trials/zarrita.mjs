// zarrita contender: one case on the Zarr v3 copy (same chunk grid, bytes codec), in its own
// process. Whole-array folds stream chunk by chunk (arr.getChunk); selections use zarr.get.
// usage: node zarrita.mjs ZARR_DIR CASE_JSON MIN_SECONDS MAX_REPS
import * as zarr from 'zarrita';
import FileSystemStore from '@zarrita/storage/fs';
import { createFold, timeTrial, trialArgs } from './jsfold.mjs';

const { file, c, minSeconds, maxReps } = trialArgs();
const arr = await zarr.open(new FileSystemStore(file), { kind: 'array' });
const [rows, cols] = arr.shape;
const [cr, cc] = arr.chunks;

async function once() {
  if (c.sel) {
    const sel = c.sel.map(([a, b, s]) => zarr.slice(a, b, s));
    const { data, shape } = await zarr.get(arr, sel);
    const fold = createFold(c.op, shape);
    fold.add(data, 0, 0, shape[0], shape[1]);
    return fold.result();
  }
  const fold = createFold(c.op, [rows, cols]);
  for (let i = 0; i < Math.ceil(rows / cr); i++) {
    for (let j = 0; j < Math.ceil(cols / cc); j++) {
      const chunk = await arr.getChunk([i, j]);
      fold.add(chunk.data, i * cr, j * cc, chunk.shape[0], chunk.shape[1]);
    }
  }
  return fold.result();
}

await timeTrial(once, minSeconds, maxReps);
