// lib/'s import graph (import / export-from of lib/**/*.ts). Runtime imports (`import type` and
// all-type specifier lists excluded, since TypeScript erases them) have no cycle, between files
// or between folders. The layers (review W5) are checked on every import, types included:
// query/ (documents) <- plan/ (domain plan) <- response/ <- run/ and engine; cli/ uses only the
// public API (lib/index.ts) at run time.
import { ROOT } from '../support/paths';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const LIB = join(ROOT, 'lib');

/** What each folder may not import (any import, types included): lib/-relative prefixes. */
const FORBIDDEN: Record<string, string[]> = {
  'query/': ['plan/', 'response/', 'run/', 'cli/', 'binding.ts', 'engine.ts', 'native.ts', 'file.ts', 'index.ts'],
  'plan/': ['response/', 'run/', 'cli/', 'binding.ts', 'engine.ts', 'file.ts', 'index.ts'],
  'response/': ['run/', 'cli/', 'binding.ts', 'engine.ts', 'file.ts', 'index.ts'],
  'run/': ['cli/', 'index.ts'],
  'plot/': ['run/', 'cli/', 'binding.ts', 'engine.ts', 'file.ts', 'index.ts'],
};

const STATEMENT = /^[ \t]*(?:import|export)\s+(type\s+)?([^;'"]*?)\s*from\s*['"]([^'"]+)['"]|^[ \t]*import\s*['"]([^'"]+)['"]/gm;

/** Relative specifiers a module imports at run time. */
function runtimeImports(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(STATEMENT)) {
    if (m[1]) continue;  // import type / export type
    const clause = (m[2] ?? '').trim();
    const braces = /^\{([^}]*)\}$/.exec(clause);
    if (braces) {
      const names = braces[1].split(',').map((s) => s.trim()).filter(Boolean);
      if (names.length > 0 && names.every((n) => n.startsWith('type '))) continue;  // import { type A, type B }
    }
    out.push(m[3] ?? m[4]);
  }
  return out;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) return tsFiles(p);
    return n.endsWith('.ts') && !n.endsWith('.d.ts') ? [p] : [];
  });
}

/** Every specifier a module imports, type-only ones included. */
function allImports(source: string): string[] {
  return [...source.matchAll(STATEMENT)].map((m) => m[3] ?? m[4]);
}

function fileGraph(imports = runtimeImports): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const f of tsFiles(LIB)) {
    const deps = new Set<string>();
    for (const spec of imports(readFileSync(f, 'utf8'))) {
      if (!spec.startsWith('.')) continue;  // packages and node: builtins
      const base = join(dirname(f), spec);
      const target = [`${base}.ts`, join(base, 'index.ts'), base].find((p) => p.endsWith('.ts') && existsSync(p));
      if (target) deps.add(relative(LIB, target));
    }
    graph.set(relative(LIB, f), deps);
  }
  return graph;
}

function folderGraph(files: Map<string, Set<string>>): Map<string, Set<string>> {
  const node = (f: string) => (f.includes('/') ? `${f.split('/')[0]}/` : f.replace(/\.ts$/, ''));
  const graph = new Map<string, Set<string>>();
  for (const [f, deps] of files) {
    const a = node(f);
    const out = graph.get(a) ?? new Set<string>();
    graph.set(a, out);
    for (const d of deps) if (node(d) !== a) out.add(node(d));
  }
  return graph;
}

/** Every elementary cycle, each once, written from its smallest node: 'a -> b -> a'. */
function cycles(graph: Map<string, Set<string>>): string[] {
  const found = new Set<string>();
  for (const start of [...graph.keys()].sort()) {
    const path = [start];
    const visit = (v: string) => {
      for (const w of [...(graph.get(v) ?? [])].sort()) {
        if (w === start) found.add([...path, start].join(' -> '));
        else if (w > start && !path.includes(w)) {
          path.push(w);
          visit(w);
          path.pop();
        }
      }
    };
    visit(start);
  }
  return [...found].sort();
}

describe('lib/ import graph', () => {
  const files = fileGraph();
  const folders = folderGraph(files);

  it('parses runtime imports (and skips type-only ones)', () => {
    expect(runtimeImports([
      "import { a } from './a';",
      "import type { B } from './b';",
      "import { type C, type D } from './c';",
      "import { type E, f } from './e';",
      "import {\n  g,\n  h,\n} from '../g';",
      "export { i } from './i';",
      "export type { J } from './j';",
      "export * from './k';",
      "import './side-effect';",
      "import fs from 'node:fs';",
    ].join('\n'))).toEqual(['./a', './e', '../g', './i', './k', './side-effect', 'node:fs']);
    expect(files.size).toBeGreaterThan(40);
    expect(files.get('errors.ts')).toContain('error-codes.generated.ts');
    expect(files.get('run/run.ts')).toContain('plan/compile.ts');
    expect(files.get('response/types.ts')).not.toContain('plan/types.ts');  // import type only
    expect(fileGraph(allImports).get('response/types.ts')).toContain('plan/types.ts');
  });

  it('has no cycles between files', () => {
    expect(cycles(files)).toEqual([]);
  });

  it('has no cycles between folders', () => {
    expect(cycles(folders)).toEqual([]);
  });

  it('keeps the layers: query <- plan <- response <- run / engine (types included)', () => {
    const bad: string[] = [];
    for (const [f, deps] of fileGraph(allImports)) {
      const rules = Object.entries(FORBIDDEN).find(([dir]) => f.startsWith(dir));
      if (!rules) continue;
      for (const d of deps) if (rules[1].some((p) => d.startsWith(p))) bad.push(`${f} -> ${d}`);
    }
    expect(bad).toEqual([]);
  });

  it('cli/ uses only the public API at run time', () => {
    // and the user's directories as node:os gives them (lib/user-dirs.ts: no SDK state; the
    // query history's home without loading node:os)
    const allowed = ['index.ts', 'user-dirs.ts'];
    const bad: string[] = [];
    for (const [f, deps] of files) {
      if (!f.startsWith('cli/')) continue;
      for (const d of deps) if (!d.startsWith('cli/') && !allowed.includes(d)) bad.push(`${f} -> ${d}`);
    }
    expect(bad).toEqual([]);
  });

  it('finds a cycle it is shown', () => {
    const g = new Map([['a', new Set(['b'])], ['b', new Set(['c', 'a'])], ['c', new Set(['a'])]]);
    expect(cycles(g)).toEqual(['a -> b -> a', 'a -> b -> c -> a']);
  });
});
