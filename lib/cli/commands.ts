// The commands of `tet` and the names each registers. A run whose first argument names a command
// registers that command only: commander builds every option of every command it is given, and a
// fresh process pays for that work on each start (~0.15 ms for `merge` and `qhist` beside a
// `query`; docs/performance.md "CLI start-up"). Anything else (no argument, --help, `help`,
// options first, an unknown or misspelt command) registers every command, so help lists them all
// and suggestions stay complete.
import type { Command } from 'commander';
import { registerConvertCommands } from './convert';
import { registerInfoCommand, registerRepairCommand, registerVerifyCommand } from './info';
import { registerHistoryCommand, registerMergeCommand, registerQueryCommand } from './query';

/** Each group's command names and aliases (test/cli/cli-commands.test.ts checks them). */
export const COMMAND_GROUPS: readonly { names: readonly string[]; register(program: Command): void }[] = [
  { names: ['info'], register: registerInfoCommand },
  { names: ['verify'], register: registerVerifyCommand },
  { names: ['repair'], register: registerRepairCommand },
  { names: ['query'], register: registerQueryCommand },
  { names: ['merge'], register: registerMergeCommand },
  { names: ['qhist', 'hist'], register: registerHistoryCommand },
  { names: ['convert', 'export'], register: registerConvertCommands },
];

/** Registers the commands `argv` (process.argv) needs on `program`. */
export function registerCommands(program: Command, argv: readonly string[]): void {
  const named = COMMAND_GROUPS.find((g) => g.names.includes(argv[2]));
  for (const g of named ? [named] : COMMAND_GROUPS) g.register(program);
}
