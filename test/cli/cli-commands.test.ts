// The command groups of lib/cli/commands.ts: `tet <command>` registers its own group only, so each
// group's list of names must be exactly what its register function defines (commander's own
// registry after registering it, aliases included), the groups must not share a name, and a run
// that names no command (`tet --help`) must list every command of every group. A misspelt command
// still gets commander's suggestion (all groups are registered then).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMAND_GROUPS } from '../../lib/cli/commands';
import { ROOT } from '../support/paths';

const CLI = join(ROOT, 'dist/cli.cjs');

describe('command groups', () => {
  it('each group names exactly the commands and aliases it registers; no name is in two groups', () => {
    const seen: string[] = [];
    for (const g of COMMAND_GROUPS) {
      const program = new Command('tet');
      g.register(program);
      const names = program.commands.flatMap((c) => [c.name(), ...c.aliases()]);
      expect([...g.names].sort()).toEqual(names.sort());
      seen.push(...names);
    }
    expect(new Set(seen).size).toBe(seen.length);
  });

  it.skipIf(!existsSync(CLI))('tet --help lists every command; a misspelt command is suggested; a named one runs', () => {
    const run = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: ROOT });
    const help = run('--help');
    expect(help.status).toBe(0);
    const listed = [...help.stdout.slice(help.stdout.indexOf('Commands:')).matchAll(/^ {2}(\w+)(?:\|(\w+))?/gm)]
      .flatMap((m) => (m[2] ? [m[1], m[2]] : [m[1]])).filter((n) => n !== 'help');
    expect(listed.sort()).toEqual(COMMAND_GROUPS.flatMap((g) => g.names).sort());
    const typo = run('inof', 'x.tet');
    expect(typo.status).toBe(2);
    expect(typo.stderr).toMatch(/unknown command 'inof'[\s\S]*Did you mean info\?/);
    for (const g of COMMAND_GROUPS) {
      const h = run(g.names[0], '--help');
      expect(h.status, h.stderr).toBe(0);
      expect(h.stdout).toMatch(new RegExp(`Usage: tet ${g.names[0]}(\\|\\w+)? `));  // qhist|hist: its alias
    }
  });
});
