# Seeded random HDF5 datasets written by h5py (+ hdf5plugin; zstd and blosc chunks compressed by
# python-zstandard / numcodecs and written raw): shapes of rank 1-4 x every h5py numeric dtype
# (bool, int8, float16, big-endian) x contiguous / chunked (edge-clipped) x codecs. Writes
# argv[1]/prop.h5 and prints the source arrays (little-endian base64) as JSON.
import base64, json, os, sys
import numpy as np
from wire import arr
import h5py, hdf5plugin, numcodecs, zstandard

rng = np.random.default_rng(int(sys.argv[2]) if len(sys.argv) > 2 else 20240611)
DTYPES = ['bool', 'i1', 'u1', '<i2', '>i2', '<u2', '>i4', '<u4', '<i8', '>u8', '<f2', '>f2', '<f4', '>f4', '<f8', '>f8']
CODECS = ['none', 'gzip', 'lzf', 'lz4', 'bitshuffle', 'bzip2', 'zstd', 'blosc']

def values(dt, shape):
    dt = np.dtype(dt)
    if dt.kind == 'b': return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind in 'iu':
        info = np.iinfo(dt)
        v = rng.integers(info.min, info.max, size=shape, dtype=dt.newbyteorder('='), endpoint=True)
        return v.astype(dt)
    v = rng.standard_normal(shape) * 1000
    flat = v.reshape(-1)
    if flat.size > 2: flat[0] = np.nan; flat[1] = np.inf
    return v.astype(dt)

out = {}
with h5py.File(os.path.join(sys.argv[1], 'prop.h5'), 'w') as f:
    for i in range(40):
        rank = int(rng.integers(1, 5))
        shape = tuple(int(rng.integers(1, [40, 12, 7, 5][rank - 1] + 1)) for _ in range(rank))
        dt = DTYPES[i % len(DTYPES)] if i < len(DTYPES) else str(rng.choice(DTYPES))
        codec = CODECS[i % len(CODECS)]
        chunked = codec != 'none' or rng.random() < 0.5
        chunks = tuple(int(rng.integers(1, s + 1)) for s in shape) if chunked else None
        data = values(dt, shape)
        name = f'case{i:02d}_{codec}_{np.dtype(dt).str.replace("<", "le").replace(">", "be").replace("|", "")}_r{rank}'
        kw = {}
        if codec == 'gzip': kw = dict(compression='gzip', shuffle=True)
        elif codec == 'lzf': kw = dict(compression='lzf')
        elif codec == 'lz4': kw = hdf5plugin.LZ4()
        elif codec == 'bitshuffle': kw = hdf5plugin.Bitshuffle(cname='lz4')
        elif codec == 'bzip2': kw = hdf5plugin.BZip2()
        if codec in ('zstd', 'blosc'):
            size = np.dtype(dt).itemsize
            if codec == 'zstd':
                opts, enc = (3,), lambda b: zstandard.ZstdCompressor().compress(b)
            else:
                cname = str(rng.choice(['lz4', 'zstd', 'blosclz']))
                code = {'blosclz': 0, 'lz4': 1, 'zstd': 5}[cname]
                shuffle = int(rng.integers(0, 3))
                opts = (2, 2, size, size * int(np.prod(chunks)), 5, shuffle, code)
                c = numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuffle, blocksize=0)
                enc = c.encode
            d = f.create_dataset(name, shape=shape, dtype=dt, chunks=chunks, compression=32015 if codec == 'zstd' else 32001,
                                 compression_opts=opts, allow_unknown_filter=True)
            for idx in np.ndindex(*[-(-s // c) for s, c in zip(shape, chunks)]):
                sl = tuple(slice(j * c, min((j + 1) * c, s)) for j, c, s in zip(idx, chunks, shape))
                blk = np.zeros(chunks, dtype=dt)
                blk[tuple(slice(0, x.stop - x.start) for x in sl)] = data[sl]
                d.id.write_direct_chunk(tuple(x.start for x in sl), enc(np.ascontiguousarray(blk).tobytes()))
        else:
            d = f.create_dataset(name, data=data, chunks=chunks, **kw)
            back = d[()]
            assert np.array_equal(back, data, equal_nan=True) or back.dtype.kind != 'f' and np.array_equal(back, data)
        out[name] = {**arr(data), 'chunks': list(chunks) if chunks else None, 'codec': codec}
print(json.dumps(out))
