// What the bench scripts share: the environment timed trials run in, a log with seconds since
// start (stderr), `--name value` options from argv, and the warm median of a timed call.
const T0 = performance.now();

/**
 * The environment timed trials run in: this one less NODE_EXTRA_CA_CERTS (a machine that sets it
 * makes every node start read and parse the certificates, ~50-70 ms on the 2-core VM: a cost of
 * the machine that only the node contenders would pay in a whole-process time) and `extra` added.
 */
export function trialEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

/** console.error with the seconds since the script started. */
export const log = (...a) => console.error(`[${((performance.now() - T0) / 1000).toFixed(0).padStart(4)}s]`, ...a);

const argv = process.argv.slice(2);
/** The value after `--name` in argv, or `dflt`. */
export const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
/** Whether the bare flag is in argv. */
export const flag = (name) => argv.includes(name);

/** `--name N` as a positive integer (throws naming the option otherwise). */
export const positiveInt = (name, dflt) => {
  const v = Number(opt(name, dflt));
  if (!Number.isSafeInteger(v) || v < 1) throw new Error(`${name} must be a positive integer, got ${opt(name, dflt)}`);
  return v;
};

/** Warm-up runs before timing: the first calls of a query also compile its JS path (validation,
 *  planning, response), which a single warm-up leaves half done. */
export const WARMUP_RUNS = 3;

/**
 * Medians of several contenders measured in turns: each warmed up WARMUP_RUNS times, then `reps`
 * rounds in which every contender runs once (the order alternating round by round), so that a
 * change of machine load touches each alike (this shared VM's speed moves by up to 2× within
 * minutes). Returns the median time of each, in the order of `fns`.
 */
export async function interleavedMediansMs(fns, reps) {
  for (const fn of fns) for (let k = 0; k < WARMUP_RUNS; k++) await fn();
  const ms = fns.map(() => []);
  for (let k = 0; k < reps; k++) {
    const order = fns.map((_, i) => i);
    if (k % 2) order.reverse();
    for (const i of order) {
      const t = performance.now();
      await fns[i]();
      ms[i].push(performance.now() - t);
    }
  }
  return ms.map((m) => m.sort((a, b) => a - b)[Math.floor(m.length / 2)]);
}

/** Runs `fn` WARMUP_RUNS times to warm up, then `reps` times; the median wall time in ms. */
export async function medianMs(fn, reps) {
  return (await interleavedMediansMs([fn], reps))[0];
}
