// The sample notebook (samples/tour.ipynb) executed headless: Jupyter's nbclient (Debian's
// python3-nbclient) runs it on the tslab kernel (tslab from npm, installed here under .tmp/),
// with tetration installed the way a user has it (node_modules/tetration). Its outputs must
// hold the dataset table (HTML), the pictures (PNG of the documented size) and the file's
// printed summary, and no error.
import { ROOT } from '../support/paths';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const PYTHON = '/usr/bin/python3';
const TSLAB = join(ROOT, '.tmp', 'tslab');
const work = mkdtempSync(join(tmpdir(), 'tet-notebook-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Output { output_type: string; text?: string; data?: Record<string, string>; ename?: string; evalue?: string }
let cells: { cell_type: string; source: string; outputs?: Output[] }[] = [];

beforeAll(() => {
  // tslab (and its prebuilt zeromq), in a folder of its own: never in the project's node_modules,
  // where its TypeScript fork would take over `tsc`.
  const bin = join(TSLAB, 'node_modules', 'tslab', 'bin', 'tslab');
  if (!existsSync(bin)) {
    mkdirSync(TSLAB, { recursive: true });
    writeFileSync(join(TSLAB, 'package.json'), '{ "private": true }\n');
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', 'tslab@1.0.22'], { cwd: TSLAB, stdio: 'ignore' });
  }
  const kernels = join(work, 'jupyter', 'kernels', 'tslab');
  mkdirSync(kernels, { recursive: true });
  writeFileSync(join(kernels, 'kernel.json'), JSON.stringify({
    argv: [process.execPath, bin, 'kernel', '--config-path', '{connection_file}'], display_name: 'TypeScript', language: 'typescript',
  }));
  const nb = join(work, 'nb');
  mkdirSync(join(nb, 'node_modules'), { recursive: true });
  symlinkSync(ROOT, join(nb, 'node_modules', 'tetration'));
  symlinkSync(join(ROOT, 'node_modules', '@types'), join(nb, 'node_modules', '@types'));
  copyFileSync(join(ROOT, 'samples', 'tour.ipynb'), join(nb, 'tour.ipynb'));
  copyFileSync(join(ROOT, 'samples', 'weather.tet'), join(nb, 'weather.tet'));
  const script = [
    'import sys, nbformat, nbclient',
    "nb = nbformat.read('tour.ipynb', as_version=4)",
    "nbclient.NotebookClient(nb, kernel_name='tslab', timeout=120, allow_errors=True, resources={'metadata': {'path': '.'}}).execute()",
    "nbformat.write(nb, 'out.ipynb')",
  ].join('\n');
  const r = spawnSync(PYTHON, ['-c', script], { cwd: nb, encoding: 'utf8', env: { ...process.env, JUPYTER_PATH: join(work, 'jupyter') } });
  if (r.status !== 0) throw new Error(`nbclient failed: ${r.stderr}`);
  cells = JSON.parse(readFileSync(join(nb, 'out.ipynb'), 'utf8')).cells;
}, 240_000);

const code = () => cells.filter((c) => c.cell_type === 'code');
const outputs = (i: number) => code()[i].outputs ?? [];
const html = (i: number) => outputs(i).filter((o) => o.data?.['text/html']).map((o) => o.data!['text/html']).join('');
const pngs = (i: number) => outputs(i).filter((o) => o.data?.['image/png']).map((o) => Buffer.from(o.data!['image/png'], 'base64'));

describe('samples/tour.ipynb on the tslab kernel', () => {
  it('runs every cell without an error', () => {
    expect(code()).toHaveLength(4);
    const errors = code().flatMap((c) => (c.outputs ?? []).filter((o) => o.output_type === 'error' || /error/i.test(o.text ?? '')));
    expect(errors).toEqual([]);
  });
  it('shows the file as an HTML table of its datasets', () => {
    const h = html(0);
    expect(h).toContain('<table');
    for (const cell of ['>temperature<', '>f32<', '>120 × 32 × 64<', '>time, lat, lon<', '>zstd']) expect(h).toContain(cell);
  });
  it('shows the January mean as a summary table and the 832 x 412 map', async () => {
    expect(html(1)).toContain('<table');
    expect(html(1)).toContain('>mean<');
    const [png] = pngs(1);
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    const meta = await sharp(png).metadata();
    expect([meta.width, meta.height]).toEqual([832, 412]);
  });
  it('shows the histogram picture, and prints the file summary', () => {
    expect(pngs(2)).toHaveLength(1);
    expect(html(2)).toContain('>histogram<');
    const printed = outputs(3).map((o) => o.text ?? '').join('');
    expect(printed).toContain('TetFile weather.tet (1 dataset: temperature f32[120, 32, 64])');
  });
});
