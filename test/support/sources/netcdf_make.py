# Writes the NetCDF test corpus with netCDF-C's own tools (netCDF4-python, ncgen, libnetcdf via
# ctypes) into argv[1] and prints, as JSON, what netCDF4-python reads back: raw values
# (auto mask/scale off) and decoded values (auto mask/scale on, masked -> None).
import ctypes, json, os, subprocess, sys
import numpy as np
import netCDF4

out = sys.argv[1]
expect = {}

def jsonable(a):
    a = np.ma.asarray(a)
    mask = np.ma.getmaskarray(a).ravel()
    vals = []
    for m, x in zip(mask, np.asarray(a.data).ravel()):
        if m: vals.append(None)
        else:
            x = x.item()
            vals.append(x if not isinstance(x, float) or np.isfinite(x) else str(x))
    return vals

def dump(path):
    res = {}
    with netCDF4.Dataset(path) as ds:
        def walk(g, prefix):
            for name, v in g.variables.items():
                if v.dtype.kind not in 'biuf': continue
                v.set_auto_maskandscale(False)
                raw = v[...]
                v.set_auto_maskandscale(True)
                dec = v[...]
                res[prefix + name] = {
                    'shape': list(v.shape), 'dims': list(v.dimensions), 'dtype': np.asarray(raw).dtype.str,
                    'raw': jsonable(raw), 'decoded': jsonable(dec), 'decoded_dtype': np.ma.asarray(dec).dtype.str,
                    'attrs': sorted(v.ncattrs()),
                }
            for name, sub in g.groups.items(): walk(sub, prefix + name + '/')
        walk(ds, '')
        groups = {}
        def gwalk(g, prefix):
            for name, sub in g.groups.items():
                p = prefix + name
                groups[p] = {k: (sub.getncattr(k).tolist() if hasattr(sub.getncattr(k), 'tolist') else sub.getncattr(k)) for k in sub.ncattrs()}
                gwalk(sub, p + '/')
        gwalk(ds, '')
        res['__groups__'] = groups
        res['__dims__'] = {k: len(d) for k, d in ds.dimensions.items()}
    return res

# 1-2. Unlimited dimension with no records, classic and NetCDF-4 (with a group and its attributes).
for fmt, name in (('NETCDF3_CLASSIC', 'empty3.nc'), ('NETCDF4', 'empty4.nc')):
    p = os.path.join(out, name)
    with netCDF4.Dataset(p, 'w', format=fmt) as ds:
        ds.title = 'no records yet'
        ds.createDimension('time', None)
        ds.createDimension('x', 4)
        t = ds.createVariable('time', 'f8', ('time',)); t.units = 'days since 2000-01-01'
        temp = ds.createVariable('temp', 'f4', ('time', 'x')); temp.units = 'K'
        x = ds.createVariable('x', 'i4', ('x',)); x[:] = [10, 20, 30, 40]
        lonely = ds.createVariable('lonely', 'f4', ('x',)); lonely[:] = [1.5, -2.5, 3.25, 1e30]
        lonely.long_name = 'static field'
        if fmt == 'NETCDF4':
            g = ds.createGroup('forecast'); g.model = 'toy'; g.version = np.int32(3)
            sub = g.createGroup('member1'); sub.seed = 42.5
            gv = sub.createVariable('spread', 'f8', ('x',)); gv[:] = [0.1, 0.2, 0.3, 0.4]
    expect[name] = dump(p)

# 3. A template: every variable on the unlimited dimension, no records (ncgen from CDL).
cdl = os.path.join(out, 'template.cdl')
with open(cdl, 'w') as f:
    f.write('netcdf template {\ndimensions:\n  time = UNLIMITED ;\n  station = 3 ;\nvariables:\n'
            '  double time(time) ;\n    time:units = "hours since 2020-01-01" ;\n'
            '  float obs(time, station) ;\n    obs:_FillValue = -999.f ;\n'
            '// global attributes:\n  :Conventions = "CF-1.8" ;\n}\n')
for kind, name in (('nc3', 'template3.nc'), ('nc4', 'template4.nc')):
    subprocess.run(['ncgen', '-k', kind, '-o', os.path.join(out, name), cdl], check=True)
    expect[name] = dump(os.path.join(out, name))

# 4. netCDF-C's in-place rename to shorter names (data mode) pads the old lengths with NULs.
p = os.path.join(out, 'renamed.nc')
with netCDF4.Dataset(p, 'w', format='NETCDF3_CLASSIC') as ds:
    ds.createDimension('longdimension', 3)
    v = ds.createVariable('temperature_long', 'f4', ('longdimension',)); v[:] = [1, 2, 3]
    v.setncattr('long_attribute_name', 'K')
    w = ds.createVariable('longdimension', 'i2', ('longdimension',)); w[:] = [7, 8, 9]
lib = ctypes.CDLL('libnetcdf.so.19')
ncid = ctypes.c_int()
assert lib.nc_open(p.encode(), 1, ctypes.byref(ncid)) == 0
assert lib.nc_rename_var(ncid, 0, b't') == 0
assert lib.nc_rename_var(ncid, 1, b'x') == 0
assert lib.nc_rename_dim(ncid, 0, b'x') == 0
assert lib.nc_rename_att(ncid, 0, b'long_attribute_name', b'u') == 0
assert lib.nc_close(ncid) == 0
assert b't\0\0\0' in open(p, 'rb').read()
expect['renamed.nc'] = dump(p)
with netCDF4.Dataset(p) as ds:
    expect['renamed.nc']['__names__'] = {'vars': list(ds.variables), 'dims': list(ds.dimensions), 't_attrs': ds['t'].ncattrs(),
                                         't_u': ds['t'].getncattr('u')}

# 5. CF packing and masking, classic (CDF-1 / CDF-5 for unsigned types) and NetCDF-4.
def packed(p, fmt):
    with netCDF4.Dataset(p, 'w', format=fmt) as ds:
        ds.createDimension('n', 8)
        def var(name, dtype, values, fill=None, **attrs):
            v = ds.createVariable(name, dtype, ('n',), fill_value=fill)
            v.set_auto_maskandscale(False)
            for k, a in attrs.items(): v.setncattr(k, a)
            v[:] = np.array(values, dtype=dtype)
        var('s_scaled', 'i2', [-999, 0, 1, 100, -100, 32767, -32768, 5], fill=np.int16(-999),
            scale_factor=np.float32(0.01), add_offset=np.float32(273.15))
        var('b_unsigned', 'i1', [-1, 0, 1, 127, -128, -2, 64, -64], fill=np.int8(-1),
            _Unsigned='true', scale_factor=np.float32(0.5))
        # GOES-16 L1b radiances: unsigned shorts, fill 1023, valid range [0, 1022], float scale.
        var('rad', 'i2', [1023, 1022, 0, -25536, 500, -1, 1021, 7], fill=np.int16(1023), _Unsigned='true',
            valid_range=np.array([0, 1022], dtype='i2'), scale_factor=np.float32(0.1571), add_offset=np.float32(-1.3))
        var('f_default', 'f4', [1.0, 9.969209968386869e36, -3.5, 9.969209968386869e36, 0, 2, 3, 4])
        var('d_valid', 'f8', [-11.0, -10.0, 0.5, 10.0, 10.5, 3, -3, 99], valid_min=-10.0, valid_max=10.0)
        var('i_missing', 'i4', [-1, -2, 0, 5, -3, 2147483647, -2147483647, 9], missing_value=np.array([-1, -2], dtype='i4'))
        var('s_unsigned_only', 'i2', [-1, 0, 1, -32768, 32767, -2, 3, 4], _Unsigned='true')
        var('f_unsafe', 'f4', [0.05, 0.1, 0.2, 1, 2, 3, 4, 5], valid_max=0.1)
        var('s_range_scaled', 'i2', [-5, 0, 50, 100, 101, -6, 7, 8], valid_range=np.array([-5, 100], dtype='i2'),
            scale_factor=2.5, add_offset=-1.0)
        if fmt != 'NETCDF3_CLASSIC':
            var('u_byte', 'u1', [255, 0, 1, 2, 3, 4, 5, 254])
            var('u_short_fill', 'u2', [65535, 0, 7, 65534, 1, 2, 3, 4])
            # 64-bit fills beyond 2^53: 2^60 + 1 is masked, its double neighbour 2^60 is not.
            var('i64_fill', 'i8', [2**60 + 1, 2**60, -5, 7, 2**60 + 1, 0, 1, 2], fill=np.int64(2**60 + 1))
for fmt, name in (('NETCDF3_CLASSIC', 'packed3.nc'), ('NETCDF3_64BIT_DATA', 'packed5.nc'), ('NETCDF4', 'packed4.nc')):
    p = os.path.join(out, name)
    packed(p, fmt)
    expect[name] = dump(p)

print(json.dumps(expect))
