"""Tests for ``reducemean.specs.onnx.reduce_mean`` (CONTRACT.md section 3).

Opset table (spec pages 001/002):

========  ============  ==================  ==============  ===========
opset     axes          negative axes       noop attribute  bfloat16
========  ============  ==================  ==============  ===========
1         attribute     refused             refused         refused
11        attribute     [-r, r-1]           refused         refused
13        attribute     [-r, r-1]           refused         accepted
18        input         [-r, r-1]           accepted        accepted
========  ============  ==================  ==============  ===========

T at every opset: double, float, float16, int32, int64, uint32, uint64
(+ bfloat16 from 13).  Expected values come from ``exact.py``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import exact
from spec_helpers import check_result as _check, dtype_by_name as _dtype, random_data as _random
from reducemean.specs import onnx as spec

OPSETS = [1, 11, 13, 18]
BASE_NAMES = ["float64", "float32", "float16", "int32", "int64", "uint32", "uint64"]
REFUSED_NAMES = ["int8", "int16", "uint8", "uint16", "bool", "complex64", "complex128"]


def _prefix(opset, version=None):
    """The start of every error message: the operator version the opset runs, and the opset."""
    version = opset if version is None else version
    return re.escape(f"ReduceMean-{version} (opset {opset}): ")


def _axes_arg(axes, opset):
    """Axes as the opset spells them: an int64 input from 18, a list attribute before."""
    if axes is None:
        return None
    return np.array(axes, dtype=np.int64) if opset >= 18 else list(axes)


# ---------------------------------------------------------------- types


def _accepted(opset):
    return BASE_NAMES + (["bfloat16"] if opset >= 13 else [])


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", BASE_NAMES + ["bfloat16"])
def test_type_table(opset, name):
    dtype = _dtype(name)
    data = _random(np.random.default_rng(11), (4, 3, 2), dtype)
    if name in _accepted(opset):
        got = spec.reduce_mean(data, axes=_axes_arg([0, 2], opset), keepdims=0, opset=opset)
        _check(got, data, (0, 2), False)
    else:
        with pytest.raises(TypeError, match=r"(?i)bfloat16|bf16"):
            spec.reduce_mean(data, axes=_axes_arg([0], opset), opset=opset)


@pytest.mark.parametrize("opset", [1, 11])
def test_bfloat16_refusal_quotes_the_opset_rule(opset):
    # the message names the opset whose type list is broken (or the opset
    # bfloat16 needs); either way it quotes an opset number
    data = np.ones((2, 2), dtype=_dtype("bfloat16"))
    with pytest.raises(TypeError, match=rf"(?<!\d)({opset}|13)(?!\d)"):
        spec.reduce_mean(data, opset=opset)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", REFUSED_NAMES)
def test_types_outside_the_list_refused(opset, name):
    dtype = np.dtype(name)
    data = np.ones((2, 3), dtype=dtype)
    with pytest.raises(TypeError, match=re.escape(dtype.name)):
        spec.reduce_mean(data, axes=_axes_arg([1], opset), opset=opset)
    with pytest.raises(TypeError):
        spec.reduce_mean(data, opset=opset)


# ---------------------------------------------------------------- axes


@pytest.mark.parametrize("opset", [1])
@pytest.mark.parametrize("axes", [[-1], [0, -2], [-3]], ids=repr)
def test_negative_axes_refused_below_11(opset, axes):
    data = np.ones((2, 3, 4), dtype=np.float32)
    with pytest.raises(ValueError, match=r"(?i)negativ|\b11\b"):
        spec.reduce_mean(data, axes=axes, opset=opset)


@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("axes, ax", [([-1], (2,)), ([0, -2], (0, 1)), ([-3, -1], (0, 2))],
                         ids=repr)
@pytest.mark.parametrize("keepdims", [1, 0])
def test_negative_axes_accepted_from_11(opset, axes, ax, keepdims):
    data = _random(np.random.default_rng(12), (2, 3, 4), np.float32)
    got = spec.reduce_mean(data, axes=_axes_arg(axes, opset), keepdims=keepdims, opset=opset)
    _check(got, data, ax, keepdims)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", ["float32", "float64", "int64", "uint32", "int32"])
@pytest.mark.parametrize("axes, ax", [(None, (0, 1, 2)), ([0], (0,)), ([2, 1], (1, 2)),
                                      ([0, 1, 2], (0, 1, 2))], ids=repr)
@pytest.mark.parametrize("keepdims", [1, 0])
def test_values_at_every_opset(opset, name, axes, ax, keepdims):
    dtype = np.dtype(name)
    data = _random(np.random.default_rng(13), (3, 5, 4), dtype)
    got = spec.reduce_mean(data, axes=_axes_arg(axes, opset), keepdims=keepdims, opset=opset)
    _check(got, data, ax, keepdims)


@pytest.mark.parametrize("opset", [1, 11, 13])
def test_axes_attribute_list_of_ints_below_18(opset):
    data = _random(np.random.default_rng(14), (3, 4, 5), np.float64)
    for axes in ([1], (1,), [0, 2], [2, 0]):
        got = spec.reduce_mean(data, axes=axes, keepdims=1, opset=opset)
        _check(got, data, tuple(sorted(axes)), True)


@pytest.mark.parametrize("opset", [1, 11, 13])
def test_empty_axes_attribute_means_all_axes_below_18(opset):
    # an empty INTS attribute cannot be told apart from an absent one in ONNX
    data = _random(np.random.default_rng(15), (3, 4), np.float32)
    for axes in (None, []):
        got = spec.reduce_mean(data, axes=axes, keepdims=0, opset=opset)
        _check(got, data, (0, 1), False)


def test_default_opset_is_18():
    data = _random(np.random.default_rng(16), (3, 4), np.float32)
    got = spec.reduce_mean(data, axes=np.array([-1], dtype=np.int64))
    _check(got, data, (1,), True)
    got = spec.reduce_mean(data, axes=None, noop_with_empty_axes=1)
    np.testing.assert_array_equal(got, data)
    assert not np.shares_memory(got, data)
    got = spec.reduce_mean(data.astype(_dtype("bfloat16")), axes=np.array([0]))
    assert np.asarray(got).dtype == _dtype("bfloat16")


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("axes", [[3], [0, 5], [7]], ids=repr)
def test_out_of_range_axes_refused(opset, axes):
    data = np.ones((2, 3, 4), dtype=np.float32)
    bad = next(a for a in axes if a > 2)
    low = 0 if opset < 11 else -3  # negative axes from opset 11
    with pytest.raises(ValueError, match=_prefix(opset) + re.escape(
            f"axes value {bad} is out of range [{low}, 2] for a rank-3 input; ")
            + (r"axes must be unique and in \[0, r-1\]" if opset < 11
               else r"axes must be unique; accepted range is \[-r, r-1\] where r = rank\(data\)$")):
        spec.reduce_mean(data, axes=_axes_arg(axes, opset), opset=opset)


@pytest.mark.parametrize("opset", [11, 13, 18])
def test_negative_out_of_range_refused(opset):
    data = np.ones((2, 3, 4), dtype=np.float32)
    with pytest.raises(ValueError, match=_prefix(opset) + re.escape(
            "axes value -4 is out of range [-3, 2] for a rank-3 input; ")):
        spec.reduce_mean(data, axes=_axes_arg([-4], opset), opset=opset)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("axes", [[1, 1], [0, 2, 0]], ids=repr)
def test_duplicate_axes_refused(opset, axes):
    data = np.ones((2, 3, 4), dtype=np.float32)
    with pytest.raises(ValueError, match=_prefix(opset) + re.escape(
            f"axes {axes} name axis {axes[0]} more than once; axes must be unique")):
        spec.reduce_mean(data, axes=_axes_arg(axes, opset), opset=opset)


@pytest.mark.parametrize("opset", [11, 13, 18])
def test_duplicate_via_negative_refused(opset):
    data = np.ones((2, 3, 4), dtype=np.float32)
    with pytest.raises(ValueError, match=_prefix(opset) + re.escape("axes [2, -1] name axis 2 more than once")):
        spec.reduce_mean(data, axes=_axes_arg([2, -1], opset), opset=opset)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("axes", [[1.0], [0.5], ["0"]], ids=repr)
def test_non_integer_axes_refused(opset, axes):
    data = np.ones((2, 3, 4), dtype=np.float32)
    bad = np.array(axes) if opset >= 18 else axes
    value = f"an array of {bad.dtype}" if opset >= 18 else f"{axes[0]!r} in {axes!r}"
    rule = "axes: an input tensor(int64)" if opset >= 18 else "axes: a list of integers"
    with pytest.raises(TypeError, match=_prefix(opset) + re.escape(
            f"axes must be integers, got {value}; {rule}") + "$"):
        spec.reduce_mean(data, axes=bad, opset=opset)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name,value,exc", [("keepdims", 2, ValueError), ("keepdims", "1", TypeError),
                                            ("noop_with_empty_axes", -1, ValueError)], ids=repr)
def test_bad_flags_refused_naming_the_version(opset, name, value, exc):
    data = np.ones((2, 3, 4), dtype=np.float32)
    with pytest.raises(exc, match=_prefix(opset) + re.escape(f"{name} must be 0 or 1") + ".*"
                       + re.escape(f"got {value!r}") + "$"):
        spec.reduce_mean(data, axes=_axes_arg([0], opset), opset=opset, **{name: value})


# ---------------------------------------------------------------- the opset argument


@pytest.mark.parametrize("opset,version", [(2, 1), (10, 1), (12, 11), (16, 13), (17, 13), (19, 18),
                                           (25, 18), (np.int64(13), 13)])
def test_an_opset_runs_the_newest_version_not_above_it(opset, version):
    # ONNX: a model's opset imports each operator's newest version not above it
    data = _random(np.random.default_rng(int(opset)), (3, 4), np.float32)
    _check(spec.reduce_mean(data, axes=_axes_arg([1], version), keepdims=0, opset=opset),
           data, (1,), False)
    bf16 = data.astype(_dtype("bfloat16"))
    if version >= 13:
        _check(spec.reduce_mean(bf16, axes=_axes_arg([1], version), opset=opset), bf16, (1,), True)
    else:
        with pytest.raises(TypeError, match=_prefix(opset, version) + "input type bfloat16 is not in T"):
            spec.reduce_mean(bf16, axes=_axes_arg([1], version), opset=opset)
    noop = dict(axes=_axes_arg([], version), noop_with_empty_axes=1, opset=opset)
    if version >= 18:
        got = spec.reduce_mean(data, **noop)
        assert np.array_equal(got, data) and not np.shares_memory(got, data)
    else:
        with pytest.raises(ValueError, match=_prefix(opset, version) + "no attribute noop_with_empty_axes"):
            spec.reduce_mean(data, **noop)
    if version < 11:
        with pytest.raises(ValueError, match=_prefix(opset, version) + "negative axes"):
            spec.reduce_mean(data, axes=[-1], opset=opset)


@pytest.mark.parametrize("opset,exc", [(0, ValueError), (-18, ValueError), (True, TypeError),
                                       (18.0, TypeError), ("18", TypeError), (None, TypeError)],
                         ids=repr)
def test_invalid_opsets_refused(opset, exc):
    with pytest.raises(exc, match=r"^opset must be (an int|1 or more), got " + re.escape(repr(opset)
                       if exc is TypeError else str(opset)) + "$"):
        spec.reduce_mean(np.ones((2, 3), np.float32), axes=[0], opset=opset)


# ---------------------------------------------------------------- noop_with_empty_axes


@pytest.mark.parametrize("opset", [1, 11, 13])
@pytest.mark.parametrize("noop", [1, True, 2])
def test_truthy_noop_refused_below_18(opset, noop):
    data = np.ones((2, 3), dtype=np.float32)
    with pytest.raises(ValueError, match=r"noop_with_empty_axes|18"):
        spec.reduce_mean(data, noop_with_empty_axes=noop, opset=opset)
    with pytest.raises(ValueError, match=r"noop_with_empty_axes|18"):
        spec.reduce_mean(data, axes=[1], noop_with_empty_axes=noop, opset=opset)


@pytest.mark.parametrize("opset", [1, 11, 13])
@pytest.mark.parametrize("noop", [0, False])
def test_falsy_noop_accepted_below_18(opset, noop):
    data = _random(np.random.default_rng(17), (2, 3), np.float32)
    got = spec.reduce_mean(data, axes=[1], noop_with_empty_axes=noop, opset=opset)
    _check(got, data, (1,), True)


@pytest.mark.parametrize("axes", [None, np.array([], dtype=np.int64)], ids=repr)
@pytest.mark.parametrize("keepdims", [1, 0])
def test_noop_at_18(axes, keepdims):
    data = _random(np.random.default_rng(18), (2, 3, 4), np.float32)
    got = spec.reduce_mean(data, axes=axes, keepdims=keepdims, noop_with_empty_axes=1,
                           opset=18)
    assert isinstance(got, np.ndarray)
    assert got.dtype == data.dtype and got.shape == data.shape
    np.testing.assert_array_equal(got, data)
    assert not np.shares_memory(got, data)
    got = spec.reduce_mean(data, axes=axes, keepdims=keepdims, noop_with_empty_axes=0,
                           opset=18)
    _check(got, data, (0, 1, 2), keepdims)


# ---------------------------------------------------------------- integers / rank 0


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize(
    "values, name",
    [
        ([-7, 0, 0], "int32"),
        ([-7, 0, 0], "int64"),
        ([2**63 - 1] * 5 + [2**63 - 2], "int64"),
        ([-(2**63)] * 4 + [1], "int64"),
        ([2**64 - 1, 2**64 - 2], "uint64"),
        ([2**32 - 1] * 3 + [2**32 - 2], "uint32"),
    ],
    ids=repr,
)
def test_integer_truncation_toward_zero_every_opset(opset, values, name):
    data = np.array(values, dtype=name)
    got = spec.reduce_mean(data, axes=_axes_arg([0], opset), keepdims=0, opset=opset)
    got = np.asarray(got)
    assert got.dtype == data.dtype
    assert int(got) == exact.trunc_mean(values)


@pytest.mark.parametrize("opset", OPSETS)
def test_rank0_input(opset):
    data = np.array(-2.5, dtype=np.float32)
    got = np.asarray(spec.reduce_mean(data, opset=opset))
    assert got.shape == () and got.dtype == np.float32 and float(got) == -2.5
