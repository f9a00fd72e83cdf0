# Writes the sources of test/integration/convert-axis-tables.test.ts into argv[1] (NetCDF-4 and
# NetCDF classic with netCDF4-python, HDF5 with h5py dimension scales and string datasets, Zarr v2
# with zarr-python and xarray's _ARRAY_DIMENSIONS) and prints, as JSON, what each axis table must
# hold, computed here and not by tetration: numbers as netCDF4-python's mask-and-scale reads them
# (masked -> None), CF times as cftime.num2date instants (µs since the epoch; ns ones with numpy
# datetime64 arithmetic), strings from the bytes numpy / h5py / zarr hold (char rows joined,
# trailing NULs stripped, UTF-8), and the tensors as numpy holds them.
import datetime, json, os, sys
import numpy as np
import cftime, h5py, netCDF4, zarr
from numcodecs import VLenUTF8

out = sys.argv[1]
expect = {}
EPOCH = datetime.datetime(1970, 1, 1)

def py(x):
    if isinstance(x, (np.floating, float)):
        x = float(x)
        return x if np.isfinite(x) else str(x)
    if isinstance(x, (np.integer, int)): return int(x)
    if isinstance(x, bytes): return x.decode()
    return x

def masked_list(a):
    a = np.ma.asarray(a)
    m = np.ma.getmaskarray(a)
    return [None if mm else py(x) for mm, x in zip(m.ravel(), np.asarray(a.data).ravel())]

def cf_us(values, units, calendar='standard'):
    """µs since 1970-01-01 UTC of CF times (None where masked), by cftime."""
    a = np.ma.asarray(values)
    m = np.ma.getmaskarray(a)
    res = []
    for mm, x in zip(m, np.asarray(a.data, dtype='f8')):
        if mm: res.append(None); continue
        d = cftime.num2date(x, units, calendar=calendar, only_use_cftime_datetimes=False, only_use_python_datetimes=True)
        res.append((d - EPOCH) // datetime.timedelta(microseconds=1))
    return res

def chars(names, n):
    """A (len(names), n) char array of the UTF-8 names, NUL-padded."""
    return np.array([x.encode() for x in names], 'S%d' % n).view('S1').reshape(len(names), n)

def unchars(a):
    """The strings of a char array: each row's bytes, trailing NULs stripped, UTF-8 decoded."""
    return [b''.join(row).rstrip(b'\0').decode() for row in np.asarray(a)]

def tensor(a):
    return [py(x) for x in np.asarray(a).ravel()]

# Station names: ASCII, empty, non-ASCII (UTF-8 in char arrays), one at the full char length.
NAMES = ['Berlin', '', 'Zürich', 'Montréal', 'Ushuaia!']
CODES = ['DE-BER', 'XX', 'CH-ZRH', 'CA-MTL', 'AR-USH']
ELEV = [34, -999, 408, 36, 57]                    # -999: the fill
LAT = [52.52, -1.0, 47.3769, 45.5017, -54.8019]
LON = [13.405, 0.0, 8.5417, -73.5673, -68.303]
TIME_H = [0.0, 1.0, 1.5, 24.0, 36.25, 8760.5]     # hours since 2020-01-01 00:00:00
STATION_IDS = [101, 102, 103, 104, 105]
rng = np.random.default_rng(7)
TEMP = rng.normal(10, 5, size=(len(TIME_H), len(NAMES))).astype('f4')

# ---- 1. NetCDF-4 ------------------------------------------------------------------------------
p = os.path.join(out, 'weather4.nc')
with netCDF4.Dataset(p, 'w', format='NETCDF4') as ds:
    ds.createDimension('time', None)
    ds.createDimension('station', len(NAMES))
    ds.createDimension('name_strlen', 10)
    t = ds.createVariable('time', 'f8', ('time',), fill_value=-9999.0)
    t.units = 'hours since 2020-01-01 00:00:00'; t.calendar = 'standard'
    t[:] = np.ma.masked_array(TIME_H, mask=[0, 0, 0, 0, 1, 0])
    st = ds.createVariable('station', 'i4', ('station',)); st[:] = STATION_IDS
    el = ds.createVariable('elevation', 'i2', ('station',), fill_value=-999); el.units = 'm'
    el[:] = np.ma.masked_equal(ELEV, -999)
    la = ds.createVariable('lat', 'f4', ('station',)); la.missing_value = np.float32(-1.0); la[:] = np.array(LAT, 'f4')
    lo = ds.createVariable('lon', 'f8', ('station',)); lo[:] = LON
    nm = ds.createVariable('name', 'S1', ('station', 'name_strlen'))
    nm[:] = chars(NAMES, 10)
    cd = ds.createVariable('code', str, ('station',))
    for i, c in enumerate(CODES): cd[i] = c
    # Packed: int16 with scale/offset -> float column, as the dataset decodes.
    pr = ds.createVariable('pressure', 'i2', ('station',)); pr.scale_factor = 0.1; pr.add_offset = 1000.0
    pr[:] = np.array([1013.2, 1000.0, 955.5, 1010.1, 990.0])
    # Times along the same dimension in other CF forms.
    vt = ds.createVariable('valid_time', 'f8', ('time',)); vt.units = 'seconds since 2020-01-01 00:00:00 +01:00'
    vt[:] = [0.0, 0.25, 3600.0, 86400.5, 1e6, 2.0 ** -3]
    ft = ds.createVariable('fine_time', 'f8', ('time',)); ft.units = 'microseconds since 2020-01-01'
    ft[:] = [0.5, 1.25, 2.0, 1e6 + 0.375, 7.0, 0.0]
    dd = ds.createVariable('day', 'i4', ('time',)); dd.units = 'days since 1970-01-01'; dd[:] = [18262, 18263, 18264, 18265, 18266, 18628]
    mt = ds.createVariable('model_time', 'f8', ('time',)); mt.units = 'days since 2000-01-01'; mt.calendar = 'noleap'
    mt[:] = [0, 1, 2, 3, 4, 365]
    tmp = ds.createVariable('temperature', 'f4', ('time', 'station')); tmp.units = 'degC'; tmp[:] = TEMP
    ds.createVariable('aux2d', 'f4', ('station', 'time'))[:] = TEMP.T  # 2-D: no column
    # A group with its own dimension (table 'sub/level') using the root's station dimension too.
    sub = ds.createGroup('sub')
    sub.createDimension('level', 3)
    lv = sub.createVariable('level', 'f4', ('level',)); lv.units = 'hPa'; lv[:] = [1000, 850, 500]
    sub.createVariable('wind', 'f4', ('level', 'station'))[:] = np.arange(15, dtype='f4').reshape(3, 5)
with netCDF4.Dataset(p) as ds:
    v = ds.variables
    ns0 = np.datetime64('2020-01-01T00:00:00', 'ns')
    expect['weather4.nc'] = {
        'temperature': tensor(v['temperature'][:]),
        'tables': {
            'time': {'axis': ['temperature', 'time'], 'rows': 6, 'columns': {
                'time': {'kind': 'timestamp', 'unit': 'us', 'values': cf_us(v['time'][:], v['time'].units)},
                'valid_time': {'kind': 'timestamp', 'unit': 'us', 'values': cf_us(v['valid_time'][:], v['valid_time'].units)},
                # 0.5 µs etc.: whole ns, not whole µs (cftime has µs resolution: numpy here).
                'fine_time': {'kind': 'timestamp', 'unit': 'ns', 'values': [
                    int((ns0 + np.timedelta64(int(x * 1000), 'ns') - np.datetime64(0, 'ns')).astype('i8')) for x in v['fine_time'][:]]},
                'day': {'kind': 'timestamp', 'unit': 'us', 'values': cf_us(v['day'][:], v['day'].units)},
                'model_time': {'kind': 'float', 'values': masked_list(v['model_time'][:])},
            }},
            'station': {'axis': ['temperature', 'station'], 'rows': 5, 'columns': {
                'station': {'kind': 'int', 'values': masked_list(v['station'][:])},
                'elevation': {'kind': 'int', 'values': masked_list(v['elevation'][:])},
                'lat': {'kind': 'float', 'values': masked_list(v['lat'][:].astype('f8'))},
                'lon': {'kind': 'float', 'values': masked_list(v['lon'][:])},
                'name': {'kind': 'str', 'values': unchars(np.ma.getdata(v['name'][:]))},
                'code': {'kind': 'str', 'values': list(v['code'][:])},
                'pressure': {'kind': 'float', 'values': masked_list(v['pressure'][:])},
            }},
            'sub/level': {'axis': ['sub/wind', 'level'], 'rows': 3, 'columns': {
                'level': {'kind': 'float', 'values': masked_list(ds['sub'].variables['level'][:].astype('f8'))}}},
        },
    }

# ---- 2. NetCDF classic (CDF-1): char array and a record time --------------------------------
p = os.path.join(out, 'classic.nc')
with netCDF4.Dataset(p, 'w', format='NETCDF3_CLASSIC') as ds:
    ds.createDimension('time', None)
    ds.createDimension('station', len(NAMES))
    ds.createDimension('strlen', 10)
    t = ds.createVariable('time', 'i4', ('time',)); t.units = 'days since 1970-01-01'; t[:] = [0, 1, 19000, -1, 365, 400]
    nm = ds.createVariable('name', 'S1', ('station', 'strlen'))
    nm[:] = chars(NAMES, 10)
    el = ds.createVariable('elevation', 'i2', ('station',), fill_value=-999); el[:] = np.ma.masked_equal(ELEV, -999)
    ds.createVariable('temperature', 'f4', ('time', 'station'))[:] = TEMP
with netCDF4.Dataset(p) as ds:
    v = ds.variables
    expect['classic.nc'] = {
        'temperature': tensor(v['temperature'][:]),
        'tables': {
            'time': {'axis': ['temperature', 'time'], 'rows': 6, 'columns': {
                'time': {'kind': 'timestamp', 'unit': 'us', 'values': cf_us(v['time'][:], v['time'].units)}}},
            'station': {'axis': ['temperature', 'station'], 'rows': 5, 'columns': {
                'name': {'kind': 'str', 'values': unchars(np.ma.getdata(v['name'][:]))},
                'elevation': {'kind': 'int', 'values': masked_list(v['elevation'][:])}}},
        },
    }

# ---- 3. HDF5 (h5py): dimension scales, fixed-length and variable-length strings --------------
p = os.path.join(out, 'scales.h5')
with h5py.File(p, 'w') as f:
    secs = np.array([0.0, 30.0, 60.5, 3600.0, 86400.0, 1.0e9])
    t = f.create_dataset('time', data=secs); t.attrs['units'] = 'seconds since 1970-01-01T00:00:00Z'
    t.make_scale('time')
    s = f.create_dataset('station', data=np.array(STATION_IDS, 'i8')); s.make_scale('station')
    f.create_dataset('fixed_name', data=np.array([n.encode() for n in NAMES], 'S10'))
    f.create_dataset('vlen_code', data=CODES, dtype=h5py.string_dtype())
    f.create_dataset('big', data=np.array([1, 2, 2 ** 63 + 5, 4, 5], 'u8'))   # beyond i64: no column
    f.create_dataset('small', data=np.array([1, 2, 3, 4, 5], 'u8'))
    d = f.create_dataset('temperature', data=TEMP)
    d.dims[0].attach_scale(t); d.dims[1].attach_scale(s)
    for name in ('fixed_name', 'vlen_code', 'big', 'small'): f[name].dims[0].attach_scale(s)
with h5py.File(p, 'r') as f:
    expect['scales.h5'] = {
        'temperature': tensor(f['temperature'][()]),
        'tables': {
            'time': {'axis': ['temperature', 'time'], 'rows': 6, 'columns': {
                'time': {'kind': 'timestamp', 'unit': 'us', 'values': cf_us(f['time'][()], f['time'].attrs['units'])}}},
            'station': {'axis': ['temperature', 'station'], 'rows': 5, 'columns': {
                # The coordinate, then h5py's (name-ordered) link order.
                'station': {'kind': 'int', 'values': [int(x) for x in f['station'][()]]},
                'fixed_name': {'kind': 'str', 'values': [x.decode() for x in f['fixed_name'][()]]},
                'small': {'kind': 'int', 'values': [int(x) for x in f['small'][()]]},
                'vlen_code': {'kind': 'str', 'values': [x.decode() if isinstance(x, bytes) else x for x in f['vlen_code'][()]]}}},
        },
    }

# ---- 4. Zarr v2 (zarr-python, xarray's _ARRAY_DIMENSIONS) ------------------------------------
p = os.path.join(out, 'weather.zarr')
g = zarr.open_group(p, mode='w')
def arr(name, data, dims, **kw):
    a = g.create_dataset(name, data=data, chunks=(2,) + tuple(np.shape(data)[1:]), **kw)
    a.attrs['_ARRAY_DIMENSIONS'] = dims
    return a
t = arr('time', np.array([0, 1, 2, 3, 4, 5], 'i8'), ['time']); t.attrs['units'] = 'days since 2000-01-01'
t.attrs['calendar'] = 'proleptic_gregorian'
arr('station', np.array(STATION_IDS, 'i4'), ['station'])
e = arr('elevation', np.array(ELEV, 'i2'), ['station']); e.attrs['missing_value'] = -999
arr('lat', np.array(LAT, 'f8'), ['station'])
arr('name', np.array(NAMES, '<U10'), ['station'])
arr('name_bytes', np.array([n.encode() for n in NAMES], 'S10'), ['station'])
arr('code', np.array(CODES, dtype=object), ['station'], dtype=object, object_codec=VLenUTF8())
arr('temperature', TEMP, ['time', 'station'])
zt = zarr.open_group(p, mode='r')
expect['weather.zarr'] = {
    'temperature': tensor(zt['temperature'][...]),
    'tables': {
        'time': {'axis': ['temperature', 'time'], 'rows': 6, 'columns': {
            'time': {'kind': 'timestamp', 'unit': 'us', 'values': cf_us(zt['time'][...], 'days since 2000-01-01', 'proleptic_gregorian')}}},
        # The coordinate, then the store's (sorted) order.
        'station': {'axis': ['temperature', 'station'], 'rows': 5, 'columns': {
            'station': {'kind': 'int', 'values': [int(x) for x in zt['station'][...]]},
            'code': {'kind': 'str', 'values': [str(x) for x in zt['code'][...]]},
            'elevation': {'kind': 'int', 'values': [None if x == -999 else int(x) for x in zt['elevation'][...]]},
            'lat': {'kind': 'float', 'values': [float(x) for x in zt['lat'][...]]},
            'name': {'kind': 'str', 'values': [str(x) for x in zt['name'][...]]},
            'name_bytes': {'kind': 'str', 'values': [x.decode() for x in zt['name_bytes'][...]]}}},
    },
}

def exact(x):
    """Integers beyond 2^53 as decimal text (a JSON number would round in JavaScript)."""
    if isinstance(x, dict): return {k: exact(v) for k, v in x.items()}
    if isinstance(x, list): return [exact(v) for v in x]
    if isinstance(x, int) and not isinstance(x, bool) and abs(x) > 2 ** 53: return str(x)
    return x

print(json.dumps(exact(expect)))
