// JSON text for QueryResponse values. JSON.stringify cannot say NaN, ±Infinity or integers
// beyond 2^53, so this serializer writes:
//   NaN -> "NaN", Infinity -> "Infinity", -Infinity -> "-Infinity" (strings);
//   bigint -> exact integer digits (a JSON number);
//   typed arrays -> arrays (Float32Array elements in their shortest f32 form, e.g. 0.1);
//   undefined object members are omitted.
// With `indent`, objects are pretty-printed; arrays of scalars stay on one line.

function numberText(n: number): string {
  if (Number.isNaN(n)) return '"NaN"';
  if (n === Infinity) return '"Infinity"';
  if (n === -Infinity) return '"-Infinity"';
  return JSON.stringify(n);
}

/** Shortest decimal that reads back as the same f32. */
export function f32Text(x: number): string {
  if (!Number.isFinite(x)) return numberText(x);
  for (let p = 1; p <= 9; p++) {
    const v = Number(x.toPrecision(p));
    if (Math.fround(v) === x) return JSON.stringify(v);
  }
  return JSON.stringify(x);
}

function isScalarish(v: unknown): boolean {
  return v === null || (typeof v !== 'object' && typeof v !== 'function');
}

export function toJsonText(value: unknown, indent = 0): string {
  const pad = (depth: number) => (indent ? '\n' + ' '.repeat(indent * depth) : '');
  const write = (v: unknown, depth: number): string | undefined => {
    if (v === null) return 'null';
    switch (typeof v) {
      case 'number': return numberText(v);
      case 'bigint': return v.toString();
      case 'boolean': return v ? 'true' : 'false';
      case 'string': return JSON.stringify(v);
      case 'undefined': case 'function': case 'symbol': return undefined;
      default: break;
    }
    if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
      const arr = v as unknown as ArrayLike<number | bigint>;
      const parts: string[] = new Array(arr.length);
      const f32 = v instanceof Float32Array;
      for (let i = 0; i < arr.length; i++) {
        const x = arr[i];
        parts[i] = typeof x === 'bigint' ? x.toString() : f32 ? f32Text(x) : numberText(x);
      }
      return '[' + parts.join(indent ? ', ' : ',') + ']';
    }
    if (Array.isArray(v)) {
      const parts = v.map((x) => write(x, depth + 1) ?? 'null');
      if (!indent || v.every(isScalarish)) return '[' + parts.join(indent ? ', ' : ',') + ']';
      return '[' + parts.map((p) => pad(depth + 1) + p).join(',') + pad(depth) + ']';
    }
    const obj = v as Record<string, unknown>;
    if (typeof (obj as { toJSON?: unknown }).toJSON === 'function') {
      return write((obj as { toJSON: () => unknown }).toJSON(), depth);
    }
    const members: string[] = [];
    for (const key of Object.keys(obj)) {
      const text = write(obj[key], depth + 1);
      if (text === undefined) continue;
      members.push(pad(depth + 1) + JSON.stringify(key) + (indent ? ': ' : ':') + text);
    }
    if (!members.length) return '{}';
    return '{' + members.join(',') + pad(depth) + '}';
  };
  return write(value, 0) ?? 'null';
}
