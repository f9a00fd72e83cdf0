// The addon loads with the SDK (lib/binding.ts preloadBinding), and a package whose addon cannot
// load still requires: validation works, and the first call that needs the addon rejects with
// TET_BINDING_LOAD and its explanation. Runs the built package (dist/) in child processes, as
// users load it.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../lib/binding';

const ROOT = packageRoot();
const work = mkdtempSync(join(tmpdir(), 'tet-preload-'));
const sample = join(ROOT, 'samples', 'weather.tet');

// Requires the SDK at `dist`, reports whether the addon is mapped right after, validates a query
// and opens the sample.
const CHILD = `
const { readFileSync } = require('node:fs');
const mapped = () => readFileSync('/proc/self/maps', 'utf8').includes('tetration.node');
const t = require(process.argv[1]);
const out = { mappedAfterRequire: mapped() };
out.validated = t.validateQuery({ dataset: 'temperature', mean: [] }).dataset;
t.open(process.argv[2]).then(
  (f) => { out.datasets = f.datasets.length; f.close(); },
  (e) => { out.code = e.code; out.message = e.message; },
).then(() => process.stdout.write(JSON.stringify(out)));
`;

function child(dist: string) {
  const r = spawnSync(process.execPath, ['-e', CHILD, dist, sample], { encoding: 'utf8', env: { ...process.env, TET_NO_COMPILE_CACHE: '1' } });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as { mappedAfterRequire: boolean; validated: string; datasets?: number; code?: string; message?: string };
}

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'index.cjs'))) execFileSync('npm', ['run', 'build:ts'], { cwd: ROOT, stdio: 'ignore' });
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.runIf(process.platform === 'linux')('the addon loads with the SDK', () => {
  it('require maps the addon; open() then needs no load of its own', () => {
    const out = child(join(ROOT, 'dist', 'index.cjs'));
    expect(out.mappedAfterRequire).toBe(true);
    expect(out.validated).toBe('temperature');
    expect(out.datasets).toBeGreaterThan(0);
    expect(out.code).toBeUndefined();
  });

  it('an addon that cannot load: require still works, the first open() rejects with TET_BINDING_LOAD', () => {
    // A copy of the package whose build/Release/tetration.node is not a shared library.
    const pkg = join(work, 'broken');
    mkdirSync(join(pkg, 'build', 'Release'), { recursive: true });
    cpSync(join(ROOT, 'dist'), join(pkg, 'dist'), { recursive: true });
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'tetration', version: '0.0.0' }));
    writeFileSync(join(pkg, 'build', 'Release', 'tetration.node'), 'not an ELF file');
    symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'), 'dir');
    const out = child(join(pkg, 'dist', 'index.cjs'));
    expect(out.mappedAfterRequire).toBe(false);
    expect(out.validated).toBe('temperature');
    expect(out.datasets).toBeUndefined();
    expect(out.code).toBe('TET_BINDING_LOAD');
    expect(out.message).toContain('could not load the tetration native addon');
    expect(out.message).toContain(join(pkg, 'build', 'Release', 'tetration.node'));
  });
});
