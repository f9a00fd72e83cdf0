// lib/'s runtime import graph (import / export-from of lib/**/*.ts; `import type` and all-type
// specifier lists excluded, since TypeScript erases them). Cycles are allow-listed exactly:
// a new cycle fails, and so does a listed one that is gone (delete it: the list only shrinks).
// The folder-level cycles are review W5's query <-> plan <-> response; lib/engine.ts is meant
// to remove them.
import { ROOT } from '../support/paths';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const LIB = join(ROOT, 'lib');

/** Known cycles between lib/ folders (top-level files are their own node), smallest node first. */
const KNOWN_FOLDER_CYCLES = [
  'plan/ -> query/ -> plan/',
  'plan/ -> query/ -> response/ -> plan/',
];
/** Known cycles between single files. */
const KNOWN_FILE_CYCLES: string[] = [];

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

function fileGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const f of tsFiles(LIB)) {
    const deps = new Set<string>();
    for (const spec of runtimeImports(readFileSync(f, 'utf8'))) {
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
    expect(files.get('query/run.ts')).toContain('plan/compile.ts');
    expect(files.get('plan/compile.ts')).not.toContain('response/types.ts');  // import type only
  });

  it('has no cycles between files beyond the known ones', () => {
    const found = cycles(files);
    console.log(`lib/ file-level import cycles (${found.length}):\n${found.map((c) => `  ${c}`).join('\n') || '  none'}`);
    expect(found.filter((c) => !KNOWN_FILE_CYCLES.includes(c)), 'new cycles').toEqual([]);
    expect(KNOWN_FILE_CYCLES.filter((c) => !found.includes(c)), 'gone: remove from KNOWN_FILE_CYCLES').toEqual([]);
  });

  it('has no cycles between folders beyond the known ones (W5: query <-> plan <-> response)', () => {
    const found = cycles(folders);
    console.log(`lib/ folder-level import cycles (${found.length}):\n${found.map((c) => `  ${c}`).join('\n') || '  none'}`);
    expect(found.filter((c) => !KNOWN_FOLDER_CYCLES.includes(c)), 'new cycles').toEqual([]);
    expect(KNOWN_FOLDER_CYCLES.filter((c) => !found.includes(c)), 'gone: remove from KNOWN_FOLDER_CYCLES').toEqual([]);
  });

  it('finds a cycle it is shown', () => {
    const g = new Map([['a', new Set(['b'])], ['b', new Set(['c', 'a'])], ['c', new Set(['a'])]]);
    expect(cycles(g)).toEqual(['a -> b -> a', 'a -> b -> c -> a']);
  });
});
