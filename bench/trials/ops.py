"""Benchmark operations in numpy, shared by the reference script and the numpy trial.

`compute(x, case, exact)` returns the case's result for the array `x` (a memmap):
exact=True is the reference (blockwise, f64 accumulation, two-pass variance, median/quantile
from np.partition with linear interpolation in f64); exact=False is what a numpy user would
write (np.sum(x, dtype=np.float64), np.median, np.quantile, ...).
"""
import numpy as np

BLOCK_ROWS = 512


def select(x, case):
    sel = case.get("sel")
    if not sel:
        return x
    return x[tuple(slice(a, b, s) for a, b, s in sel)]


def blocks(x):
    for r in range(0, x.shape[0], BLOCK_ROWS):
        yield np.asarray(x[r:r + BLOCK_ROWS], dtype=np.float64)


def exact_scalar(x, op):
    n = x.size
    if op in ("sum", "mean", "var", "std"):
        s = 0.0
        for b in blocks(x):
            s += float(b.sum())
        if op == "sum":
            return s
        mean = s / n
        if op == "mean":
            return mean
        m2 = 0.0
        for b in blocks(x):
            d = b - mean
            m2 += float(np.dot(d.ravel(), d.ravel()))
        var = m2 / n
        return var if op == "var" else float(np.sqrt(var))
    if op == "min":
        return float(min(float(b.min()) for b in blocks(x)))
    if op == "max":
        return float(max(float(b.max()) for b in blocks(x)))
    raise ValueError(op)


def order_stat(x, q):
    flat = np.array(x, copy=True).ravel()
    h = (flat.size - 1) * q
    lo = int(np.floor(h))
    hi = min(lo + 1, flat.size - 1)
    flat.partition([lo, hi] if hi != lo else [lo])
    a, b = float(flat[lo]), float(flat[hi])
    return a + (h - lo) * (b - a)


def compute(x, case, exact):
    op = case["op"]
    x = select(x, case)
    if op == "median":
        return order_stat(x, 0.5) if exact else float(np.median(x))
    if op == "quantile99":
        return order_stat(x, 0.99) if exact else float(np.quantile(x, 0.99))
    if op == "arg_max":
        return int(np.argmax(x))
    if op == "minmax":  # a numpy user: two passes
        if exact:
            return np.array([exact_scalar(x, "min"), exact_scalar(x, "max")], dtype=np.float64)
        return np.array([float(np.min(x)), float(np.max(x))], dtype=np.float64)
    if op == "mean_axis0":
        return np.asarray(x.mean(axis=0, dtype=np.float64))
    if op == "mean_axis1":
        return np.asarray(x.mean(axis=1, dtype=np.float64))
    if exact:
        return exact_scalar(x, op)
    if op == "sum":
        return float(np.sum(x, dtype=np.float64))
    if op == "mean":
        return float(np.mean(x, dtype=np.float64))
    if op == "var":
        return float(np.var(x, dtype=np.float64))
    if op == "std":
        return float(np.std(x, dtype=np.float64))
    if op == "min":
        return float(np.min(x))
    if op == "max":
        return float(np.max(x))
    raise ValueError(op)
