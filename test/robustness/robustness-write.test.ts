// Crash-safe writes: a writer process SIGKILLed at random points (while streaming tiles, right
// at commit, a few ms into commit) leaves the target either absent or the old file intact —
// or, when the kill came after the rename, the complete new file. Running out of space (a
// small tmpfs) or over RLIMIT_FSIZE (prlimit) is a TetError and leaves nothing behind. Writers
// run in child processes using the SDK bundled from lib/ (esbuild), exactly as users call it.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open } from '../../lib/index';
import { packageRoot } from '../../lib/binding';

const root = packageRoot();
const dir = mkdtempSync(join(tmpdir(), 'tet-write-'));
const sdk = join(root, 'build', 'robustness', 'sdk.cjs');  // inside the package: the addon is found from here
const ROWS = 512, COLS = 1024, CHUNK_ROWS = 8;            // 2 MiB f32, 64 tiles

// Child: writes f32 [ROWS, COLS] with value (version * 1e6 + i) at flat index i, one tile per
// CHUNK_ROWS rows, printing progress so the parent can kill it at a chosen point.
const WRITER = `
const { TetWriter } = require(process.env.TET_SDK);
const [path, version, rows, cols, chunkRows] = process.argv.slice(1).map((x, i) => i ? Number(x) : x);
(async () => {
  const w = await TetWriter.create(path);
  w.addDataset({ name: 'data', dtype: 'f32', shape: [rows, cols], chunkShape: [chunkRows, cols], codec: 'raw' });
  try {
    for (let t = 0; t < rows / chunkRows; t++) {
      const tile = new Float32Array(chunkRows * cols);
      for (let i = 0; i < tile.length; i++) tile[i] = version * 1e6 + t * tile.length + i;
      await w.writeChunk('data', [t, 0], tile);
      process.stdout.write('chunk ' + t + '\\n');
    }
    w.addHistory({ op: 'test', source: 'v' + version });
    process.stdout.write('commit\\n');
    await w.commit();
    process.stdout.write('done\\n');
  } catch (e) {
    if (!process.env.TET_NO_ABORT) w.abort();  // without abort() the writer must clean up by itself
    process.stdout.write('error ' + e.code + ' ' + e.constructor.name + ' ' + e.message.split('\\n')[0] + '\\n');
    process.exitCode = 1;
  }
})();
`;

function writerArgs(path: string, version: number): string[] {
  return ['-e', WRITER, path, String(version), String(ROWS), String(COLS), String(CHUNK_ROWS)];
}
const env = () => ({ ...process.env, TET_SDK: sdk });

async function checkVersion(path: string, version: number): Promise<void> {
  const f = await open(path);
  const d = (await f.read('data', [{ start: ROWS - 1 }, { start: COLS - 3 }])).data as Float32Array;
  const last = ROWS * COLS - 1;
  expect(Array.from(d)).toEqual([last - 2, last - 1, last].map((i) => Math.fround(version * 1e6 + i)));
  expect(f.history.map((h) => h.source)).toEqual([`v${version}`]);
  f.close();
}
const temps = (d: string) => readdirSync(d).filter((n) => n.includes('.tmp-'));

beforeAll(() => {
  mkdirSync(join(root, 'build', 'robustness'), { recursive: true });
  buildSync({ entryPoints: [join(root, 'lib/index.ts')], bundle: true, platform: 'node', format: 'cjs', outfile: sdk, packages: 'external', logLevel: 'error' });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs a writer child and SIGKILLs it when `killAt` matches a progress line (after `delayMs`). */
function killedWriter(path: string, version: number, killAt: string, delayMs: number): Promise<{ lines: string[]; signal: string | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, writerArgs(path, version), { env: env(), stdio: ['ignore', 'pipe', 'inherit'] });
    const lines: string[] = [];
    let buf = '';
    let armed = false;
    child.stdout.on('data', (chunk: Buffer) => {
      buf += chunk.toString();
      let k;
      while ((k = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, k);
        buf = buf.slice(k + 1);
        lines.push(line);
        if (!armed && line === killAt) {
          armed = true;
          if (delayMs === 0) child.kill('SIGKILL');
          else setTimeout(() => child.kill('SIGKILL'), delayMs);
        }
      }
    });
    child.on('exit', (_code, signal) => resolve({ lines, signal }));
  });
}

describe('writer SIGKILLed at random points', () => {
  const points: [string, number][] = [
    ['chunk 0', 0], ['chunk 7', 0], ['chunk 31', 1], ['chunk 63', 0], ['commit', 0], ['commit', 1], ['commit', 3], ['commit', 8], ['commit', 20],
  ];

  it.each(points)('killed at "%s" + %i ms: target is absent, the old file, or the complete new one', async (at, delay) => {
    const sub = mkdtempSync(join(dir, 'kill-'));
    const fresh = join(sub, 'fresh.tet');
    const existing = join(sub, 'existing.tet');
    expect(spawnSync(process.execPath, writerArgs(existing, 1), { env: env() }).status).toBe(0);
    const oldBytes = readFileSync(existing);

    const a = await killedWriter(fresh, 2, at, delay);
    const b = await killedWriter(existing, 2, at, delay);
    for (const [path, run] of [[fresh, a], [existing, b]] as const) {
      const finished = run.lines.includes('done');
      if (!finished) expect(run.signal).toBe('SIGKILL');
      if (!existsSync(path)) {
        expect(path).toBe(fresh);  // a never-committed new file simply does not exist
      } else if (path === existing && readFileSync(path).equals(oldBytes)) {
        await checkVersion(path, 1);  // old file intact, still valid
      } else {
        await checkVersion(path, 2);  // only after the atomic rename: complete and valid
        expect(run.lines).toContain('commit');
      }
    }
    // Temp files of killed writers may remain (no process is left to remove them); they are
    // dot-files named after the target and never mistaken for it. Anything else is a bug.
    expect(readdirSync(sub).filter((n) => !n.startsWith('.')).sort()).toEqual(existsSync(fresh) ? ['existing.tet', 'fresh.tet'] : ['existing.tet']);
    for (const t of temps(sub)) expect(t).toMatch(/^\.(fresh|existing)\.tet\.tmp-\d+-[0-9a-f]+$/);
  }, 60_000);
});

describe('out of space', () => {
  it('RLIMIT_FSIZE (prlimit): TetError, no temp file, old file intact', () => {
    const sub = mkdtempSync(join(dir, 'fsize-'));
    const existing = join(sub, 'existing.tet');
    expect(spawnSync(process.execPath, writerArgs(join(sub, 'small.tet'), 1).map((x, i) => (i === 3 ? '64' : x)), { env: env() }).status).toBe(0);
    rmSync(join(sub, 'small.tet'));
    expect(spawnSync(process.execPath, writerArgs(existing, 1), { env: env() }).status).toBe(0);
    const oldBytes = readFileSync(existing);
    for (const limit of [100_000, 1_000_000, ROWS * COLS * 4]) {  // mid-tiles, later, at the index/commit
      for (const target of [existing, join(sub, 'fresh.tet')]) {
        const noAbort = target === existing ? {} : { TET_NO_ABORT: '1' };
        const r = spawnSync('prlimit', [`--fsize=${limit}`, '--', process.execPath, ...writerArgs(target, 2)], { env: { ...env(), ...noAbort }, encoding: 'utf8' });
        expect(r.signal, r.stderr).toBeNull();
        const error = r.stdout.split('\n').find((l) => l.startsWith('error '));
        expect(error, r.stdout).toMatch(/^error TET_(WRITE|IO)_[A-Z_]+ TetIoError /);
        expect(error).toMatch(/File too large|EFBIG|errno 27/);
        expect(r.status).toBe(1);
        expect(temps(sub)).toEqual([]);
        expect(existsSync(join(sub, 'fresh.tet'))).toBe(false);
        expect(readFileSync(existing).equals(oldBytes)).toBe(true);
      }
    }
  }, 60_000);

  const mountPoint = join(dir, 'tmpfs');
  const mounted = (() => {
    if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
    mkdirSync(mountPoint, { recursive: true });
    return spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mountPoint]).status === 0;
  })();
  afterAll(() => { if (mounted) spawnSync('umount', [mountPoint]); });

  it.skipIf(!mounted)('disk full (1 MiB tmpfs): TetError, no temp file, nothing at the target', () => {
    const target = join(mountPoint, 'full.tet');
    const r = spawnSync(process.execPath, writerArgs(target, 2), { env: { ...env(), TET_NO_ABORT: '1' }, encoding: 'utf8' });
    expect(r.signal, r.stderr).toBeNull();
    expect(r.stdout).toMatch(/^error TET_(WRITE|IO)_[A-Z_]+ TetIoError .*(No space left|ENOSPC|errno 28)/m);
    expect(readdirSync(mountPoint)).toEqual([]);
  }, 60_000);
});
