// Spill path allowlist: where `"spill": "path"` (mmap_spill) may write. Relative paths resolve
// against the .tet file's directory; symlinks and `..` are resolved before the check.
import { existsSync, mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { TetQueryError } from '../errors';
import { homeDir, tempDir } from '../user-dirs';

/** `p` with every existing prefix resolved through realpath (the rest appended unchanged). */
export function canonicalPath(p: string): string {
  let head = resolve(p);
  const tail: string[] = [];
  for (;;) {
    try {
      const real = realpathSync(head);
      return tail.length ? join(real, ...tail.reverse()) : real;
    } catch {
      const parent = dirname(head);
      if (parent === head) return resolve(p);
      tail.push(basename(head));
      head = parent;
    }
  }
}

/** Platform cache/scratch roots, each `…/tetration` (best-effort; may not exist yet). */
export function platformSpillRoots(env: NodeJS.ProcessEnv = process.env): string[] {
  const roots: string[] = [];
  const home = (() => { try { return homeDir(); } catch { return ''; } })();
  if (env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME)) roots.push(join(env.XDG_CACHE_HOME, 'tetration'));
  if (home) {
    roots.push(join(home, '.cache', 'tetration'));
    roots.push(join(home, '.local', 'cache', 'tetration'));
  }
  if (env.LOCALAPPDATA) roots.push(join(env.LOCALAPPDATA, 'tetration'));
  for (const k of ['TMPDIR', 'TEMP', 'TMP'] as const) {
    const v = env[k];
    if (v && isAbsolute(v)) roots.push(join(v, 'tetration'));
  }
  roots.push(join(tempDir(), 'tetration'));
  return [...new Set(roots)];
}

/** Default roots for a .tet file: its canonical parent directory tree + platform roots. */
export function defaultSpillRoots(tetPath: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return [dirname(canonicalPath(tetPath)), ...platformSpillRoots(env)];
}

function isInside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/**
 * The absolute, canonical spill target for `spill`, or TetQueryError TET_QUERY_SPILL_NOT_ALLOWED
 * when it lies outside every allowed root. `extraRoots` (CLI --spill-allow) resolve against cwd.
 */
export function resolveSpillPath(spill: string, tetPath: string, extraRoots: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env): string {
  if (spill.includes('\0')) {
    throw new TetQueryError('TET_QUERY_SPILL_NOT_ALLOWED', 'query $.spill: expected a path, found a NUL byte');
  }
  const target = canonicalPath(resolve(dirname(resolve(tetPath)), spill));
  const roots = [...defaultSpillRoots(tetPath, env), ...extraRoots.map((r) => resolve(r))].map(canonicalPath);
  if (roots.some((r) => isInside(r, target))) return target;
  throw new TetQueryError('TET_QUERY_SPILL_NOT_ALLOWED',
    `query $.spill: expected a path under an allowed root (${roots.join(', ')}; add a root with --spill-allow / ` +
    `spillAllow), found ${target}`);
}

/** A fresh per-query directory under os.tmpdir()/tetration for temp_spill_materialize. */
export function makeQueryTempDir(): string {
  const base = join(tempDir(), 'tetration');
  if (!existsSync(base)) mkdirSync(base, { recursive: true, mode: 0o700 });
  return mkdtempSync(join(base, 'query-'));
}
