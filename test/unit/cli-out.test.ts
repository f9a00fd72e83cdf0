// lib/cli/out.ts: the terminal guess that spares creating process.stdout / stderr, and the
// redirect the in-process CLI tests use. (Writes to real descriptors, EAGAIN, EPIPE and closed
// stdout run as processes: test/cli/cli-manners.test.ts.)
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mayBeTerminal, redirectCliOutput, writeErr, writeOut } from '../../lib/cli/out';

describe('mayBeTerminal', () => {
  it('a file and /dev/null are no terminal; a descriptor fstat cannot read is taken as one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tet-out-'));
    const file = openSync(join(dir, 'f'), 'w');
    const devNull = openSync('/dev/null', 'w');
    try {
      expect(mayBeTerminal(file)).toBe(false);
      expect(mayBeTerminal(devNull)).toBe(process.platform === 'win32');
      expect(mayBeTerminal(987654)).toBe(true);  // EBADF: let the stream decide
    } finally {
      closeSync(file);
      closeSync(devNull);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('redirectCliOutput', () => {
  it('sends writeOut / writeErr to the sinks until reset', () => {
    const out: string[] = [];
    const err: string[] = [];
    redirectCliOutput({ out: (s) => out.push(s), err: (s) => err.push(s) });
    try {
      writeOut('a\n');
      writeErr('b\n');
      writeOut('c');
    } finally {
      redirectCliOutput(null);
    }
    expect(out).toEqual(['a\n', 'c']);
    expect(err).toEqual(['b\n']);
  });
});
