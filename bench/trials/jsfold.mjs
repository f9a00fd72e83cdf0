// The folds the JavaScript peers (zarrita, h5wasm) run over the blocks their library hands
// back: plain typed-array loops with f64 accumulation, the best a JS user of those libraries
// can do without a native engine.

/** Accumulates one case over row-major blocks at (r0, c0) of an array `shape`. */
export function createFold(op, shape) {
  const [rows, cols] = shape;
  let n = 0, mean = 0, m2 = 0, sum = 0, min = Infinity, max = -Infinity, best = -Infinity, bestAt = -1;
  const axis = op === 'mean_axis0' ? new Float64Array(cols) : op === 'mean_axis1' ? new Float64Array(rows) : null;
  return {
    /** `data` is h×w row-major at global (r0, c0). */
    add(data, r0, c0, h, w) {
      const len = h * w;
      if (op === 'sum' || op === 'mean') {
        let s0 = 0, s1 = 0, s2 = 0, s3 = 0, i = 0;
        for (; i + 4 <= len; i += 4) { s0 += data[i]; s1 += data[i + 1]; s2 += data[i + 2]; s3 += data[i + 3]; }
        for (; i < len; i++) s0 += data[i];
        sum += s0 + s1 + s2 + s3;
        n += len;
      } else if (op === 'var' || op === 'std') {
        let s = 0;
        for (let i = 0; i < len; i++) s += data[i];
        const bm = s / len;
        let bm2 = 0;
        for (let i = 0; i < len; i++) { const d = data[i] - bm; bm2 += d * d; }
        const tot = n + len, delta = bm - mean;  // Chan et al. merge
        m2 += bm2 + delta * delta * (n * len) / tot;
        mean += delta * len / tot;
        n = tot;
      } else if (op === 'min') {
        let m = min;
        for (let i = 0; i < len; i++) if (data[i] < m) m = data[i];
        min = m;
      } else if (op === 'max') {
        let m = max;
        for (let i = 0; i < len; i++) if (data[i] > m) m = data[i];
        max = m;
      } else if (op === 'arg_max') {
        for (let r = 0; r < h; r++) {
          const o = r * w;
          for (let c = 0; c < w; c++) {
            const v = data[o + c];
            if (v > best) { best = v; bestAt = (r0 + r) * cols + c0 + c; }
          }
        }
      } else if (op === 'mean_axis0') {
        for (let r = 0; r < h; r++) {
          const o = r * w;
          for (let c = 0; c < w; c++) axis[c0 + c] += data[o + c];
        }
      } else if (op === 'mean_axis1') {
        for (let r = 0; r < h; r++) {
          const o = r * w;
          let s = 0;
          for (let c = 0; c < w; c++) s += data[o + c];
          axis[r0 + r] += s;
        }
      } else {
        throw new Error(`jsfold: unsupported op ${op}`);
      }
    },
    result() {
      switch (op) {
        case 'sum': return sum;
        case 'mean': return sum / n;
        case 'var': return m2 / n;
        case 'std': return Math.sqrt(m2 / n);
        case 'min': return min;
        case 'max': return max;
        case 'arg_max': return bestAt;
        case 'mean_axis0': return { vector: Array.from(axis, (s) => s / rows) };
        case 'mean_axis1': return { vector: Array.from(axis, (s) => s / cols) };
        default: throw new Error(op);
      }
    },
  };
}

/**
 * Times `once()`: `touch()` first (untimed: brings the data into this process), then runs until
 * `minSeconds` or `maxReps`. A first run under SLOW_SECONDS is discarded as warm-up (JIT, thread
 * pools, first touch of scratch memory); a slower one is kept, since warm-up is noise at that
 * scale and repeating it would only stretch the benchmark. Prints one JSON line.
 */
const SLOW_SECONDS = 0.25;
export async function timeTrial(once, minSeconds, maxReps, extra = {}, touch = null) {
  if (touch) await touch();
  const times = [];
  let result;
  const timed = async () => {
    const t0 = performance.now();
    result = await once();
    return (performance.now() - t0) / 1000;
  };
  const first = await timed();
  if (first >= SLOW_SECONDS) times.push(first);
  while (times.length < maxReps && (times.length === 0 || times.reduce((a, b) => a + b, 0) < minSeconds)) times.push(await timed());
  process.stdout.write(`${JSON.stringify({ times, discardedFirst: first < SLOW_SECONDS ? first : null, result, ...extra })}\n`);
}

export function trialArgs() {
  const [file, caseJson, minS, maxReps] = process.argv.slice(2);
  return { file, c: JSON.parse(caseJson), minSeconds: Number(minS ?? 1), maxReps: Number(maxReps ?? 5) };
}
