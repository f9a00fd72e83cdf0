// What the bench scripts share at the top: a log with seconds since start (stderr), and
// `--name value` options from argv.
const T0 = performance.now();

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
