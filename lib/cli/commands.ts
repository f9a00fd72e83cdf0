// The command groups of `tet` and the names each registers. A run whose first argument names a
// command registers that command's group only: commander builds every option of every command it
// is given, and a fresh process pays for that work on each start (docs/performance.md "CLI
// start-up"). Anything else (no argument, --help, `help`, options first, an unknown or misspelt
// command) registers every group, so help lists all commands and suggestions stay complete.
import type { Command } from 'commander';
import { registerConvertCommands } from './convert';
import { registerInfoCommands } from './info';
import { registerQueryCommands } from './query';

/** Each group's command names and aliases (test/cli/cli-commands.test.ts checks them). */
export const COMMAND_GROUPS: readonly { names: readonly string[]; register(program: Command): void }[] = [
  { names: ['info', 'verify', 'repair'], register: registerInfoCommands },
  { names: ['query', 'merge', 'qhist', 'hist'], register: registerQueryCommands },
  { names: ['convert', 'export'], register: registerConvertCommands },
];

/** Registers the groups `argv` (process.argv) needs on `program`. */
export function registerCommands(program: Command, argv: readonly string[]): void {
  const named = COMMAND_GROUPS.find((g) => g.names.includes(argv[2]));
  for (const g of named ? [named] : COMMAND_GROUPS) g.register(program);
}
