// A failed addon load says what this runtime is, where it looked and what to do.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadFailureMessage } from '../../lib/binding';

const root = mkdtempSync(join(tmpdir(), 'tet-binding-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const platform = `${process.platform}-${process.arch}`;

describe('binding load failure message', () => {
  it('no prebuild for this platform: names the runtime, the paths tried and the source build', () => {
    mkdirSync(join(root, 'prebuilds', 'darwin-arm64'), { recursive: true });
    const m = loadFailureMessage(root, new Error('No native build was found for platform=linux\nmore'));
    expect(m).toContain('(No native build was found for platform=linux)');
    expect(m).not.toContain('more');
    expect(m).toContain(`this runtime: ${platform}`);
    expect(m).toContain(`Node ${process.versions.node}, N-API ${process.versions.napi}`);
    expect(m).toContain(join(root, 'prebuilds', platform));
    expect(m).toContain('prebuilt for: darwin-arm64');
    expect(m).toContain(`${join(root, 'build', 'Release', 'tetration.node')} (absent)`);
    expect(m).toContain('no prebuild ships for this platform');
    expect(m).toContain('npm rebuild tetration');
    if (process.platform === 'linux') expect(m).toMatch(/glibc \d+\.\d+|musl/);
  });
  it('a prebuild that is there but does not load says so', () => {
    mkdirSync(join(root, 'prebuilds', platform), { recursive: true });
    mkdirSync(join(root, 'build', 'Release'), { recursive: true });
    writeFileSync(join(root, 'build', 'Release', 'tetration.node'), '');
    const m = loadFailureMessage(root, 'invalid ELF header');
    expect(m).toContain('a prebuild for this platform is there but did not load');
    expect(m).toContain('(present)');
  });
});
