"""``reducemean.mean`` on floating-point input against the array API's ``mean``.

The array API standard specifies ``mean(x, /, *, axis=None, keepdims=False)``
for floating-point ``x``:

* the result has the data type of ``x``;
* ``axis`` None reduces every axis (a zero-dimensional result); an int or a
  tuple of ints names axes, negative ones counted from the last; an invalid
  axis raises;
* ``keepdims`` keeps each reduced axis with size 1;
* N = 0 values give NaN; NaN propagates.

References are independent of the package: shapes from the rules above,
values from exact arithmetic (``exact.py``), numpy only for the warning and
exception types it defines.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

import exact
import reducemean

REAL = [np.float16, np.float32, np.float64]
COMPLEX = [np.complex64, np.complex128]
SHAPES = [(), (7,), (4, 5), (3, 1, 6), (2, 3, 2, 4)]


def _x(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "c":
        return (rng.uniform(-3, 3, shape) + 1j * rng.uniform(-3, 3, shape)).astype(dtype)
    return rng.uniform(-3, 3, shape).astype(dtype)


def _axis_choices(ndim):
    """None, every single axis as + and -, and every tuple of 2+ axes in both signs."""
    out = [None]
    for d in range(ndim):
        out += [d, d - ndim]
    for k in range(2, ndim + 1):
        for combo in itertools.combinations(range(ndim), k):
            out.append(combo)
            out.append(tuple(reversed([d - ndim for d in combo])))
    return out


def _reduced(axis, ndim):
    if axis is None:
        return set(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return {a % ndim for a in axes}


def _expected_shape(shape, axis, keepdims):
    red = _reduced(axis, len(shape))
    if keepdims:
        return tuple(1 if d in red else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in red)


def _part_dtype(dtype):
    return {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}.get(
        np.dtype(dtype), dtype
    )


def _assert_exact(got, x, axis):
    """Each value (each part of a complex value) within 1 ulp of the exact mean."""
    norm = tuple(sorted(_reduced(axis, x.ndim)))
    ex = exact.exact_mean(x, norm)
    part = _part_dtype(x.dtype)
    pairs = [(np.real(got), ex[0]), (np.imag(got), ex[1])] if x.dtype.kind == "c" else [(got, ex)]
    for g, e in pairs:
        g = np.asarray(g).reshape(e.shape)
        for idx in np.ndindex(*e.shape):
            d = exact.ulp_distance(g[idx], e[idx], part)
            assert d <= 1.0, (idx, float(g[idx]), e[idx], d)


CASES = [
    (dtype, shape, axis)
    for dtype in REAL + COMPLEX
    for shape in SHAPES
    for axis in _axis_choices(len(shape))
]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize(
    "dtype,shape,axis", CASES,
    ids=[f"{np.dtype(d).name}-{s}-{a}" for d, s, a in CASES],
)
def test_dtype_shape_and_values(dtype, shape, axis, keepdims):
    x = _x(shape, dtype)
    got = reducemean.mean(x, axis=axis, keepdims=keepdims)
    assert got.dtype == x.dtype
    assert np.shape(got) == _expected_shape(shape, axis, keepdims)
    _assert_exact(got, x, axis)


@pytest.mark.parametrize("dtype", REAL + COMPLEX)
def test_full_reduction_is_zero_dimensional(dtype):
    x = _x((3, 4), dtype)
    got = reducemean.mean(x)
    assert np.ndim(got) == 0 and got.dtype == x.dtype
    got = reducemean.mean(x, axis=(0, 1), keepdims=True)
    assert got.shape == (1, 1) and got.dtype == x.dtype


@pytest.mark.parametrize("dtype", REAL + COMPLEX)
def test_negative_axes_equal_their_positive_forms(dtype):
    x = _x((2, 3, 4), dtype, seed=4)
    for axis in [(0, 2), (1,), (0, 1, 2)]:
        neg = tuple(a - 3 for a in axis)
        for keepdims in (False, True):
            a = reducemean.mean(x, axis=axis, keepdims=keepdims)
            b = reducemean.mean(x, axis=neg, keepdims=keepdims)
            c = reducemean.mean(x, axis=tuple(reversed(neg)), keepdims=keepdims)
            assert a.shape == b.shape == c.shape == _expected_shape(x.shape, axis, keepdims)
            _assert_exact(a, x, axis)
            np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("dtype", REAL + COMPLEX)
@pytest.mark.parametrize(
    "shape,axis,keepdims,out_shape",
    [((0,), None, False, ()), ((0,), None, True, (1,)), ((0, 3), 0, False, (3,)),
     ((2, 0, 3), (1, 2), True, (2, 1, 1)), ((4, 0), -1, False, (4,))],
)
def test_empty_gives_nan_with_warning(dtype, shape, axis, keepdims, out_shape):
    x = np.zeros(shape, dtype)
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        got = reducemean.mean(x, axis=axis, keepdims=keepdims)
    assert got.dtype == x.dtype and np.shape(got) == out_shape
    assert np.all(np.isnan(np.real(got)))


@pytest.mark.parametrize("dtype", REAL)
def test_reducing_nonempty_axes_of_an_empty_array_does_not_warn(dtype):
    x = np.zeros((0, 3), dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = reducemean.mean(x, axis=1)
    assert got.shape == (0,) and got.dtype == x.dtype


@pytest.mark.parametrize("dtype", REAL + COMPLEX)
@pytest.mark.parametrize("axis", [2, -3, 5, (0, 2), (-3,), (0, 0), (1, -1)])
def test_invalid_axis_raises(dtype, axis):
    x = _x((2, 3), dtype)
    with pytest.raises((ValueError, IndexError)):
        reducemean.mean(x, axis=axis)


@pytest.mark.parametrize("dtype", REAL)
def test_axis_on_a_zero_dimensional_array_raises(dtype):
    with pytest.raises((ValueError, IndexError)):
        reducemean.mean(np.asarray(1.5, dtype), axis=0)
    got = reducemean.mean(np.asarray(1.5, dtype))
    assert got.dtype == np.dtype(dtype) and got == 1.5


@pytest.mark.parametrize("dtype", REAL + COMPLEX)
def test_empty_axis_tuple_reduces_nothing(dtype):
    x = _x((3, 4), dtype)
    got = reducemean.mean(x, axis=())
    assert got.dtype == x.dtype and got.shape == x.shape
    np.testing.assert_array_equal(got, x)


@pytest.mark.parametrize("dtype", REAL)
def test_nan_and_inf(dtype):
    x = np.ones((4, 5), dtype)
    x[0, 0] = np.nan
    x[1, 1], x[2, 1] = np.inf, -np.inf
    x[3, 2] = np.inf
    x[0, 3] = -np.inf
    got = reducemean.mean(x, axis=0)
    assert got.dtype == x.dtype
    assert math.isnan(got[0]) and math.isnan(got[1])
    assert got[2] == np.inf and got[3] == -np.inf and got[4] == 1
    assert math.isnan(reducemean.mean(x))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_narrow_floats_do_not_lose_the_mean_of_many_values(dtype):
    """A narrow accumulator would stall; the mean of ones is exactly one."""
    n = 3 * 10**6 if dtype == np.float32 else 70_000
    x = np.ones((n, 2), dtype)
    got = reducemean.mean(x, axis=0)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.ones(2, dtype))
