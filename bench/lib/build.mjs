// Builds the bandwidth probe: bench/probe.c is compiled on every run (cc -O3 -mavx2 -pthread,
// under a second); the vendored zstd sources it links for the decode-rate probe are compiled
// once into bench/.scratch/libzstd-bench.a and reused.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const ROOT = path.dirname(HERE);
const SCRATCH = path.join(HERE, '.scratch');
const ZSTD = path.join(ROOT, 'native', 'vendor', 'zstd', 'lib');

function ensureZstdLib(log) {
  const lib = path.join(SCRATCH, 'libzstd-bench.a');
  if (fs.existsSync(lib)) return lib;
  log('[build] compiling vendored zstd once into bench/.scratch (about 20 s)…');
  const objDir = path.join(SCRATCH, 'zstd-obj');
  fs.mkdirSync(objDir, { recursive: true });
  const sources = [];
  for (const sub of ['common', 'decompress', 'compress']) {
    for (const f of fs.readdirSync(path.join(ZSTD, sub)).sort()) {
      if (f.endsWith('.c') || f.endsWith('.S')) sources.push(path.join(ZSTD, sub, f));
    }
  }
  const objs = sources.map((src) => {
    const obj = path.join(objDir, `${path.basename(src)}.o`);
    execFileSync('cc', ['-O3', '-c', `-I${ZSTD}`, `-I${path.join(ZSTD, 'common')}`, '-o', obj, src], { stdio: 'inherit' });
    return obj;
  });
  const tmp = `${lib}.${process.pid}`;
  execFileSync('ar', ['rcs', tmp, ...objs], { stdio: 'inherit' });
  fs.renameSync(tmp, lib);
  return lib;
}

/** Compiles bench/probe.c; returns the binary's path. */
export function ensureProbe(log = console.error) {
  fs.mkdirSync(SCRATCH, { recursive: true });
  const lib = ensureZstdLib(log);
  const bin = path.join(SCRATCH, 'probe');
  execFileSync('cc', ['-O3', '-mavx2', '-pthread', '-Wall', '-DPROBE_ZSTD', `-I${ZSTD}`, '-o', bin,
    path.join(HERE, 'probe.c'), lib], { stdio: 'inherit' });
  return bin;
}
