// `tet info`, `tet verify`, `tet repair` run in-process through runCli (exit codes, stdout,
// stderr), on the reference files and conformance fixtures.
import { ROOT, SHARED } from '../support/paths';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { registerInfoCommand, registerRepairCommand, registerVerifyCommand } from '../../lib/cli/info';
import { redirectCliOutput } from '../../lib/cli/out';
import { runCli } from '../../lib/cli/run';
import { TetError } from '../../lib/errors';
import { QUICK_DECODE_BYTES, TetWriter } from '../../lib/index';

const REF = join(SHARED, 'fixtures/reference/tet');
const CONF = join(SHARED, 'conformance/fixtures');
const dir = mkdtempSync(join(tmpdir(), 'tet-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function tet(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const program = new Command('tet');
  program.configureOutput({ writeOut: (s) => captured.out.push(s), writeErr: (s) => captured.err.push(s) });
  for (const register of [registerInfoCommand, registerVerifyCommand, registerRepairCommand]) register(program);
  const captured = { out: [] as string[], err: [] as string[] };
  redirectCliOutput({ out: (s) => captured.out.push(s), err: (s) => captured.err.push(s) });
  let code: number;
  try {
    code = await runCli(program, ['node', 'tet', ...args]);
  } finally {
    redirectCliOutput(null);
    process.exitCode = undefined;
  }
  return { code, stdout: captured.out.join(''), stderr: captured.err.join('') };
}

describe('tet info', () => {
  it('prints the dataset table for sample.tet', async () => {
    const r = await tet('info', join(REF, 'sample.tet'));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/temperature/);
    expect(r.stdout).toMatch(/f32/);
    expect(r.stdout).toMatch(/2 x 3/);
    expect(r.stdout).toMatch(/1 x 2 \(2\)/);
    expect(r.stdout).toMatch(/raw 2/);
    expect(r.stdout).toMatch(/1\.00x/);
    expect(r.stdout).toMatch(/footer +none/);
  });

  it('--json carries shape, codecs, bytes, dim names, attrs, execution and history', async () => {
    const r = await tet('info', join(CONF, 'meta_weather.tet'), '--json', '--history');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    const t = j.datasets.find((d: { name: string }) => d.name === 'temperature');
    expect(t.shape).toEqual([12, 6, 8]);
    expect(t.dim_names).toEqual(['time', 'lat', 'lon']);
    expect(t.logical_bytes).toBe(12 * 6 * 8 * 4);
    expect(Object.keys(t.attrs).length).toBeGreaterThan(0);
    expect(j.footer.present).toBe(true);
    expect(j.history.length).toBeGreaterThan(0);
    const b = JSON.parse((await tet('info', join(CONF, 'file_exec_budget.tet'), '--json')).stdout);
    expect(b.execution).toEqual({ memory_budget_percent_bps: 4000, memory_budget_bytes: 1048576 });
  });

  it('a malformed file prints `error: <message>` and exits 1, without a stack', async () => {
    const r = await tet('info', join(CONF, 'm_bad_magic.tet'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: .*magic/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('usage errors exit 2', async () => {
    expect((await tet('info')).code).toBe(2);
    expect((await tet('info', 'a', 'b', '--nope')).code).toBe(2);
  });
});

describe('tet verify', () => {
  it('reference and valid files verify ok (exit 0)', async () => {
    for (const file of [join(REF, 'sample.tet'), join(REF, 'large.tet'), join(CONF, 'f64_r3_zstd.tet'), join(CONF, 'meta_spill.tet')]) {
      const r = await tet('verify', file);
      expect([file, r.code]).toEqual([file, 0]);
      expect(r.stdout).toMatch(/\nok\n$/);
    }
  });

  it('quick verify decodes the first 128 chunks; --deep all of them', async () => {
    const quick = JSON.parse((await tet('verify', join(REF, 'large.tet'), '--json')).stdout);
    expect([quick.ok, quick.chunksTotal, quick.chunksDecoded]).toEqual([true, 144, 128]);
    const deep = JSON.parse((await tet('verify', join(REF, 'large.tet'), '--json', '--deep')).stdout);
    expect([deep.ok, deep.chunksDecoded]).toEqual([true, 144]);
  });

  it('a quick verify of large compressed tiles decodes no more than QUICK_DECODE_BYTES of them', async () => {
    // five zstd tiles of 16 MiB (zeros: small on disk): 64 MiB / 16 MiB = the first 4 decoded
    const file = join(dir, 'big-tiles.tet');
    const tile = 4 * 1024 * 1024;
    const w = await TetWriter.create(file);
    w.addDataset({ name: 'big', dtype: 'f32', shape: [5 * tile], chunkShape: [tile], codec: 'zstd' });
    const zeros = new Float32Array(tile);
    for (let c = 0; c < 5; c++) await w.writeChunk('big', [c], zeros);
    await w.commit();
    expect(QUICK_DECODE_BYTES).toBe(64 * 1024 * 1024);
    const quick = JSON.parse((await tet('verify', file, '--json')).stdout);
    expect([quick.ok, quick.chunksTotal, quick.chunksDecoded]).toEqual([true, 5, 4]);
    const deep = JSON.parse((await tet('verify', file, '--json', '--deep')).stdout);
    expect([deep.ok, deep.chunksDecoded]).toEqual([true, 5]);
    const info = await tet('info', file);
    expect(info.stdout).toMatch(/health {5}ok \(first 4 of 5 tiles decoded; tet verify --deep checks all\)/);
  });

  it('-q prints nothing for a healthy file', async () => {
    const r = await tet('verify', join(REF, 'sample.tet'), '-q');
    expect([r.code, r.stdout]).toEqual([0, '']);
  });

  it('a corrupt zstd tile is found by decoding (exit 1)', async () => {
    const r = await tet('verify', join(CONF, 'm_zstd_corrupt.tet'), '--json');
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout);
    expect(j.structureOk).toBe(true);
    expect(j.findings.map((f: { code: string }) => f.code)).toContain('TET_DECODE_ZSTD');
  });

  it('structural corruption is reported without decode (exit 1)', async () => {
    const r = await tet('verify', join(CONF, 'm_duplicate_chunk.tet'));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/error \[TET_INDEX_/);
  });

  it('a corrupt footer is recommended for footer_invalid', async () => {
    const r = await tet('verify', join(REF, 'plan.tet'));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/TET_FOOTER_/);
    expect(r.stdout).toMatch(/--apply footer_invalid/);
  });
});

describe('tet repair', () => {
  it('shows the plan, applies footer_invalid atomically on a copy of plan.tet, then verifies ok', async () => {
    const copy = join(dir, 'plan.tet');
    copyFileSync(join(REF, 'plan.tet'), copy);
    const before = readFileSync(copy);

    const plan = await tet('repair', copy);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(/fix footer_invalid/);
    expect(readFileSync(copy).equals(before)).toBe(true);  // showing the plan changes nothing

    const applied = await tet('repair', copy, '--apply', 'footer_invalid');
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/verify: ok/);
    // README: plan.tet is sample-like (values 1..6, 24 payload bytes) plus a 28-byte JSON + 16-byte tail
    expect(statSync(copy).size).toBe(before.length - 28 - 16);
    const after = readFileSync(copy);
    expect(after.readUInt32LE(12) & 1).toBe(0);  // footer flag cleared
    expect(after.subarray(16).equals(before.subarray(16, after.length))).toBe(true);
    expect((await tet('verify', copy)).code).toBe(0);
    expect((await tet('repair', copy)).stdout).toMatch(/nothing to repair/);
  });

  it('refuses a repair that does not apply or is unknown', async () => {
    const r = await tet('repair', join(REF, 'sample.tet'), '--apply', 'footer_invalid');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: repair footer_invalid does not apply/);
    const u = await tet('repair', join(REF, 'sample.tet'), '--apply', 'bogus');
    expect(u.code).toBe(1);
    expect(u.stderr).toMatch(/unknown repair/);
  });
});

describe('runCli', () => {
  it('unexpected errors print `error: internal:` and exit 1', async () => {
    const program = new Command('tet');
    program.command('boom').action(() => {
      throw new RangeError('kaput');
    });
    program.command('tetboom').action(() => {
      throw new TetError('TET_IO_OPEN', 'cannot open x');
    });
    const errs: string[] = [];
    redirectCliOutput({ out: () => {}, err: (s) => errs.push(s) });
    try {
      expect(await runCli(program, ['node', 'tet', 'boom'])).toBe(1);
      expect(await runCli(program, ['node', 'tet', 'tetboom'])).toBe(1);
    } finally {
      redirectCliOutput(null);
      process.exitCode = undefined;
    }
    expect(errs.join('')).toBe('error: internal: kaput\nerror: cannot open x\n');
  });
});

describe('built CLI (bin/tet.js -> dist/cli.cjs, after npm run build:ts)', () => {
  const root = ROOT;
  it.skipIf(!existsSync(join(root, 'dist/cli.cjs')))('loads the addon from dist/ and maps exit codes', () => {
    const run = (...args: string[]) => spawnSync(process.execPath, [join(root, 'bin/tet.js'), ...args], { encoding: 'utf8' });
    const ok = run('info', join(REF, 'sample.tet'), '--json');
    expect(ok.status).toBe(0);
    expect(JSON.parse(ok.stdout).datasets[0].name).toBe('temperature');
    const bad = run('verify', join(REF, 'plan.tet'), '-q');
    expect(bad.status).toBe(1);
    expect(bad.stdout).toMatch(/footer_invalid/);
    const usage = run('verify');
    expect(usage.status).toBe(2);
    const missing = run('info', '/nonexistent.tet');
    expect([missing.status, missing.stderr]).toEqual([1, expect.stringMatching(/^error: /)]);
  });
});
