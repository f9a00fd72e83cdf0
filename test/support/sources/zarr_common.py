# Shared by the Zarr source generators: what numpy / zarr-python read, in the form the tests
# compare against (C-order little-endian bytes of the type the .tet SDK hands back), and a
# hand-built Zarr v3 array writer (the values come from numpy, the layout follows the v3 spec).
import base64
import json
import math
import os
import struct

import numpy as np
import numcodecs

# Source element type -> the typed array the SDK returns after `tet convert` (bool -> u8,
# int8 -> i16, float16 widened to float32 by file.read()).
def expected(a):
    a = np.asarray(a)
    if a.dtype == np.bool_:
        a = a.astype('u1')
    elif a.dtype.kind == 'i' and a.dtype.itemsize == 1:
        a = a.astype('<i2')
    elif a.dtype.kind == 'f' and a.dtype.itemsize == 2:
        a = a.astype('<f4')
    a = np.ascontiguousarray(a.astype(a.dtype.newbyteorder('<')))
    return {'dtype': a.dtype.str, 'shape': list(a.shape), 'b64': base64.b64encode(a.tobytes()).decode()}


def safe(v):
    """JSON value with non-finite floats spelled as the converter spells them."""
    if isinstance(v, float) and not math.isfinite(v):
        return 'NaN' if v != v else ('Infinity' if v > 0 else '-Infinity')
    if isinstance(v, list):
        return [safe(x) for x in v]
    if isinstance(v, dict):
        return {k: safe(x) for k, x in v.items()}
    return v


def array_attrs(attrs):
    return {k: safe(v) for k, v in dict(attrs).items() if k != '_ARRAY_DIMENSIONS'}


V3_TYPES = {'bool': '|b1', 'int8': '|i1', 'int16': 'i2', 'int32': 'i4', 'int64': 'i8', 'uint8': '|u1',
            'uint16': 'u2', 'uint32': 'u4', 'uint64': 'u8', 'float16': 'f2', 'float32': 'f4', 'float64': 'f8'}


def v3_name(dt):
    dt = np.dtype(dt)
    for name, code in V3_TYPES.items():
        if np.dtype(code).kind == dt.kind and np.dtype(code).itemsize == dt.itemsize:
            return name
    raise ValueError(dt)


def encode_bytes(block, endian, compressor):
    """Chunk bytes for a v3 `bytes` (+ bytes-to-bytes codec) pipeline."""
    dt = block.dtype.newbyteorder('>' if endian == 'big' else '<') if block.dtype.itemsize > 1 else block.dtype
    raw = np.ascontiguousarray(block.astype(dt))
    if compressor is None:
        return raw.tobytes()
    name, conf = compressor
    if name == 'blosc':
        shuffle = {'noshuffle': 0, 'shuffle': 1, 'bitshuffle': 2}[conf.get('shuffle', 'shuffle')]
        return numcodecs.Blosc(cname=conf.get('cname', 'lz4'), clevel=conf.get('clevel', 5), shuffle=shuffle).encode(raw)
    if name == 'zstd':
        return numcodecs.Zstd(level=conf.get('level', 1)).encode(raw.tobytes())
    if name == 'gzip':
        return numcodecs.GZip(level=conf.get('level', 1)).encode(raw.tobytes())
    raise ValueError(name)


def codec_json(order, endian, compressor, itemsize):
    codecs = []
    if order is not None:
        codecs.append({'name': 'transpose', 'configuration': {'order': list(order)}})
    codecs.append({'name': 'bytes', 'configuration': {'endian': endian}})
    if compressor is not None:
        name, conf = compressor
        conf = dict(conf)
        if name == 'blosc':
            conf.setdefault('cname', 'lz4'); conf.setdefault('clevel', 5); conf.setdefault('shuffle', 'shuffle')
            conf['typesize'] = itemsize; conf['blocksize'] = 0
        if name == 'zstd':
            conf.setdefault('level', 1); conf['checksum'] = False
        if name == 'gzip':
            conf.setdefault('level', 1)
        codecs.append({'name': name, 'configuration': conf})
    return codecs


def padded(data, idx, chunk, fill):
    """Chunk `idx` of `data`, padded with `fill` to the full chunk shape (v3 edge chunks)."""
    sl = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunk, data.shape))
    block = np.full(chunk, fill, dtype=data.dtype)
    block[tuple(slice(0, s.stop - s.start) for s in sl)] = data[sl]
    return block


def fill_json(fill, dt):
    if np.dtype(dt).kind == 'f':
        f = float(fill)
        return 'NaN' if f != f else ('Infinity' if f == math.inf else '-Infinity' if f == -math.inf else f)
    if np.dtype(dt).kind == 'b':
        return bool(fill)
    return int(fill)


def write_v3_array(path, data, chunk, order=None, endian='little', compressor=None, fill=0, attrs=None,
                   dims=None, skip=(), fill_token=None, sharding=None):
    """A v3 array directory. `order`: transpose permutation (None: no transpose codec); `skip`:
    chunk indices not written; `fill_token`: raw JSON text for fill_value (e.g. bare NaN);
    `sharding`: inner chunk shape (chunk is then the shard shape; inner codecs as given)."""
    os.makedirs(path, exist_ok=True)
    data = np.asarray(data)
    inner_codecs = codec_json(order, endian, compressor, data.dtype.itemsize)
    if sharding is not None:
        codecs = [{'name': 'sharding_indexed', 'configuration': {
            'chunk_shape': list(sharding), 'codecs': inner_codecs,
            'index_codecs': [{'name': 'bytes', 'configuration': {'endian': 'little'}}], 'index_location': 'end'}}]
    else:
        codecs = inner_codecs
    meta = {'zarr_format': 3, 'node_type': 'array', 'shape': list(data.shape), 'data_type': v3_name(data.dtype),
            'chunk_grid': {'name': 'regular', 'configuration': {'chunk_shape': list(chunk)}},
            'chunk_key_encoding': {'name': 'default', 'configuration': {'separator': '/'}},
            'fill_value': '__FILL__', 'codecs': codecs, 'attributes': attrs or {}}
    if dims is not None:
        meta['dimension_names'] = dims
    text = json.dumps(meta).replace('"__FILL__"', fill_token if fill_token else json.dumps(fill_json(fill, data.dtype)))
    with open(os.path.join(path, 'zarr.json'), 'w') as f:
        f.write(text)

    def encode_chunk(block):
        if order is not None:
            block = np.transpose(block, order)
        return encode_bytes(block, endian, compressor)

    grid = [-(-s // c) for s, c in zip(data.shape, chunk)]
    for idx in np.ndindex(*grid):
        if tuple(idx) in skip:
            continue
        block = padded(data, idx, chunk, fill)
        if sharding is None:
            payload = encode_chunk(block)
        else:
            inner_grid = [c // i for c, i in zip(chunk, sharding)]
            parts, index, offset = [], [], 0
            for j in np.ndindex(*inner_grid):
                sub = block[tuple(slice(a * i, (a + 1) * i) for a, i in zip(j, sharding))]
                # An inner chunk of fill values only is left out (offset = nbytes = 2^64 - 1).
                if np.array_equal(sub, np.full(sub.shape, fill, dtype=sub.dtype), equal_nan=sub.dtype.kind == 'f'):
                    index.append((2**64 - 1, 2**64 - 1))
                    continue
                enc = encode_chunk(sub)
                parts.append(enc)
                index.append((offset, len(enc)))
                offset += len(enc)
            payload = b''.join(parts) + b''.join(struct.pack('<QQ', o, n) for o, n in index)
        key = os.path.join(path, 'c', *[str(i) for i in idx])
        os.makedirs(os.path.dirname(key), exist_ok=True)
        with open(key, 'wb') as f:
            f.write(payload)


def write_v3_group(path, attrs=None, raw=None):
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, 'zarr.json'), 'w') as f:
        f.write(raw if raw is not None else json.dumps({'zarr_format': 3, 'node_type': 'group', 'attributes': attrs or {}}))
