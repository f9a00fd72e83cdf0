// How the `tet` binary behaves as a Unix citizen, run as a real process (dist/cli.cjs): a reader
// that closes the pipe early, or a closed stdout, ends it quietly with exit 0.
import { ROOT } from '../support/paths';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const CLI = join(ROOT, 'dist/cli.cjs');
const SAMPLE = join(ROOT, 'samples/weather.tet');

/** Runs `tet ARGS | head -N` under bash with pipefail: the status is tet's unless head fails. */
function piped(args: string, lines = 1) {
  const r = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${CLI}" ${args} | head -${lines}`],
    { encoding: 'utf8', cwd: ROOT });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('tet and closed pipes', () => {
  it('`tet info FILE | head -1` exits 0 with no stderr', () => {
    const r = piped(`info "${SAMPLE}"`);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(1);
  });
  it('a long query response cut by `head -2` exits 0 with no stderr', () => {
    const r = piped(`query "${join(ROOT, 'samples/monthly_mean_map.toml')}" -t "${SAMPLE}" -x --preview 100000`, 2);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith('{')).toBe(true);
  });
  it('a closed stdout (`>&-`) ends quietly with exit 0', () => {
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${CLI}" info "${SAMPLE}" >&-`], { encoding: 'utf8', cwd: ROOT });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
  it('a non-blocking stdout that fills (EAGAIN) is waited on: the whole response arrives', () => {
    // python sets O_NONBLOCK on the pipe, then execs tet; the reader starts after 0.3 s, so the
    // 700 KB response fills the 64 KB pipe and writes fail with EAGAIN until it drains
    const args = `query "${join(ROOT, 'samples/monthly_mean_map.toml')}" -t "${SAMPLE}" -x --preview 100000`;
    const blocking = spawnSync('bash', ['-c', `"${process.execPath}" "${CLI}" ${args}`], { encoding: 'utf8', cwd: ROOT, maxBuffer: 1 << 26 });
    expect(blocking.status).toBe(0);
    expect(blocking.stdout.length).toBeGreaterThan(1 << 18);
    const nonBlocking = 'import fcntl, os, sys; fcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) | os.O_NONBLOCK); os.execvp(sys.argv[1], sys.argv[1:])';
    const r = spawnSync('bash', ['-c', `set -o pipefail; python3 -c '${nonBlocking}' "${process.execPath}" "${CLI}" ${args} | (sleep 0.3; cat)`],
      { encoding: 'utf8', cwd: ROOT, maxBuffer: 1 << 26 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    // the same response, but for the host's figures of the moment (free RAM and so the budget)
    const stable = (text: string) => ({ ...JSON.parse(text), execution: undefined, timing: undefined });
    expect(r.stdout.length).toBeGreaterThan(1 << 18);
    expect(stable(r.stdout)).toEqual(stable(blocking.stdout));
  });
});
