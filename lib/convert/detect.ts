// Source format detection by content: HDF5/NetCDF-4 signature, NetCDF classic magic, Zarr metadata.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { convertError, describe, openSourceFd } from './errors';
import type { SourceKind } from './types';
import { parseZarrJson } from './zarr';

const HDF5_SIGNATURE = Buffer.from([0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Offset of the HDF5 superblock signature (0, 512, 1024, 2048, ... for files with a user block), or -1. */
export function hdf5SignatureOffset(fd: number, fileLen: number): number {
  const buf = Buffer.alloc(8);
  for (let off = 0; off + 8 <= fileLen; off = off === 0 ? 512 : off * 2) {
    if (fs.readSync(fd, buf, 0, 8, off) === 8 && buf.equals(HDF5_SIGNATURE)) return off;
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
    return parseZarrJson(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw convertError('TET_CONVERT_SOURCE_INVALID', `cannot parse Zarr metadata ${file}: ${describe(err)}`, err);
  }
}

/** Zarr version of a directory (3 for zarr.json, 2 for .zgroup/.zarray/.zmetadata), or 0. */
export function zarrVersion(dir: string): 2 | 3 | 0 {
  const v3 = path.join(dir, 'zarr.json');
  if (fs.existsSync(v3)) {
    const meta = readJson(v3);
    if (meta?.zarr_format !== 3) {
      throw convertError('TET_CONVERT_SOURCE_INVALID',
        `${v3}: expected zarr_format 3, found ${JSON.stringify(meta?.zarr_format)}`);
    }
    return 3;
  }
  if (['.zgroup', '.zarray', '.zmetadata'].some((f) => fs.existsSync(path.join(dir, f)))) return 2;
  return 0;
}

/**
 * Detects the kind of `src`. HDF5 files are reported as `hdf5`; the HDF5 reader upgrades them to
 * `netcdf4` when it finds NetCDF-4 conventions inside.
 */
export function detectSource(src: string): SourceKind {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(src);
  } catch (err) {
    throw convertError('TET_CONVERT_OPEN', `cannot open source ${src}: ${describe(err)}`, err);
  }
  if (stat.isDirectory()) {
    const v = zarrVersion(src);
    if (v === 3) return 'zarr3';
    if (v === 2) return 'zarr2';
    throw convertError('TET_CONVERT_UNKNOWN_FORMAT',
      `${src} is a directory without Zarr metadata: expected zarr.json (v3) or .zgroup/.zarray (v2)`);
  }
  const fd = openSourceFd(src);
  try {
    const head = Buffer.alloc(8);
    const n = fs.readSync(fd, head, 0, 8, 0);
    if (netcdfClassicVersion(head.subarray(0, n))) return 'netcdf3';
    if (hdf5SignatureOffset(fd, stat.size) >= 0) return 'hdf5';
    throw convertError('TET_CONVERT_UNKNOWN_FORMAT',
      `${src}: unrecognized content (first bytes ${head.subarray(0, n).toString('hex') || 'none'}); expected ` +
      `an HDF5 signature 89484446 0d0a1a0a, NetCDF classic 'CDF' + version 1/2/5, or a Zarr directory`);
  } finally {
    fs.closeSync(fd);
  }
}
