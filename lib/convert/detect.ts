// Source format detection by content: HDF5/NetCDF-4 signature, NetCDF classic magic, Zarr metadata.
import { closeSync, existsSync, readFileSync, readSync, statSync, type Stats } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { convertError, describe, openSourceFd } from './errors';
import type { SourceKind } from './types';
import { parseZarrJson } from './zarr';

const HDF5_SIGNATURE = Buffer.from([0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Offset of the HDF5 superblock signature (0, 512, 1024, 2048, ... for files with a user block), or -1. */
export function hdf5SignatureOffset(fd: number, fileLen: number): number {
  const buf = Buffer.alloc(8);
  for (let off = 0; off + 8 <= fileLen; off = off === 0 ? 512 : off * 2) {
    if (readSync(fd, buf, 0, 8, off) === 8 && buf.equals(HDF5_SIGNATURE)) return off;
    if (off >= 1 << 30) break;
  }
  return -1;
}

/** NetCDF classic version byte (1, 2 or 5) when the file starts with `CDF`, else 0. */
export function netcdfClassicVersion(head: Buffer): number {
  if (head.length >= 4 && head.toString('latin1', 0, 3) === 'CDF' && [1, 2, 5].includes(head[3])) return head[3];
  return 0;
}

function readJson(file: string): any {
  try {
    return parseZarrJson(readFileSync(file, 'utf8'));
  } catch (err) {
    throw convertError('TET_CONVERT_SOURCE_INVALID', `cannot parse Zarr metadata ${file}: ${describe(err)}`, err);
  }
}

/** Zarr version of a directory (3 for zarr.json, 2 for .zgroup/.zarray/.zmetadata), or 0. */
export function zarrVersion(dir: string): 2 | 3 | 0 {
  const v3 = join(dir, 'zarr.json');
  if (existsSync(v3)) {
    const meta = readJson(v3);
    if (meta?.zarr_format !== 3) {
      throw convertError('TET_CONVERT_SOURCE_INVALID',
        `${v3}: expected zarr_format 3, found ${JSON.stringify(meta?.zarr_format)}`);
    }
    return 3;
  }
  if (['.zgroup', '.zarray', '.zmetadata'].some((f) => existsSync(join(dir, f)))) return 2;
  return 0;
}

/** Extensions detection falls back on (case-insensitive) when the content cannot be read yet. */
export const SOURCE_EXTENSIONS: Readonly<Record<string, SourceKind>> = {
  '.h5': 'hdf5', '.hdf5': 'hdf5', '.he5': 'hdf5', '.nc': 'netcdf3', '.nc4': 'hdf5', '.cdf': 'netcdf3', '.zarr': 'zarr3',
};
const EXTENSION_LIST = Object.keys(SOURCE_EXTENSIONS).join(' ');
const GZIP_MAGIC = [0x1f, 0x8b];

/** The kind a file name's extension suggests (`.gz` is looked through and reported), or null. */
export function kindFromExtension(src: string): { kind: SourceKind | null; ext: string; gz: boolean } {
  let name = basename(src.replace(/[\\/]+$/, '')).toLowerCase();
  const gz = name.endsWith('.gz');
  if (gz) name = name.slice(0, -3);
  const ext = extname(name);
  return { kind: SOURCE_EXTENSIONS[ext] ?? null, ext, gz };
}

/** True when `head` is empty or a strict prefix of a signature: the file may still be being written. */
function notReadableYet(head: Buffer): boolean {
  if (head.length === 0) return true;
  if (head.length >= 8) return false;
  const isPrefix = (sig: Buffer) => head.length < sig.length && head.equals(sig.subarray(0, head.length));
  return isPrefix(HDF5_SIGNATURE) || isPrefix(Buffer.from('CDF', 'latin1'));
}

export interface SourceDetection {
  kind: SourceKind;
  /** `content` (signature / metadata) or `extension` (the content could not be read yet). */
  by: 'content' | 'extension';
}

/**
 * Detects the kind of `src`. HDF5 files are reported as `hdf5`; the HDF5 reader upgrades them to
 * `netcdf4` when it finds NetCDF-4 conventions inside.
 */
export function detectSource(src: string): SourceKind {
  return detectSourceDetail(src).kind;
}

/** detectSource, saying whether the content or (failing that) the extension decided. */
export function detectSourceDetail(src: string): SourceDetection {
  const byContent = (kind: SourceKind): SourceDetection => ({ kind, by: 'content' });
  let stat: Stats;
  try {
    stat = statSync(src);
  } catch (err) {
    throw convertError('TET_CONVERT_OPEN', `cannot open source ${src}: ${describe(err)}`, err);
  }
  const ext = kindFromExtension(src);
  const gzNote = ext.gz ? `; ${src} looks gzip-compressed (.gz): decompress it first (gunzip)` : '';
  if (stat.isDirectory()) {
    const v = zarrVersion(src);
    if (v === 3) return byContent('zarr3');
    if (v === 2) return byContent('zarr2');
    throw convertError('TET_CONVERT_UNKNOWN_FORMAT',
      `${src} is a directory without Zarr metadata: expected zarr.json (v3) or .zgroup/.zarray (v2)`);
  }
  const fd = openSourceFd(src);
  let head: Buffer;
  try {
    const buf = Buffer.alloc(8);
    let n = 0;
    try {
      n = readSync(fd, buf, 0, 8, 0);
    } catch {
      n = 0;  // unreadable for now: the extension decides below
    }
    head = buf.subarray(0, n);
    if (netcdfClassicVersion(head)) return byContent('netcdf3');
    if (n > 0 && hdf5SignatureOffset(fd, stat.size) >= 0) return byContent('hdf5');
  } finally {
    closeSync(fd);
  }
  const gzip = head.length >= 2 && head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1];
  if (gzip) {
    throw convertError('TET_CONVERT_UNKNOWN_FORMAT',
      `${src}: gzip-compressed content (first bytes 1f8b): decompress it first (gunzip), then convert the result`);
  }
  if (notReadableYet(head)) {
    if (ext.kind && !ext.gz && ext.kind !== 'zarr3') return { kind: ext.kind, by: 'extension' };
    throw convertError('TET_CONVERT_UNKNOWN_FORMAT',
      `${src}: the content cannot be read yet (${head.length} of ${stat.size} bytes, no signature) and the extension ` +
      `${JSON.stringify(ext.ext || '(none)')} does not say the format: expected one of ${EXTENSION_LIST} ` +
      `(case-insensitive)${gzNote}`);
  }
  throw convertError('TET_CONVERT_UNKNOWN_FORMAT',
    `${src}: unrecognized content (first bytes ${head.toString('hex') || 'none'}); expected ` +
    `an HDF5 signature 89484446 0d0a1a0a, NetCDF classic 'CDF' + version 1/2/5, or a Zarr directory${gzNote}`);
}
