// Where V8 code caches live, for the package loader (lib/loader/sdk-loader.ts) and the CLI's
// cache (compile-cache.ts, dist/compile-cache.cjs): one directory of this user's. A code
// cache is bytecode V8 runs, so a directory anyone else could write is never used:
// TET_COMPILE_CACHE_DIR, else <tmpdir>/tetration-<uid>, created mode 0700 and checked (a real
// directory, owned by this uid, writable by no one else) on every use. Windows has no uid: there
// the per-user tmpdir is the guard. TET_NO_COMPILE_CACHE=1 turns every cache off;
// TET_COMPILE_CACHE_DEBUG=1 reports on stderr what each one did. A write tidies the directory it
// wrote to (pruneCacheDir): caches it replaces, caches unwritten for CACHE_MAX_AGE_MS, writes cut
// short, so the directory does not grow with every upgrade of the package or of Node.
// Named imports: a default import of a builtin becomes esbuild's __toESM copy of all its
// properties, whose getters load more of node (~1 ms of every start).
import { lstatSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../user-dirs';

/** A 32-bit FNV-1a hash of `text`, 8 hex digits: cache names. */
export function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

// Options that name code to run (a script, a preload, a loader), not how V8 compiles it: left out
// of optionsTag, with their value where it is the next word.
const CODE_OPTION = /^(?:-[epr]|-pe|-ep|--(?:eval|print|require|import|loader|experimental-loader))$/;
const CODE_OPTION_WITH_VALUE = /^--(?:eval|print|require|import|loader|experimental-loader)=/;

/**
 * '' for a process started without Node options (besides those naming code to run: -e, -r,
 * --import, ...), else `-f<hash>` of them (its command line's and NODE_OPTIONS'), for the names of
 * its caches. V8 rejects a code cache made under other V8 flags, so processes started with
 * different options (`--expose-gc`, `--max-old-space-size=N`, a test runner's) each rejected the
 * cache the other had written and wrote their own over it, at every start; each set of options
 * has caches of its own now.
 */
export function optionsTag(): string {
  const words = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/).filter((w) => w !== '')];
  const kept: string[] = [];
  for (let i = 0; i < words.length; i++) {
    if (CODE_OPTION.test(words[i])) i++;  // and its value
    else if (!CODE_OPTION_WITH_VALUE.test(words[i])) kept.push(words[i]);
  }
  return kept.length === 0 ? '' : `-f${fnv1a(kept.join('\0'))}`;
}

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
  const base = process.env.TET_COMPILE_CACHE_DIR || join(tempDir(), uid === null ? 'tetration' : `tetration-${uid}`);
  try {
    for (const dir of sub ? [base, join(base, sub)] : [base]) {
      // Created only where missing: a process's first mkdirSync costs ~0.12 ms, an lstat that
      // finds the directory ~0.01 once the first has run.
      let st = lstatSync(dir, { throwIfNoEntry: false });
      if (st === undefined) {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        st = lstatSync(dir);
      }
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

/**
 * How long a cache may go unwritten before a write beside it removes it. V8 has a cache rewritten
 * only when it rejects it, so one still in use can be this old: it is then written once more.
 */
export const CACHE_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;
/** An interrupted writeCacheFile leaves `<file>.<pid>.<random>.tmp`; removed once a day old. */
const TMP_NAME = /\.\d+\.[0-9a-z]+\.tmp$/;
const TMP_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/**
 * Tidies `dir` after a cache was written there: removes each entry `ours` recognises (a cache
 * file, or a directory of caches) that `superseded` says the new cache replaces or that is older
 * than CACHE_MAX_AGE_MS, and the leftovers of interrupted writes of such files. Anything else is
 * left alone, a link is never followed, and a failure only leaves an entry where it was (a cache
 * is optional).
 */
export function pruneCacheDir(dir: string, ours: (name: string, isDir: boolean) => boolean,
  superseded: (name: string) => boolean = () => false): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const now = Date.now();
  for (const name of names) {
    const tmp = TMP_NAME.test(name);
    const path = join(dir, name);
    try {
      const st = lstatSync(path);
      const isDir = st.isDirectory();
      if (!isDir && !st.isFile()) continue;
      const age = now - st.mtimeMs;
      if (tmp) {
        if (!isDir && ours(name.replace(TMP_NAME, ''), false) && age > TMP_MAX_AGE_MS) rmSync(path, { force: true });
      } else if (ours(name, isDir) && ((!isDir && superseded(name)) || age > CACHE_MAX_AGE_MS)) {
        rmSync(path, { recursive: isDir, force: true });
      }
    } catch {
      // removed meanwhile, or not removable: left as it is
    }
  }
}
