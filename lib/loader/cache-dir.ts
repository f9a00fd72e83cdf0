// Where V8 code caches live, for the package loader (lib/loader/sdk-loader.ts) and the CLI's
// cache (bin/compile-cache.js, through dist/cache-dir.cjs): one directory of this user's. A code
// cache is bytecode V8 runs, so a directory anyone else could write is never used:
// TET_COMPILE_CACHE_DIR, else <tmpdir>/tetration-<uid>, created mode 0700 and checked (a real
// directory, owned by this uid, writable by no one else) on every use. Windows has no uid: there
// the per-user tmpdir is the guard. TET_NO_COMPILE_CACHE=1 turns every cache off;
// TET_COMPILE_CACHE_DEBUG=1 reports on stderr what each one did.
// Named imports: a default import of a builtin becomes esbuild's __toESM copy of all its
// properties, whose getters load more of node (~1 ms of every start).
import { lstatSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether code caches are turned off (TET_NO_COMPILE_CACHE set, not "0"). */
export function compileCacheOff(): boolean {
  const v = process.env.TET_NO_COMPILE_CACHE;
  return v !== undefined && v !== '' && v !== '0';
}

/** `tetration: code cache <what>` on stderr under TET_COMPILE_CACHE_DEBUG. */
export function compileCacheDebug(what: string): void {
  const v = process.env.TET_COMPILE_CACHE_DEBUG;
  if (v && v !== '0') process.stderr.write(`tetration: code cache ${what}\n`);
}

/** This user's cache directory (`sub` below it, if given), created 0700; null where unsafe. */
export function compileCacheDir(sub?: string): string | null {
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  const base = process.env.TET_COMPILE_CACHE_DIR || join(tmpdir(), uid === null ? 'tetration' : `tetration-${uid}`);
  try {
    for (const dir of sub ? [base, join(base, sub)] : [base]) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const st = lstatSync(dir);
      if (!st.isDirectory()) return null;
      if (uid !== null && (st.uid !== uid || (st.mode & 0o022) !== 0)) return null;
    }
    return sub ? join(base, sub) : base;
  } catch {
    return null;
  }
}

/** Writes `data` to `file` atomically (a temp file of this process, then rename), mode 0600. */
export function writeCacheFile(file: string, data: Uint8Array): boolean {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    writeFileSync(tmp, data, { mode: 0o600 });
    renameSync(tmp, file);
    return true;
  } catch {
    try { rmSync(tmp, { force: true }); } catch { /* a cache is optional */ }
    return false;
  }
}
