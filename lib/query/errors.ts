// Helpers that build TetQueryError messages: JSON path, what was expected, what was found.
import { TetQueryError } from '../errors';

/** `/selection/0/step` (JSON pointer) -> `$.selection[0].step`. */
export function jsonPathFromPointer(pointer: string): string {
  if (!pointer) return '$';
  return '$' + pointer.split('/').slice(1).map((raw) => {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^(0|[1-9][0-9]*)$/.test(seg)) return `[${seg}]`;
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(seg)) return `.${seg}`;
    return `[${JSON.stringify(seg)}]`;
  }).join('');
}

/** Short display of an untrusted value for an error message. */
export function describeFound(value: unknown): string {
  if (value === undefined) return 'nothing';
  let text: string;
  try {
    text = typeof value === 'bigint' ? value.toString() : JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  if (text.length > 80) text = text.slice(0, 77) + '...';
  // Control characters would garble a terminal; show them escaped.
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function queryError(code: string, path: string, expected: string, found: unknown): TetQueryError {
  return new TetQueryError(code, `query ${path}: expected ${expected}, found ${describeFound(found)}`);
}
