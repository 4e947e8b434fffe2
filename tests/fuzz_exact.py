"""Random views, dtypes and axes against exact means: a differential fuzz, run by hand.

    python tests/fuzz_exact.py [--seed 0] [--seconds 600]

Not collected by pytest (the name does not start with ``test_``): a run
takes minutes, most of it compiling the kernels each new layout needs.
test_stress.py keeps a short budget of tiny shapes in every test run; this
draws larger ones (up to about 10^6 values, so the pair loops, column
blocks, groups and supersets are reached) and lowers the parallel threshold
at random, so small inputs take the parallel kernels too.

Each case draws a 1-4 dimensional array in one of 14 dtypes, values from
one of six kinds (normal, uniform, +-1, spread exponents, powers of two
over the whole range, a large offset; integers over their whole range or
small), sometimes with a few NaN or Inf, then a view of it (axes cropped,
stepped by 2 or 3, reversed, transposed), a set of axes and keepdims, and
1 or 2 threads.  It checks:

* ``reducemean.mean``: numpy.mean's result dtype and shape, and each output
  within 1 ulp of the exact mean (tests/exact.py: Fractions), each part of
  a complex one on its own.  A complex output that numpy.mean of the input
  widened to complex128 makes NaN or Inf must be so here too (numpy's
  complex division spreads a NaN to both parts, which an exact mean per
  part would not; widened, since numpy's own complex64 sums overflow where
  reducemean's float64 ones do not).
* ``reducemean.reduce_mean`` (ONNX 18, not for bool or complex): integer
  means truncated toward zero exactly, float means within 1 ulp.

Every failure is printed with what makes it again (seed and case number,
dtype, shape, strides, axes); the exit status is 1 if there was any.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings

import numba
import numpy as np

import exact
import reducemean
from reducemean import launch

DTYPES = [np.float32, np.float64, np.float16, exact.BFLOAT16, np.int32, np.int64, np.uint8,
          np.int8, np.uint64, np.int16, np.uint32, np.bool_, np.complex64, np.complex128]
PARALLEL_MINS = (1 << 10, 1 << 14, launch.PARALLEL_MIN)  # and the default


def _values(rng, dt, n):
    """``n`` values of ``dt`` of one randomly chosen kind."""
    kind = int(rng.integers(6))
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if kind < 2:
            return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), n, endpoint=True).astype(dt)
    if dt.kind == "c":
        part = np.dtype(np.float64 if dt.itemsize == 16 else np.float32)
        v = np.empty(n, dt)
        v.real = _values(rng, part, n)
        v.imag = _values(rng, part, n)
        return v
    emax = 14 if dt == np.float16 else 126 if dt.itemsize <= 4 else 1000
    if kind == 0:
        v = rng.standard_normal(n) * 100
    elif kind == 1:
        v = rng.random(n)
    elif kind == 2:
        v = rng.choice([-1.0, 1.0], n)
    elif kind == 3:
        v = rng.standard_normal(n) * np.exp2(rng.integers(-emax // 2, emax // 2, n).astype(float))
    elif kind == 4:
        v = np.exp2(rng.integers(-emax, emax, n).astype(float)) * rng.choice([-1.0, 1.0], n)
    else:
        v = rng.standard_normal(n) * 3 + 1e4
    v = v.astype(dt)
    if n and rng.random() < 0.08:
        k = int(rng.integers(1, 4))
        v[rng.integers(0, n, k)] = rng.choice([np.nan, np.inf, -np.inf], k).astype(dt)
    return v


def draw(rng):
    """``(view, axis, keepdims, how)``: a random case; ``how`` says how the view was made."""
    dt = np.dtype(DTYPES[rng.integers(len(DTYPES))])
    nd = int(rng.integers(1, 5))
    left = 10 ** rng.uniform(0, 6.0 if nd == 1 else 5.8)
    shape = []
    for d in range(nd):
        e = max(1, int(round(left ** (1 / (nd - d)) * 10 ** rng.uniform(-0.7, 0.7))))
        if rng.random() < 0.15:
            e = int(rng.choice([1, 2, 3, 4, 5, 8, 16, 17]))
        shape.append(e)
        left = max(1.0, left / e)
    view = _values(rng, dt, math.prod(shape)).reshape(shape)
    how = []
    for d in range(nd):
        r = rng.random()
        idx = [slice(None)] * nd
        if r < 0.12:
            idx[d] = slice(None, None, int(rng.choice([2, 3, -1, -2])))
        elif r < 0.2 and shape[d] > 2:
            idx[d] = slice(int(rng.integers(0, shape[d] // 2 + 1)), None)
        else:
            continue
        view = view[tuple(idx)]
        how.append(f"axis {d}: {idx[d]}")
    if nd > 1 and rng.random() < 0.3:
        perm = [int(p) for p in rng.permutation(nd)]
        view = view.transpose(perm)
        how.append(f"transposed {perm}")
    axis = None
    if rng.random() >= 0.2:
        k = int(rng.integers(1, nd + 1))
        axis = tuple(int(a) for a in rng.choice(nd, k, replace=False))
        if k == 1 and rng.random() < 0.5:
            axis = axis[0]
    return view, axis, bool(rng.random() < 0.3), how


def _check_complex_nonfinite(got, view, axis):
    """NaN and Inf where numpy.mean of the view widened to complex128 has them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.asarray(np.mean(view.astype(np.complex128), axis=axis))
    for part in ("real", "imag"):
        g, w = getattr(got, part), getattr(want, part)
        if not (np.array_equal(np.isnan(g), np.isnan(w))
                and np.array_equal(np.isposinf(g), np.isposinf(w))
                and np.array_equal(np.isneginf(g), np.isneginf(w))):
            return f"{part} parts' NaN and Inf differ from numpy.mean's (in complex128)"
    return None


def _check_values(got, want, dtype):
    """The first output of ``got`` more than 1 ulp from the exact ``want`` (object array)."""
    want = np.asarray(want, dtype=object).reshape(got.shape)
    for idx in np.ndindex(*got.shape):
        d = exact.ulp_distance(got[idx], want[idx], dtype)
        if d > 1:
            return f"at {idx}: {got[idx]!r}, exact {float(want[idx])!r} ({d:.3g} ulp)"
    return None


def check_mean(view, axis, keepdims):
    """What is wrong with ``reducemean.mean``'s result, or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = np.asarray(reducemean.mean(view, axis=axis, keepdims=keepdims))
        like = np.mean(np.zeros(view.shape, view.dtype), axis=axis, keepdims=keepdims)
        flat = np.mean(np.zeros(view.shape, np.float32), axis=axis).shape
    if got.dtype != like.dtype or got.shape != like.shape:
        return f"{got.dtype} {got.shape}, numpy.mean gives {like.dtype} {like.shape}"
    got = got.reshape(flat)
    if view.dtype.kind == "c":
        if not np.isfinite(view).all():
            bad = _check_complex_nonfinite(got, view, axis)
            if bad:
                return bad
            # the finite parts' exact means (a part numpy made NaN is NaN here too)
            keep = np.isfinite(got.real) & np.isfinite(got.imag)
        else:
            keep = np.ones(got.shape, bool)
        re, im = exact.exact_mean(view, axis)
        for g, w in ((got.real, re), (got.imag, im)):
            w = np.asarray(w, dtype=object).reshape(g.shape)
            bad = _check_values(g[keep], w[keep], g.dtype)
            if bad:
                return bad
        return None
    return _check_values(got, exact.exact_mean(view, axis), got.dtype)


def check_reduce_mean(view, axis):
    """What is wrong with ``reducemean.reduce_mean``'s result (ONNX 18), or None."""
    axes = None if axis is None else np.array(np.atleast_1d(axis), np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = np.asarray(reducemean.reduce_mean(view, axes=axes, keepdims=0))
    if got.dtype != view.dtype:
        return f"result dtype {got.dtype}"
    if view.dtype.kind not in "iu":
        return _check_values(got, exact.exact_mean(view, axis), got.dtype)
    # the exact mean truncated toward zero; an empty slice gives 0
    for idx, w in np.ndenumerate(exact.exact_mean(view, axis)):
        want = 0 if isinstance(w, float) else math.trunc(w)
        if int(got[idx]) != want:
            return f"at {idx}: {got[idx]}, exact truncated {want}"
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=600.0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    default_min = launch.PARALLEL_MIN
    deadline = time.monotonic() + args.seconds
    cases = failures = 0
    try:
        while time.monotonic() < deadline:
            view, axis, keepdims, how = draw(rng)
            threads = int(rng.integers(1, min(2, numba.config.NUMBA_NUM_THREADS) + 1))
            parallel_min = int(rng.choice(PARALLEL_MINS))
            onnx = view.dtype.kind not in "bc" and rng.random() < 0.2
            numba.set_num_threads(threads)
            launch.set_parallel_min(parallel_min)
            cases += 1
            try:
                bad = check_reduce_mean(view, axis) if onnx else check_mean(view, axis, keepdims)
            except Exception as e:  # noqa: BLE001 - reported as a failure
                bad = f"raised {e!r}"
            if bad:
                failures += 1
                print(f"FAIL seed {args.seed} case {cases}: "
                      f"{'reduce_mean' if onnx else 'mean'} {view.dtype} {view.shape} "
                      f"strides {view.strides} axis={axis} keepdims={keepdims} "
                      f"({'; '.join(how) or 'contiguous'}; {threads} threads, "
                      f"PARALLEL_MIN {parallel_min}): {bad}", flush=True)
    finally:
        launch.set_parallel_min(default_min)
    print(f"seed {args.seed}: {cases} cases, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
