# numpy contender for bench/fresh.mjs: one selection of a .npy on a memmap in a fresh process, as a
# user writes it (f64 accumulation). Prints one JSON line: in_process_ms (np.load → result; the
# numpy import is outside it, as the SDK's require is outside tetration's), the answer, CPU time.
# usage: python3 numpy_fresh.py NPY OP ROW0 ROW1 STEP     OP: sum | mean | minmax
import json, os, sys, time
import numpy as np
npy, op, r0, r1, step = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
t0 = time.perf_counter()
a = np.load(npy, mmap_mode='r')
s = a[r0:r1:step]
if op == 'sum':
    answer = float(s.sum(dtype=np.float64))
elif op == 'mean':
    answer = float(s.mean(dtype=np.float64))
else:
    answer = [float(s.min()), float(s.max())]
t1 = time.perf_counter()
t = os.times()
print(json.dumps({'in_process_ms': (t1 - t0) * 1000, 'answer': answer, 'cpu_ms': (t.user + t.system) * 1000}))
