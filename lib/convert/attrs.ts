// Source attribute values -> JSON values kept in the .tet footer metadata.

const TYPED_NAME: [abstract new (...args: never[]) => unknown, string][] = [
  [Float32Array, 'f32'], [Float64Array, 'f64'], [Int8Array, 'i8'], [Uint8Array, 'u8'],
  [Int16Array, 'i16'], [Uint16Array, 'u16'], [Int32Array, 'i32'], [Uint32Array, 'u32'],
  [BigInt64Array, 'i64'], [BigUint64Array, 'u64'],
];

/** Element type name of a typed array ('f32', 'i64', ...), or '' for other values. */
export function typedArrayKind(value: unknown): string {
  for (const [ctor, name] of TYPED_NAME) if (value instanceof (ctor as any)) return name;
  return '';
}

/** One number as JSON: finite numbers stay numbers, non-finite become 'NaN'/'Infinity'/'-Infinity',
 *  64-bit integers beyond 2^53 become their exact decimal text. */
export function jsonNumber(value: number | bigint): number | string {
  if (typeof value === 'bigint') {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value) : value.toString();
  }
  return Number.isFinite(value) ? value : String(value);
}

/** Normalizes an attribute value; returns undefined for values with no JSON form (compounds, raw bytes). */
export function jsonAttr(value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return jsonNumber(value);
  if (ArrayBuffer.isView(value)) {
    if (!typedArrayKind(value)) return undefined;
    const items = Array.from(value as unknown as ArrayLike<number | bigint>, jsonNumber);
    return items.length === 1 ? items[0] : items;
  }
  if (Array.isArray(value)) {
    const items = value.map(jsonAttr);
    if (items.some((x) => x === undefined || (typeof x === 'object' && x !== null))) return undefined;
    return items.length === 1 ? items[0] : items;
  }
  return undefined;
}

/** First numeric value of an attribute, or undefined. */
export function attrNumber(value: unknown): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^(NaN|-?Infinity)$/.test(v)) return Number(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return Number(v);
  return undefined;
}
