// binding() requires the addon directly where node-gyp-build would find it first (build/Release,
// else this platform's prebuild), and leaves every other layout to node-gyp-build: the direct
// path must be node-gyp-build's own answer for the layouts it takes.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { directAddonPath } from '../../lib/binding';

const ngbPath = (createRequire(import.meta.url)('node-gyp-build') as { path(dir: string): string }).path;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const platform = `${process.platform}-${process.arch}`;

function layout(files: string[]): string {
  const root = mkdtempSync(join(tmpdir(), 'tet-direct-'));
  dirs.push(root);
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'tetration', version: '0.0.0' }));
  for (const f of files) {
    mkdirSync(join(root, f, '..'), { recursive: true });
    writeFileSync(join(root, f), '');
  }
  return root;
}

describe('the addon path without node-gyp-build', () => {
  it('a source build: build/Release, as node-gyp-build picks it, even beside a prebuild', () => {
    const root = layout(['build/Release/tetration.node', `prebuilds/${platform}/tetration.node`]);
    expect(directAddonPath(root)).toBe(join(root, 'build', 'Release', 'tetration.node'));
    expect(directAddonPath(root)).toBe(ngbPath(root));
  });
  it("an installed package: this platform's prebuild, as node-gyp-build picks it", () => {
    const root = layout([`prebuilds/${platform}/tetration.node`, 'prebuilds/other-arch/tetration.node']);
    expect(directAddonPath(root)).toBe(join(root, 'prebuilds', platform, 'tetration.node'));
    expect(directAddonPath(root)).toBe(ngbPath(root));
  });
  it('anything else is left to node-gyp-build (a Debug build, no addon at all)', () => {
    const debug = layout(['build/Debug/tetration.node']);
    expect(directAddonPath(debug)).toBeUndefined();
    expect(ngbPath(debug)).toBe(join(debug, 'build', 'Debug', 'tetration.node'));
    expect(directAddonPath(layout([]))).toBeUndefined();
    expect(directAddonPath(layout(['prebuilds/other-arch/tetration.node']))).toBeUndefined();
  });
});
