// Runs the `tet` program: maps failures to exit codes and one-line messages.
//   0 success · 1 TetError (error: <message>) or a command that found problems · 2 usage error
// Unexpected errors print `error: internal: <message>`; the stack only with TET_DEBUG=1.
import { Command, CommanderError } from 'commander';
import { writeErr } from './out';
import { loadedSdk } from './sdk';

function exitOverrideAll(cmd: Command): void {
  cmd.exitOverride();
  for (const sub of cmd.commands) exitOverrideAll(sub);
}

const CLEAN_EXITS = new Set(['commander.helpDisplayed', 'commander.help', 'commander.version', 'commander.executeSubCommandAsync']);

/** Parses argv and runs the matching command; sets process.exitCode and never throws. */
export async function runCli(program: Command, argv: readonly string[]): Promise<number> {
  exitOverrideAll(program);
  process.exitCode = undefined;  // commands set 1 when they find problems
  let code = 0;
  try {
    await program.parseAsync(argv as string[]);
    code = typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    code = exitCodeFor(err);
  }
  process.exitCode = code;
  return code;
}

function exitCodeFor(err: unknown): number {
  const debug = process.env.TET_DEBUG === '1';
  if (err instanceof CommanderError) {
    // commander already printed the usage message
    return CLEAN_EXITS.has(err.code) ? 0 : 2;
  }
  const tet = loadedSdk();
  if (tet && err instanceof tet.TetError) {
    writeErr(`error: ${err.message}\n`);
    if (debug && err.stack) writeErr(`${err.stack}\n`);
    return 1;
  }
  const message = err instanceof Error ? err.message : String(err);
  writeErr(`error: internal: ${message}\n`);
  if (debug && err instanceof Error && err.stack) writeErr(`${err.stack}\n`);
  return 1;
}
