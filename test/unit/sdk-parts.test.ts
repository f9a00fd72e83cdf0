// lib/loader/parts.ts: the SDK's parts, and the bundle's modules their loaders hand them
// (SHARED_MODULES). Each part's loader must export what the module it stands for exports, and each
// shared entry must be the module its key names (tsup.config.ts turns a part's import of that path
// into it).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SDK_PARTS } from '../../lib/loader/parts';

const ROOT = join(__dirname, '..', '..');

describe('the SDK parts', () => {
  it('name files that exist; a part that imports lib/ lists its own files', () => {
    expect(SDK_PARTS.map((p) => p.name)).toEqual(['validate', 'extras']);
    for (const p of SDK_PARTS) {
      for (const f of [p.entry, p.module, p.loader]) expect(existsSync(join(ROOT, f)), f).toBe(true);
      for (const o of p.own ?? []) expect(existsSync(join(ROOT, o)), o).toBe(true);
      if (p.own) expect(p.own).toContain(p.entry);
    }
  });

  it('a lazy part\'s loader exports the functions its module exports, under the same names', async () => {
    for (const p of SDK_PARTS.filter((x) => x.own)) {
      const real = await import(join(ROOT, p.module));
      const loader = await import(join(ROOT, p.loader));
      const fns = (m: Record<string, unknown>) => Object.keys(m).filter((k) => typeof m[k] === 'function').sort();
      // the loader's one value export beside the functions: what it hands the part
      expect(Object.keys(loader).filter((k) => typeof loader[k] !== 'function')).toEqual(['SHARED_MODULES']);
      expect(fns(loader), p.name).toEqual(fns(real));
      for (const k of fns(real)) expect((loader[k] as { name: string }).name).toBe(k);
    }
  });

  it('each module a part\'s loader shares is the module its key names, and the build reads the same keys', async () => {
    for (const p of SDK_PARTS.filter((x) => x.own)) {
      const { SHARED_MODULES } = await import(join(ROOT, p.loader)) as { SHARED_MODULES: Record<string, object> };
      for (const [key, ns] of Object.entries(SHARED_MODULES)) {
        expect(p.own!.some((o) => key.startsWith(o)), `${key} is the part's own`).toBe(false);
        const mod = await import(join(ROOT, key));
        expect(Object.keys(ns).sort(), key).toEqual(Object.keys(mod).sort());
        for (const k of Object.keys(mod)) expect((ns as Record<string, unknown>)[k], `${key} ${k}`).toBe(mod[k]);
      }
      // tsup.config.ts reads the keys from the loader's text, one `  'lib/...ts': name,` per line
      const keys = [...readFileSync(join(ROOT, p.loader), 'utf8').matchAll(/^ {2}'(lib\/[\w./-]+\.ts)': /gm)].map((m) => m[1]);
      expect(keys, p.loader).toEqual(Object.keys(SHARED_MODULES));
    }
  });
});
