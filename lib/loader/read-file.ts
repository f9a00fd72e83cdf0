// The loaders' file reads (compile-cache.ts: the CLI bundle and its code caches; sdk-loader.ts:
// the SDK bundle, its parts and their caches) go through one buffer that is reused, not a fresh
// Buffer per file as readFileSync allocates. A process's first touch of fresh memory is its dear
// part on machines where a page fault costs microseconds (2-4 us here): a `tet query` reads
// ~850 KB of sources and caches, ~210 pages, of which a reused buffer touches the largest file's.
// V8 copies a source into a string of its own and deserializes a code cache while the Script is
// constructed, so each read's view is only needed until the next read.
import { closeSync, openSync, readSync } from 'node:fs';

// One buffer per process for every copy of this module (dist/compile-cache.cjs and dist/index.cjs
// each bundle one): a symbol on globalThis.
const SCRATCH = Symbol.for('tetration.loader.readBuffer');
type Holder = Record<symbol, Buffer | undefined>;

/**
 * The bytes of `files`, one after the other, as a view of the shared read buffer, with each
 * file's size; valid until the next read (copy what must outlive it). Throws what openSync /
 * readSync throw.
 */
export function readFilesReused(files: readonly string[]): { bytes: Buffer; sizes: number[] } {
  const holder = globalThis as unknown as Holder;
  let buf = holder[SCRATCH] ?? Buffer.allocUnsafeSlow(1 << 20);
  holder[SCRATCH] = buf;
  let at = 0;
  const sizes: number[] = [];
  for (const file of files) {
    const start = at;
    const fd = openSync(file, 'r');
    try {
      for (;;) {
        if (at === buf.length) {
          // grown to twice the size, the bytes so far kept (fresh memory touched only as read into)
          const bigger = Buffer.allocUnsafeSlow(buf.length * 2);
          buf.copy(bigger, 0, 0, at);
          holder[SCRATCH] = buf = bigger;
        }
        const n = readSync(fd, buf, at, buf.length - at, null);
        if (n === 0) break;
        at += n;
      }
    } finally {
      closeSync(fd);
    }
    sizes.push(at - start);
  }
  return { bytes: buf.subarray(0, at), sizes };
}

/** The bytes of `file` as a view of the shared read buffer, valid until the next read. */
export function readReused(file: string): Buffer {
  return readFilesReused([file]).bytes;
}

/** The text of an ASCII file (the package's bundles: scripts/finish-dist.mjs checks) as latin1. */
export function readLatin1(file: string): string {
  const bytes = readReused(file);
  return bytes.toString('latin1');
}
