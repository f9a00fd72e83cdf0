// The one place convert/export build their TetErrors (codes TET_CONVERT_* / TET_EXPORT_*).
import { TetError } from '../errors';

export function convertError(code: `TET_CONVERT_${string}` | `TET_EXPORT_${string}`, message: string,
  cause?: unknown): TetError {
  return new TetError(code, message, cause === undefined ? undefined : { cause });
}

/** Message of an unknown thrown value. */
export function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
