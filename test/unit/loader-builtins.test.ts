// The start-up helpers that stand in for node:os and node:module (docs/performance.md "CLI
// start-up"): lib/user-dirs.ts answers what os.homedir() and os.tmpdir() answer, and the CommonJS
// builds' lib/loader/node-module.ts gives Node's Module class (from the module object, else from
// the builtin); lib/loader/read-file.ts reads files whole through one reused buffer; the code
// caches' names carry the process's Node options (lib/loader/cache-dir.ts optionsTag).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import * as os from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';
import ts from 'typescript';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { optionsTag } from '../../lib/loader/cache-dir';
import { readLatin1, readReused } from '../../lib/loader/read-file';
import { homeDir, tempDir } from '../../lib/user-dirs';
import { ROOT } from '../support/paths';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Runs `fn` with the environment variables `vars` set (undefined: removed), then restores them. */
function withEnv<T>(vars: Record<string, string | undefined>, fn: () => T): T {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (v: Record<string, string | undefined>) => {
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) delete process.env[k];
      else process.env[k] = x;
    }
  };
  apply(vars);
  try {
    return fn();
  } finally {
    apply(saved);
  }
}

describe('lib/user-dirs.ts', () => {
  const tmpCases: Record<string, string | undefined>[] = [
    { TMPDIR: '/var/tmp/x', TMP: '/a', TEMP: '/b' },
    { TMPDIR: '/var/tmp/x/', TMP: undefined, TEMP: undefined },  // a trailing slash goes
    { TMPDIR: '/', TMP: undefined, TEMP: undefined },  // but not the root's
    { TMPDIR: '', TMP: '/from/tmp', TEMP: '/from/temp' },  // empty counts as unset
    { TMPDIR: undefined, TMP: undefined, TEMP: '/from/temp/' },
    { TMPDIR: undefined, TMP: undefined, TEMP: undefined },  // /tmp
  ];
  it.each(tmpCases)('tempDir() is os.tmpdir() with %o', (env) => {
    withEnv(env, () => expect(tempDir()).toBe(os.tmpdir()));
  });
  it('homeDir() is os.homedir(), from HOME or, without it, the user database', () => {
    withEnv({ HOME: '/home/somebody' }, () => expect(homeDir()).toBe(os.homedir()));
    withEnv({ HOME: undefined }, () => expect(homeDir()).toBe(os.homedir()));
    withEnv({ HOME: '' }, () => expect(homeDir()).toBe(os.homedir()));
  });
});

describe('lib/loader/node-module.ts as the CommonJS builds compile it', () => {
  // compiled as tsup compiles it into a CommonJS bundle, run with a given `module` and `require`
  const js = ts.transpileModule(readFileSync(join(ROOT, 'lib/loader/node-module.ts'), 'utf8'),
    { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
  const run = (mod: unknown) => {
    const required: string[] = [];
    const exports: Record<string, unknown> = {};
    const req = (id: string) => {
      required.push(id);
      return nodeModule;
    };
    new Script(`(function (exports, require, module) {${js}\n})`).runInThisContext()(exports, req, mod);
    return { exports: exports as { Module: typeof nodeModule.Module; createRequire: typeof nodeModule.createRequire }, required };
  };
  it("a CommonJS file's module object gives Node's Module without loading the builtin", () => {
    const { exports, required } = run(new nodeModule.Module('/x/y.js'));
    expect(exports.Module).toBe(nodeModule.Module);
    expect(required).toEqual([]);
    expect(exports.createRequire(join(ROOT, 'package.json'))('./package.json').name).toBe('tetration');
  });
  it("a module object that is not Node's (a test runner's registry) falls back to the builtin", () => {
    for (const mod of [{ exports: {} }, undefined, null]) {
      const { exports, required } = run(mod);
      expect(exports.Module).toBe(nodeModule.Module);
      expect(required).toEqual(['module']);
    }
  });
});

describe('lib/loader/read-file.ts', () => {
  it('reads files whole, small and larger than the buffer, each view valid until the next read', () => {
    const dir = mkdtempSync(join(os.tmpdir(), 'tet-read-'));
    dirs.push(dir);
    const sizes = [0, 1, 4095, 256 << 10, (256 << 10) + 1, 700_000, 10];
    const files = sizes.map((n, i) => {
      const f = join(dir, `f${i}`);
      const bytes = Buffer.alloc(n);
      for (let k = 0; k < n; k++) bytes[k] = 32 + ((k * 7 + i) % 95);  // printable ASCII
      writeFileSync(f, bytes);
      return { f, bytes };
    });
    for (const { f, bytes } of files) {
      expect(readReused(f).equals(bytes)).toBe(true);
      expect(readLatin1(f)).toBe(bytes.toString('latin1'));
    }
    expect(() => readReused(join(dir, 'missing'))).toThrow(/ENOENT/);
  });
});

describe('optionsTag: the Node options in the code caches\' names', () => {
  const tagWith = (execArgv: string[], nodeOptions?: string) => {
    const saved = process.execArgv;
    process.execArgv = execArgv;
    try {
      return withEnv({ NODE_OPTIONS: nodeOptions }, optionsTag);
    } finally {
      process.execArgv = saved;
    }
  };
  it('none, or only options that name code to run: no tag (the caches every plain process shares)', () => {
    expect(tagWith([])).toBe('');
    expect(tagWith(['-e', 'const x = 1'])).toBe('');
    expect(tagWith(['-r', './a.js', '--require=./b.js', '--import', './c.mjs', '-p', '1'], '--require ./d.js')).toBe('');
    expect(tagWith([], '')).toBe('');
  });
  it('any other option: a tag of its own, the same for the same options wherever they are given', () => {
    const gc = tagWith(['--expose-gc']);
    expect(gc).toMatch(/^-f[0-9a-f]{8}$/);
    expect(tagWith(['--expose-gc', '-e', '0'])).toBe(gc);
    expect(tagWith([], '--expose-gc')).toBe(gc);
    expect(tagWith(['-r', './a.js', '--expose-gc'])).toBe(gc);
    expect(tagWith(['--max-old-space-size=100'])).not.toBe(gc);
    expect(tagWith(['--expose-gc', '--max-old-space-size=100'])).not.toBe(gc);
  });
});
