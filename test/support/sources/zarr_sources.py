# Zarr sources for test/convert-real-zarr.test.ts, written by zarr-python 2 / xarray (v2) or by
# hand (v3, see zarr_common.py), and what zarr-python / numpy read from them. Prints one JSON
# manifest: per store, per array the expected values (or the expected skip), attrs and dims, and
# the root / group attributes.
import json
import os
import sys

import numpy as np
import numcodecs
import zarr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zarr_common import array_attrs, expected, safe, write_v3_array, write_v3_group  # noqa: E402

out_dir = sys.argv[1]
manifest = {}
rng = np.random.default_rng(7)


def values(dtype, shape):
    dt = np.dtype(dtype).newbyteorder('=')
    n = int(np.prod(shape))
    if dt.kind == 'b':
        a = rng.integers(0, 2, n).astype(bool)
    elif dt.kind == 'f':
        a = (rng.standard_normal(n) * 100).astype(dt)
        if n > 3:
            a[1] = np.nan; a[2] = np.inf; a[3] = -0.0
    else:
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        a[0] = info.min; a[-1] = info.max
    return a.reshape(shape)


def dump_v2(path, name):
    """Everything zarr-python reads from a v2 store (json via Python json: NaN tokens accepted)."""
    root = zarr.open_consolidated(path, mode='r') if os.path.exists(os.path.join(path, '.zmetadata')) else zarr.open(path, mode='r')
    entry = {'arrays': {}, 'attrs': {}, 'dims': {}, 'global': safe(dict(root.attrs)), 'groups': {}}

    def walk(g, prefix):
        for k, arr in g.arrays():
            key = prefix + k
            if arr.dtype.kind in 'biuf' and 0 not in arr.shape:
                entry['arrays'][key] = expected(arr[...])
            entry['attrs'][key] = array_attrs(arr.attrs)
            entry['dims'][key] = arr.attrs.get('_ARRAY_DIMENSIONS')
        for k, sub in g.groups():
            if len(sub.attrs):
                entry['groups'][prefix + k] = safe(dict(sub.attrs))
            walk(sub, prefix + k + '/')
    walk(root, '')
    manifest[name] = entry
    return entry


# 1. Fortran order (v2), every dtype class, rank 1-4, clipped edge chunks.
p = os.path.join(out_dir, 'forder.zarr')
g = zarr.open_group(p, mode='w')
specs = [('flags', '|b1', (5, 7), (2, 3), None), ('small', '|i1', (4, 5, 6), (3, 2, 4), 'zlib'),
         ('big', '<i8', (6, 5), (4, 4), 'blosc'), ('ubig', '<u8', (3, 4, 5, 2), (2, 3, 2, 2), 'zstd'),
         ('half', '<f2', (9, 7), (4, 3), 'blosc'), ('line', '<f4', (10,), (3,), None),
         ('be', '>f8', (5, 6), (2, 4), 'gzip'), ('u16', '>u2', (7, 3, 4), (3, 3, 3), 'lz4')]
for name, dt, shape, chunks, comp in specs:
    compressor = {'zlib': numcodecs.Zlib(3), 'blosc': numcodecs.Blosc('zstd', 3, numcodecs.Blosc.SHUFFLE),
                  'zstd': numcodecs.Zstd(2), 'gzip': numcodecs.GZip(2), 'lz4': numcodecs.LZ4(), None: None}[comp]
    a = g.create_dataset(name, shape=shape, chunks=chunks, dtype=dt, order='F', compressor=compressor)
    a[...] = values(dt, shape)
dump_v2(p, 'forder')

# 2. Zarr v3 transpose codec with arbitrary permutations (hand-built).
p = os.path.join(out_dir, 'perm3.zarr')
write_v3_group(p, {'title': 'perm'})
perm = {}
cases = [('t2', 'int16', (5, 7), (2, 3), (1, 0), 'little', None),
         ('t3a', 'float32', (4, 5, 6), (3, 2, 4), (2, 0, 1), 'little', ('gzip', {})),
         ('t3b', 'uint8', (4, 5, 6), (4, 4, 4), (1, 2, 0), 'little', ('blosc', {'cname': 'lz4', 'shuffle': 'bitshuffle'})),
         ('t3c', 'bool', (3, 4, 5), (2, 3, 2), (0, 2, 1), 'little', None),
         ('t4', 'int64', (3, 4, 2, 5), (2, 3, 2, 2), (3, 1, 0, 2), 'big', ('zstd', {})),
         ('t4h', 'float16', (2, 3, 4, 5), (2, 2, 3, 2), (2, 3, 1, 0), 'little', ('blosc', {'cname': 'zstd'})),
         ('t3i8', 'int8', (5, 3, 4), (2, 2, 3), (2, 1, 0), 'little', None),
         ('t1b', 'bool', (11,), (4,), None, 'big', ('gzip', {}))]  # "big" on 1-byte elements
for name, dt, shape, chunk, order, endian, comp in cases:
    a = values(np.dtype(dt) if dt != 'bool' else np.bool_, shape)
    write_v3_array(os.path.join(p, name), a, chunk, order=order, endian=endian, compressor=comp)
    perm[name] = expected(a)
manifest['perm3'] = {'arrays': perm, 'global': {'title': 'perm'}, 'groups': {}}

# 3. NaN / Infinity tokens in metadata.
import xarray as xr  # noqa: E402
p = os.path.join(out_dir, 'nan_xr.zarr')
t = np.arange(24, dtype='f4').reshape(4, 6) / 3
t[1, 2] = np.nan
ds = xr.Dataset({'t': (('y', 'x'), t, {'missing_marker': float('nan'), 'vmax': float('inf'), 'units': 'K'}),
                 'x': ('x', np.arange(6, dtype='f8') * 0.5)},
                attrs={'title': 'nan attrs', 'nanattr': float('nan')})
ds.to_zarr(p, mode='w', consolidated=True, encoding={'t': {'_FillValue': np.nan, 'chunks': (2, 3)}})
dump_v2(p, 'nan_xr')

p = os.path.join(out_dir, 'nan_raw.zarr')
g = zarr.open_group(p, mode='w')
a = g.create_dataset('sparse', shape=(6, 4), chunks=(2, 2), dtype='<f8', fill_value=np.nan, compressor=None)
a[0:2, :] = np.arange(8).reshape(2, 4)
a[4:6, 2:4] = -1.5
# netCDF-style attributes with bare tokens, and a bare NaN fill_value in .zarray.
with open(os.path.join(p, 'sparse', '.zattrs'), 'w') as f:
    f.write('{"_ARRAY_DIMENSIONS": ["row", "col"], "valid_max": Infinity, "valid_min": -Infinity, '
            '"_FillValue": NaN, "units": "NaN", "list": [1, NaN, "Infinity"]}')
zarray = os.path.join(p, 'sparse', '.zarray')
with open(zarray) as f:
    text = f.read()
with open(zarray, 'w') as f:
    f.write(text.replace('"NaN"', 'NaN'))
with open(os.path.join(p, '.zattrs'), 'w') as f:
    f.write('{"history": "made by hand", "scale": -Infinity}')
dump_v2(p, 'nan_raw')

p = os.path.join(out_dir, 'nan3.zarr')
write_v3_group(p, raw='{"zarr_format": 3, "node_type": "group", "attributes": {"peak": Infinity, "name": "NaN"}}')
a = np.full((4, 5), np.nan, dtype='f4')
a[0:2, 0:3] = np.arange(6).reshape(2, 3)
write_v3_array(os.path.join(p, 'v'), a, (2, 3), fill=np.nan, fill_token='NaN', skip={(1, 0), (1, 1), (0, 1)},
               attrs={'ok': 1}, dims=['a', 'b'])
with open(os.path.join(p, 'v', 'zarr.json')) as f:
    text = f.read()
with open(os.path.join(p, 'v', 'zarr.json'), 'w') as f:
    f.write(text.replace('"ok": 1', '"ok": 1, "lo": -Infinity, "bad": NaN'))
manifest['nan3'] = {'arrays': {'v': expected(a)}, 'attrs': {'v': {'ok': 1, 'lo': '-Infinity', 'bad': 'NaN'}},
                    'global': {'peak': 'Infinity', 'name': 'NaN'}, 'groups': {}}

# 4. float16 through every codec zarrita decodes.
p = os.path.join(out_dir, 'f16v2.zarr')
g = zarr.open_group(p, mode='w')
f16 = {'blosc_lz4': numcodecs.Blosc('lz4', 5, numcodecs.Blosc.SHUFFLE), 'blosc_zstd': numcodecs.Blosc('zstd', 3, numcodecs.Blosc.BITSHUFFLE),
       'zstd': numcodecs.Zstd(3), 'gzip': numcodecs.GZip(4), 'zlib': numcodecs.Zlib(2), 'lz4': numcodecs.LZ4(), 'raw': None}
for name, comp in f16.items():
    a = g.create_dataset(name, shape=(9, 7), chunks=(4, 3), dtype='<f2', compressor=comp)
    a[...] = values('f2', (9, 7))
a = g.create_dataset('be_f', shape=(5, 6), chunks=(2, 4), dtype='>f2', order='F', compressor=numcodecs.Blosc('lz4', 5))
a[...] = values('f2', (5, 6))
a = g.create_dataset('holes', shape=(6, 6), chunks=(3, 3), dtype='<f2', fill_value=np.nan, compressor=numcodecs.Zstd(1))
a[0:3, 0:3] = np.arange(9, dtype='f2').reshape(3, 3) / 4
a = g.create_dataset('fill_one', shape=(4,), chunks=(2,), dtype='<f2', fill_value=1.5, compressor=None)
a[0:2] = [-2, 65504]
dump_v2(p, 'f16v2')

p = os.path.join(out_dir, 'f16v3.zarr')
write_v3_group(p)
f3 = {}
for name, comp, endian in [('bytes', None, 'little'), ('blosc', ('blosc', {'cname': 'lz4'}), 'little'),
                           ('zstd', ('zstd', {}), 'big'), ('gzip', ('gzip', {}), 'little')]:
    a = values('f2', (9, 7))
    write_v3_array(os.path.join(p, name), a, (4, 3), endian=endian, compressor=comp)
    f3[name] = expected(a)
a = values('f2', (8, 10))
a[4:8, 5:10] = np.nan        # a whole shard of fill values (not written)
a[0:2, 5:10] = np.nan        # inner chunks of fill values (left out of the shard)
write_v3_array(os.path.join(p, 'sharded'), a, (4, 5), compressor=('blosc', {'cname': 'zstd'}), fill=np.nan,
               sharding=(2, 5), skip={(1, 1)})
f3['sharded'] = expected(a)
a = values('f4', (7, 6))
write_v3_array(os.path.join(p, 'sharded_f4'), a, (4, 4), order=(1, 0), compressor=('zstd', {}), sharding=(2, 2))
f3['sharded_f4'] = expected(a)
a = np.full((3, 4), 0.25, dtype='f2'); a[0, :] = [1, 2, 3, 4]
write_v3_array(os.path.join(p, 'hexfill'), a, (1, 4), fill_token='"0x3400"', skip={(1, 0), (2, 0)})
f3['hexfill'] = expected(a)
manifest['f16v3'] = {'arrays': f3, 'global': {}, 'groups': {}}

# 5. Group attributes: v2 (zarr-python), v3 (by hand), consolidated-only v2.
p = os.path.join(out_dir, 'groups.zarr')
g = zarr.open_group(p, mode='w')
g.attrs['title'] = 'root'
g1 = g.create_group('g1'); g1.attrs.update({'level': 1, 'tags': ['a', 'b']})
g2 = g1.create_group('g2'); g2.attrs.update({'level': 2, 'nested': {'k': [1.5, 2]}})
g3 = g.create_group('g3')
g3.create_dataset('v', data=np.arange(4, dtype='i4'), chunks=(3,))
g2.create_dataset('w', data=np.arange(6, dtype='u2').reshape(2, 3), chunks=(1, 3))
with open(os.path.join(p, 'g1', 'g2', '.zattrs'), 'w') as f:
    f.write('{"level": 2, "nested": {"k": [1.5, 2]}, "edge": NaN}')
dump_v2(p, 'groups')

p = os.path.join(out_dir, 'groups3.zarr')
write_v3_group(p, {'title': 'root3'})
write_v3_group(os.path.join(p, 'a'), {'role': 'a'})
write_v3_group(os.path.join(p, 'a', 'b'), raw='{"zarr_format": 3, "node_type": "group", "attributes": {"inf": -Infinity}}')
write_v3_group(os.path.join(p, 'c'))
arr = values('u4', (3, 2))
write_v3_array(os.path.join(p, 'a', 'b', 'x'), arr, (2, 2))
manifest['groups3'] = {'arrays': {'a/b/x': expected(arr)}, 'global': {'title': 'root3'},
                       'groups': {'a': {'role': 'a'}, 'a/b': {'inf': '-Infinity'}}}

p = os.path.join(out_dir, 'consolidated.zarr')
g = zarr.open_group(p, mode='w')
g.attrs['title'] = 'consolidated'
s = g.create_group('s'); s.attrs['kind'] = 'sub'
a = s.create_dataset('v', shape=(5, 4), chunks=(2, 3), dtype='<i2', compressor=numcodecs.Zlib(1), fill_value=-7)
a[0:4, :] = np.arange(16, dtype='i2').reshape(4, 4)
a.attrs['_ARRAY_DIMENSIONS'] = ['r', 'c']
a.attrs['note'] = 'only in .zmetadata'
zarr.consolidate_metadata(p)
dump_v2(p, 'consolidated')
for root, dirs, files in os.walk(p):
    for f in files:
        if f in ('.zarray', '.zattrs', '.zgroup'):
            os.remove(os.path.join(root, f))

# 6. Empty axes, nested chunk keys, filters, unsupported codecs and element types, missing chunks.
p = os.path.join(out_dir, 'misc.zarr')
g = zarr.open_group(p, mode='w')
e = g.create_dataset('empty', shape=(0, 5), chunks=(2, 5), dtype='<f4'); e.attrs['_ARRAY_DIMENSIONS'] = ['time', 'x']
g.create_dataset('empty_nodims', shape=(3, 0), chunks=(2, 2), dtype='<i4')
a = g.create_dataset('nested', shape=(5, 6), chunks=(2, 4), dtype='<i4', dimension_separator='/', compressor=numcodecs.Blosc())
a[...] = values('i4', (5, 6))
a = g.create_dataset('delta', shape=(20,), chunks=(7,), dtype='<i4', filters=[numcodecs.Delta('<i4')], compressor=numcodecs.Zlib(1))
a[...] = np.cumsum(np.arange(20, dtype='i4') * 3)
a = g.create_dataset('shuffled', shape=(4, 5), chunks=(3, 3), dtype='<f8', filters=[numcodecs.Shuffle(8)], compressor=numcodecs.Zlib(1))
a[...] = values('f8', (4, 5))
a = g.create_dataset('fso', shape=(10,), chunks=(4,), dtype='<f8',
                     filters=[numcodecs.FixedScaleOffset(offset=10, scale=100, dtype='<f8', astype='<u2')], compressor=None)
a[...] = np.linspace(10, 20, 10).round(2)
a = g.create_dataset('fso_int', shape=(6,), chunks=(4,), dtype='<i4',
                     filters=[numcodecs.FixedScaleOffset(offset=1000, scale=1, dtype='<i4', astype='<u1')], compressor=None)
a[...] = [1000, 1001, 1100, 1255, 1003, 1007]
a = g.create_dataset('bz2', shape=(4,), chunks=(4,), dtype='<i4', compressor=numcodecs.BZ2())
a[...] = [1, 2, 3, 4]
a = g.create_dataset('lzma', shape=(4,), chunks=(4,), dtype='<i4', compressor=numcodecs.LZMA())
a[...] = [1, 2, 3, 4]
a = g.create_dataset('quant', shape=(4,), chunks=(4,), dtype='<f8', filters=[numcodecs.Quantize(2, '<f8')])
a[...] = [1.25, 2.5, 3.75, 4]
a = g.create_dataset('halfdelta', shape=(4,), chunks=(4,), dtype='<f2', filters=[numcodecs.Delta('<f2')])
a[...] = [1, 2, 3, 4]
a = g.create_dataset('holes', shape=(5, 5), chunks=(2, 2), dtype='>i8', fill_value=42)
a[0:2, 0:2] = -5
a = g.create_dataset('bigend', shape=(3, 4), chunks=(2, 3), dtype='>f8')
a[...] = values('f8', (3, 4))
g.create_dataset('text', data=np.array(['ab', 'cde']), dtype='<U3')
g.create_dataset('objs', shape=(2,), dtype=object, object_codec=numcodecs.VLenUTF8())[...] = ['x', 'yz']
g.create_dataset('bytes_', data=np.array([b'ab', b'c']), dtype='|S2')
entry = dump_v2(p, 'misc')
entry['skips'] = {'empty': ['TET_CONVERT_EMPTY', '0-length axis time'], 'empty_nodims': ['TET_CONVERT_EMPTY', '0-length axis 1'],
                  'bz2': ['TET_CONVERT_UNSUPPORTED_FILTER', 'bz2'], 'lzma': ['TET_CONVERT_UNSUPPORTED_FILTER', 'lzma'],
                  'quant': ['TET_CONVERT_UNSUPPORTED_FILTER', 'quantize'], 'halfdelta': ['TET_CONVERT_UNSUPPORTED_FILTER', 'delta'],
                  'text': [None, '<U3'], 'objs': [None, '|O'], 'bytes_': [None, '|S2']}
for k in ('bz2', 'lzma', 'quant', 'halfdelta'):
    entry['arrays'].pop(k, None)

json.dump(manifest, sys.stdout)
