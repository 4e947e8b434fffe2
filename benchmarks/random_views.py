"""reducemean.mean against numpy.mean on random views, to find the layouts where it loses.

    python benchmarks/random_views.py [--seed 0] [--cases 200] [--show 25]

Each case draws a 1-4 dimensional array of 10^3 to 2*10^6 elements in one
of eight dtypes, then a view of it (some axes cropped to two thirds,
stepped by 2 or 3, or reversed; sometimes transposed) and a set of axes
(every axis included).  Both means are timed on that view, best of five
repeats of as many calls as make about 2e4 elements; the cases are
printed slowest first, as numpy's time / reducemean's (below 1: numpy is
faster), with the view's shape, strides, axes and how it was made.

The inputs are small enough to stay in cache, so this finds per-call,
per-run and per-block overheads, not memory-bound loops (for those, see
``python -m reducemean.bench``).  Results are checked against numpy's
mean in float64 (complex128) as they are timed.
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

DTYPES = [np.float64, np.float32, np.float16, np.int32, np.int64, np.uint8,
          np.complex128, np.complex64]


def random_case(rng):
    """An array view, the axes to reduce and a description of how the view was made."""
    nd = int(rng.integers(1, 5))
    left = 10 ** rng.uniform(3, 6.3)
    shape = []
    for d in range(nd):
        e = max(1, int(round(left ** (1 / (nd - d)) * 10 ** rng.uniform(-0.5, 0.5))))
        shape.append(e)
        left /= e
    dt = np.dtype(DTYPES[rng.integers(len(DTYPES))])
    x = rng.standard_normal(shape) * 100
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    v = x.astype(dt)
    made = []
    for d in range(nd):
        r = rng.random()
        index = [slice(None)] * nd
        if r < 0.15 and shape[d] > 3:
            index[d] = slice(None, None, int(rng.integers(2, 4)))
            made.append(f"step{d}")
        elif r < 0.3 and shape[d] > 3:
            index[d] = slice(0, shape[d] * 2 // 3)
            made.append(f"crop{d}")
        elif r < 0.35:
            index[d] = slice(None, None, -1)
            made.append(f"rev{d}")
        v = v[tuple(index)]
    if nd > 1 and rng.random() < 0.2:
        perm = [int(i) for i in rng.permutation(nd)]
        v = v.transpose(perm)
        made.append(f"T{tuple(perm)}")
    k = int(rng.integers(0, nd + 1))
    axes = None if k == 0 else tuple(sorted(int(a) for a in rng.choice(nd, size=k, replace=False)))
    return v, axes, "+".join(made) or "-"


def best(call, number):
    return min(timeit.repeat(call, number=number, repeat=5)) / number


def main():
    import reducemean

    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--show", type=int, default=25)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    rows = []
    for _ in range(args.cases):
        v, axes, made = random_case(rng)
        got = reducemean.mean(v, axis=axes)  # also compiles, outside the timing
        wide = np.complex128 if v.dtype.kind == "c" else np.float64
        want = np.mean(v, axis=axes, dtype=wide)
        tol = 1e-2 if v.dtype.itemsize <= 2 and v.dtype.kind == "f" else 1e-5
        if not np.allclose(np.asarray(got, wide), want, rtol=tol, atol=tol):
            raise AssertionError(f"{v.dtype} {v.shape} {v.strides} axes {axes}: wrong mean")
        number = max(1, int(2e4 / max(v.size, 1)))
        ours = best(lambda: reducemean.mean(v, axis=axes), number)
        theirs = best(lambda: np.mean(v, axis=axes), number)
        rows.append((theirs / ours, v.dtype.name, v.shape, v.strides, axes, made,
                     ours * 1e6, theirs * 1e6))
    rows.sort(key=lambda r: r[0])
    print(f"{'np/ours':>7}  {'dtype':10} {'shape':22} {'strides':30} {'axes':12} {'view':20}"
          f" {'ours us':>9} {'numpy us':>9}")
    for r in rows[:args.show]:
        print(f"{r[0]:7.2f}  {r[1]:10} {str(r[2]):22} {str(r[3]):30} {str(r[4]):12} {r[5]:20}"
              f" {r[6]:9.1f} {r[7]:9.1f}")
    slower = sum(1 for r in rows if r[0] < 1)
    print(f"{len(rows)} cases, numpy faster in {slower}; median numpy time / ours "
          f"{np.median([r[0] for r in rows]):.2f}")


if __name__ == "__main__":
    main()
