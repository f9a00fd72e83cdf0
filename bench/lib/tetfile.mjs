// Minimal .tet v1 reading for the benchmark (layout: ../../../shared/spec/layout_v1.md): the
// chunk index of a single-dataset file, so the probe folds exactly the payload bytes the
// engine folds. Files themselves are written by the project's TetWriter (see generate.mjs).
import fs from 'node:fs';

/** Reads superblock, first dataset record and the chunk index rows of `path`. */
export function readTetIndex(path) {
  const fd = fs.openSync(path, 'r');
  try {
    const fileLen = fs.fstatSync(fd).size;
    const sb = Buffer.alloc(32);
    fs.readSync(fd, sb, 0, 32, 0);
    if (sb.toString('latin1', 0, 4) !== 'TETR') throw new Error(`${path}: expected magic TETR`);
    const datasetCount = sb.readUInt32LE(8);
    const indexOffset = Number(sb.readBigUInt64LE(16));
    const indexLength = Number(sb.readBigUInt64LE(24));
    if (datasetCount !== 1) throw new Error(`${path}: expected 1 dataset, found ${datasetCount}`);
    if (indexOffset + indexLength > fileLen) throw new Error(`${path}: chunk index past end of file`);
    const idx = Buffer.alloc(indexLength);
    fs.readSync(fd, idx, 0, indexLength, indexOffset);
    if (idx.toString('latin1', 0, 4) !== 'TIDX') throw new Error(`${path}: expected TIDX`);
    const count = Number(idx.readBigUInt64LE(8));
    if (32 + count * 104 !== indexLength) throw new Error(`${path}: index length ${indexLength} != 32 + ${count}×104`);
    const entries = [];
    for (let k = 0; k < count; k++) {
      const e = 32 + k * 104;
      entries.push({
        coords: [Number(idx.readBigUInt64LE(e + 8)), Number(idx.readBigUInt64LE(e + 16))],
        offset: Number(idx.readBigUInt64LE(e + 72)),
        rawLen: Number(idx.readBigUInt64LE(e + 80)),
        storedLen: Number(idx.readBigUInt64LE(e + 88)),
        codec: idx.readUInt32LE(e + 96),
      });
    }
    return { fileLen, entries };
  }
  finally {
    fs.closeSync(fd);
  }
}

/**
 * The contiguous raw payload span [offset, offset+length) covering every chunk, or an error
 * when the payloads are compressed or not adjacent (the probe needs one span).
 */
export function rawPayloadSpan(path) {
  const { entries } = readTetIndex(path);
  const sorted = [...entries].sort((a, b) => a.offset - b.offset);
  let end = sorted[0].offset;
  for (const e of sorted) {
    if (e.codec !== 0) throw new Error(`${path}: chunk ${e.coords} is not raw`);
    if (e.offset !== end) throw new Error(`${path}: payloads not contiguous at ${e.offset} (expected ${end})`);
    end += e.storedLen;
  }
  return { offset: sorted[0].offset, length: end - sorted[0].offset };
}

const DTYPE_TAG = { f32: 1, f64: 2, i32: 3 };

/**
 * Spec-direct .tet v1 writer (one dataset, tiles in grid order): the fallback for builds
 * where the addon's TetWriter cannot be loaded, and an independent producer of the layout.
 * `compress(bytes) → bytes` makes zstd frames when codec is 'zstd'.
 */
export function createDirectTetWriter(path, { dtype, shape, chunkShape, codec = 'raw', compress }) {
  const name = Buffer.from('data', 'utf8');
  const ndim = shape.length;
  const pad = (8 - ((16 + name.length) % 8)) % 8;
  const recordLen = 16 + name.length + pad + 16 * ndim;
  const indexOffset = (40 + recordLen + 7) & ~7;
  const grid = shape.map((s, d) => Math.ceil(s / chunkShape[d]));
  const count = grid.reduce((a, b) => a * b, 1);
  const indexLength = 32 + count * 104;
  const fd = fs.openSync(path, 'w');
  let at = indexOffset + indexLength;
  const rows = [];
  return {
    writeChunk(coords, bytes) {
      const stored = codec === 'zstd' ? compress(bytes) : bytes;
      fs.writeSync(fd, stored, 0, stored.length, at);
      rows.push({ coords, offset: at, rawLen: bytes.length, storedLen: stored.length });
      at += stored.length;
    },
    commit() {
      if (rows.length !== count) throw new Error(`${path}: ${rows.length} of ${count} chunks written`);
      const head = Buffer.alloc(indexOffset + indexLength);
      head.write('TETR', 0, 'latin1');
      head.writeUInt32LE(1, 4);
      head.writeUInt32LE(1, 8);
      head.writeBigUInt64LE(BigInt(indexOffset), 16);
      head.writeBigUInt64LE(BigInt(indexLength), 24);
      head.writeBigUInt64LE(BigInt(recordLen), 32);
      head.writeUInt32LE(name.length, 40);
      head.writeUInt32LE(DTYPE_TAG[dtype], 44);
      head.writeUInt32LE(ndim, 48);
      name.copy(head, 56);
      let p = 56 + name.length + pad;
      for (const v of [...shape, ...chunkShape]) { head.writeBigUInt64LE(BigInt(v), p); p += 8; }
      const ix = indexOffset;
      head.write('TIDX', ix, 'latin1');
      head.writeUInt32LE(1, ix + 4);
      head.writeBigUInt64LE(BigInt(count), ix + 8);
      rows.forEach((r, k) => {
        const e = ix + 32 + k * 104;
        r.coords.forEach((c, d) => head.writeBigUInt64LE(BigInt(c), e + 8 + 8 * d));
        head.writeBigUInt64LE(BigInt(r.offset), e + 72);
        head.writeBigUInt64LE(BigInt(r.rawLen), e + 80);
        head.writeBigUInt64LE(BigInt(r.storedLen), e + 88);
        head.writeUInt32LE(codec === 'zstd' ? 1 : 0, e + 96);
      });
      fs.writeSync(fd, head, 0, head.length, 0);
      fs.closeSync(fd);
    },
  };
}
