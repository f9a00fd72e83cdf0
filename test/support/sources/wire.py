# Shared by the HDF5 source generators: an array as the tests receive it (JSON: dtype string,
# shape, base64 of C-order little-endian bytes), in the type the .tet SDK hands back after
# `tet convert` (bool -> u8, int8 -> i16).
import base64

import numpy as np


def arr(a):
    a = np.ascontiguousarray(a)
    if a.dtype == np.bool_: a = a.astype('u1')
    if a.dtype == np.int8: a = a.astype('<i2')
    a = a.astype(a.dtype.newbyteorder('<'))
    return {'dtype': a.dtype.str, 'shape': list(a.shape), 'b64': base64.b64encode(a.tobytes()).decode()}
