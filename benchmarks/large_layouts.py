"""reducemean.mean on large inputs of narrow and transposed layouts, to find slow ones.

    python benchmarks/large_layouts.py [--mib 96] [--dtypes float32,float64] [--below 25]

For each dtype, one buffer of ``--mib`` MiB is reshaped into (n, w) with w
from 1 to 1000, and into (n, m, w) with small m and w, over every set of
axes, as it is and transposed (``.T``): the layouts of batches of small
vectors and matrices, which the bench's cases (wide rows and columns, NCHW)
do not cover.  Each reduction's median time gives GB/s (input bytes over
the time); cases under ``--below`` GB/s are printed with numpy.mean's time
on the same view, slowest first.  Results are checked against numpy's mean
in float64 (complex128) on the first call.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

WIDTHS = (1, 2, 3, 5, 8, 16, 17, 33, 100, 1000)
MIDDLES = (2, 3, 7, 64)
LASTS = (3, 16, 1000)


def layouts(n):
    """(shape, axes) pairs over ``n`` elements (rounded down to whole shapes)."""
    for w in WIDTHS:
        yield (n // w, w), (0,)
        yield (n // w, w), (1,)
    for m, w in itertools.product(MIDDLES, LASTS):
        for k in (1, 2):
            for axes in itertools.combinations(range(3), k):
                yield (n // (m * w), m, w), axes


def median_time(call, repeat=5):
    call()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main():
    import reducemean

    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=96, help="input size of every case")
    ap.add_argument("--dtypes", default="float32,float64,int32,float16,uint8,int64,complex64")
    ap.add_argument("--below", type=float, default=25.0, help="print cases under this GB/s")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    slow = []
    total = 0
    for name in args.dtypes.split(","):
        dt = np.dtype(name)
        n = (args.mib << 20) // dt.itemsize
        base = (rng.random(n) * 100).astype(dt)
        for shape, axes in layouts(n):
            a = base[: int(np.prod(shape))].reshape(shape)
            for label, v, ax in (("", a, axes), (".T", a.T, tuple(a.ndim - 1 - i for i in axes))):
                wide = np.complex128 if dt.kind == "c" else np.float64
                got = np.asarray(reducemean.mean(v, axis=ax), wide)
                if not np.allclose(got, np.mean(v, axis=ax, dtype=wide), rtol=1e-2):
                    raise AssertionError(f"{name} {shape}{label} axes {ax}: wrong mean")
                t = median_time(lambda: reducemean.mean(v, axis=ax))
                total += 1
                if v.nbytes / t / 1e9 < args.below:
                    q = median_time(lambda: np.mean(v, axis=ax), 2)
                    slow.append((v.nbytes / t / 1e9, name, shape, label, ax, t * 1e3, q * 1e3))
    slow.sort(key=lambda r: r[0])
    print(f"{'GB/s':>5}  {'dtype':10} {'shape':20} {'':3} {'axes':8} {'ours ms':>9} {'numpy ms':>9}")
    for r in slow:
        print(f"{r[0]:5.1f}  {r[1]:10} {str(r[2]):20} {r[3]:3} {str(r[4]):8} {r[5]:9.2f} {r[6]:9.2f}")
    behind = sum(1 for r in slow if r[6] < r[5])
    print(f"{total} cases, {len(slow)} under {args.below} GB/s, numpy faster in {behind}")


if __name__ == "__main__":
    main()
