// The package loader's V8 code cache (lib/loader/sdk-loader.ts, dist/index.cjs): a fresh process
// writes the cache after its first answer, the next one starts from it, and a corrupted cache,
// an unsafe directory or TET_NO_COMPILE_CACHE=1 never change an answer. The query validator is a
// part of its own (dist/sdk-part-validate.cjs) with its own cache, loaded with the bundle, or on
// the first validation where the caller asks for lazy parts (the CLI: `tet info` never loads it);
// conversion, export, pictures and notebook display are another (dist/sdk-part-extras.cjs), loaded
// at their first call. Runs the built package
// (dist/) in child processes, as users load it; answers against values computed here.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TetWriter } from '../../lib/index';
import { packageRoot } from '../../lib/binding';
import { SDK_PARTS } from '../../lib/loader/parts';

const ROOT = packageRoot();
const dist = join(ROOT, 'dist', 'index.cjs');
const work = mkdtempSync(join(tmpdir(), 'tet-code-cache-'));
const file = join(work, 'a.tet');
const N = 3000;
const values = Float32Array.from({ length: N }, (_, i) => Math.fround(Math.sin(i) * 100 + i / 7));
const wantMean = values.reduce((s, v) => s + v, 0) / N;

// One query in a fresh process (the mean, or the document in argv[2]): the mean, whether
// dist/sdk.cjs is the loaded instance, and the process's 'exit' listeners before and after it.
const CHILD = `
const t = require(${JSON.stringify(dist)});
(async () => {
  const f = await t.open(process.argv[1]);
  const exitBefore = process.listenerCount('exit');
  const r = await f.query(process.argv[2] ? JSON.parse(process.argv[2]) : { dataset: 'x', mean: [] }, { preview: 0 });
  process.stdout.write(JSON.stringify({ mean: r.execution.operation_mean, same: require(${JSON.stringify(join(ROOT, 'dist', 'sdk.cjs'))}) === t,
    exitBefore, exitAfter: process.listenerCount('exit') }));
})();
`;

function child(env: Record<string, string>, doc?: object, nodeOptions: string[] = []) {
  const r = spawnSync(process.execPath, [...nodeOptions, '-e', CHILD, file, ...(doc ? [JSON.stringify(doc)] : [])],
    { encoding: 'utf8', env: { ...process.env, TET_COMPILE_CACHE_DEBUG: '1', ...env } });
  expect(r.status, r.stderr).toBe(0);
  const lines = r.stderr.split('\n').filter((l) => l.startsWith('tetration: code cache ')).map((l) => l.slice('tetration: code cache '.length));
  return {
    out: JSON.parse(r.stdout) as { mean: number; same: boolean; exitBefore: number; exitAfter: number },
    events: lines.filter((l) => !l.startsWith('validate ')),  // dist/sdk.cjs
    validate: lines.filter((l) => l.startsWith('validate ')).map((l) => l.slice('validate '.length)),  // the part
  };
}

const cacheFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.v8cache')) : []);

beforeAll(async () => {
  if (!existsSync(dist)) execFileSync('npm', ['run', 'build:ts'], { cwd: ROOT, stdio: 'ignore' });
  const w = await TetWriter.create(file);
  w.addDataset({ name: 'x', dtype: 'f32', shape: [N], chunkShape: [700] });
  await w.writeChunk('x', [0], values.subarray(0, 700));
  for (let c = 1; c * 700 < N; c++) await w.writeChunk('x', [c], values.subarray(c * 700, Math.min(N, (c + 1) * 700)));
  await w.commit();
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the code cache of dist/index.cjs', () => {
  it('the first process writes it after its first answer (0700 dir, 0600 file); the next one starts from it', () => {
    const dir = join(work, 'c1');
    const a = child({ TET_COMPILE_CACHE_DIR: dir });
    expect(a.out.mean).toBeCloseTo(wantMean, 9);
    expect(a.out.same).toBe(true);
    expect(a.events).toEqual(['none', 'written answered']);
    expect(a.validate).toEqual(['none', 'written answered']);
    const files = cacheFiles(dir);
    expect(files).toHaveLength(2);
    files.forEach((f, i) => expect(f).toMatch(new RegExp(`^${['sdk', 'validate'][i]}-[0-9a-f]{20}-${process.version.replace(/\./g, '\\.')}-${process.arch}\\.answered\\.v8cache$`)));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const f of files) expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
    const b = child({ TET_COMPILE_CACHE_DIR: dir });
    expect(b.events).toEqual(['accepted answered']);
    expect(b.validate).toEqual(['accepted answered']);
    expect(b.out.mean).toBe(a.out.mean);
    // The writer left a listener to write at exit; a process whose caches were all accepted
    // schedules nothing (no timer, no listener) on its first answer.
    expect(a.out.exitAfter).toBe(a.out.exitBefore + 1);
    expect(b.out.exitAfter).toBe(b.out.exitBefore);
  });

  it("the validator's cache holds all of it, whatever the shape of the query that wrote it", () => {
    // V8 compiles a function at its first call, and a cache holds what was compiled when it was
    // taken: without the part's compileAll, a cache written after a plain mean held fewer of the
    // validator's functions than one written after a histogram of a strided range (~59 vs ~72 KB),
    // and a later process whose first query had another shape compiled the rest on its path.
    const size = (name: string, doc?: object) => {
      const dir = join(work, name);
      expect(child({ TET_COMPILE_CACHE_DIR: dir }, doc).validate).toEqual(['none', 'written answered']);
      const part = cacheFiles(dir).find((f) => f.startsWith('validate-'))!;
      return statSync(join(dir, part)).size;
    };
    const plain = size('c-shape1');
    const other = size('c-shape2', { dataset: 'x', histogram: { bins: 4, axes: [] }, selection: [{ start: 1, stop: 2000, step: 3 }] });
    expect(plain).toBeGreaterThan(0);
    // The same functions compiled either way: equal sizes on Node 20; V8 12/13 (Node 22, 24) may
    // differ by a few bytes (16 of 112 KB seen). Without compileAll they differed by ~18 %.
    expect(Math.abs(plain - other)).toBeLessThanOrEqual(Math.max(plain, other) * 0.02);
  });

  it('a corrupted or truncated cache is rejected, the answer is the same, a good one replaces it', () => {
    const dir = join(work, 'c2');
    child({ TET_COMPILE_CACHE_DIR: dir });
    const [f, part] = cacheFiles(dir).map((n) => join(dir, n));  // sdk-..., validate-...
    for (const bad of [Buffer.alloc(5000, 0xa5), Buffer.alloc(3)]) {
      writeFileSync(f, bad);
      const r = child({ TET_COMPILE_CACHE_DIR: dir });
      expect(r.events).toEqual(['rejected answered', 'none', 'written answered']);
      expect(r.validate).toEqual(['accepted answered']);
      expect(r.out.mean).toBeCloseTo(wantMean, 9);
      writeFileSync(part, bad);
      const p = child({ TET_COMPILE_CACHE_DIR: dir });
      expect(p.events).toEqual(['accepted answered']);
      expect(p.validate).toEqual(['rejected answered', 'none', 'written answered']);
      expect(p.out.mean).toBeCloseTo(wantMean, 9);
      const again = child({ TET_COMPILE_CACHE_DIR: dir });
      expect([again.events, again.validate]).toEqual([['accepted answered'], ['accepted answered']]);
    }
  });

  it('processes started with other V8 flags keep caches of their own instead of rejecting and rewriting each other\'s', () => {
    const dir = join(work, 'c-flags');
    const plain = () => child({ TET_COMPILE_CACHE_DIR: dir });
    const gc = () => child({ TET_COMPILE_CACHE_DIR: dir }, undefined, ['--expose-gc']);
    expect(plain().events).toEqual(['none', 'written answered']);
    // V8 would reject the plain process's cache under --expose-gc: it has its own
    expect(gc().events).toEqual(['none', 'written answered']);
    for (let i = 0; i < 2; i++) {
      expect(plain().events).toEqual(['accepted answered']);
      const g = gc();
      expect(g.events).toEqual(['accepted answered']);
      expect(g.out.mean).toBeCloseTo(wantMean, 9);
    }
    const names = cacheFiles(dir).filter((f) => f.startsWith('sdk-'));
    expect(names).toHaveLength(2);
    expect(names.filter((f) => /-f[0-9a-f]{8}\.answered\.v8cache$/.test(f))).toHaveLength(1);
  });

  it('a process that answers nothing writes the load-time cache at exit; one that answers adds its own', () => {
    const dir = join(work, 'c6');
    const load = (lazy: boolean) => spawnSync(process.execPath, ['-e',
      `${lazy ? "globalThis[Symbol.for('tetration.sdk.lazyParts')] = true; " : ''}const t = require(${JSON.stringify(dist)});`],
    { encoding: 'utf8', env: { ...process.env, TET_COMPILE_CACHE_DIR: dir, TET_COMPILE_CACHE_DEBUG: '1' } }).stderr.trim().split('\n')
      .map((l) => l.slice('tetration: code cache '.length));
    // the CLI's way (lib/cli/sdk.ts): the validator part is not loaded by the require
    expect(load(true)).toEqual(['none', 'written loaded']);
    expect(cacheFiles(dir)).toEqual([expect.stringMatching(/^sdk-.*\.loaded\.v8cache$/)]);
    expect(load(true)).toEqual(['accepted loaded']);
    // a plain require loads it with the bundle, so a first query does not wait for it
    expect(load(false)).toEqual(['accepted loaded', 'validate none', 'validate written loaded']);
    expect(load(false)).toEqual(['accepted loaded', 'validate accepted loaded']);
    const q = child({ TET_COMPILE_CACHE_DIR: dir });
    expect(q.events).toEqual(['accepted loaded', 'written answered']);
    expect(q.validate).toEqual(['accepted loaded', 'written answered']);
    expect(q.out.mean).toBeCloseTo(wantMean, 9);
    expect(child({ TET_COMPILE_CACHE_DIR: dir }).events).toEqual(['accepted answered']);
  });

  it('a plain require reads the bundle and its parts as one large string: no part text in the young generation', () => {
    // V8 keeps strings over 128 KiB in its large object space (outside the young generation's
    // scavenge trigger) and a slice of a string as a view of it. Read alone, the ~100 KB validator
    // part is a young string; read with the bundle, the large object spaces grow by both files.
    // the parts read with the bundle: the eager ones (lib/loader/parts.ts)
    const texts = ['sdk.cjs', ...SDK_PARTS.filter((p) => p.eager).map((p) => `sdk-part-${p.name}.cjs`)]
      .reduce((n, f) => n + statSync(join(ROOT, 'dist', f)).size, 0);
    const grew = (lazy: boolean) => {
      const r = spawnSync(process.execPath, ['-e', `
        const v8 = require('node:v8');
        const lo = () => v8.getHeapSpaceStatistics().filter((s) => /large_object_space$/.test(s.space_name) && !/code|shared/.test(s.space_name))
          .reduce((n, s) => n + s.space_used_size, 0);
        const before = lo();
        ${lazy ? "globalThis[Symbol.for('tetration.sdk.lazyParts')] = true; " : ''}const t = require(${JSON.stringify(dist)});
        process.stdout.write(String(lo() - before));`], { encoding: 'utf8', env: { ...process.env, TET_COMPILE_CACHE_DIR: join(work, 'c-lo') } });
      expect(r.status, r.stderr).toBe(0);
      return Number(r.stdout);
    };
    expect(grew(false)).toBeGreaterThanOrEqual(texts);
    // lazy parts (the CLI): only the bundle's text is read at require
    expect(grew(true)).toBeLessThan(texts);
  });

  it('a process that exits right after its answer still writes the answered cache (the CLI too)', () => {
    const quick = join(work, 'c8');
    const exitAfterAnswer = `
      const t = require(${JSON.stringify(dist)});
      (async () => {
        const f = await t.open(process.argv[1]);
        await f.query({ dataset: 'x', mean: [] }, { preview: 0 });
        process.exit(0);  // before the loader's turn of the event loop comes
      })();`;
    const events = () => {
      const r = spawnSync(process.execPath, ['-e', exitAfterAnswer, file],
        { encoding: 'utf8', env: { ...process.env, TET_COMPILE_CACHE_DIR: quick, TET_COMPILE_CACHE_DEBUG: '1' } });
      expect(r.status, r.stderr).toBe(0);
      return r.stderr.trim().split('\n').map((l) => l.slice('tetration: code cache '.length));
    };
    expect(events()).toEqual(['none', 'validate none', 'written answered', 'validate written answered']);
    expect(events()).toEqual(['accepted answered', 'validate accepted answered']);
    const dir = join(work, 'c7');
    const tet = (...args: string[]) => {
      const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'tet.js'), ...args],
        { encoding: 'utf8', env: { ...process.env, TET_COMPILE_CACHE_DIR: dir, TET_COMPILE_CACHE_DEBUG: '1', TET_NO_QUERY_HISTORY: '1' } });
      expect(r.status, r.stderr).toBe(0);
      return r.stderr.split('\n').filter((l) => l.startsWith('tetration: code cache ')).map((l) => l.slice('tetration: code cache '.length));
    };
    const query = ['query', '{"dataset":"x","mean":[]}', '-t', file, '-x', '--format', 'quiet'];
    expect(tet('info', '-q', file)).toEqual(['none', 'written loaded']);  // answers nothing
    expect(tet(...query)).toEqual(['accepted loaded', 'validate none', 'written answered', 'validate written answered']);
    expect(tet(...query)).toEqual(['accepted answered', 'validate accepted answered']);
  });

  it('a directory others can write is not used; TET_NO_COMPILE_CACHE=1 loads without one', () => {
    const dir = join(work, 'c3');
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o777);
    const r = child({ TET_COMPILE_CACHE_DIR: dir });
    expect(r.events).toEqual(['no-dir']);
    expect(r.validate).toEqual(['no-dir']);
    expect(r.out.mean).toBeCloseTo(wantMean, 9);
    expect(cacheFiles(dir)).toEqual([]);
    const dir4 = join(work, 'c4');
    const off = child({ TET_COMPILE_CACHE_DIR: dir4, TET_NO_COMPILE_CACHE: '1' });
    expect(off.events).toEqual(['off']);
    expect(off.validate).toEqual(['off']);
    expect(off.out.mean).toBeCloseTo(wantMean, 9);
    expect(cacheFiles(dir4)).toEqual([]);
  });

  it('conversion, export, pictures and notebook display are a part loaded at their first call, sharing the bundle\'s classes', () => {
    const dir = join(work, 'c6');
    const script = `
      const t = require(${JSON.stringify(dist)});
      process.stderr.write('-- required\\n');
      (async () => {
        const f = await t.open(process.argv[1]);
        await f.query({ dataset: 'x', mean: [] }, { preview: 0 });
        process.stderr.write('-- answered\\n');
        let err;
        try { t.detectSource(process.argv[1]); } catch (e) { err = e; }
        const html = t.toHTML(f);
        process.stdout.write(JSON.stringify({ code: err.code, convertError: err instanceof t.TetConvertError, tetError: t.isTetError(err),
          html: html.includes('<td>x</td>'), names: [t.convert.name, t.exportZarr.name, t.renderPlot.name, t.display.name] }));
      })();`;
    for (let k = 0; k < 2; k++) {
      const r = spawnSync(process.execPath, ['-e', script, file], { encoding: 'utf8', env: { ...process.env, TET_COMPILE_CACHE_DIR: dir, TET_COMPILE_CACHE_DEBUG: '1' } });
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ code: 'TET_CONVERT_UNKNOWN_FORMAT', convertError: true, tetError: true, html: true,
        names: ['convert', 'exportZarr', 'renderPlot', 'display'] });
      const [beforeAnswer, afterAnswer] = r.stderr.split('-- answered\n');
      expect(beforeAnswer).not.toContain('extras');  // neither the require nor the query loads the part
      expect(afterAnswer).toContain(k === 0 ? 'code cache extras none' : 'code cache extras accepted loaded');
    }
    expect(cacheFiles(dir).filter((f) => f.startsWith('extras-'))).toHaveLength(1);
  });

  it('without its extras part (a damaged install) the SDK still answers; the async extras reject, the sync ones throw', () => {
    // a copy of the loader, the bundle and the validator inside the package (the addon is found
    // from there), without dist/sdk-part-extras.cjs
    const copy = join(ROOT, '.tmp', `dist-no-extras-${process.pid}`);
    mkdirSync(copy, { recursive: true });
    try {
      for (const f of ['index.cjs', 'sdk.cjs', 'sdk-part-validate.cjs']) copyFileSync(join(ROOT, 'dist', f), join(copy, f));
      const script = `
        const t = require(${JSON.stringify(join(copy, 'index.cjs'))});
        (async () => {
          const f = await t.open(process.argv[1]);
          const mean = (await f.query({ dataset: 'x', mean: [] }, { preview: 0 })).execution.operation_mean;
          let sync = 'none';
          try { t.detectSource(process.argv[1]); } catch (e) { sync = e.code ?? 'thrown'; }
          let returned = false, rejected = '';
          try {
            const p = t.convert(process.argv[1], process.argv[1] + '.out.tet');
            returned = typeof p.then === 'function';
            await p;
          } catch (e) { rejected = e.code ?? 'rejected'; }
          process.stdout.write(JSON.stringify({ mean, sync, returned, rejected }));
        })();`;
      const r = spawnSync(process.execPath, ['-e', script, file], { encoding: 'utf8', env: { ...process.env, TET_COMPILE_CACHE_DIR: join(work, 'c7') } });
      expect(r.status, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out.mean).toBeCloseTo(wantMean, 9);
      expect(out).toMatchObject({ sync: 'ENOENT', returned: true, rejected: 'ENOENT' });
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('ES-only dependencies load from the cached bundle (a PNG through vega and sharp)', () => {
    const dir = join(work, 'c5');
    const script = `
      const t = require(${JSON.stringify(dist)});
      (async () => {
        const f = await t.open(process.argv[1]);
        const r = await f.query({ dataset: 'x', histogram: { bins: 8 } }, { preview: 0 });
        const png = await t.renderPlot(r, { format: 'png' });
        process.stdout.write(Buffer.from(png.subarray(1, 4)).toString('latin1'));
      })();`;
    for (let k = 0; k < 2; k++) {
      const r = spawnSync(process.execPath, ['-e', script, file], { encoding: 'utf8', env: { ...process.env, TET_COMPILE_CACHE_DIR: dir, TET_COMPILE_CACHE_DEBUG: '1' } });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe('PNG');
      expect(r.stderr).toContain(k === 0 ? 'code cache none' : 'code cache accepted answered');
    }
  });
});
