"""Tests for ``reducemean.specs.openvino.reduce_mean`` (ReduceMean-1, CONTRACT.md section 3).

Spec pages 000/004: ``axes`` is a required scalar or 1-D tensor of unique
integers (T_IND: any integer type) in [-r, r-1]; an empty ``axes`` is the
identity; ``keep_dims`` defaults to false; T is any numeric type, and (per the
contract) integer results truncate toward zero.  Expected values come from
``exact.py``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import exact
from spec_helpers import check_result as _check, dtype_by_name as _dtype, random_data as _random
from reducemean.specs import openvino as spec

T_NAMES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
           "float16", "bfloat16", "float32", "float64"]
T_IND = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


# ---------------------------------------------------------------- spec examples


@pytest.mark.parametrize(
    "axes, keep_dims, out_shape",
    [
        ([2, 3], True, (6, 12, 1, 1)),
        ([2, 3], False, (6, 12)),
        ([1], False, (6, 10, 24)),
        ([-2], False, (6, 12, 24)),
    ],
    ids=repr,
)
def test_spec_page_examples(axes, keep_dims, out_shape):
    data = _random(np.random.default_rng(21), (6, 12, 10, 24), np.int32)
    got = spec.reduce_mean(data, np.array(axes, dtype=np.int64), keep_dims=keep_dims)
    assert np.asarray(got).shape == out_shape
    _check(got, data, tuple(sorted(a % 4 for a in axes)), keep_dims)


# ---------------------------------------------------------------- T


@pytest.mark.parametrize("name", T_NAMES)
@pytest.mark.parametrize("keep_dims", [False, True])
def test_any_numeric_type(name, keep_dims):
    dtype = _dtype(name)
    data = _random(np.random.default_rng(22), (5, 4, 3), dtype)
    for axes, ax in ((np.array([0]), (0,)), (np.array([2, 0]), (0, 2)),
                     (np.array([-1, -2, -3]), (0, 1, 2)), (1, (1,))):
        got = spec.reduce_mean(data, axes, keep_dims=keep_dims)
        _check(got, data, ax, keep_dims)


@pytest.mark.parametrize(
    "values, name",
    [
        ([-7, 0, 0], "int8"),          # -7/3 -> -2, not -3
        ([-128, -128, 127], "int8"),   # sum overflows int8
        ([127] * 9, "int8"),
        ([255, 255, 254], "uint8"),    # sum overflows uint8
        ([-32768, -1], "int16"),       # -16384.5 -> -16384
        ([65535, 65534], "uint16"),
        ([-1, 0], "int32"),            # -0.5 -> 0
        ([2**63 - 1, 2**63 - 2], "int64"),
        ([2**64 - 1] * 3 + [2**64 - 2], "uint64"),
    ],
    ids=repr,
)
def test_integer_truncation_toward_zero(values, name):
    data = np.array(values, dtype=name)
    got = np.asarray(spec.reduce_mean(data, np.array([0])))
    assert got.dtype == data.dtype
    assert got.shape == ()
    assert int(got) == exact.trunc_mean(values)


def test_keep_dims_defaults_to_false():
    data = _random(np.random.default_rng(23), (3, 4), np.float32)
    got = spec.reduce_mean(data, np.array([1]))
    assert np.asarray(got).shape == (3,)
    _check(got, data, (1,), False)
    got = spec.reduce_mean(data, 0)
    assert np.asarray(got).shape == (4,)


# ---------------------------------------------------------------- axes


@pytest.mark.parametrize("axes_dtype", T_IND, ids=lambda t: np.dtype(t).name)
def test_axes_any_integer_type_scalar_and_1d(axes_dtype):
    data = _random(np.random.default_rng(24), (3, 4, 5), np.float32)
    got = spec.reduce_mean(data, np.array([2, 0], dtype=axes_dtype))
    _check(got, data, (0, 2), False)
    got = spec.reduce_mean(data, np.array(1, dtype=axes_dtype), keep_dims=True)
    _check(got, data, (1,), True)
    got = spec.reduce_mean(data, axes_dtype(2))
    _check(got, data, (2,), False)
    if np.dtype(axes_dtype).kind == "i":
        got = spec.reduce_mean(data, np.array([-1, -3], dtype=axes_dtype))
        _check(got, data, (0, 2), False)


def test_python_int_scalar_axes():
    data = _random(np.random.default_rng(25), (3, 4), np.float64)
    _check(spec.reduce_mean(data, -1), data, (1,), False)
    _check(spec.reduce_mean(data, 0, keep_dims=True), data, (0,), True)


def test_axes_is_required():
    data = np.ones((2, 3), dtype=np.float32)
    with pytest.raises(TypeError):
        spec.reduce_mean(data)  # missing required argument
    with pytest.raises(ValueError, match=r"^ReduceMean-1: input 2 'axes' is required$"):
        spec.reduce_mean(data, None)


@pytest.mark.parametrize("axes", [np.array([[0, 1]]), np.array([[0]]), np.zeros((1, 1, 1), int)],
                         ids=lambda a: str(a.shape))
def test_axes_of_rank_2_or_more_refused(axes):
    data = np.ones((2, 3), dtype=np.float32)
    with pytest.raises(ValueError, match=r"^ReduceMean-1: 'axes' must be a scalar or 1D tensor, "
                                         + re.escape(f"got shape {axes.shape}")):
        spec.reduce_mean(data, axes)


@pytest.mark.parametrize("axes", [np.array([1, 1]), np.array([0, -2]), np.array([-1, 1, 0]),
                                  np.array([1, 1], dtype=np.uint8)], ids=repr)
def test_duplicate_axes_refused(axes):
    data = np.ones((2, 3), dtype=np.float32)
    values = [int(v) for v in axes]
    with pytest.raises(ValueError, match=r"^ReduceMean-1: " + re.escape(f"axes {values} name axis ")
                       + r"\d more than once; axes must be unique and in \[-r, r-1\]$"):
        spec.reduce_mean(data, axes)


@pytest.mark.parametrize("axes", [np.array([2]), np.array([-3]), np.array([0, 9]), 2, -3,
                                  np.array(5, dtype=np.int8),
                                  np.array([2**64 - 1], dtype=np.uint64)], ids=repr)
def test_out_of_range_axes_refused(axes):
    data = np.ones((2, 3), dtype=np.float32)
    bad = next(int(v) for v in np.atleast_1d(axes) if not -2 <= int(v) <= 1)
    with pytest.raises(ValueError, match=r"^ReduceMean-1: " + re.escape(
            f"axes value {bad} is out of range [-2, 1] for a rank-2 input; "
            "axes must be unique and in [-r, r-1]") + "$"):
        spec.reduce_mean(data, axes)


@pytest.mark.parametrize("axes", [np.array([1.0]), np.array(0.0), np.array([0.5, 1.0]), 1.0,
                                  np.float32(0), np.array([True]), np.array(["1"])], ids=repr)
def test_non_integer_axes_refused(axes):
    data = np.ones((2, 3), dtype=np.float32)
    with pytest.raises(TypeError, match=r"^ReduceMean-1: axes must be integers, got an array of "
                       + re.escape(f"{np.asarray(axes).dtype}; 'axes' is a scalar or 1D tensor "
                                   "of unique elements and type T_IND") + "$"):
        spec.reduce_mean(data, axes)


@pytest.mark.parametrize("dtype", [np.bool_, np.complex64, np.complex128, np.longdouble, object,
                                   "datetime64[s]", "U2"], ids=str)
def test_non_numeric_data_refused(dtype):
    # "T: any supported numeric type": OpenVINO's numeric types are its
    # integers and floats (boolean and complex values are not)
    data = np.zeros((2, 3), dtype=dtype)
    name = np.dtype(dtype).name
    with pytest.raises(TypeError, match=r"^ReduceMean-1: " + re.escape(
            f"data type {name} breaks 'T: any supported numeric type'") + "$"):
        spec.reduce_mean(data, np.array([0]))


@pytest.mark.parametrize("name", ["float32", "int8", "uint64", "bfloat16", "float16"])
@pytest.mark.parametrize("keep_dims", [False, True])
@pytest.mark.parametrize("axes_dtype", [np.int64, np.int32, np.uint8])
def test_empty_axes_is_identity_new_array(name, keep_dims, axes_dtype):
    dtype = _dtype(name)
    data = _random(np.random.default_rng(26), (3, 2, 4), dtype)
    before = data.copy()
    got = spec.reduce_mean(data, np.array([], dtype=axes_dtype), keep_dims=keep_dims)
    assert isinstance(got, np.ndarray)
    assert got.dtype == dtype and got.shape == data.shape
    assert np.array_equal(got.view(np.uint8), data.view(np.uint8))
    assert not np.shares_memory(got, data)
    got[...] = 0
    assert np.array_equal(data.view(np.uint8), before.view(np.uint8))
