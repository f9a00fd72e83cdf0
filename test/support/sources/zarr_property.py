# Seeded random Zarr arrays for test/convert-real-zarr-property.test.ts: one v2 group written by
# zarr-python (random rank 1-4 shape x dtype (big-endian too) x chunking with clipped edges x
# order C/F x codec) and one hand-built v3 group (random transpose permutations, endianness and
# codecs). Prints a JSON manifest: per array its description and what zarr-python / numpy read
# (C order), or the skip expected for codecs zarrita does not decode.
import json
import os
import sys

import numpy as np
import numcodecs
import zarr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zarr_common import expected, write_v3_array, write_v3_group  # noqa: E402

out_dir, seed = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(seed)
DTYPES = ['|b1', '|i1', '<i2', '>i2', '<i4', '>i4', '<i8', '>i8', '|u1', '<u2', '>u2', '<u4', '<u8', '>u8',
          '<f2', '>f2', '<f4', '>f4', '<f8', '>f8']
CODECS = ['none', 'zlib', 'gzip', 'blosc-lz4-shuffle', 'blosc-zstd-bitshuffle', 'blosc-lz4-noshuffle', 'zstd', 'lz4', 'bz2']


def compressor(name):
    if name == 'none':
        return None
    if name.startswith('blosc'):
        _, cname, shuffle = name.split('-')
        return numcodecs.Blosc(cname, int(rng.integers(1, 6)), {'noshuffle': 0, 'shuffle': 1, 'bitshuffle': 2}[shuffle])
    return {'zlib': numcodecs.Zlib(1), 'gzip': numcodecs.GZip(1), 'zstd': numcodecs.Zstd(1),
            'lz4': numcodecs.LZ4(), 'bz2': numcodecs.BZ2(1)}[name]


def random_values(dt, shape):
    dt = np.dtype(dt).newbyteorder('=')
    n = int(np.prod(shape))
    if dt.kind == 'b':
        a = rng.integers(0, 2, n).astype(bool)
    elif dt.kind == 'f':
        a = (rng.standard_normal(n) * 10 ** rng.integers(0, 4)).astype(dt)
        specials = np.array([np.nan, np.inf, -np.inf, -0.0], dtype=dt)
        pick = rng.integers(0, n, min(n, 4))
        a[pick] = specials[:len(pick)]
    else:
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    return a.reshape(shape)


def random_shape():
    rank = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, {1: 40, 2: 14, 3: 8, 4: 6}[rank])) for _ in range(rank)]
    chunks = [int(rng.integers(1, s + 2)) for s in shape]  # chunk > axis is allowed
    return shape, chunks


manifest = {'v2': {}, 'v3': {}}
g = zarr.open_group(os.path.join(out_dir, 'prop2.zarr'), mode='w')
for i in range(40):
    dt = DTYPES[i % len(DTYPES)] if i < len(DTYPES) else str(rng.choice(DTYPES))
    codec = CODECS[i % len(CODECS)]
    order = 'F' if rng.random() < 0.5 else 'C'
    shape, chunks = random_shape()
    name = f'c{i:02d}'
    a = g.create_dataset(name, shape=shape, chunks=chunks, dtype=dt, order=order, compressor=compressor(codec),
                         fill_value=0)
    a[...] = random_values(dt, shape)
    desc = f'{dt} shape {shape} chunks {chunks} order {order} codec {codec}'
    if codec == 'bz2':
        manifest['v2'][name] = {'desc': desc, 'skip': 'TET_CONVERT_UNSUPPORTED_FILTER'}
    else:
        manifest['v2'][name] = {'desc': desc, 'want': expected(zarr.open_array(os.path.join(out_dir, 'prop2.zarr', name), mode='r')[...])}

V3_CODECS = [None, ('gzip', {}), ('zstd', {}), ('blosc', {'cname': 'lz4', 'shuffle': 'shuffle'}),
             ('blosc', {'cname': 'zstd', 'shuffle': 'bitshuffle'})]
p3 = os.path.join(out_dir, 'prop3.zarr')
write_v3_group(p3)
for i in range(14):
    dt = str(rng.choice(DTYPES)).lstrip('<>|')
    shape, chunks = random_shape()
    chunks = [min(c, s) for c, s in zip(chunks, shape)]
    order = [int(x) for x in rng.permutation(len(shape))] if i % 4 else None
    endian = 'big' if rng.random() < 0.3 else 'little'
    comp = V3_CODECS[i % len(V3_CODECS)]
    data = random_values(dt, shape)
    name = f'd{i:02d}'
    write_v3_array(os.path.join(p3, name), data, chunks, order=order, endian=endian, compressor=comp)
    manifest['v3'][name] = {'desc': f'{dt} shape {shape} chunks {chunks} transpose {order} {endian} {comp}', 'want': expected(data)}

json.dump(manifest, sys.stdout)
