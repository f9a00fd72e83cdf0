"""numpy f64 reference results for every benchmark case (run once by generate.mjs).

usage: reference.py DATA_DIR CASES_JSON  ->  DATA_DIR/refs.json (+ DATA_DIR/<case>.f64 vectors)
"""
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ops import compute  # noqa: E402


def main():
    data_dir, cases = sys.argv[1], json.loads(sys.argv[2])
    arrays = {}
    refs = {}
    for case in cases:
        dt = case["dt"]
        if dt not in arrays:
            arrays[dt] = np.load(os.path.join(data_dir, f"{dt}.npy"), mmap_mode="r")
        t0 = time.perf_counter()
        value = compute(arrays[dt], case, exact=True)
        if isinstance(value, np.ndarray):
            name = f"{case['id']}.f64"
            value.astype("<f8").tofile(os.path.join(data_dir, name))
            refs[case["id"]] = {"vector": name, "length": int(value.size)}
        else:
            refs[case["id"]] = value
        print(f"[ref] {case['id']}: {refs[case['id']]} ({time.perf_counter() - t0:.2f} s)", file=sys.stderr)
    with open(os.path.join(data_dir, "refs.json"), "w") as f:
        json.dump(refs, f, indent=1)


main()
