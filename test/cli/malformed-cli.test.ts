// Every malformed conformance fixture (manifest.json kind == 'malformed') fails cleanly through the
// built CLI (`node bin/tet.js info|verify FILE`: exit 1, one `error: ...` line on stderr, no stack,
// no signal, no hang) and through the SDK (open + read of every dataset rejects with a TetError
// whose TET_* area matches the error class the independent reference reader raised).
import { ROOT, SHARED } from '../support/paths';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { open, TetError } from '../../lib/index';

const CLI = join(ROOT, 'bin/tet.js');
const CONF = join(SHARED, 'conformance');
const manifest = JSON.parse(readFileSync(join(CONF, 'manifest.json'), 'utf8')) as {
  files: { file: string; kind: string; note: string; oracle_reader_error: string }[];
};
const malformed = manifest.files.filter((f) => f.kind === 'malformed');

// reference reader exception class -> our code area
const AREA: Record<string, string> = {
  TetFormatError: 'FORMAT', TetIndexError: 'INDEX', TetPayloadError: 'PAYLOAD', TetDecodeError: 'DECODE', TetFooterError: 'FOOTER',
};

interface Run { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

function tet(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

function expectCleanFailure(r: Run, what: string): void {
  expect(r.signal, `${what}: killed by a signal (crash or hang)`).toBeNull();
  expect(r.code, `${what}: exit code (stderr: ${r.stderr})`).toBe(1);
  expect(r.stderr, `${what}: stderr`).toMatch(/^error: \S/);
  expect(r.stderr, `${what}: stack trace on stderr`).not.toMatch(/\n\s+at /);
  expect(r.stdout + r.stderr, `${what}: internal error`).not.toMatch(/error: internal/);
  // one line: the message, not a dump
  expect(r.stderr.trimEnd().split('\n'), `${what}: stderr lines`).toHaveLength(1);
}

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist/cli.cjs'))) throw new Error('dist/cli.cjs is missing: run `npm run build:ts` first');
});

describe('malformed fixtures through the CLI and the SDK', () => {
  it('the manifest lists the malformed fixtures and they all exist', () => {
    expect(malformed.length).toBeGreaterThanOrEqual(40);
    for (const m of malformed) {
      expect(m.file).toMatch(/^fixtures\/m_.*\.tet$/);
      expect(existsSync(join(CONF, m.file)), m.file).toBe(true);
    }
  });

  it.each(malformed.map((m) => [m.file, m] as const))('%s: tet info / tet verify / SDK read fail cleanly', async (rel, m) => {
    const path = join(CONF, rel);
    const oracleClass = m.oracle_reader_error.split(':')[0];
    const areas = [AREA[oracleClass]];
    expect(areas[0], `unknown reference error class ${oracleClass}`).toBeDefined();

    const [info, verify, infoJson, verifyJson] = await Promise.all([
      tet(['info', path]), tet(['verify', path]), tet(['info', path, '--json']), tet(['verify', path, '--json']),
    ]);
    expectCleanFailure(info, `tet info ${rel}`);
    expectCleanFailure(verify, `tet verify ${rel}`);
    expectCleanFailure(infoJson, `tet info --json ${rel}`);
    expectCleanFailure(verifyJson, `tet verify --json ${rel}`);

    // verify names the problem with a TET_* code in its report
    const report = JSON.parse(verifyJson.stdout) as { ok: boolean; findings: { severity: string; code: string; message: string }[] };
    expect(report.ok).toBe(false);
    const errors = report.findings.filter((f) => f.severity === 'error');
    expect(errors.length).toBeGreaterThan(0);
    expect(areas).toContain(errors[0].code.split('_')[1]);
    expect(verify.stdout).toContain(`[${errors[0].code}]`);
    expect(verify.stderr).toContain(errors[0].code);

    // info either refuses to open the file, or (tiles that only fail on decode) prints the
    // catalog followed by the findings of the quick tile check
    if (info.stdout === '') {
      expect(info.stderr).not.toMatch(/^error: .*\[TET_/);  // the open error itself
    } else {
      expect(info.stdout).toMatch(/^file +\S/);
      expect(info.stdout).toMatch(/datasets +\d/);
      expect(info.stdout).toMatch(/health +\d+ error\(s\)/);
      expect(info.stdout.indexOf('datasets')).toBeLessThan(info.stdout.indexOf('health'));
      expect(info.stdout).toContain(`error [${errors[0].code}]`);
      expect(info.stderr).toContain(`[${errors[0].code}]`);
      const j = JSON.parse(infoJson.stdout) as { datasets: unknown[]; health: { ok: boolean; findings: { code: string }[] } };
      expect(j.datasets.length).toBeGreaterThan(0);
      expect(j.health.ok).toBe(false);
      expect(j.health.findings.map((f) => f.code)).toContain(errors[0].code);
    }

    // SDK: open, then read every dataset: each attempt rejects with a TET_* TetError
    let openErr: unknown;
    let file;
    try {
      file = await open(path);
    } catch (e) {
      openErr = e;
    }
    const failures: unknown[] = [];
    if (file) {
      try {
        expect(file.datasets.length).toBeGreaterThan(0);
        for (const d of file.datasets) {
          const err = await file.read(d.name).then(() => undefined, (e: unknown) => e);
          expect(err, `read ${d.name} of ${rel} should fail`).toBeDefined();
          failures.push(err);
        }
      } finally {
        file.close();
      }
    } else {
      failures.push(openErr);
    }
    for (const err of failures) {
      expect(err).toBeInstanceOf(TetError);
      const e = err as TetError;
      expect(e.code).toMatch(/^TET_[A-Z]+_[A-Z_]+$/);
      expect(areas).toContain(e.code.split('_')[1]);
      expect(e.message.length).toBeGreaterThan(10);
    }
  }, 60_000);
});
