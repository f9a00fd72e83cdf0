# Writes the HDF5 / NetCDF-4 test corpus with h5py (+ hdf5plugin), PyTables and netCDF4-python
# into argv[1] and prints, as JSON, what h5py / netCDF4-python read back (values as little-endian
# base64, names, attributes, dimension names, group attributes).
import base64, json, os, sys
import numpy as np
from wire import arr
import h5py, hdf5plugin, netCDF4, tables, zstandard

out = sys.argv[1]
result = {}

def attrval(v):
    if isinstance(v, bytes): return v.decode()
    if isinstance(v, str): return v
    a = np.asarray(v)
    if a.dtype.kind in 'SU': return str(a.item()) if a.size == 1 else [str(x) for x in a.ravel()]
    if a.dtype.kind == 'O': return [x.decode() if isinstance(x, bytes) else x for x in a.ravel()] if all(isinstance(x, (str, bytes)) for x in a.ravel()) else None
    if a.dtype.kind not in 'biuf' or a.dtype.itemsize > 8: return None  # long double: no JSON form
    vals = [x.item() for x in a.ravel()]
    vals = [(str(x) if isinstance(x, float) and (x != x or x in (float('inf'), float('-inf'))) else x) for x in vals]
    vals = [(int(x) if isinstance(x, bool) else x) for x in vals]
    vals = [(str(x) if isinstance(x, int) and abs(x) > 2**53 else x) for x in vals]
    return vals[0] if len(vals) == 1 else vals

SKIP_ATTRS = ('DIMENSION_LIST', 'REFERENCE_LIST', 'CLASS', 'NAME', '_Netcdf4Dimid', '_Netcdf4Coordinates', '_NCProperties')

def attrs_of(obj):
    res = {}
    for k in obj.attrs.keys():
        if k in SKIP_ATTRS: continue
        try: v = attrval(obj.attrs[k])
        except Exception: continue
        if v is not None: res[k] = v
    return res

def h5dump(path, values=True):
    res = {'datasets': {}, 'groups': {}}
    with h5py.File(path, 'r') as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Group):
                a = attrs_of(obj)
                if a: res['groups'][name] = a
            elif isinstance(obj, h5py.Dataset) and obj.dtype.kind in 'biuf' and obj.ndim > 0:
                d = {'attrs': attrs_of(obj), 'shape': list(obj.shape)}
                if values and obj.size:
                    try: d.update(arr(obj[()]))
                    except OSError: pass  # a filter h5py has no plugin for
                res['datasets'][name] = d
        f.visititems(visit)
    return res

# -- filters -------------------------------------------------------------------------------
rng = np.random.default_rng(7)
a = (rng.standard_normal((60, 37)) * 100).astype('<f4')
a[3, 3] = np.nan
a[10:20] = np.round(a[10:20])
ints = rng.integers(-1000, 1000, size=(45, 23)).astype('<i4')
p = os.path.join(out, 'filters.h5')
with h5py.File(p, 'w') as f:
    f.create_dataset('gzip_shuffle', data=a, chunks=(16, 10), compression='gzip', shuffle=True)
    f.create_dataset('lzf', data=a, chunks=(16, 10), compression='lzf')
    f.create_dataset('lz4', data=a, chunks=(16, 10), **hdf5plugin.LZ4())
    f.create_dataset('bitshuffle_lz4', data=ints, chunks=(16, 10), **hdf5plugin.Bitshuffle(cname='lz4'))
    f.create_dataset('bitshuffle_none', data=a, chunks=(16, 10), **hdf5plugin.Bitshuffle(cname='none'))
    f.create_dataset('bzip2', data=ints, chunks=(16, 10), **hdf5plugin.BZip2())
    f.create_dataset('shuffle_bzip2', data=a, chunks=(16, 10), shuffle=True, **hdf5plugin.BZip2())
    # zstd (32015): no writer plugin here; chunks compressed by python-zstandard, written raw.
    for name, filt in (('zstd', 32015), ('unknown_filter', 40999)):
        d = f.create_dataset(name, shape=a.shape, dtype=a.dtype, chunks=(16, 10), compression=filt,
                             compression_opts=(3,), allow_unknown_filter=True)
        for i in range(0, a.shape[0], 16):
            for j in range(0, a.shape[1], 10):
                blk = np.zeros((16, 10), a.dtype); sub = a[i:i + 16, j:j + 10]; blk[:sub.shape[0], :sub.shape[1]] = sub
                d.id.write_direct_chunk((i, j), zstandard.ZstdCompressor().compress(blk.tobytes()))
result['filters'] = h5dump(p)
result['filters']['datasets']['zstd'].update(arr(a))  # h5py cannot read it back without the plugin
result['filters']['datasets']['unknown_filter'].update(arr(a))
p = os.path.join(out, 'blosc.h5')
with tables.open_file(p, 'w') as t:
    for lib in ('blosc:lz4', 'blosc:lz4hc', 'blosc:zstd', 'blosc:blosclz', 'blosc:zlib'):
        for sh in ('shuffle', 'bitshuffle', 'none'):
            flt = tables.Filters(complevel=5, complib=lib, shuffle=sh == 'shuffle', bitshuffle=sh == 'bitshuffle')
            t.create_carray('/', lib.replace(':', '_') + '_' + sh, obj=a if sh != 'bitshuffle' else ints, filters=flt, chunkshape=(16, 10))
    # blosc whose parameters say lz4 while the chunks are zlib (decoding aborts the plugin)
    pass
with h5py.File(p, 'a') as f:
    import numcodecs
    d = f.create_dataset('lying_blosc', shape=a.shape, dtype=a.dtype, chunks=(16, 10), compression=32001,
                         compression_opts=(2, 2, 4, 640, 5, 1, 1), allow_unknown_filter=True)
    codec = numcodecs.Blosc(cname='zlib', clevel=5, shuffle=1)
    for i in range(0, a.shape[0], 16):
        for j in range(0, a.shape[1], 10):
            blk = np.zeros((16, 10), a.dtype); sub = a[i:i + 16, j:j + 10]; blk[:sub.shape[0], :sub.shape[1]] = sub
            d.id.write_direct_chunk((i, j), codec.encode(blk.tobytes()))
result['blosc'] = h5dump(p)

# -- NetCDF-4 names, group attributes, empty unlimited dimension ----------------------------
p = os.path.join(out, 'names.nc')
with netCDF4.Dataset(p, 'w') as ds:
    ds.title = 'names'
    ds.createDimension('x', 3); ds.createDimension('y', 4); ds.createDimension('time', None)
    x = ds.createVariable('x', 'f4', ('x', 'y')); x[:] = np.arange(12).reshape(3, 4)
    x.units = 'm'
    y = ds.createVariable('y', 'i4', ('y',)); y[:] = [10, 20, 30, 40]
    # a variable named like a dimension it does not start with: netCDF-C stores _nc4_non_coord_a
    ds.createDimension('a', 2)
    na = ds.createVariable('a', 'i2', ('y', 'a')); na[:] = np.arange(8).reshape(4, 2); na.note = 'non-coord'
    t = ds.createVariable('t_empty', 'f8', ('time', 'y'))
    tc = ds.createVariable('time', 'f8', ('time',))
    g = ds.createGroup('grp'); g.setncattr('purpose', 'group attrs'); g.setncattr('level', np.int16(3))
    g.setncattr('scale', np.array([1.5, 2.5], 'f4'))
    s = g.createGroup('sub'); s.setncattr('note', 'nested')
    gv = s.createVariable('v', 'u2', ('y',)); gv[:] = [1, 2, 3, 4]
    ds.createGroup('plain')
nc = {'vars': {}, 'groups': {}}
with netCDF4.Dataset(p) as ds:
    def walk(g, prefix):
        if prefix:
            a = {k: attrval(g.getncattr(k)) for k in g.ncattrs()}
            if a: nc['groups'][prefix.rstrip('/')] = a
        for name, v in g.variables.items():
            v.set_auto_maskandscale(False)
            d = {'dims': list(v.dimensions), 'shape': list(v.shape), 'attrs': {k: attrval(v.getncattr(k)) for k in v.ncattrs()}}
            if v.size: d.update(arr(v[...]))
            nc['vars'][prefix + name] = d
        for name, sub in g.groups.items(): walk(sub, prefix + name + '/')
    walk(ds, '')
result['names'] = nc

# -- HDF5 structure: group attributes, bitfields, links, empty, odd attributes -------------
p = os.path.join(out, 'target.h5')
with h5py.File(p, 'w') as f:
    f['remote'] = np.arange(6, dtype='<f8') / 4
    f.create_group('rg')['inner'] = np.arange(3, dtype='<i2')
p = os.path.join(out, 'struct.h5')
with h5py.File(p, 'w') as f:
    f.attrs['root_note'] = 'root'
    g = f.create_group('grid'); g.attrs['title'] = 'grid group'; g.attrs['count'] = np.int64(2**60 + 1)
    g.attrs['weights'] = np.array([0.5, np.nan], 'f8')
    sub = g.create_group('sub'); sub.attrs['depth'] = np.uint8(2)
    sub['data'] = np.arange(5, dtype='<i4')
    for size, order in ((1, 'LE'), (2, 'BE'), (4, 'LE'), (8, 'BE')):
        tid = getattr(h5py.h5t, f'STD_B{size * 8}{order}')
        vals = rng.integers(0, 2 ** (size * 8) - 1, size=7, dtype=f'u{size}' if size < 8 else 'u8')
        space = h5py.h5s.create_simple((7,))
        dsid = h5py.h5d.create(f.id, f'bits{size * 8}'.encode(), tid, space)
        raw = vals.astype(('>' if order == 'BE' else '<') + f'u{size}')
        dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, raw, mtype=tid)
    f['ext'] = h5py.ExternalLink('target.h5', '/remote')
    f['extgroup'] = h5py.ExternalLink('target.h5', '/rg')
    f['broken_ext'] = h5py.ExternalLink('missing.h5', '/x')
    f['orig'] = np.arange(4, dtype='<f4')
    f['alias'] = f['orig']                       # hard link: same dataset
    f['soft'] = h5py.SoftLink('/orig')           # soft link: same dataset
    f['dangling'] = h5py.SoftLink('/nothere')
    f.create_dataset('empty', shape=(0,), maxshape=(None,), dtype='<f4', chunks=(4,))
    f.create_dataset('empty2d', shape=(3, 0), maxshape=(3, None), dtype='<i2', chunks=(3, 2))
result['struct'] = h5dump(p)
with h5py.File(os.path.join(out, 'struct.h5'), 'r') as f:
    result['struct']['bits'] = {k: [str(int(x)) for x in f[k][()]] for k in ('bits8', 'bits16', 'bits32', 'bits64')}

p = os.path.join(out, 'oddattrs.h5')
with h5py.File(p, 'w') as f:
    d = f.create_dataset('x', data=np.arange(5, dtype='<i4'))
    g = f.create_group('g'); g['y'] = np.arange(3.0)
    d.attrs['ok'] = 1.5
    d.attrs['compound'] = np.array([(1, 2.0)], dtype=[('a', 'i4'), ('b', 'f8')])
    d.attrs['vlen_int'] = np.array([np.array([1, 2, 3], 'i4'), np.array([4], 'i4')], dtype=h5py.vlen_dtype('i4'))
    d.attrs['ref'] = g.ref
    d.attrs['regref'] = d.regionref[1:3]
    d.attrs['opaque'] = np.void(b'abcd')
    d.attrs['longdouble'] = np.longdouble(1.5)
    d.attrs['half'] = np.array([1.5, -0.25], 'f2')
    d.attrs['enum'] = np.array([1, 0], dtype=h5py.enum_dtype({'RED': 0, 'GREEN': 1}, basetype='i1'))
    d.attrs['fixed_utf8'] = np.array('h\u00e9llo'.encode('utf8'), dtype='S6')
    d.attrs['array_t'] = np.zeros((2,), dtype=np.dtype(('i4', (3,)))) + 7
    d.attrs['after'] = 'still here'
    g.attrs['compound'] = np.array([(1, 2.0)], dtype=[('a', 'i4'), ('b', 'f8')])
    g.attrs['fine'] = 'group ok'
result['oddattrs'] = h5dump(p)

# -- many datasets sharing a dimension scale -----------------------------------------------
p = os.path.join(out, 'many.h5')
with h5py.File(p, 'w') as f:
    x = f.create_dataset('x', data=np.arange(10.0) * 2); x.make_scale('x')
    for i in range(2000):
        d = f.require_group(f'g{i // 100}').create_dataset(f'v{i}', data=np.arange(10, dtype='<f4') + i)
        d.attrs['units'] = 'm'
        d.dims[0].attach_scale(x)

print(json.dumps(result))
