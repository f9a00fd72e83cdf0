#!/usr/bin/env node
// `tet convert` throughput: a 1 GiB f32 HDF5 source (h5py, 256x256 chunks, a smooth field plus
// quantized noise, cached in bench/data/convert-<size>/) converted with --codec zstd by the
// built CLI, each run in its own process; wall time, MB/s and peak RSS (from /usr/bin/time when
// present). `--cli DIR` times another build (a directory with bin/tet.js) in the same run, so a
// before/after pair is measured under the same load.
//
//   node bench/convert.mjs [--size 1G] [--rounds 3] [--codec zstd] [--cli /path/to/other/build]
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(`--${name}`); return i >= 0 ? args[i + 1] : dflt; };
const sizeText = opt('size', '1G');
const rounds = Number(opt('rounds', '3'));
const codec = opt('codec', 'zstd');
const others = args.flatMap((a, i) => (a === '--cli' ? [resolve(args[i + 1])] : []));
const bytes = Number(sizeText.replace(/[GMK]$/i, '')) * { G: 2 ** 30, M: 2 ** 20, K: 2 ** 10 }[sizeText.slice(-1).toUpperCase()];
const side = Math.round(Math.sqrt(bytes / 4) / 256) * 256;

const dir = join(root, 'bench', 'data', `convert-${sizeText}`);
mkdirSync(dir, { recursive: true });
const src = join(dir, 'field.h5');
if (!existsSync(src)) {
  process.stderr.write(`generating ${src} (${side}x${side} f32)\n`);
  execFileSync('/usr/bin/python3', ['-c', `
import sys, h5py, numpy as np
n = int(sys.argv[2]); rng = np.random.default_rng(7)
with h5py.File(sys.argv[1], 'w') as f:
    d = f.create_dataset('field', (n, n), dtype='f4', chunks=(256, 256))
    x = np.linspace(0, 6.28, n, dtype='f4')
    for r in range(0, n, 256):
        y = np.sin(x[r:r + 256, None] * 3) * np.cos(x[None, :] * 2)
        d[r:r + 256] = y + np.round(rng.standard_normal((256, n)).astype('f4') * 16) / 256
`, src, String(side)], { stdio: 'inherit' });
}
const srcBytes = statSync(src).size;
const time = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

function run(cliRoot) {
  const out = join(dir, `out-${process.pid}.tet`);
  rmSync(out, { force: true });
  const cmd = [join(cliRoot, 'bin', 'tet.js'), 'convert', src, out, '--codec', codec, '-q'];
  const t0 = process.hrtime.bigint();
  const r = time ? spawnSync(time, ['-f', '%M', process.execPath, ...cmd], { encoding: 'utf8' })
    : spawnSync(process.execPath, cmd, { encoding: 'utf8' });
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`${cliRoot}: convert failed: ${r.stderr}`);
  const rssKiB = time ? Number(r.stderr.trim().split('\n').pop()) : NaN;
  const outBytes = statSync(out).size;
  rmSync(out, { force: true });
  return { s, rssMiB: rssKiB / 1024, outBytes };
}

const contenders = [root, ...others];
const results = new Map(contenders.map((c) => [c, []]));
for (let r = 0; r < rounds; r++) {
  const order = r % 2 ? [...contenders].reverse() : contenders;
  for (const c of order) results.get(c).push(run(c));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`convert ${src} (${(srcBytes / 2 ** 20).toFixed(0)} MiB, f32 ${side}x${side}, chunks 256x256) --codec ${codec}, ${rounds} rounds`);
const base = median(results.get(root).map((x) => x.s));
for (const c of contenders) {
  const rs = results.get(c);
  const s = median(rs.map((x) => x.s));
  console.log(`${c === root ? 'this build' : c}: ${s.toFixed(2)} s  ${(bytes / 1e6 / s).toFixed(0)} MB/s  peak RSS ${median(rs.map((x) => x.rssMiB)).toFixed(0)} MiB  output ${(rs[0].outBytes / 2 ** 20).toFixed(0)} MiB${c === root ? '' : `  (this build is ${(s / base).toFixed(2)}x as fast)`}`);
}
