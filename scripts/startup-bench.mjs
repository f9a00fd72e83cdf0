#!/usr/bin/env node
// CLI start-up against bare node: the median wall time of N runs (default 15) of `node -e 0`,
// `tet --version`, `tet --help`, `tet info samples/weather.tet` and a small `tet query -x`, each spawned as a
// fresh process through bin/tet.js, as users run it (with its code cache), and the info / query
// cases once more straight through dist/cli.cjs (no code cache). Run `npm run build:ts` first. Prints a table and the ratio to
// bare node; docs/performance.md "CLI start-up" holds the numbers. Usage:
//   node scripts/startup-bench.mjs [--runs N] [--json]
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'bin/tet.js');  // what users run: with the code cache (lib/loader/compile-cache.ts)
const cliNoCache = join(root, 'dist/cli.cjs');
const sample = join(root, 'samples/weather.tet');
const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 15;
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs needs a positive integer');
if (!existsSync(cliNoCache)) throw new Error(`${cliNoCache} is missing: run npm run build:ts first`);

const env = { ...process.env, TET_NO_QUERY_HISTORY: '1', NO_COLOR: '1' };
// Extra CA certificates make every node start read and parse them (~70 ms on the 2-core VM, which
// sets NODE_EXTRA_CA_CERTS): that is the machine's cost, not the CLI's, and it would hide the ratio.
delete env.NODE_EXTRA_CA_CERTS;
const cases = [
  ['node -e 0', ['-e', '0']],
  ['tet --version', [cli, '--version']],
  ['tet --help', [cli, '--help']],
  ['tet info samples/weather.tet', [cli, 'info', sample]],
  ['tet query -x (mean of weather.tet)', [cli, 'query', '{"dataset":"temperature","mean":[]}', '-t', sample, '-x', '--format', 'quiet']],
  ['tet info, no code cache', [cliNoCache, 'info', sample]],
  ['tet query -x, no code cache', [cliNoCache, 'query', '{"dataset":"temperature","mean":[]}', '-t', sample, '-x', '--format', 'quiet']],
];

function once(argv) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, argv, { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

for (const [, argv] of cases) once(argv);  // warm the page cache
// Interleaved (round robin), so a change in machine load touches every case alike.
const times = cases.map(() => []);
for (let i = 0; i < runs; i++) cases.forEach(([, argv], c) => times[c].push(once(argv)));
const rows = cases.map(([name], c) => ({ name, medianMs: median(times[c]), minMs: Math.min(...times[c]) }));
const bare = rows[0].medianMs;
if (args.includes('--json')) {
  process.stdout.write(`${JSON.stringify({ node: process.version, runs, rows: rows.map((r) => ({ ...r, ratio: r.medianMs / bare })) }, null, 2)}\n`);
} else {
  process.stdout.write(`node ${process.version}, median of ${runs} runs each\n`);
  for (const r of rows) {
    process.stdout.write(`${r.name.padEnd(38)} ${r.medianMs.toFixed(1).padStart(7)} ms  (min ${r.minMs.toFixed(1)})  ${(r.medianMs / bare).toFixed(2)} x bare node\n`);
  }
}
