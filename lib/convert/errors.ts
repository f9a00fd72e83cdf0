// The one place convert/export build their TetErrors (codes TET_CONVERT_* / TET_EXPORT_*).
import { openSync } from 'node:fs';
import { errorClassFor, type TetConvertError, type TetErrorDetail } from '../errors';

/** A TetConvertError, built through errorClassFor like every other TetError. */
export function convertError(code: `TET_CONVERT_${string}` | `TET_EXPORT_${string}`, message: string,
  cause?: unknown, detail?: TetErrorDetail): TetConvertError {
  const Cls = errorClassFor(code);
  const options = cause === undefined && detail === undefined ? undefined : { cause, detail };
  return new Cls(code, message, options) as TetConvertError;
}

/** Message of an unknown thrown value. */
export function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Opens a source file read-only; failure is TET_CONVERT_OPEN naming the path. */
export function openSourceFd(src: string): number {
  try {
    return openSync(src, 'r');
  } catch (err) {
    throw convertError('TET_CONVERT_OPEN', `cannot open source ${src}: ${describe(err)}`, err);
  }
}
