// Test support for convert/export tests: independent readers (Python h5py / netCDF4 / zstandard
// through /usr/bin/python3, the spec-written .tet reader) and small source writers.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { halfToNumber } from './sdk-independent-reader';

export const PYTHON = '/usr/bin/python3';

/** Whether h5py, netCDF4, numpy and zstandard import in PYTHON. */
export function pythonAvailable(): boolean {
  if (!existsSync(PYTHON)) return false;
  try {
    execFileSync(PYTHON, ['-c', 'import h5py, netCDF4, numpy, zstandard'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface PyArray {
  dtype: string;          // numpy dtype str, e.g. '<f4'
  shape: number[];
  b64: string;            // little-endian C-order bytes
  attrs: Record<string, unknown>;
  dims: string[] | null;
}

const DUMP = String.raw`
import sys, json, base64, os
import numpy as np
kind, path = sys.argv[1], sys.argv[2]
def attrval(v):
    if isinstance(v, bytes): return v.decode()
    if isinstance(v, str): return v
    a = np.asarray(v)
    if a.dtype.kind in 'SU': return str(a.item()) if a.size == 1 else [str(x) for x in a.ravel()]
    if a.dtype.kind not in 'biuf': return None
    vals = [x.item() for x in a.ravel()]
    vals = [(str(x) if isinstance(x, float) and (x != x or x in (float('inf'), float('-inf'))) else x) for x in vals]
    vals = [(x if not isinstance(x, bool) else int(x)) for x in vals]
    return vals[0] if len(vals) == 1 else vals
def arr(a, attrs, dims):
    a = np.ascontiguousarray(a)
    if a.dtype == np.bool_: a = a.astype('u1')
    if a.dtype == np.int8: a = a.astype('<i2')
    a = a.astype(a.dtype.newbyteorder('<'))
    return {'dtype': a.dtype.str, 'shape': list(a.shape), 'b64': base64.b64encode(a.tobytes()).decode(),
            'attrs': {k: attrval(v) for k, v in attrs.items() if attrval(v) is not None}, 'dims': dims}
out = {}
if kind == 'h5':
    import h5py
    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and obj.dtype.kind in 'biuf' and obj.ndim > 0:
            keep = {k: v for k, v in obj.attrs.items() if k not in ('DIMENSION_LIST', 'REFERENCE_LIST', 'CLASS', 'NAME')}
            out[name] = arr(obj[()], keep, None)
    with h5py.File(path, 'r') as f: f.visititems(visit)
elif kind == 'nc':
    import netCDF4
    def walk(g, prefix):
        for name, v in g.variables.items():
            v.set_auto_maskandscale(False)
            if v.dtype.kind in 'biuf' and v.ndim > 0:
                out[prefix + name] = arr(v[...], {k: v.getncattr(k) for k in v.ncattrs()}, list(v.dimensions))
        for name, sub in g.groups.items(): walk(sub, prefix + name + '/')
    with netCDF4.Dataset(path) as ds: walk(ds, '')
elif kind == 'zarr3':
    import zstandard
    names = {'float32': '<f4', 'float64': '<f8', 'int32': '<i4', 'int64': '<i8', 'int16': '<i2', 'uint8': 'u1',
             'uint16': '<u2', 'uint32': '<u4', 'uint64': '<u8', 'int8': 'i1', 'bool': 'u1', 'float16': '<f2'}
    for root, dirs, files in os.walk(path):
        if 'zarr.json' not in files: continue
        meta = json.load(open(os.path.join(root, 'zarr.json')))
        if meta['node_type'] != 'array': continue
        shape = meta['shape']; chunk = meta['chunk_grid']['configuration']['chunk_shape']
        dt = np.dtype(names[meta['data_type']])
        full = np.full(shape, meta['fill_value'], dtype=dt)
        grid = [-(-s // c) for s, c in zip(shape, chunk)]
        for idx in np.ndindex(*grid):
            f = os.path.join(root, 'c', *[str(i) for i in idx])
            if not os.path.exists(f): continue
            raw = open(f, 'rb').read()
            if any(c['name'] == 'zstd' for c in meta['codecs']): raw = zstandard.ZstdDecompressor().decompressobj().decompress(raw)
            block = np.frombuffer(raw, dtype=dt).reshape(chunk)
            sl = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunk, shape))
            full[sl] = block[tuple(slice(0, s.stop - s.start) for s in sl)]
        out[os.path.relpath(root, path).replace(os.sep, '/')] = arr(full, meta.get('attributes', {}), meta.get('dimension_names'))
print(json.dumps(out))
`;

/** Arrays of a source as Python reads them (h5py for 'h5', netCDF4 for 'nc', numpy+zstandard for 'zarr3'). */
export function pythonDump(kind: 'h5' | 'nc' | 'zarr3', path: string): Record<string, PyArray> {
  const text = execFileSync(PYTHON, ['-c', DUMP, kind, path], { encoding: 'utf8', maxBuffer: 1 << 28 });
  return JSON.parse(text);
}

/** Runs a Python snippet (numpy as np, h5py, netCDF4 imported) with argv. */
export function python(code: string, ...args: string[]): string {
  return execFileSync(PYTHON, ['-c', `import numpy as np, h5py, netCDF4, sys\n${code}`, ...args], { encoding: 'utf8' });
}

/** Decodes little-endian bytes of a numpy dtype string into plain numbers / bigints. */
export function decodePy(a: PyArray): (number | bigint)[] {
  const buf = Buffer.from(a.b64, 'base64');
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const code = a.dtype.replace(/^[<>|=]/, '');
  const size = Number(code.slice(1));
  const out: (number | bigint)[] = [];
  for (let off = 0; off < buf.length; off += size) {
    switch (code) {
      case 'f4': out.push(v.getFloat32(off, true)); break;
      case 'f8': out.push(v.getFloat64(off, true)); break;
      case 'f2': out.push(halfToNumber(v.getUint16(off, true))); break;
      case 'i2': out.push(v.getInt16(off, true)); break;
      case 'i4': out.push(v.getInt32(off, true)); break;
      case 'i8': out.push(v.getBigInt64(off, true)); break;
      case 'u1': out.push(v.getUint8(off)); break;
      case 'u2': out.push(v.getUint16(off, true)); break;
      case 'u4': out.push(v.getUint32(off, true)); break;
      case 'u8': out.push(v.getBigUint64(off, true)); break;
      default: throw new Error(`dtype ${a.dtype}`);
    }
  }
  return out;
}

export { halfToNumber };

/** Footer JSON of a .tet file, parsed from the spec's THST suffix (independent of lib/). */
export function footerOf(path: string): { history?: any[]; metadata?: any } {
  const buf = readFileSync(path);
  if (buf.toString('latin1', buf.length - 4) !== 'THST') return {};
  const len = Number(buf.readBigUInt64LE(buf.length - 16));
  return JSON.parse(buf.toString('utf8', buf.length - 16 - len, buf.length - 16));
}

/** numpy dtype code -> tetration dtype name as the converter maps it. */
export const TET_DTYPE_OF: Record<string, string> = {
  f4: 'f32', f8: 'f64', f2: 'f16', i2: 'i16', i4: 'i32', i8: 'i64', u1: 'u8', u2: 'u16', u4: 'u32', u8: 'u64',
};
