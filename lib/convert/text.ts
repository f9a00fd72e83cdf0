// Text variables of the sources (axis-table `str` columns): fixed-size byte strings and char-array
// rows decoded as UTF-8 with trailing NULs stripped, the same way in every reader.

const UTF8 = new TextDecoder('utf-8');

/** One string from its bytes: trailing NULs stripped, UTF-8 decoded (malformed bytes become U+FFFD). */
export function decodeText(bytes: Uint8Array): string {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  return UTF8.decode(bytes.subarray(0, end));
}

/** `count` strings of `size` bytes each, back to back in `bytes`. */
export function decodeFixedTexts(bytes: Uint8Array, size: number, count: number): string[] {
  const out = new Array<string>(count);
  for (let i = 0; i < count; i++) out[i] = decodeText(bytes.subarray(i * size, (i + 1) * size));
  return out;
}
