// The progress bar of `tet query -x` and `tet convert` (lib/cli/progress.ts), run as a real
// process on a pseudo-terminal (`script` from util-linux): drawn on a TTY with bytes / total,
// rate and ETA, erased before the output; absent with --no-progress, --quiet, without a TTY
// and for a query shorter than the default delay. TET_PROGRESS_DELAY_MS=0 makes the bar
// appear at the first event, so the checks do not depend on how fast this machine is.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TetWriter } from '../../lib';
import { ROOT } from '../support/paths';

const CLI = join(ROOT, 'dist/cli.cjs');
const SAMPLE = join(ROOT, 'samples/weather.tet');
const SCRIPT = '/usr/bin/script';
const dir = mkdtempSync(join(tmpdir(), 'tet-cli-progress-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const big = join(dir, 'tiles.tet');
const N = 1 << 20;

beforeAll(async () => {
  const w = await TetWriter.create(big);
  w.addDataset({ name: 'm', dtype: 'u8', shape: [N], chunkShape: [1], data: Uint8Array.from({ length: N }, (_, i) => i % 5) });
  await w.commit();
}, 120_000);

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const ENV = { ...process.env, TET_NO_QUERY_HISTORY: '1' };

/** `tet ARGS` on a pseudo-terminal (stdout and stderr both): everything it wrote, raw. */
function onTty(args: string[], env: Record<string, string> = {}) {
  const cmd = [process.execPath, CLI, ...args].map(quote).join(' ');
  const r = spawnSync(SCRIPT, ['-qfec', cmd, '/dev/null'], { encoding: 'utf8', cwd: ROOT, env: { ...ENV, ...env } });
  return { code: r.status, out: r.stdout };
}
const plain = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]/g, '');
const BAR = /\d+% \| [\d.]+ (B|KiB|MiB) \/ 1024\.0 KiB \| [\d.?]+ ?(B|KiB|MiB|GiB)?\/s \| ETA (\d+s|\?|\d+m\d\ds)/;
const QUERY = JSON.stringify({ dataset: 'm', selection: [{ start: 1 }], sum: [] });

describe.skipIf(!existsSync(SCRIPT) || !existsSync(CLI))('progress bar on a terminal', () => {
  it('tet query -x draws bytes, rate and ETA on the TTY and erases the bar before the output', () => {
    const r = onTty(['query', QUERY, '-t', big, '-x', '--format', 'stats'], { TET_PROGRESS_DELAY_MS: '0' });
    expect(r.code).toBe(0);
    expect(plain(r.out)).toMatch(BAR);
    const lastErase = r.out.lastIndexOf('\x1b[2K');
    const response = r.out.indexOf('"status"');
    expect(lastErase).toBeGreaterThan(-1);
    expect(response).toBeGreaterThan(lastErase);   // the bar is gone before the response is printed
    let sum = 0;
    for (let i = 1; i < N; i++) sum += i % 5;
    expect(r.out).toContain(`"operation_sum":${sum}`);
  });

  it('--no-progress and --quiet draw none', () => {
    for (const extra of [['--no-progress', '--format', 'stats'], ['--quiet']]) {
      const r = onTty(['query', QUERY, '-t', big, '-x', ...extra], { TET_PROGRESS_DELAY_MS: '0' });
      expect(r.code).toBe(0);
      expect(plain(r.out)).not.toMatch(/ETA/);
      expect(r.out).not.toContain('\x1b[2K');
    }
  });

  it('a query shorter than the default delay draws none', () => {
    const r = onTty(['query', join(ROOT, 'samples/monthly_mean_map.toml'), '-t', SAMPLE, '-x', '--format', 'stats']);
    expect(r.code).toBe(0);
    expect(plain(r.out)).not.toMatch(/ETA/);
  });

  it('tet convert draws the bar with the dataset and its tiles', () => {
    // CDF-1: one f64 variable `v` of 2^17 values (1 MiB)
    const n = 1 << 17;
    const u32 = (v: number) => { const x = Buffer.alloc(4); x.writeUInt32BE(v); return x; };
    const name = (s: string) => Buffer.concat([u32(s.length), Buffer.from(s), Buffer.alloc((4 - (s.length % 4)) % 4)]);
    const header = (begin: number) => Buffer.concat([Buffer.from('CDF\x01', 'latin1'), u32(0), u32(10), u32(1), name('x'), u32(n),
      u32(0), u32(0), u32(11), u32(1), name('v'), u32(1), u32(0), u32(0), u32(0), u32(6), u32(n * 8), u32(begin)]);
    const src = join(dir, 'v.nc');
    writeFileSync(src, Buffer.concat([header(header(0).length), Buffer.alloc(n * 8)]));
    const r = onTty(['convert', src, join(dir, 'v.tet'), '--chunk', '8192'], { TET_PROGRESS_DELAY_MS: '0' });
    expect(r.code).toBe(0);
    expect(plain(r.out)).toMatch(/100% \| 1\.00 MiB \/ 1\.00 MiB \| .*\/s \| ETA \S+ \| v \(16\/16 tiles\)/);
    expect(r.out.indexOf('1 dataset(s)')).toBeGreaterThan(r.out.lastIndexOf('\x1b[2K'));
  });
});

describe.skipIf(!existsSync(CLI))('progress bar without a terminal', () => {
  it('stderr stays empty when it is a pipe', () => {
    const r = spawnSync(process.execPath, [CLI, 'query', QUERY, '-t', big, '-x', '--format', 'stats'],
      { encoding: 'utf8', cwd: ROOT, env: { ...ENV, TET_PROGRESS_DELAY_MS: '0' } });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
  });
});
