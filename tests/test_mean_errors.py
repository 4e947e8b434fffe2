"""``reducemean.mean`` raises what numpy.mean raises, and hands dtypes off its
fast path (object, datetime/timedelta, longdouble, strings, structured) to
numpy unchanged (CONTRACT.md section 1).

Expected outcomes are always numpy's own, computed in the test.
"""

from __future__ import annotations

import math
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import reducemean

AxisError = np.exceptions.AxisError


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

def run(fn, *args, **kwargs):
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        try:
            return fn(*args, **kwargs), None
        except Exception as e:  # noqa: BLE001
            return None, e


def public_type(exc):
    """The exception class a user would catch: numpy's private subclasses
    (e.g. _UFuncNoLoopError) are mapped to their first public base
    (AxisError, or a builtin such as TypeError / ValueError)."""
    for cls in type(exc).__mro__:
        if cls is AxisError:
            return cls
        if cls.__module__ == "builtins":
            return cls
    return Exception


def same_value(got, ref):
    """Equal values, NaN == NaN, for numpy/Python scalars and arrays (any dtype)."""
    if isinstance(ref, np.ndarray):
        if not isinstance(got, np.ndarray) or got.shape != ref.shape or got.dtype != ref.dtype:
            return False
        return all(same_value(g, r) for g, r in zip(got.ravel().tolist(), ref.ravel().tolist())) \
            if ref.dtype == object else bool(np.array_equal(got, ref, equal_nan=ref.dtype.kind in "fcmM"))
    try:
        if isinstance(ref, (float, np.floating, complex, np.complexfloating)):
            r, g = complex(ref), complex(got)
            return all((math.isnan(x) and math.isnan(y)) or x == y
                       for x, y in ((r.real, g.real), (r.imag, g.imag)))
    except TypeError:
        pass
    if isinstance(ref, (np.datetime64, np.timedelta64)):
        return type(got) is type(ref) and got.dtype == ref.dtype and (
            (np.isnat(ref) and np.isnat(got)) or got == ref)
    return bool(got == ref)


def assert_same_as_numpy(*args, **kwargs):
    """numpy.mean and reducemean.mean agree: the same exception type, or a result
    of the same type, dtype, shape and value."""
    ref, ref_exc = run(np.mean, *args, **kwargs)
    got, exc = run(reducemean.mean, *args, **kwargs)
    if ref_exc is not None:
        assert exc is not None, (
            f"numpy raises {type(ref_exc).__name__}: {ref_exc}; reducemean returned {got!r}")
        want = public_type(ref_exc)
        assert isinstance(exc, want), (
            f"numpy raises {type(ref_exc).__name__} ({want.__name__}): {ref_exc}; "
            f"reducemean raises {type(exc).__name__}: {exc}")
        if want is not AxisError:
            assert not isinstance(exc, AxisError) or isinstance(ref_exc, AxisError), exc
        return None, exc
    assert exc is None, f"numpy returns {ref!r}; reducemean raises {type(exc).__name__}: {exc}"
    assert type(got) is type(ref), f"type: got {type(got)!r}, numpy {type(ref)!r}"
    if isinstance(ref, (np.ndarray, np.generic)):
        assert got.dtype == ref.dtype, f"dtype: got {got.dtype}, numpy {ref.dtype}"
        assert np.shape(got) == np.shape(ref)
    assert same_value(got, ref), f"value: got {got!r}, numpy {ref!r}"
    return got, None


# --------------------------------------------------------------------------
# axis errors
# --------------------------------------------------------------------------

AXIS_OUT_OF_RANGE = [
    ((2, 3), 2),
    ((2, 3), -3),
    ((2, 3), (0, 2)),
    ((2, 3), (-3,)),
    ((2, 3), (-3, 1)),
    ((2, 3, 4), (1, 3)),
    ((2, 3, 4), 100),
    ((2, 3, 4), 2**31 - 1),
    ((5,), 1),
    ((5,), (0, 1)),
    ((), 0),
    ((), -1),
    ((), (0,)),
    ((0, 3), 2),
]

ERR_DTYPES = ["bool", "int8", "int64", "uint64", "float16", "float32", "float64", "complex64", "bfloat16"]


def _dtype(name):
    if name == "bfloat16":
        return np.dtype(pytest.importorskip("ml_dtypes").bfloat16)
    return np.dtype(name)


@pytest.mark.parametrize("name", ERR_DTYPES)
@pytest.mark.parametrize("shape,axis", AXIS_OUT_OF_RANGE, ids=repr)
def test_axis_out_of_range_raises_axis_error(shape, axis, name):
    a = np.zeros(shape, _dtype(name))
    with pytest.raises(AxisError):
        np.mean(a, axis=axis)
    with pytest.raises(AxisError):
        reducemean.mean(a, axis=axis)
    with pytest.raises(AxisError):
        reducemean.mean(a, axis=axis, keepdims=True)
    # AxisError is also an IndexError and a ValueError, as in numpy
    with pytest.raises(IndexError):
        reducemean.mean(a, axis=axis)


def test_axis_out_of_range_with_list_input_and_out():
    with pytest.raises(AxisError):
        reducemean.mean([1.0, 2.0], axis=1)
    with pytest.raises(AxisError):
        reducemean.mean([[1, 2], [3, 4]], axis=(0, 2), out=np.empty(2))
    with pytest.raises(AxisError):
        reducemean.mean(np.ones((2, 2)), axis=5, where=np.ones((2, 2), bool))


DUPLICATES = [
    ((2, 3), (0, 0)),
    ((2, 3), (0, -2)),
    ((2, 3), (-1, 1)),
    ((2, 3, 4), (1, 0, 1)),
    ((2, 3, 4), (2, -1, 0)),
    ((5,), (0, 0)),
    ((5,), (0, -1)),
]


@pytest.mark.parametrize("name", ERR_DTYPES)
@pytest.mark.parametrize("shape,axis", DUPLICATES, ids=repr)
def test_duplicate_axis_raises_value_error(shape, axis, name):
    a = np.zeros(shape, _dtype(name))
    with pytest.raises(ValueError) as ref:
        np.mean(a, axis=axis)
    with pytest.raises(ValueError) as got:
        reducemean.mean(a, axis=axis)
    # numpy's is a plain ValueError (not an AxisError)
    assert isinstance(got.value, AxisError) == isinstance(ref.value, AxisError), got.value
    with pytest.raises(ValueError):
        reducemean.mean(a, axis=axis, keepdims=True)


NON_INTEGER_AXES = [
    1.0,
    0.5,
    np.float64(1.0),
    "0",
    "x",
    b"0",
    ((0,),),
    ((0, 1),),
    (0, (1,)),
    (0, 1.0),
    (0, "1"),
    (1.0,),
    (0, None),
]


@pytest.mark.parametrize("axis", NON_INTEGER_AXES, ids=repr)
def test_non_integer_axis_raises_type_error(axis):
    a = np.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError):
        np.mean(a, axis=axis)
    with pytest.raises(TypeError):
        reducemean.mean(a, axis=axis)
    with pytest.raises(TypeError):
        reducemean.mean(a.astype(np.int32), axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [
    [0], [0, 1], np.array([0, 1]), np.array([1]), True, False, (True,), np.bool_(True),
    np.int64(1), np.uint8(0), np.array(1), np.array(-1, dtype=np.int8), (np.int16(0), np.int32(-1)),
    {0}, range(2), slice(0, 1), Fraction(1), Decimal(1), 1 + 0j,
    2**31, -(2**40), (0, 2**63),  # numpy: OverflowError
], ids=repr)
def test_unusual_axis_values_as_numpy(axis):
    """Lists, arrays, bools, numpy ints...: whatever numpy does (result or exception type)."""
    for a in (np.arange(6.0).reshape(2, 3), np.arange(6, dtype=np.int16).reshape(2, 3)):
        assert_same_as_numpy(a, axis=axis)


# --------------------------------------------------------------------------
# out= errors and casts
# --------------------------------------------------------------------------

def _out_cases():
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    cases = [
        ("wrong_length", dict(axis=0), np.empty((5, 4))),
        ("too_many_dims", dict(axis=0), np.empty((1, 3, 4))),
        ("too_few_dims", dict(axis=0), np.empty(12)),
        ("transposed_shape", dict(axis=0), np.empty((4, 3))),
        ("keepdims_needs_ndim", dict(axis=0, keepdims=True), np.empty((3, 4))),
        ("keepdims_wrong_len", dict(axis=0, keepdims=True), np.empty((2, 3, 4))),
        ("full_reduction_1d", dict(), np.empty(1)),
        ("full_reduction_2d", dict(), np.empty((1, 1))),
        ("full_keepdims_0d", dict(keepdims=True), np.empty(())),
        ("axis_reduction_0d", dict(axis=1), np.empty(())),
        ("broadcastable_but_wrong", dict(axis=(0, 1)), np.empty((1, 4))),
        ("size_one_where_four", dict(axis=(0, 1)), np.empty((1,))),
        ("list", dict(axis=0), [[0.0] * 4] * 3),
        ("tuple_of_array", dict(axis=0), (np.empty((3, 4)),)),
        ("python_float", dict(), 0.0),
        ("readonly", dict(axis=0), None),
        ("int_out", dict(axis=0), np.zeros((3, 4), np.int32)),
        ("uint8_out", dict(axis=(0, 2)), np.zeros(3, np.uint8)),
        ("bool_out", dict(axis=0), np.zeros((3, 4), bool)),
        ("float16_out", dict(axis=0), np.zeros((3, 4), np.float16)),
        ("complex_out", dict(axis=0), np.zeros((3, 4), np.complex128)),
        ("object_out", dict(axis=0), np.zeros((3, 4), object)),
        ("longdouble_out", dict(axis=0), np.zeros((3, 4), np.longdouble)),
        ("datetime_out", dict(axis=0), np.zeros((3, 4), "M8[s]")),
        ("timedelta_out", dict(axis=0), np.zeros((3, 4), "m8[s]")),
        ("str_out", dict(axis=0), np.zeros((3, 4), "U8")),
        ("bytes_out", dict(axis=0), np.zeros((3, 4), "S8")),
        ("void_out", dict(axis=0), np.zeros((3, 4), "V8")),
        ("int_out_0d", dict(), np.zeros((), np.int64)),
    ]
    return a, cases


_OUT_CASE_NAMES = [c[0] for c in _out_cases()[1]]


def _fresh_out(name, template):
    if name == "readonly":
        o = np.empty((3, 4))
        o.flags.writeable = False
        return o
    if isinstance(template, np.ndarray):
        return template.copy()
    if isinstance(template, tuple):
        return tuple(t.copy() for t in template)
    return template


@pytest.mark.parametrize("case", _OUT_CASE_NAMES)
@pytest.mark.parametrize("in_dtype", ["float64", "float32", "int64", "complex64", "bool"])
def test_out_errors_and_casts_as_numpy(case, in_dtype):
    a, cases = _out_cases()
    a = a.astype(in_dtype)
    _, kw, template = next(c for c in cases if c[0] == case)
    ref_out = _fresh_out(case, template)
    out = _fresh_out(case, template)
    ref, ref_exc = run(np.mean, a, out=ref_out, **kw)
    got, exc = run(reducemean.mean, a, out=out, **kw)
    if ref_exc is not None:
        assert exc is not None, f"numpy raises {ref_exc!r}; reducemean returned {got!r}"
        want = public_type(ref_exc)
        assert isinstance(exc, want), f"numpy: {ref_exc!r}; reducemean: {exc!r}"
        return
    assert exc is None, f"numpy returns {ref!r}; reducemean raises {exc!r}"
    assert got is out, "out must be returned"
    assert same_value(np.asarray(out), np.asarray(ref_out)), f"{out!r} vs numpy {ref_out!r}"


def test_wrong_out_shape_named_cases():
    a = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError):
        reducemean.mean(a, axis=0, out=np.empty(4, np.float32))
    with pytest.raises(ValueError):
        reducemean.mean(a, axis=0, out=np.empty((1, 3), np.float32))
    with pytest.raises(ValueError):
        reducemean.mean(a, out=np.empty((1,), np.float32))
    with pytest.raises(ValueError):
        reducemean.mean(a, axis=1, keepdims=True, out=np.empty(2, np.float32))
    with pytest.raises(TypeError):
        reducemean.mean(a, axis=0, out=[0.0, 0.0, 0.0])


@pytest.mark.parametrize("keepdims", [np.True_, np.False_, 1, 0], ids=repr)
def test_keepdims_of_other_types_as_numpy_after_a_plain_call(keepdims):
    # numpy refuses a numpy bool (an int works); np.True_ == True, so a key
    # of the memo of repeated calls must not take it for the plain bool
    a = np.arange(6.0).reshape(2, 3)
    for axis in (None, 0, (0, 1)):
        reducemean.mean(a, axis=axis, keepdims=bool(keepdims))  # fills the memo
        assert_same_as_numpy(a, axis=axis, keepdims=keepdims)


# --------------------------------------------------------------------------
# where= errors
# --------------------------------------------------------------------------

@pytest.mark.parametrize("where", [
    np.array([1, 0, 1]),  # integer mask: numpy refuses the cast
    np.array([1.0, 0.0, 1.0]),
    np.array([True, False]),  # not broadcastable
    np.ones((3, 2, 3), bool),  # broadcasts to a bigger shape
    [[True], [False], [True]],
    "yes",
    None,
], ids=repr)
def test_where_errors_as_numpy(where):
    a = np.arange(6.0).reshape(2, 3)
    for axis in (None, 0, 1):
        assert_same_as_numpy(a, axis=axis, where=where)


# --------------------------------------------------------------------------
# dtypes off the fast path: numpy's behaviour, unchanged
# --------------------------------------------------------------------------

def _other_inputs():
    return {
        "object_fractions": np.array([Fraction(1, 3), Fraction(1, 2), Fraction(5, 7)], object),
        "object_fractions_2d": np.array([[Fraction(1, 3), Fraction(1, 2)],
                                         [Fraction(2, 3), Fraction(-1, 9)]], object),
        "object_decimals": np.array([Decimal("1.1"), Decimal("2.2"), Decimal("3.3")], object),
        "object_bigints": np.array([2**70, 3, 2**65], object),
        "object_floats": np.array([0.1, 0.2, 0.3, 1e300], object),
        "object_mixed": np.array([1, 2.5, Fraction(1, 2)], object),
        "object_empty": np.array([], object),
        "object_0d": np.array(Fraction(3, 4), object),
        "datetime64": np.array(["2020-01-01", "2020-01-03"], "M8[D]"),
        "datetime64_2d": np.array([["2020-01-01", "2020-01-03"]] * 2, "M8[s]"),
        "timedelta64": np.array([1, 2, 4], "m8[s]"),
        "timedelta64_2d": np.arange(12, dtype=np.int64).reshape(3, 4).astype("m8[ms]"),
        "timedelta64_nat": np.array([1, "NaT", 3], "m8[s]"),
        "timedelta64_empty": np.array([], "m8[s]"),
        "longdouble": np.array([1, 2, 4, 0.1], np.longdouble),
        "longdouble_2d": (np.arange(12).reshape(3, 4) / np.longdouble(3)),
        "longdouble_nan": np.array([1, np.nan], np.longdouble),
        "clongdouble": np.array([1 + 2j, 3 - 1j, 0.1j], np.clongdouble),
        "str": np.array(["a", "bc"]),
        "bytes": np.array([b"a", b"bc"]),
        "structured": np.zeros(3, "i4,f8"),
        "void": np.zeros(3, "V4"),
    }


_OTHER_NAMES = sorted(_other_inputs())


@pytest.mark.parametrize("name", _OTHER_NAMES)
def test_other_dtypes_behave_as_numpy(name):
    a = _other_inputs()[name]
    axes = [None, ()]
    if a.ndim >= 1:
        axes += [0, -1, (0,)]
    if a.ndim == 2:
        axes += [1, (0, 1), (1, 0)]
    for axis in axes:
        for keepdims in (False, True):
            assert_same_as_numpy(a, axis=axis, keepdims=keepdims)
    if a.ndim >= 1:
        assert_same_as_numpy(a.T, axis=0)
        assert_same_as_numpy(a[::-1], axis=0)
        mask = np.zeros(a.shape, bool)
        mask[..., :1] = True
        assert_same_as_numpy(a, axis=-1, where=mask)
        ref, ref_exc = run(np.mean, a, axis=0)
        if ref_exc is None:
            out = np.empty_like(np.asarray(ref))
            got, exc = run(reducemean.mean, a, axis=0, out=out)
            assert exc is None, exc
            assert got is out
            assert same_value(out, np.asarray(ref))
    # the same values as a list (numpy picks the dtype)
    if a.dtype == object and a.ndim == 1:
        assert_same_as_numpy(list(a))


@pytest.mark.parametrize("dtype", [object, np.longdouble, np.clongdouble, "m8[s]", "M8[s]", "U3",
                                   np.int8, np.uint16, np.bool_, "not-a-dtype", np.float16,
                                   np.complex64], ids=str)
def test_dtype_argument_off_fast_path_as_numpy(dtype):
    for a in (np.arange(12, dtype=np.int32).reshape(3, 4), np.arange(12.0).reshape(3, 4) / 4):
        for axis in (None, 0, 1):
            assert_same_as_numpy(a, axis=axis, dtype=dtype)


@pytest.mark.parametrize("x", [
    None,
    "abc",
    b"abc",
    [[1, 2], [3]],
    [1, "a"],
    {"a": 1},
    object(),
    [None, 1.0],
    [[1 + 1j, 2], [3, 4]],
    np.float128(2.5) if hasattr(np, "float128") else np.longdouble(2.5),
    Fraction(1, 3),
    Decimal("0.1"),
    2**70,
    -(2**64),
], ids=lambda x: type(x).__name__ + ":" + repr(x)[:20])
def test_odd_inputs_as_numpy(x):
    assert_same_as_numpy(x)


def test_unknown_keyword_is_type_error():
    a = np.ones(3)
    with pytest.raises(TypeError):
        np.mean(a, axes=0)
    with pytest.raises(TypeError):
        reducemean.mean(a, axes=0)
    with pytest.raises(TypeError):
        reducemean.mean(a, 0, None, None, False, True)  # where is keyword-only
