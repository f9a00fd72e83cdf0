// One `str` batch built row by row into a single growing UTF-8 buffer (no per-string Buffer, no
// concat): the string forms of normalize.ts and the CSV / Parquet / Arrow readers share it.

import { isUtf8 } from 'node:buffer';

// Made at first use: a TextEncoder at module load cost every `require('tetration')` ~0.03 ms.
let encoder: InstanceType<typeof TextEncoder> | undefined;
/** The offsets are u32: a batch holds fewer than 2^32 string bytes. */
const MAX_BATCH_BYTES = 0xffff_ffff;

/** Why a string could not be appended (the caller names column and row). */
export class StrValueProblem extends Error {}

/** Strings longer than this go through TextEncoder.encodeInto (native, vectorised); shorter ones
 *  are encoded here, where a call and a subarray per row would cost more than the bytes. */
const LONG_STRING = 48;

function loneSurrogate(s: string): StrValueProblem {
  return new StrValueProblem(`string has a lone surrogate (no UTF-8 form): ${JSON.stringify(s.slice(0, 40))}`);
}

/** UTF-8 of `s` into `buf` at `p` (room for 3 bytes per UTF-16 unit is reserved); the new end. */
function encodeShort(s: string, buf: Uint8Array, p: number): number {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      buf[p++] = c;
    } else if (c < 0x800) {
      buf[p++] = 0xc0 | (c >> 6);
      buf[p++] = 0x80 | (c & 0x3f);
    } else if (c < 0xd800 || c > 0xdfff) {
      buf[p++] = 0xe0 | (c >> 12);
      buf[p++] = 0x80 | ((c >> 6) & 0x3f);
      buf[p++] = 0x80 | (c & 0x3f);
    } else {
      const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (c > 0xdbff || d < 0xdc00 || d > 0xdfff) throw loneSurrogate(s);
      const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
      buf[p++] = 0xf0 | (cp >> 18);
      buf[p++] = 0x80 | ((cp >> 12) & 0x3f);
      buf[p++] = 0x80 | ((cp >> 6) & 0x3f);
      buf[p++] = 0x80 | (cp & 0x3f);
      i++;
    }
  }
  return p;
}

/** Appends strings or byte ranges, one per row, into one buffer plus rows + 1 offsets. */
export class Utf8BatchBuilder {
  private buf: Uint8Array;
  private pos = 0;
  private row = 0;
  readonly offsets: Uint32Array;

  constructor(readonly rows: number, byteHint = rows * 8) {
    this.offsets = new Uint32Array(rows + 1);
    this.buf = new Uint8Array(Math.max(64, byteHint));
  }

  /** Room for `extra` more bytes, doubling (amortised O(1) per byte). */
  private reserve(extra: number): void {
    const need = this.pos + extra;
    if (need <= this.buf.length) return;
    if (need > MAX_BATCH_BYTES) throw new StrValueProblem(`the batch holds more than ${MAX_BATCH_BYTES} bytes of strings; append it in smaller batches`);
    const next = new Uint8Array(Math.min(MAX_BATCH_BYTES, Math.max(need, this.buf.length * 2)));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  private endRow(): void {
    this.offsets[++this.row] = this.pos;
  }

  /** A string row. Throws StrValueProblem on a lone surrogate (no UTF-8 form). */
  appendString(s: string): void {
    const n = s.length;
    this.reserve(n * 3);
    if (n > LONG_STRING) {
      if (!(s as unknown as { isWellFormed(): boolean }).isWellFormed()) throw loneSurrogate(s);
      this.pos += (encoder ??= new TextEncoder()).encodeInto(s, this.buf.subarray(this.pos)).written;
    } else {
      this.pos = encodeShort(s, this.buf, this.pos);
    }
    this.endRow();
  }

  /** A row of raw bytes (validated later by `finish(true)` or by the caller). */
  appendBytes(bytes: Uint8Array, start = 0, end = bytes.length): void {
    const n = end - start;
    this.reserve(n);
    this.buf.set(start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end), this.pos);
    this.pos += n;
    this.endRow();
  }

  /** An empty row (a null row, or ''). */
  appendEmpty(): void {
    this.endRow();
  }

  /** Rows appended so far. */
  get length(): number {
    return this.row;
  }

  /**
   * The batch's bytes (trimmed copy) and offsets. With `validate`, checks the rows are valid
   * UTF-8 (for raw bytes from files): see `firstInvalidUtf8Row`.
   */
  finish(validate = false): { bytes: Uint8Array; offsets: Uint32Array } {
    if (this.row !== this.rows) throw new StrValueProblem(`internal: ${this.row} of ${this.rows} string rows appended`);
    const bytes = this.buf.slice(0, this.pos);
    if (validate) {
      const bad = firstInvalidUtf8Row(bytes, this.offsets);
      if (bad >= 0) throw Object.assign(new StrValueProblem('string is not valid UTF-8'), { row: bad });
    }
    return { bytes, offsets: this.offsets };
  }
}

/**
 * The first row whose bytes are not valid UTF-8, or -1. One native pass over the whole buffer,
 * then one check per row that no row starts on a continuation byte: a valid buffer cut only at
 * code point starts is valid in every piece.
 */
export function firstInvalidUtf8Row(bytes: Uint8Array, offsets: Uint32Array): number {
  const rows = offsets.length - 1;
  let cutInside = -1;
  for (let r = 0; r < rows; r++) {
    const a = offsets[r];
    if (a !== offsets[r + 1] && (bytes[a] & 0xc0) === 0x80) { cutInside = r; break; }
  }
  if (cutInside < 0 && isUtf8(bytes)) return -1;
  for (let r = 0; r < rows; r++) if (!isUtf8(bytes.subarray(offsets[r], offsets[r + 1]))) return r;
  return cutInside;
}
