// The user's home and temporary directories, as node:os reports them, without loading node:os
// where the environment gives the answer (POSIX: HOME; TMPDIR, TMP, TEMP, else /tmp: what
// os.homedir() and os.tmpdir() read first). The builtin costs a fresh process ~0.16-0.23 ms, and
// `tet` and `require('tetration')` need only these paths of it (the code-cache directory, the
// query history, the spill roots; docs/performance.md "CLI start-up"). Elsewhere (Windows, no
// HOME) node:os answers.
import { lazyRequire } from './lazy-require';

const os = lazyRequire<typeof import('node:os')>('node:os');

/** os.homedir(). */
export function homeDir(): string {
  const home = process.platform === 'win32' ? undefined : process.env.HOME;
  return home ? home : os().homedir();
}

/** os.tmpdir(). */
export function tempDir(): string {
  if (process.platform === 'win32') return os().tmpdir();
  const dir = process.env.TMPDIR || process.env.TMP || process.env.TEMP || '/tmp';
  return dir.length > 1 && dir.endsWith('/') ? dir.slice(0, -1) : dir;
}
