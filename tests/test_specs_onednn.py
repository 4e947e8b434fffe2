"""Tests for ``reducemean.specs.onednn.reduce_mean`` (oneDNN Graph, CONTRACT.md section 3).

Spec page 003: ``axes`` is an s64-list attribute *or* a second input (a 1-D
s32 tensor of unique elements), exactly one of the two; ``keep_dims``
defaults to false; src/dst are f32, bf16 or f16; empty axes is the identity.
Expected values come from ``exact.py``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from spec_helpers import check_result as _check, dtype_by_name as _dtype, random_data as _random
from reducemean.specs import onednn as spec

SRC_NAMES = ["float32", "bfloat16", "float16"]
_EXACTLY_ONE = ("^oneDNN ReduceMean: exactly one of attribute 'axes' and the second input "
                "tensor 'axes' should be available$")


def _s32(vals):
    return np.array(vals, dtype=np.int32)


# ---------------------------------------------------------------- values


@pytest.mark.parametrize("name", SRC_NAMES)
@pytest.mark.parametrize("keep_dims", [False, True])
@pytest.mark.parametrize("axes, ax", [([0], (0,)), ([1, 2], (1, 2)), ([-1], (2,)),
                                      ([2, -3], (0, 2)), ([0, 1, 2], (0, 1, 2))], ids=repr)
def test_values_axes_attribute_and_input(name, keep_dims, axes, ax):
    dtype = _dtype(name)
    data = _random(np.random.default_rng(31), (6, 5, 4), dtype)
    got = spec.reduce_mean(data, axes=axes, keep_dims=keep_dims)
    _check(got, data, ax, keep_dims)
    got = spec.reduce_mean(data, keep_dims=keep_dims, axes_input=_s32(axes))
    _check(got, data, ax, keep_dims)


def test_axes_attribute_tuple_and_numpy_ints():
    data = _random(np.random.default_rng(32), (3, 4), np.float32)
    _check(spec.reduce_mean(data, axes=(1,)), data, (1,), False)
    _check(spec.reduce_mean(data, axes=[np.int64(0)]), data, (0,), False)


def test_long_reduction_accuracy_f16_bf16():
    # running sums in the src type would stall (f16 at 2048, bf16 at 256)
    for name in ("float16", "bfloat16"):
        dtype = _dtype(name)
        data = np.full((4000, 2), 0.7, dtype=np.float32).astype(dtype)
        got = np.asarray(spec.reduce_mean(data, axes=[0]))
        assert got.dtype == dtype
        want = float(data[0, 0])
        assert [float(x) for x in got] == [want, want]


def test_keep_dims_defaults_to_false():
    data = _random(np.random.default_rng(33), (3, 4, 2), np.float32)
    assert np.asarray(spec.reduce_mean(data, axes=[1])).shape == (3, 2)
    assert np.asarray(spec.reduce_mean(data, axes_input=_s32([1]))).shape == (3, 2)


# ---------------------------------------------------------------- exactly one of axes


def test_neither_axes_nor_axes_input_refused():
    data = np.ones((2, 3), dtype=np.float32)
    with pytest.raises(ValueError, match=_EXACTLY_ONE):
        spec.reduce_mean(data)
    with pytest.raises(ValueError, match=_EXACTLY_ONE):
        spec.reduce_mean(data, keep_dims=True)


@pytest.mark.parametrize("axes, axes_input", [([1], [1]), ([0], [1]), ([], []), ([0], [])],
                         ids=repr)
def test_both_axes_and_axes_input_refused(axes, axes_input):
    data = np.ones((2, 3), dtype=np.float32)
    with pytest.raises(ValueError, match=_EXACTLY_ONE):
        spec.reduce_mean(data, axes=axes, axes_input=_s32(axes_input))


# ---------------------------------------------------------------- axes_input form


@pytest.mark.parametrize("bad", [np.array([1], dtype=np.int64), np.array([1], dtype=np.int16),
                                 np.array([1], dtype=np.uint32), np.array([1.0], np.float32),
                                 np.array([1.0]), np.array([True])],
                         ids=lambda a: a.dtype.name)
def test_axes_input_must_be_s32(bad):
    data = np.ones((2, 3), dtype=np.float32)
    with pytest.raises(TypeError, match=r"^oneDNN ReduceMean: input 'axes' must be a 1-D s32 tensor, "
                       + re.escape(f"got {bad.dtype}") + "$"):
        spec.reduce_mean(data, axes_input=bad)


@pytest.mark.parametrize("bad", [np.array(1, dtype=np.int32), np.array([[0, 1]], dtype=np.int32),
                                 np.zeros((1, 1, 1), np.int32)],
                         ids=lambda a: f"ndim{a.ndim}")
def test_axes_input_must_be_1d(bad):
    data = np.ones((2, 3), dtype=np.float32)
    with pytest.raises(ValueError, match=r"^oneDNN ReduceMean: input 'axes' must be a 1-D s32 tensor, "
                       + re.escape(f"got shape {bad.shape}") + "$"):
        spec.reduce_mean(data, axes_input=bad)


@pytest.mark.parametrize("vals", [[1, 1], [0, -2], [-1, 1]], ids=repr)
def test_duplicate_axes_refused(vals):
    data = np.ones((2, 3), dtype=np.float32)
    msg = (r"^oneDNN ReduceMean: " + re.escape(f"axes {vals} name axis ")
           + r"\d more than once; axes must be unique and in \[-r, r-1\]$")
    with pytest.raises(ValueError, match=msg):
        spec.reduce_mean(data, axes_input=_s32(vals))
    with pytest.raises(ValueError, match=msg):
        spec.reduce_mean(data, axes=vals)


@pytest.mark.parametrize("vals", [[2], [-3], [0, 5]], ids=repr)
def test_out_of_range_axes_refused(vals):
    data = np.ones((2, 3), dtype=np.float32)
    bad = next(v for v in vals if not -2 <= v <= 1)
    msg = r"^oneDNN ReduceMean: " + re.escape(
        f"axes value {bad} is out of range [-2, 1] for a rank-2 input; "
        "axes must be unique and in [-r, r-1]") + "$"
    with pytest.raises(ValueError, match=msg):
        spec.reduce_mean(data, axes_input=_s32(vals))
    with pytest.raises(ValueError, match=msg):
        spec.reduce_mean(data, axes=vals)


@pytest.mark.parametrize("axes", [[1.0], [0.5], ["1"], [True], 1.5], ids=repr)
def test_non_integer_axes_attribute_refused(axes):
    data = np.ones((2, 3), dtype=np.float32)
    with pytest.raises(TypeError, match=r"^oneDNN ReduceMean: axes must be (integers|an int).*"
                                        r"; attribute 'axes' is a s64 list$"):
        spec.reduce_mean(data, axes=axes)


# ---------------------------------------------------------------- src types


@pytest.mark.parametrize("name", ["float64", "int32", "int8", "uint8", "int64", "bool",
                                  "complex64"])
def test_src_types_other_than_f32_bf16_f16_refused(name):
    dtype = np.dtype(name)
    data = np.ones((2, 3), dtype=dtype)
    with pytest.raises(TypeError):
        spec.reduce_mean(data, axes=[1])
    with pytest.raises(TypeError):
        spec.reduce_mean(data, axes_input=_s32([1]))


# ---------------------------------------------------------------- empty axes


@pytest.mark.parametrize("name", SRC_NAMES)
@pytest.mark.parametrize("keep_dims", [False, True])
@pytest.mark.parametrize("form", ["attribute", "input"])
def test_empty_axes_is_identity_new_array(name, keep_dims, form):
    dtype = _dtype(name)
    data = _random(np.random.default_rng(34), (3, 2, 4), dtype)
    before = data.copy()
    if form == "attribute":
        got = spec.reduce_mean(data, axes=[], keep_dims=keep_dims)
    else:
        got = spec.reduce_mean(data, keep_dims=keep_dims, axes_input=_s32([]))
    assert isinstance(got, np.ndarray)
    assert got.dtype == dtype and got.shape == data.shape
    assert np.array_equal(got.view(np.uint8), data.view(np.uint8))
    assert not np.shares_memory(got, data)
    got[...] = 0
    assert np.array_equal(data.view(np.uint8), before.view(np.uint8))
