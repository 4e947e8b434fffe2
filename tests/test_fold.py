"""Narrow columns folded from wider rows (reducemean.fold), against exact means."""

from fractions import Fraction

import numpy as np
import pytest
from exact import exact_mean, ulp_distance

import reducemean
from reducemean import fold, launch
from reducemean.dispatch import entry_for
from reducemean.plan import normalize_axis, plan_for

N = fold.FOLD_MIN  # rows: every width below FOLD_WIDTH folds


def _plan(a, axis):
    return plan_for(a.shape, a.strides, a.itemsize, normalize_axis(axis, a.ndim), False,
                    entry_for(a.dtype).pairs)


def test_only_large_contiguous_narrow_columns_fold():
    a = np.zeros((N, 3))
    assert fold.applies(_plan(a, 0))
    assert fold.applies(_plan(np.zeros((N, 3), np.complex64), 0))  # six float columns
    assert not fold.applies(_plan(np.zeros((N, fold.FOLD_WIDTH)), 0))  # wide enough...
    for w in (fold.FOLD_WIDTH, fold.FOLD_WIDE - 1):  # ...at this size
        rows = -(-fold.FOLD_MIN_WIDE // w)
        assert fold.applies(_plan(np.zeros((rows, w)), 0))
        assert not fold.applies(_plan(np.zeros((rows - 1, w)), 0))
    assert not fold.applies(_plan(np.zeros((fold.FOLD_MIN_WIDE, fold.FOLD_WIDE)), 0))
    assert not fold.applies(_plan(a[: N // 8], 0))  # small: the column kernels
    assert not fold.applies(_plan(a[::2], 0))  # rows not contiguous
    assert not fold.applies(_plan(a[:, :2], 0))
    assert not fold.applies(_plan(a[::-1], 0))  # read backwards from a base offset
    assert not fold.applies(_plan(a, 1))  # rows, not columns
    assert not fold.applies(_plan(np.zeros(N, np.complex128), 0))  # complex values: parts


@pytest.mark.parametrize("w", range(2, fold.FOLD_WIDTH))
@pytest.mark.parametrize("extra", [0, 1, 13])  # rows past the last whole folded row
def test_folded_float64_columns_are_compensated(w, extra):
    # Each column has a cancelling pair of 1e15 and its own offset, so a value
    # folded into the wrong column, a lost tail row or an uncompensated
    # merge shows.
    rng = np.random.default_rng(w * 100 + extra)
    n = N + extra
    x = rng.standard_normal((n, w)) * 10.0 ** rng.uniform(-3, 3, (n, w))
    x += 10.0 * np.arange(w)
    x[0], x[-1] = 1e15, -1e15
    got = reducemean.mean(x, axis=0)
    want = exact_mean(x, 0)
    for j in range(w):
        assert ulp_distance(got[j], want[j], np.float64) <= 1, j
    with launch.serial_only():
        assert np.array_equal(reducemean.mean(x, axis=0), got)


@pytest.mark.parametrize("w", range(fold.FOLD_WIDTH, fold.FOLD_WIDE))
@pytest.mark.parametrize("extra", [0, 7])
def test_folded_wider_columns_from_more_values(w, extra):
    # Widths from FOLD_WIDTH fold from FOLD_MIN_WIDE values, into rows of
    # w * 2**k lanes (36 to 64): each column against its exact mean, with
    # a cancelling pair as above, and the same means serially.
    rng = np.random.default_rng(w * 10 + extra)
    n = -(-fold.FOLD_MIN_WIDE // w) + extra
    x = rng.integers(-1000, 1000, (n, w)).astype(np.float64) + 0.25 * np.arange(w)
    x[0], x[-1] = 1e15, -1e15
    assert fold.applies(_plan(x, 0))
    got = reducemean.mean(x, axis=0)
    sums = x[1:-1].sum(axis=0)  # exact: quarters below 2**50
    for j in range(w):
        assert got[j] == sums[j] / n, j
    with launch.serial_only():
        assert np.array_equal(reducemean.mean(x, axis=0), got)
    for dt in (np.int32, np.uint8, np.float16):  # other families
        y = rng.integers(0, 100, (n, w)).astype(dt)
        got = reducemean.mean(y, axis=0)
        for j, s in enumerate(y.sum(axis=0, dtype=np.int64)):
            assert ulp_distance(got[j], Fraction(int(s), n), got.dtype) <= 0.5, (dt, j)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int8, np.bool_, np.float16, np.float32])
def test_folded_columns_of_other_types_are_exact(dtype):
    rng = np.random.default_rng(3)
    n, w = N + 5, 3
    if dtype == np.bool_:
        x = rng.integers(0, 2, (n, w)).astype(bool)
    elif np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        x = rng.integers(info.max // 2, info.max, (n, w), dtype=dtype, endpoint=True)  # sums past 64 bits
    else:
        x = (rng.standard_normal((n, w)) * 100).astype(dtype)
    got = reducemean.mean(x, axis=0)
    rd = got.dtype
    want = exact_mean(x, 0)
    for j in range(w):
        assert ulp_distance(got[j], want[j], rd) <= 1, (j, got[j], float(want[j]))


def test_folded_complex_columns_and_nonfinite_values():
    rng = np.random.default_rng(5)
    n = N + 3
    x = rng.standard_normal((n, 3)) + 1j * rng.standard_normal((n, 3))
    got = reducemean.mean(x, axis=0)
    re, im = exact_mean(x, 0)
    for j in range(3):
        assert ulp_distance(got[j].real, re[j], np.float64) <= 1
        assert ulp_distance(got[j].imag, im[j], np.float64) <= 1
    y = np.ones((n, 4))
    y[n // 2, 1] = np.nan
    y[n - 1, 2] = np.inf  # in the rows left over after the folded ones
    y[7, 3], y[9, 3] = np.inf, -np.inf
    got = reducemean.mean(y, axis=0)
    assert got[0] == 1.0 and np.isnan(got[1]) and got[2] == np.inf and np.isnan(got[3])


def test_folded_float64_sums_beyond_range_are_redone():
    # values near the float64 maximum: the folded sums overflow, the means
    # do not, so the scaled second pass (folded too) must give them
    rng = np.random.default_rng(9)
    n = N + 1
    x = rng.uniform(0.5, 1.0, (n, 3)) * 2.0**1023 * np.where(rng.random((n, 3)) < 0.8, 1, -1)
    got = reducemean.mean(x, axis=0)
    want = exact_mean(x, 0)
    for j in range(3):
        assert ulp_distance(got[j], want[j], np.float64) <= 1, j
