"""Tests for ``reducemean.reduce_mean`` (CONTRACT.md section 2, ONNX opset 18 rules).

Every expected value comes from an independent reference: ``exact.py``
(Fractions / Python ints), numpy for shapes and copies, or hand-derived
closed forms.  Nothing here is copied from the package's own output.
"""

from __future__ import annotations

import math
import re
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import exact
import reducemean

try:
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - ml_dtypes is a test dependency
    _ml_dtypes = None

FLOAT_NAMES = ["float16", "bfloat16", "float32", "float64"]
SINT_NAMES = ["int8", "int16", "int32", "int64"]
UINT_NAMES = ["uint8", "uint16", "uint32", "uint64"]
INT_NAMES = SINT_NAMES + UINT_NAMES
ACCEPTED_NAMES = FLOAT_NAMES + INT_NAMES
AXES_INT_DTYPES = [np.int8, np.int16, np.int32, np.int64,
                   np.uint8, np.uint16, np.uint32, np.uint64]


def _dtype(name):
    """numpy dtype for a name; bfloat16 skips when ml_dtypes is missing."""
    if name == "bfloat16":
        ml = pytest.importorskip("ml_dtypes")
        return np.dtype(ml.bfloat16)
    return np.dtype(name)


def _is_int(dtype):
    return np.dtype(dtype).kind in "iu"


def _random(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if _is_int(dtype):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    return (rng.standard_normal(shape) * 100.0).astype(dtype)


def _norm_axes(axes, nd):
    """Reference axis normalisation: None/empty -> all axes (noop handled by caller)."""
    if axes is None:
        return tuple(range(nd))
    arr = np.asarray(axes)
    lst = [int(a) for a in arr.reshape(-1).tolist()]
    if not lst:
        return tuple(range(nd))
    return tuple(sorted(a % nd for a in lst))


def _expected_shape(shape, ax, keepdims):
    if keepdims:
        return tuple(1 if d in ax else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in ax)


def _slices(data, ax):
    """(kept shape, array whose last axis holds each reduced slice)."""
    nd = data.ndim
    if nd == 0:
        return (), data.reshape(1)
    kept = [d for d in range(nd) if d not in ax]
    moved = np.moveaxis(data, kept + list(ax), range(nd))
    kshape = tuple(data.shape[d] for d in kept)
    rsize = math.prod(data.shape[d] for d in ax)
    return kshape, moved.reshape(kshape + (rsize,))


def check_reduction(got, data, ax, keepdims, max_ulp=1.0):
    """Assert ``got`` is the ReduceMean of ``data`` over normalised axes ``ax``.

    Integers: exact mean truncated toward zero (``exact.trunc_mean``), 0 when
    empty.  Floats: within ``max_ulp`` of the exact mean; NaN when empty.
    """
    got = np.asarray(got)
    assert got.dtype == data.dtype, (got.dtype, data.dtype)
    assert got.shape == _expected_shape(data.shape, ax, keepdims)
    kshape, flat = _slices(data, ax)
    if math.prod(kshape) == 0:
        return  # empty output: nothing to compare
    g = got.reshape(kshape)
    bad = []
    if _is_int(data.dtype):
        for idx in np.ndindex(*kshape):
            t = exact.trunc_mean(flat[idx].tolist())
            want = 0 if t is None else t
            if int(g[idx]) != want:
                bad.append((idx, int(g[idx]), want))
    else:
        ex = exact.exact_mean(data, ax)
        for idx in np.ndindex(*kshape):
            d = exact.ulp_distance(g[idx], ex[idx], data.dtype)
            if not d <= max_ulp:
                bad.append((idx, float(g[idx]), ex[idx], d))
    assert not bad, f"{len(bad)} wrong elements, first: {bad[:5]}"


def _empty_count(data, ax):
    """Number of output elements whose reduced slice is empty."""
    kshape, flat = _slices(data, ax)
    if flat.shape[-1] == 0:
        return int(np.prod(kshape))
    return 0


# ---------------------------------------------------------------- dtypes


@pytest.mark.parametrize("name", ACCEPTED_NAMES)
@pytest.mark.parametrize("keepdims", [1, 0])
def test_result_dtype_and_values_all_accepted_dtypes(name, keepdims):
    dtype = _dtype(name)
    rng = np.random.default_rng(ACCEPTED_NAMES.index(name))
    data = _random(rng, (3, 4, 5), dtype)
    for axes in [None, 0, [1], [0, 2], (-1, -3), [0, 1, 2]]:
        got = reducemean.reduce_mean(data, axes=axes, keepdims=keepdims)
        assert np.asarray(got).dtype == dtype
        check_reduction(got, data, _norm_axes(axes, 3), keepdims)


def test_defaults_keepdims_1_and_reduce_all():
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    got = reducemean.reduce_mean(data)
    assert np.asarray(got).shape == (1, 1, 1)
    check_reduction(got, data, (0, 1, 2), True)


@pytest.mark.parametrize(
    "dtype",
    [np.bool_, np.complex64, np.complex128, np.object_, np.str_, np.bytes_,
     np.longdouble, np.dtype("datetime64[s]"), np.dtype("timedelta64[s]")],
    ids=lambda d: np.dtype(d).str,
)
def test_refused_dtypes_raise_typeerror_naming_dtype(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.dtype(np.float64):  # longdouble == double on some platforms
        pytest.skip("longdouble is float64 here")
    if dtype.kind in "OSU":
        data = np.array([["1", "2"], ["3", "4"]], dtype=dtype)
    elif dtype.kind in "mM":
        data = np.array([[1, 2], [3, 4]]).astype(dtype)
    else:
        data = np.ones((2, 2), dtype=dtype)
    with pytest.raises(TypeError) as info:
        reducemean.reduce_mean(data, axes=[0])
    msg = str(info.value)
    dtype = data.dtype
    names = {dtype.name, str(dtype), dtype.str, dtype.type.__name__}
    if dtype.kind == "b":
        names.add("bool")
    assert any(n in msg for n in names), (msg, names)


def test_bfloat16_result_dtype_is_bfloat16():
    bf16 = _dtype("bfloat16")
    data = np.arange(12, dtype=np.float32).reshape(3, 4).astype(bf16)
    got = reducemean.reduce_mean(data, axes=[1], keepdims=0)
    assert np.asarray(got).dtype == bf16
    check_reduction(got, data, (1,), False)


# ---------------------------------------------------------------- axes forms


@pytest.mark.parametrize("axes_dtype", AXES_INT_DTYPES, ids=lambda t: np.dtype(t).name)
def test_axes_as_integer_arrays_of_every_dtype(axes_dtype):
    data = _random(np.random.default_rng(1), (2, 3, 4), np.int32)
    # 1-D arrays
    for vals in ([0], [2, 1], [0, 1, 2]):
        axes = np.array(vals, dtype=axes_dtype)
        got = reducemean.reduce_mean(data, axes=axes, keepdims=0)
        check_reduction(got, data, tuple(sorted(vals)), False)
    # 0-d array
    axes = np.array(1, dtype=axes_dtype)
    got = reducemean.reduce_mean(data, axes=axes, keepdims=1)
    check_reduction(got, data, (1,), True)
    # numpy integer scalar
    got = reducemean.reduce_mean(data, axes=axes_dtype(2), keepdims=0)
    check_reduction(got, data, (2,), False)
    # negative values in signed arrays
    if np.dtype(axes_dtype).kind == "i":
        axes = np.array([-1, -3], dtype=axes_dtype)
        got = reducemean.reduce_mean(data, axes=axes, keepdims=0)
        check_reduction(got, data, (0, 2), False)
        got = reducemean.reduce_mean(data, axes=np.array(-2, dtype=axes_dtype), keepdims=0)
        check_reduction(got, data, (1,), False)


@pytest.mark.parametrize(
    "axes, ax",
    [
        (0, (0,)),
        (-1, (2,)),
        ([1], (1,)),
        ((1,), (1,)),
        ([0, 2], (0, 2)),
        ((2, 0), (0, 2)),
        ([-3, -1], (0, 2)),
        ([2, -2, 0], (0, 1, 2)),
        ((np.int32(1), np.int64(-1)), (1, 2)),
        (range(2), (0, 1)),
    ],
    ids=repr,
)
@pytest.mark.parametrize("keepdims", [1, 0, True, False])
def test_axes_int_sequence_and_range(axes, ax, keepdims):
    data = _random(np.random.default_rng(2), (3, 4, 5), np.float32)
    got = reducemean.reduce_mean(data, axes=axes, keepdims=keepdims)
    check_reduction(got, data, ax, bool(keepdims))


@pytest.mark.parametrize("axes", [3, -4, [3], [0, 7], [-9], (5,), np.array([3]),
                                  np.array(-4, dtype=np.int8)],
                         ids=repr)
def test_axis_out_of_range_valueerror_names_axis_and_range(axes):
    data = np.zeros((2, 3, 4), dtype=np.float32)
    with pytest.raises(ValueError) as info:
        reducemean.reduce_mean(data, axes=axes)
    msg = str(info.value)
    bad = [int(a) for a in np.asarray(axes).reshape(-1) if not -3 <= int(a) <= 2][0]
    assert re.search(rf"(?<![\d-]){re.escape(str(bad))}(?!\d)", msg), msg
    # the accepted range [-r, r-1] = [-3, 2]
    assert re.search(r"-3(?!\d)", msg), msg
    assert re.search(r"(?<![\d-])2(?!\d)", msg), msg


@pytest.mark.parametrize("axes", [2**70, -(2**70), [2**70], [0, 2**64], 2**63, [-(2**63) - 1],
                                  [2**64 + 1]],
                         ids=repr)
def test_axis_beyond_64_bits_valueerror(axes):
    data = np.zeros((2, 3), dtype=np.float64)
    with pytest.raises(ValueError):
        reducemean.reduce_mean(data, axes=axes)


def test_uint64_axis_that_would_wrap_to_negative_is_out_of_range():
    # 2**64 - 1 is not -1: a uint64 axis must not wrap when converted.
    data = np.zeros((2, 3), dtype=np.float64)
    with pytest.raises(ValueError):
        reducemean.reduce_mean(data, axes=np.array([2**64 - 1], dtype=np.uint64))
    with pytest.raises(ValueError):
        reducemean.reduce_mean(data, axes=np.uint64(2**64 - 2))


@pytest.mark.parametrize("axes", [[1, 1], (0, 0, 2), [1, -2], [-1, 2], np.array([0, -3]),
                                  np.array([2, 2], dtype=np.uint8)],
                         ids=repr)
def test_duplicate_axes_valueerror(axes):
    data = np.zeros((2, 3, 4), dtype=np.float32)
    with pytest.raises(ValueError):
        reducemean.reduce_mean(data, axes=axes)


@pytest.mark.parametrize(
    "axes",
    [1.0, 1.5, [1.0], (0, 1.0), "1", ["1"], [[0, 1]], [[0]], np.array([1.0]),
     np.array(1.0), np.float64(1.0), True, False, [True], [0, False], np.array([True]),
     np.bool_(True), [None], object(), np.array([1 + 0j]), 1j],
    # an object's repr holds its address: ids must not differ between runs
    ids=lambda a: "object" if type(a) is object else repr(a),
)
def test_non_integer_axes_typeerror(axes):
    data = np.zeros((2, 3, 4), dtype=np.float32)
    with pytest.raises(TypeError):
        reducemean.reduce_mean(data, axes=axes)


def test_two_dimensional_integer_axes_array_refused():
    data = np.zeros((2, 3, 4), dtype=np.float32)
    with pytest.raises((TypeError, ValueError)):
        reducemean.reduce_mean(data, axes=np.array([[0, 1]]))


# ---------------------------------------------------------------- empty axes / noop


@pytest.mark.parametrize("axes", [None, [], (), np.array([], dtype=np.int64),
                                  np.array([], dtype=np.int32)], ids=repr)
@pytest.mark.parametrize("keepdims", [1, 0])
def test_empty_axes_reduce_all_without_noop(axes, keepdims):
    data = _random(np.random.default_rng(3), (3, 2, 5), np.float32)
    for noop in (0, False):
        got = reducemean.reduce_mean(data, axes=axes, keepdims=keepdims,
                                     noop_with_empty_axes=noop)
        check_reduction(got, data, (0, 1, 2), bool(keepdims))


@pytest.mark.parametrize("axes", [None, [], (), np.array([], dtype=np.int64)], ids=repr)
@pytest.mark.parametrize("keepdims", [1, 0])
@pytest.mark.parametrize("name", ["float32", "float16", "int64", "uint8", "bfloat16"])
def test_empty_axes_with_noop_is_a_copy_of_input(axes, keepdims, name):
    dtype = _dtype(name)
    data = _random(np.random.default_rng(4), (3, 2, 5), dtype)
    before = data.copy()
    for noop in (1, True):
        got = reducemean.reduce_mean(data, axes=axes, keepdims=keepdims,
                                     noop_with_empty_axes=noop)
        assert isinstance(got, np.ndarray)
        assert got.dtype == dtype
        assert got.shape == data.shape
        assert np.array_equal(got.view(np.uint8), data.view(np.uint8))
        assert not np.shares_memory(got, data)
        got[...] = 0  # writing the result must not touch the input
        assert np.array_equal(data.view(np.uint8), before.view(np.uint8))


def test_noop_keeps_nan_and_rank0_copy():
    data = np.array([np.nan, 1.0, -np.inf], dtype=np.float64)
    got = reducemean.reduce_mean(data, axes=[], noop_with_empty_axes=1)
    np.testing.assert_array_equal(got, data)
    assert not np.shares_memory(got, data)
    scalar = np.array(7, dtype=np.int16)
    got = reducemean.reduce_mean(scalar, axes=None, noop_with_empty_axes=1)
    assert np.asarray(got).dtype == np.int16 and int(got) == 7
    assert not np.shares_memory(got, scalar)


@pytest.mark.parametrize("keepdims", [1, 0])
def test_noop_with_nonempty_axes_still_reduces(keepdims):
    data = _random(np.random.default_rng(5), (3, 4), np.float64)
    got = reducemean.reduce_mean(data, axes=[1], keepdims=keepdims, noop_with_empty_axes=1)
    check_reduction(got, data, (1,), bool(keepdims))


# ---------------------------------------------------------------- rank 0


@pytest.mark.parametrize("name", ACCEPTED_NAMES)
def test_rank0_input_gives_its_value(name):
    dtype = _dtype(name)
    value = np.array(-5 if np.dtype(dtype).kind != "u" else 5).astype(dtype)
    for kwargs in ({}, {"axes": None}, {"axes": []}, {"keepdims": 0},
                   {"axes": np.array([], np.int64), "keepdims": 0}):
        got = reducemean.reduce_mean(value, **kwargs)
        got = np.asarray(got)
        assert got.dtype == dtype
        assert got.shape == ()
        assert got.tobytes() == value.tobytes()


def test_rank0_input_has_no_valid_axis():
    value = np.array(3.0, dtype=np.float32)
    for axes in (0, [0], [-1]):
        with pytest.raises(ValueError):
            reducemean.reduce_mean(value, axes=axes)


# ---------------------------------------------------------------- integer exactness


def _check_int_1d(values, dtype):
    data = np.array(values, dtype=dtype)
    got = reducemean.reduce_mean(data, axes=[0], keepdims=0)
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype)
    assert int(got) == exact.trunc_mean(values), (int(got), exact.trunc_mean(values))


I64_MAX, I64_MIN, U64_MAX = 2**63 - 1, -(2**63), 2**64 - 1


@pytest.mark.parametrize(
    "values, dtype",
    [
        ([I64_MAX] * 1000 + [I64_MAX - 1] * 999, np.int64),       # sum ~ 2**74
        ([I64_MIN] * 1000 + [I64_MIN + 7] * 3, np.int64),          # negative overflow
        ([I64_MIN, I64_MIN, I64_MAX], np.int64),                   # mean -(2**63+1)/3
        ([I64_MAX, I64_MAX, I64_MIN + 1, 0], np.int64),
        ([2**62 + 1, 2**62 + 2], np.int64),                        # not representable in f64
        ([2**53 + 1] * 3, np.int64),
        ([-(2**53) - 1] * 5 + [-(2**53) - 2], np.int64),
        ([U64_MAX] * 1001, np.uint64),
        ([U64_MAX, U64_MAX - 1], np.uint64),                       # trunc(2**64 - 1.5)
        ([U64_MAX] * 500 + [0] * 499 + [U64_MAX - 2] * 2, np.uint64),
        ([2**63 + 1, 2**63 + 2, 2**63 + 4], np.uint64),
        ([2**31 - 1] * 9 + [2**31 - 2], np.int32),
        ([-(2**31)] * 9 + [-(2**31) + 1], np.int32),
        ([2**32 - 1] * 7 + [2**32 - 3], np.uint32),
        ([127] * 10, np.int8),
        ([-128, -128, 127], np.int8),
        ([255] * 300 + [254], np.uint8),
        ([32767] * 5 + [-32768], np.int16),
        ([65535] * 3 + [65534], np.uint16),
    ],
    ids=lambda v: (f"n{len(v)}" if isinstance(v, list) else np.dtype(v).name),
)
def test_integer_mean_exact_no_overflow(values, dtype):
    _check_int_1d(values, dtype)


@pytest.mark.parametrize("name", SINT_NAMES)
@pytest.mark.parametrize(
    "values",
    [[-7, 0, 0], [-1, 0], [-5, 1, 1], [-3, -3, -2], [7, -8], [-100, 1, 1, 1]],
    ids=repr,
)
def test_negative_mean_with_remainder_truncates_toward_zero(name, values):
    # -7/3 -> -2 (floor would give -3); -1/2 -> 0; -3/3 -> -1; -8/3 -> -2; -1/2 -> 0
    _check_int_1d(values, np.dtype(name))


@pytest.mark.parametrize("name", INT_NAMES)
def test_integer_random_2d_all_axes(name):
    dtype = np.dtype(name)
    rng = np.random.default_rng(6)
    data = _random(rng, (17, 13), dtype)
    for axes in (None, [0], [1], [-1, 0]):
        for keepdims in (0, 1):
            got = reducemean.reduce_mean(data, axes=axes, keepdims=keepdims)
            check_reduction(got, data, _norm_axes(axes, 2), keepdims)


def test_int64_extremes_along_non_last_axis():
    # big sums along a strided axis and over several axes
    col = np.array([I64_MAX, I64_MAX, I64_MIN, I64_MAX - 5, I64_MIN + 1], dtype=np.int64)
    data = np.stack([col, -col - 1, col // 3, np.full(5, I64_MIN, np.int64)], axis=1)
    data = np.repeat(data[:, :, None], 3, axis=2)  # (5, 4, 3)
    for axes in ([0], [0, 2], [2, 0, 1], [-3]):
        got = reducemean.reduce_mean(data, axes=axes, keepdims=0)
        check_reduction(got, data, _norm_axes(axes, 3), False)


# ---------------------------------------------------------------- float accuracy


def _check_float_1d(data, exact_value):
    got = reducemean.reduce_mean(data, axes=[0], keepdims=0)
    got = np.asarray(got)
    assert got.dtype == data.dtype
    d = exact.ulp_distance(got, exact_value, data.dtype)
    assert d <= 1.0, (float(got), float(exact_value), d)


def test_float32_small_addends_not_absorbed():
    # 1 followed by N values of 2**-24: a float32 running sum never moves
    # off 1.0; the exact mean is (1 + N*2**-24) / (N + 1).
    n = 2**16
    data = np.full(n + 1, 2.0**-24, dtype=np.float32)
    data[0] = 1.0
    want = (1 + n * Fraction(1, 2**24)) / (n + 1)
    _check_float_1d(data, want)
    # the same column along a strided axis, next to other columns
    data2 = np.stack([data, np.ones_like(data), -data], axis=1)
    got = reducemean.reduce_mean(data2, axes=[0], keepdims=1)
    got = np.asarray(got)
    assert got.shape == (1, 3) and got.dtype == np.float32
    for j, w in enumerate([want, Fraction(1), -want]):
        assert exact.ulp_distance(got[0, j], w, np.float32) <= 1.0


def test_float32_many_ones_strided_axis():
    # a float32 running sum of ones stalls at 2**24
    data = np.ones((2**24 + 2**23, 2), dtype=np.float32)
    got = np.asarray(reducemean.reduce_mean(data, axes=[0], keepdims=0))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.ones(2, np.float32))


def test_float16_many_ones_and_repeated_values():
    # a float16 running sum of ones stalls at 2048
    for v in (1.0, 0.1, -3.14, 6.0e-5):
        val = np.float16(v)
        data = np.full(5000, val, dtype=np.float16)
        _check_float_1d(data, Fraction(float(val)))
    data = np.full((3000, 3), np.float16(0.7), dtype=np.float16)
    got = np.asarray(reducemean.reduce_mean(data, axes=[0], keepdims=0))
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, np.full(3, np.float16(0.7)))


def test_bfloat16_many_ones_and_repeated_values():
    bf16 = _dtype("bfloat16")
    # a bfloat16 running sum of ones stalls at 256
    for v in (1.0, 0.1, -3.14, 1e30):
        data = np.full(2000, v, dtype=np.float32).astype(bf16)
        _check_float_1d(data, Fraction(float(data[0])))
    data = np.full((1500, 2), 0.3, dtype=np.float32).astype(bf16)
    got = np.asarray(reducemean.reduce_mean(data, axes=[0], keepdims=0))
    assert got.dtype == bf16
    assert all(float(x) == float(data[0, 0]) for x in got)


@pytest.mark.parametrize(
    "name",
    FLOAT_NAMES,
)
def test_float_values_near_dtype_max_do_not_overflow(name):
    # the exact mean of values at the dtype's maximum is that maximum
    dtype = _dtype(name)
    finfo = _ml_dtypes.finfo(dtype) if name == "bfloat16" else np.finfo(dtype)
    top = np.array([float(finfo.max)]).astype(dtype)
    assert np.isfinite(top.astype(np.float64)[0])
    data = np.repeat(top, 64)
    _check_float_1d(data, Fraction(float(top[0])))
    data = np.concatenate([np.repeat(top, 10), -np.repeat(top, 9)])
    _check_float_1d(data, Fraction(float(top[0])) / 19)


def test_float64_cancellation():
    # [1e16, 1, -1e16, 1] * k: exact mean 0.5; a naive float64 sum gives 0
    data = np.tile(np.array([1e16, 1.0, -1e16, 1.0]), 1000)
    _check_float_1d(data, Fraction(1, 2))
    data = np.array([2.0**60, 3.0, -(2.0**60), 1.0, 2.0**-30])
    _check_float_1d(data, exact.exact_mean_values(data.tolist()))


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_float_random_within_one_ulp(name):
    dtype = _dtype(name)
    rng = np.random.default_rng(7)
    base = rng.standard_normal((40, 9, 7)) * np.exp(rng.uniform(-8, 8, (40, 9, 7)))
    data = base.astype(dtype)
    for axes in (None, [0], [1], [2], [0, 2], [-1, -2]):
        for keepdims in (0, 1):
            got = reducemean.reduce_mean(data, axes=axes, keepdims=keepdims)
            check_reduction(got, data, _norm_axes(axes, 3), keepdims)


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_float_nonfinite_propagate(name):
    dtype = _dtype(name)
    data = np.array([[1.0, np.nan, 2.0], [1.0, np.inf, 2.0], [np.inf, -np.inf, 0.0],
                     [-np.inf, 5.0, 5.0]]).astype(dtype)
    got = reducemean.reduce_mean(data, axes=[1], keepdims=0)
    check_reduction(got, data, (1,), False)


# ---------------------------------------------------------------- empty reduction


@pytest.mark.parametrize("name", ACCEPTED_NAMES)
@pytest.mark.parametrize(
    "shape, axes, keepdims, out_shape",
    [
        ((0,), None, 1, (1,)),
        ((0,), [0], 0, ()),
        ((3, 0), [1], 0, (3,)),
        ((3, 0), [1], 1, (3, 1)),
        ((0, 4), [0], 0, (4,)),
        ((2, 0, 3), [0, 1], 1, (1, 1, 3)),
        ((2, 0, 3), None, 0, ()),
    ],
)
def test_empty_reduction_nan_or_zero_with_warning(name, shape, axes, keepdims, out_shape):
    dtype = _dtype(name)
    data = np.zeros(shape, dtype=dtype)
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        got = reducemean.reduce_mean(data, axes=axes, keepdims=keepdims)
    got = np.asarray(got)
    assert got.dtype == dtype
    assert got.shape == out_shape
    as_f = got.astype(np.float64)
    if _is_int(dtype):
        assert np.all(as_f == 0)
    else:
        assert np.all(np.isnan(as_f))


def test_empty_output_from_non_empty_axis():
    # reducing the non-empty axis of a (0, 3) array: empty result, shape kept
    data = np.zeros((0, 3), dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = np.asarray(reducemean.reduce_mean(data, axes=[1], keepdims=0))
    assert got.shape == (0,) and got.dtype == np.float32


# ---------------------------------------------------------------- properties


_HYP_NAMES = [n for n in ACCEPTED_NAMES if n != "bfloat16" or _ml_dtypes is not None]


def _elements(dtype):
    if _is_int(dtype):
        return None  # full range
    if dtype == np.float16:
        return st.floats(width=16, allow_nan=False, allow_infinity=False)
    if dtype == np.float32:
        return st.floats(width=32, allow_nan=False, allow_infinity=False)
    # float64: bounded magnitudes keep error-free-transform accumulators honest
    return st.floats(min_value=-(2.0**30), max_value=2.0**30, allow_nan=False,
                     allow_subnormal=False)


@st.composite
def reduce_cases(draw):
    name = draw(st.sampled_from(_HYP_NAMES))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=0, max_size=4)))
    if name == "bfloat16":
        dtype = np.dtype(_ml_dtypes.bfloat16)
        f32 = draw(hnp.arrays(np.float32, shape, elements=st.floats(
            min_value=float(np.float32(-1e38)), max_value=float(np.float32(1e38)), width=32, allow_nan=False)))
        data = f32.astype(dtype)
    else:
        dtype = np.dtype(name)
        data = draw(hnp.arrays(dtype, shape, elements=_elements(dtype)))
    nd = len(shape)
    chosen = draw(st.lists(st.integers(0, max(nd - 1, 0)), unique=True, max_size=nd)) if nd else []
    chosen = draw(st.permutations(chosen)) if chosen else []
    signed = [a - nd if draw(st.booleans()) else a for a in chosen]
    form = draw(st.sampled_from(["none", "list", "tuple", "array", "int"]))
    if form == "none":
        axes, signed = None, []
    elif form == "int" and len(signed) == 1:
        axes = signed[0]
    elif form in ("list", "int"):
        axes = list(signed)
    elif form == "tuple":
        axes = tuple(signed)
    elif form == "array":
        adt = draw(st.sampled_from([np.int8, np.int16, np.int32, np.int64]))
        axes = np.array(signed, dtype=adt)
    keepdims = draw(st.sampled_from([0, 1, True, False]))
    noop = draw(st.sampled_from([0, 1]))
    return data, axes, signed, keepdims, noop


@settings(max_examples=1000, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(reduce_cases())
def test_property_matches_exact_reference(case):
    data, axes, signed, keepdims, noop = case
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = reducemean.reduce_mean(data, axes=axes, keepdims=keepdims,
                                     noop_with_empty_axes=noop)
    if not signed and noop:
        got = np.asarray(got)
        assert got.dtype == data.dtype and got.shape == data.shape
        assert got.tobytes() == data.tobytes()
        assert data.size == 0 or not np.shares_memory(got, data)
        return
    ax = tuple(sorted(a % data.ndim for a in signed)) if signed else tuple(range(data.ndim))
    check_reduction(got, data, ax, bool(keepdims))
    if _empty_count(data, ax):
        assert any(issubclass(w.category, RuntimeWarning)
                   and "Mean of empty slice" in str(w.message) for w in caught)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["int64", "uint64"]),
    st.integers(1, 40),
    st.integers(1, 3),
    st.data(),
)
def test_property_64bit_extremes(name, n, m, data_strategy):
    dtype = np.dtype(name)
    info = np.iinfo(dtype)
    near = st.one_of(st.integers(info.max - 1000, info.max),
                     st.integers(info.min, info.min + 1000),
                     st.integers(info.min, info.max))
    vals = data_strategy.draw(st.lists(near, min_size=n * m, max_size=n * m))
    data = np.array(vals, dtype=dtype).reshape(n, m)
    for axes in ([0], [1], None):
        got = reducemean.reduce_mean(data, axes=axes, keepdims=0)
        check_reduction(got, data, _norm_axes(axes, 2), False)
