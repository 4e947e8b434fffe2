"""Tests for ``reducemean.mean``: a drop-in for ``numpy.mean`` (CONTRACT.md section 1).

Every expected value comes from numpy (dtype, shape, kind, non-finite
patterns) or from the exact Fraction-based reference in ``exact.py``
(values); nothing is copied from the package's own output.

Accuracy rules checked (see ``check_values``):

* float16, bfloat16, float32 results (and each part of complex64): within
  1 ulp of the exact mean of the input values;
* float64 results from bool/integer input: within 1 ulp of the exact mean;
* float64 results from inexact input (and each part of complex128): the ulp
  distance to the exact mean is <= numpy's ulp distance on the same call, or
  <= 1 ulp.

Random float data is drawn from a bounded exponent range, so that the
exact mean is well defined and reachable by a wide (float64 / compensated)
accumulator; integer data covers the full range of each type.
"""

from __future__ import annotations

import itertools
import math
import zlib
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from exact import exact_mean, exact_mean_values, ulp_distance

import reducemean

EMPTY_MSG = "Mean of empty slice"

DTYPE_NAMES = [
    "bool",
    "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64",
    "complex64", "complex128",
    "bfloat16",
]
FLOAT_NAMES = ["float16", "bfloat16", "float32", "float64"]
COMPLEX_NAMES = ["complex64", "complex128"]
INT_NAMES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


# --------------------------------------------------------------------------
# helpers (independent of the package under test)
# --------------------------------------------------------------------------

def resolve(name):
    """A dtype by name; bfloat16 needs ml_dtypes (skip the test without it)."""
    if name == "bfloat16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def is_bf16(dt):
    return np.dtype(dt).name == "bfloat16"


def is_inexact(dt):
    dt = np.dtype(dt)
    return dt.kind in "fc" or is_bf16(dt)


def part_dtype(dt):
    """The float dtype of one part of a complex dtype (or the dtype itself)."""
    dt = np.dtype(dt)
    if dt.kind == "c":
        return np.dtype(np.float32) if dt.itemsize == 8 else np.dtype(np.float64)
    return dt


def make_floats(dt, shape, rng, lo=None, hi=None):
    """Random values of float dtype ``dt`` with mixed signs, zeros, and a bounded
    exponent range (float64 sums of them are exact for the sizes used here)."""
    dt = np.dtype(dt)
    if dt == np.float16:
        x = rng.standard_normal(shape) * 10.0 ** rng.integers(-4, 4, size=shape)
    else:
        if lo is None:
            lo, hi = (-20, 20) if dt == np.float64 else (-8, 8)
        x = np.exp2(rng.uniform(lo, hi, size=shape)) * rng.choice([-1.0, 1.0], size=shape)
    x = np.asarray(x, dtype=np.float64)
    x[np.asarray(rng.random(shape) < 0.05)] = 0.0
    return x.astype(dt)


def make_data(dt, shape, rng):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return np.asarray(rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True))
    if dt.kind == "c":
        p = part_dtype(dt)
        out = np.empty(shape, dt)
        out.real = make_floats(p, shape, rng)
        out.imag = make_floats(p, shape, rng)
        return out
    return make_floats(dt, shape, rng)


def normalize_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        return (int(axis) % ndim,)
    return tuple(int(x) % ndim for x in axis)


def plain_axis(axis):
    """An axis argument as None, a Python int or a tuple of Python ints
    (numpy also accepts numpy integers and 0-d integer arrays)."""
    if axis is None:
        return None
    if isinstance(axis, tuple):
        return tuple(int(x) for x in axis)
    return int(axis)


def exact_mean_where(a, axis, where):
    """Exact mean of the elements of ``a`` selected by ``where`` (broadcast)."""
    a = np.asarray(a)
    if np.iscomplexobj(a):
        return exact_mean_where(a.real, axis, where), exact_mean_where(a.imag, axis, where)
    if is_bf16(a.dtype):
        a = a.astype(np.float32)
    m = np.broadcast_to(np.asarray(where, dtype=bool), a.shape)
    nd = a.ndim
    axes = normalize_axes(axis, nd)
    kept = [d for d in range(nd) if d not in axes]
    kshape = tuple(a.shape[d] for d in kept)
    out = np.empty(kshape, dtype=object)
    for kidx in np.ndindex(*kshape):
        sl = [slice(None)] * nd
        for d, i in zip(kept, kidx):
            sl[d] = i
        sl = tuple(sl)
        vals = np.asarray(a[sl])[np.asarray(m[sl])]
        out[kidx] = exact_mean_values(vals.tolist())
    return out


def run(fn, *args, **kwargs):
    """Call ``fn``; return (result, exception, RuntimeWarning messages)."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            res, exc = fn(*args, **kwargs), None
        except Exception as e:  # noqa: BLE001
            res, exc = None, e
    msgs = [str(w.message) for w in rec if issubclass(w.category, RuntimeWarning)]
    return res, exc, msgs


def check_meta(got, ref):
    """Same kind (numpy scalar type / ndarray), dtype and shape as numpy's result."""
    assert type(got) is type(ref), f"kind: got {type(got)!r}, numpy gives {type(ref)!r}"
    if isinstance(ref, (np.ndarray, np.generic)):
        assert got.dtype == ref.dtype, f"dtype: got {got.dtype}, numpy gives {ref.dtype}"
        assert np.shape(got) == np.shape(ref), f"shape: got {np.shape(got)}, numpy gives {np.shape(ref)}"


def _fmt(x):
    try:
        return f"{float(x)!r}"
    except Exception:  # noqa: BLE001
        return repr(x)


def _check_part(got, ex, np_ref, dt, strict, what):
    """Element-wise accuracy rule for one real part (arrays of shape kshape)."""
    bad = []
    for idx in np.ndindex(*ex.shape):
        e = ex[idx]
        g = got[idx]
        d = ulp_distance(g, e, dt)
        if d <= 1:
            continue
        if not strict and np_ref is not None:
            dn = ulp_distance(np_ref[idx], e, dt)
            if d <= dn:
                continue
            bad.append(f"{what}{idx}: got {_fmt(g)}, exact {_fmt(e)}, {d:.3g} ulp "
                       f"(numpy {_fmt(np_ref[idx])}: {dn:.3g} ulp)")
        else:
            bad.append(f"{what}{idx}: got {_fmt(g)}, exact {_fmt(e)}, {d:.3g} ulp")
        if len(bad) >= 5:
            break
    assert not bad, f"{len(bad)}+ inaccurate element(s) ({dt}):\n  " + "\n  ".join(bad)


def _finite_exact(e):
    return not (isinstance(e, float) and not math.isfinite(e))


def check_values(got, a, axis=None, np_ref=None, where=None, exact=None, inexact_input=None):
    """Check the values of a mean result against the exact mean.

    ``np_ref`` is numpy's result for the same call (used by the float64 rule and
    for the non-finite pattern of complex results).
    """
    a = np.asarray(a)
    axis = plain_axis(axis)
    if exact is None:
        exact = exact_mean(a, axis) if where is None else exact_mean_where(a, axis, where)
    if inexact_input is None:
        inexact_input = is_inexact(a.dtype)
    g = np.asarray(got)
    rdt = g.dtype
    if np.iscomplexobj(g):
        ex_re, ex_im = exact if isinstance(exact, tuple) else (exact, np.zeros_like(exact))
        kshape = ex_re.shape
        g = g.reshape(kshape)
        ref = None if np_ref is None else np.asarray(np_ref).reshape(kshape)
        p = part_dtype(rdt)
        strict = not (p == np.float64 and inexact_input)
        finite = np.array([_finite_exact(ex_re[i]) and _finite_exact(ex_im[i])
                           for i in np.ndindex(*kshape)], dtype=bool).reshape(kshape)
        if not finite.all():
            # Slices with a NaN/inf part. numpy divides the complex sum by a complex
            # count, which turns the other part into NaN (inf+0j -> inf+nanj); the
            # per-part IEEE rule keeps it. Here either is accepted, part by part;
            # test_nonfinite_complex_exactly_as_numpy holds the strict numpy rule.
            assert ref is not None
            for idx in np.ndindex(*kshape):
                if finite[idx]:
                    continue
                for part, ex in (("real", ex_re), ("imag", ex_im)):
                    gv = float(getattr(g[idx], part))
                    rv = float(getattr(ref[idx], part))
                    ev = ex[idx]
                    as_numpy = math.isnan(gv) if math.isnan(rv) else gv == rv
                    per_part = ulp_distance(gv, ev, p) <= (1 if _finite_exact(ev) else 0)
                    assert as_numpy or per_part, (
                        f"{part}{idx}: got {gv!r}; numpy {rv!r}; per-part exact {_fmt(ev)}")
        if finite.any():
            sel = finite
            for part, ex in (("real", ex_re), ("imag", ex_im)):
                gp = getattr(g, part).copy()
                ex = ex.copy()
                rp = None if ref is None else getattr(ref, part)
                # mask the non-finite slices out
                ex[~sel] = 0
                gp[~sel] = 0
                if rp is not None:
                    rp = rp.copy()
                    rp[~sel] = 0
                _check_part(gp, ex, rp, p, strict, part)
        return
    assert not isinstance(exact, tuple), "real result for complex input"
    kshape = exact.shape
    g = g.reshape(kshape)
    ref = None if np_ref is None else np.asarray(np_ref).reshape(kshape)
    if is_bf16(rdt):
        g = g.astype(np.float32)
        if ref is not None:
            ref = ref.astype(np.float32)
    assert rdt.kind == "f" or is_bf16(rdt), f"unexpected result dtype {rdt}"
    strict = not (rdt == np.float64 and inexact_input)
    _check_part(g, exact, ref, rdt, strict, "")


def check_call(a, **kw):
    """Call numpy.mean and reducemean.mean with the same arguments; compare kind,
    dtype, shape, the empty-slice warning, and check the values.

    numpy gets its own ``out`` array, so ours must really fill the one it is given.
    """
    ref_kw = dict(kw)
    out = kw.get("out")
    if out is not None:
        ref_kw["out"] = np.zeros(out.shape, dtype=out.dtype)
    ref, ref_exc, ref_w = run(np.mean, a, **ref_kw)
    assert ref_exc is None, f"numpy raised {ref_exc!r}; bad test case"
    got, exc, got_w = run(reducemean.mean, a, **kw)
    if exc is not None:
        raise exc
    if out is not None:
        assert got is out, "out= must be returned (same object)"
    check_meta(got, ref)
    check_empty_warning(ref, ref_w, got_w)
    check_values(got, a, axis=kw.get("axis"), np_ref=ref, where=kw.get("where"))
    return got, ref


def check_empty_warning(ref, ref_w, got_w):
    np_warned = any(EMPTY_MSG in m for m in ref_w)
    we_warned = any(EMPTY_MSG in m for m in got_w)
    if np.size(ref) == 0:
        return  # numpy's warning for zero-size outputs is incidental
    if np_warned:
        assert we_warned, f"numpy warns {EMPTY_MSG!r}; we gave {got_w}"
    else:
        assert not we_warned, f"numpy does not warn {EMPTY_MSG!r}; we gave {got_w}"


def all_axis_forms(ndim):
    """None, every int in range(-ndim, ndim), and every tuple of distinct axes
    (including (), negative spellings and unsorted orders)."""
    forms = [None]
    forms += list(range(-ndim, ndim))
    for r in range(ndim + 1):
        for combo in itertools.combinations(range(ndim), r):
            forms.append(combo)
    if ndim >= 2:
        forms.append((ndim - 1, 0))  # unsorted
        forms.append((-1, 0))  # negative spelling
        forms.append(tuple(range(-ndim, 0)))
    return forms


# --------------------------------------------------------------------------
# 1. result dtype, shape, kind and values: every dtype, every axis form
# --------------------------------------------------------------------------

AXES_3D = [None, 0, 1, 2, -1, -2, -3, (), (0,), (1,), (2,), (0, 1), (0, 2), (1, 2),
           (2, 0), (-1, 0), (0, 1, 2), (2, 1, 0), (-3, -2, -1)]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES_3D, ids=repr)
@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_meta_and_values_3d(name, axis, keepdims):
    dt = resolve(name)
    rng = np.random.default_rng(zlib.crc32(f"{name}{axis!r}{keepdims}".encode()))
    a = make_data(dt, (3, 4, 5), rng)
    check_call(a, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_short_runs_over_two_reduced_dims(name):
    # Runs of a few values over two reduced dims with a kept dim between:
    # rows of runs under few columns, the column loop under many
    # (plan.RUNS_AS_ROWS_COLUMNS); the same values either way.
    dt = resolve(name)
    rng = np.random.default_rng(zlib.crc32(f"short-runs{name}".encode()))
    for shape, view in (((6, 10, 10, 10), np.s_[:]), ((3, 9, 8, 5), np.s_[:, ::-1]),
                        ((2, 8, 2, 2), np.s_[:]), ((5, 12, 25, 10), np.s_[:, :, :20]),
                        ((4, 10, 12, 3), np.s_[:, :, ::-1])):
        a = make_data(dt, shape, rng)[view]
        check_call(a, axis=(1, 3))
        check_call(a, axis=(3, 1), keepdims=True)
        check_call(a[..., :0], axis=(1, 3))  # empty runs: NaN and the warning


@pytest.mark.parametrize("shape", [(), (7,), (3, 5), (2, 3, 4, 5), (1, 4, 1), (9, 1)], ids=str)
@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_every_axis_form_by_ndim(name, shape):
    dt = resolve(name)
    rng = np.random.default_rng(len(shape) * 1000 + DTYPE_NAMES.index(name))
    a = make_data(dt, shape, rng)
    for axis in all_axis_forms(len(shape)):
        for keepdims in (False, True):
            check_call(a, axis=axis, keepdims=keepdims)


def test_keepdims_default_is_false_and_full_reduction_is_scalar():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = reducemean.mean(a)
    assert type(got) is np.float32
    assert got == np.float32(5.5)
    got = reducemean.mean(a, keepdims=True)
    assert type(got) is np.ndarray and got.shape == (1, 1) and got.dtype == np.float32
    assert got[0, 0] == np.float32(5.5)


def test_positional_arguments_match_numpy_signature():
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    got = reducemean.mean(a, 1, np.float32, None, True)
    ref = np.mean(a, 1, np.float32, None, True)
    check_meta(got, ref)
    np.testing.assert_array_equal(got, ref)  # small exact means
    out = np.empty((2, 4))
    assert reducemean.mean(a, 1, None, out) is out
    np.testing.assert_array_equal(out, np.mean(a, 1))
    # `where` is keyword-only in numpy
    with pytest.raises(TypeError):
        np.mean(a, None, None, None, False, True)
    with pytest.raises(TypeError):
        reducemean.mean(a, None, None, None, False, True)


def test_numpy_integer_axis_values():
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    for axis in (np.int64(1), np.int8(-1), np.uint8(0), np.array(2), (np.int32(0), np.int16(2))):
        check_call(a, axis=axis)


# --------------------------------------------------------------------------
# dtype= argument
# --------------------------------------------------------------------------

DTYPE_ARG_INPUTS = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint32", "uint64",
                    "float16", "bfloat16", "float32", "float64"]


def _dtype_arg_data(dt, target, shape, rng):
    """Input data whose values are exactly representable in ``target``, so that
    'the exact mean of the input values' is unambiguous."""
    if dt.kind in "iu" and target == np.float32:
        info = np.iinfo(dt)
        lo, hi = max(info.min, -(2**24)), min(info.max, 2**24)
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(dt)
    if dt == np.float64 and target == np.float32:
        return make_floats(np.float32, shape, rng).astype(np.float64)
    return make_data(dt, shape, rng)


@pytest.mark.parametrize("target", [np.float32, np.float64, "float32", "f8", float], ids=repr)
@pytest.mark.parametrize("name", DTYPE_ARG_INPUTS)
def test_dtype_argument(name, target):
    dt = resolve(name)
    tdt = np.dtype(target)
    rng = np.random.default_rng(DTYPE_ARG_INPUTS.index(name) * 7 + tdt.itemsize)
    a = _dtype_arg_data(dt, tdt, (4, 6, 5), rng)
    for axis in (None, 0, 1, -1, (0, 2), (), (2, 1, 0)):
        for keepdims in (False, True):
            got, ref = check_call(a, axis=axis, dtype=target, keepdims=keepdims)
            assert np.asarray(got).dtype == tdt


@pytest.mark.parametrize("target", ["float16", "bfloat16", "complex64", "complex128"])
@pytest.mark.parametrize("name", ["int16", "int64", "uint8", "float16", "float32", "float64"])
def test_dtype_argument_other_inexact(name, target):
    """Less common dtype= targets: same dtype/shape/kind as numpy; values to the
    rule of the target type. The data is exactly representable in the target."""
    dt = resolve(name)
    tdt = resolve(target)
    rng = np.random.default_rng(3)
    a = rng.integers(-8, 9, size=(4, 3, 5)).astype(dt)
    for axis in (None, 0, (1, 2), ()):
        for keepdims in (False, True):
            check_call(a, axis=axis, dtype=tdt, keepdims=keepdims)


@pytest.mark.parametrize("target", ["int8", "int32", "int64", "uint16"])
@pytest.mark.parametrize("name", ["bool", "int8", "int64", "uint8", "float32", "float64"])
def test_dtype_argument_integer_target(name, target):
    """Integer dtype=: numpy truncates; equal to numpy on small data."""
    dt = resolve(name)
    rng = np.random.default_rng(5)
    a = rng.integers(0, 5, size=(3, 4, 5)).astype(dt)
    for axis in (None, 0, (0, 2), -1):
        for keepdims in (False, True):
            ref, ref_exc, _ = run(np.mean, a, axis=axis, dtype=target, keepdims=keepdims)
            got, exc, _ = run(reducemean.mean, a, axis=axis, dtype=target, keepdims=keepdims)
            assert ref_exc is None, ref_exc
            assert exc is None, exc
            check_meta(got, ref)
            np.testing.assert_array_equal(got, ref)


# --------------------------------------------------------------------------
# out=
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_out_same_dtype_as_numpy_result(name):
    dt = resolve(name)
    rng = np.random.default_rng(11)
    a = make_data(dt, (4, 3, 5), rng)
    for axis in (None, 0, 2, (0, 1), (2, 0), (), (0, 1, 2)):
        for keepdims in (False, True):
            ref = np.mean(a, axis=axis, keepdims=keepdims)
            out = np.full(np.shape(ref), 7, dtype=ref.dtype)
            got, _ = check_call(a, axis=axis, keepdims=keepdims, out=out)
            assert got is out


@pytest.mark.parametrize("in_name,out_name", [
    ("int16", "float32"), ("int64", "float32"), ("uint8", "float16"), ("bool", "float32"),
    ("float32", "float64"), ("float16", "float64"), ("float16", "float32"),
    ("float64", "float32"), ("bfloat16", "float32"), ("float32", "bfloat16"),
    ("float32", "complex64"), ("float64", "complex128"), ("int32", "complex128"),
    ("complex64", "complex128"),
])
def test_out_other_inexact_dtype(in_name, out_name):
    """out of another inexact dtype: numpy casts; we must give that dtype with that
    dtype's accuracy. Data is representable in the out dtype (no input rounding)."""
    idt, odt = resolve(in_name), resolve(out_name)
    rng = np.random.default_rng(13)
    shape = (4, 6, 5)
    if idt.kind == "b":
        a = rng.random(shape) < 0.5
    elif idt.kind in "iu":
        lo = 0 if idt.kind == "u" else -100
        a = rng.integers(lo, 200, size=shape).astype(idt)
    else:
        # values of the narrower of the two (part) types, stored as the input type
        ip, op = part_dtype(idt), part_dtype(odt)
        narrow = op if (is_bf16(op) or op.itemsize < ip.itemsize) else ip
        a = make_floats(narrow, shape, rng).astype(np.float64)
        if idt.kind == "c":
            b = make_floats(narrow, shape, rng).astype(np.float64)
            a = (a + 1j * b)
        a = a.astype(idt)
    for axis in (None, 1, (0, 2)):
        ref = np.mean(a, axis=axis)
        out = np.zeros(np.shape(ref), dtype=odt)
        got, _ = check_call(a, axis=axis, out=out)
        assert got is out and out.dtype == odt


def test_out_integer_dtype_matches_numpy():
    a = np.array([[1.5, 2.5, 3.5], [4.0, 6.0, 9.0], [-1.5, -2.5, 7.25]], dtype=np.float64)
    for odt in (np.int32, np.int64, np.int8):
        for axis in (0, 1):
            ref_out = np.zeros(3, odt)
            ref = np.mean(a, axis=axis, out=ref_out)
            out = np.zeros(3, odt)
            got = reducemean.mean(a, axis=axis, out=out)
            assert got is out
            np.testing.assert_array_equal(out, ref)


def test_out_0d_for_full_reduction_is_returned():
    a = np.arange(10, dtype=np.float32)
    out = np.empty((), dtype=np.float32)
    got = reducemean.mean(a, out=out)
    assert got is out and type(got) is np.ndarray and got.shape == ()
    assert out[()] == np.float32(4.5)
    out = np.empty((1,), dtype=np.float64)
    got = reducemean.mean(a, axis=0, keepdims=True, out=out)
    assert got is out and out[0] == 4.5


_SHARED_OUTS = {
    # (axis, the out a view of the input gives it): every kept slot a slot of the input
    "first row, rows": (1, lambda x: x[0]),
    "last row, rows": (1, lambda x: x[-1]),
    "first row, columns": (0, lambda x: x[0]),
    "last row, columns": (0, lambda x: x[-1]),
    "across two rows, rows": (1, lambda x: x.reshape(-1)[x.shape[1] // 2:][:x.shape[0]]),
    "first column, rows": (1, lambda x: x[:, 0]),
    "one value, all": (None, lambda x: x.reshape(-1)[:1].reshape(())),
}


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16", "complex64"])
@pytest.mark.parametrize("n", [4, 64, 512])  # 512: past launch.PARALLEL_MIN, two threads
@pytest.mark.parametrize("case", sorted(_SHARED_OUTS))
def test_out_sharing_the_input_gets_the_means_of_the_values_as_given(name, n, case):
    # numpy reads every value before an ``out`` that overlaps its input is
    # written; written in place, means overwrote values still to be read
    axis, view = _SHARED_OUTS[case]
    dt = resolve(name)
    rng = np.random.default_rng(zlib.crc32(f"{name}{n}{case}".encode()))
    a = make_data(dt, (n, n), rng)
    given = a.copy()
    theirs = a.copy()
    ref = np.mean(theirs, axis=axis, out=view(theirs))
    out = view(a)
    got = reducemean.mean(a, axis=axis, out=out)
    assert got is out
    check_values(out.copy(), given, axis=axis, np_ref=ref.copy())
    # the slots outside ``out`` are the input's own still
    untouched = np.ones(a.shape, bool)
    view(untouched)[...] = False
    assert (a.view(np.uint8).reshape(n, -1)[np.repeat(untouched, dt.itemsize, axis=1)]
            == given.view(np.uint8).reshape(n, -1)[np.repeat(untouched, dt.itemsize, axis=1)]
            ).all()


def test_out_non_contiguous_and_fortran():
    rng = np.random.default_rng(17)
    a = make_floats(np.float32, (6, 8, 10), rng)
    buf = np.full((2 * 8, 3 * 10), -1.0, dtype=np.float32)
    out = buf[::2, ::3]  # strided out
    assert not out.flags.c_contiguous
    got, _ = check_call(a, axis=0, out=out)
    assert got is out
    # the elements between the strided slots are untouched
    mask = np.ones(buf.shape, bool)
    mask[::2, ::3] = False
    assert (buf[mask] == -1.0).all()
    out = np.asfortranarray(np.zeros((6, 10), dtype=np.float32))
    got, _ = check_call(a, axis=1, out=out)
    assert got is out
    out = np.zeros((10, 6), dtype=np.float64).T  # transposed out
    got, _ = check_call(a, axis=1, out=out)
    assert got is out
    out = np.zeros((10, 8), np.float32)[::-1, ::-1].T  # negative strides
    got, _ = check_call(a, axis=0, out=out)
    assert got is out


# --------------------------------------------------------------------------
# where=
# --------------------------------------------------------------------------

def _masks(shape, rng):
    full = rng.random(shape) < 0.6
    row = rng.random(shape[-1:]) < 0.6
    row[0] = True
    col = (rng.random(shape[:1] + (1,) * (len(shape) - 1)) < 0.6)
    col.flat[0] = True
    return {"full": full, "row": row, "col": col, "True": True,
            "np_true": np.True_, "list": row.tolist()}


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_where_masks(name):
    dt = resolve(name)
    rng = np.random.default_rng(19 + DTYPE_NAMES.index(name))
    a = make_data(dt, (5, 4, 6), rng)
    for mname, mask in _masks(a.shape, rng).items():
        for axis in (None, 0, 2, (0, 1), (2, 0), (0, 1, 2)):
            for keepdims in (False, True):
                check_call(a, axis=axis, keepdims=keepdims, where=mask)


@pytest.mark.parametrize("values, want", [
    ([complex(np.inf, 5), 1 + 0j], complex(np.inf, np.nan)),  # numpy's spread
    ([complex(1, -np.inf), 1 + 0j], complex(np.nan, -np.inf)),
    ([complex(np.nan, 1), 1 + 0j], complex(np.nan, np.nan)),
    ([1e308 + 1e-300j, 1e308 + 1e-300j], None),  # the real sum overflows
    ([1e308 + 1e-320j, 1e308 + 1e-320j], None),
    ([-1e308 + 3j, -1e308 + 0j, 1e300 - 1e-310j], None),
], ids=["inf-re", "inf-im", "nan", "over-1e-300", "over-1e-320", "over-mixed"])
def test_where_complex_nonfinite_and_out_of_range_parts(values, want):
    # where= sums the selected values in a temporary; a part whose sum leaves
    # the float64 range is redone scaled by itself, before a non-finite part
    # spreads into the other as numpy's complex mean does (numpy's own sum
    # overflows here: the exact means are the reference)
    x = np.array(values, np.complex128)
    if want is None:  # finite: the exact mean of each part, rounded once
        want = complex(float(exact_mean_values(x.real)),
                       float(exact_mean_values(x.imag)))
    for w in (np.ones(x.shape, bool), np.r_[np.ones(x.shape, bool), False]):
        a = np.r_[x, 7 - 7j] if w.size > x.size else x
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no stray 'invalid value' from the scaling
            got = reducemean.mean(a, where=w)
        for g, e in ((got.real, want.real), (got.imag, want.imag)):
            assert (np.isnan(g) and np.isnan(e)) or g == e, (values, got, want)


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_where_on_views_leaves_out_every_unselected_value(name):
    # the temporary is the input's bits times the mask: a NaN, Inf or -0.0
    # left out must count for nothing, in any layout of the input
    dt = resolve(name)
    rng = np.random.default_rng(zlib.crc32(f"where views {name}".encode()))
    base = make_data(dt, (12, 18), rng)
    if dt.kind in "fc" or is_bf16(dt):
        poison = np.array([np.nan, np.inf, -np.inf, -0.0]).astype(dt)
        base.reshape(-1)[::7] = np.resize(poison, base.reshape(-1)[::7].shape)
    for view in (base, base.T, base[:, ::2], base[::-1, 3:11]):
        mask = rng.random(view.shape) < 0.6
        mask &= ~(np.isnan(view) | np.isinf(view)) if dt.kind in "fc" or is_bf16(dt) else True
        mask[0, :] = True
        mask[:, 0] = True
        for axis in (None, 0, 1):
            check_call(view, axis=axis, where=mask)


def test_where_sums_past_the_float64_range_on_a_transposed_input():
    # the second pass scales the temporary in place (it is C-ordered, as
    # the transposed input is not): each mean is 1e308, the exact one
    x = np.full((4, 3), 1e308).T
    got = reducemean.mean(x, axis=1, where=np.ones(x.shape, bool))
    np.testing.assert_array_equal(got, np.full(3, 1e308))
    mask = np.ones(x.shape, bool)
    mask[1, 2] = False
    got = reducemean.mean(x, axis=None, where=mask)
    assert got == 1e308


@pytest.mark.parametrize("name", ["int32", "float32", "float64", "complex64", "float16"])
def test_where_with_empty_slices(name):
    """Slices with no selected element give NaN and the empty-slice warning."""
    dt = resolve(name)
    rng = np.random.default_rng(23)
    a = make_data(dt, (4, 5), rng)
    mask = np.ones((4, 5), bool)
    mask[1, :] = False  # row 1 empty for axis=1
    mask[:, 3] = False  # column 3 empty for axis=0
    for axis in (0, 1):
        got, ref = check_call(a, axis=axis, where=mask)
        assert np.isnan(np.asarray(got)).any()
    with pytest.warns(RuntimeWarning, match=EMPTY_MSG):
        got = reducemean.mean(a, where=False)
    ref = np.mean(a, where=False)
    check_meta(got, ref)
    assert np.isnan(got)


@pytest.mark.parametrize("name", ["int64", "float32", "float64", "bfloat16", "complex128"])
def test_where_with_out_and_dtype(name):
    dt = resolve(name)
    rng = np.random.default_rng(29)
    a = make_data(dt, (6, 7), rng)
    mask = rng.random((6, 7)) < 0.7
    mask[:, 0] = True
    ref = np.mean(a, axis=1, where=mask)
    out = np.zeros_like(ref)
    got, _ = check_call(a, axis=1, where=mask, out=out)
    assert got is out
    if not np.iscomplexobj(a):
        check_call(a, axis=0, where=mask, dtype=np.float64)
        check_call(a, axis=0, where=mask, dtype=np.float64, keepdims=True)


@pytest.mark.parametrize("name", DTYPE_NAMES)
@pytest.mark.usefixtures("empty_memo")
def test_repeated_where_calls_follow_each_input_and_mask(name):
    # where= calls of the same shapes reuse their prepared steps
    # (numpy_api._MASKED), keyed without the input's strides: contiguous
    # inputs and views of one shape, fresh masks with empty slices, a
    # broadcast mask, dtype= and out= must each get their own means, as
    # must float64 sums past the range (the scaled second pass) on a call
    # the memo serves.
    from reducemean import numpy_api

    dt = resolve(name)
    rng = np.random.default_rng(zlib.crc32(f"repeated where {name}".encode()))
    cases = [((8, 8), 1, False), ((8, 8), None, False), ((3, 4, 5), (0, 2), True),
             ((64, 128), 0, False)]
    for shape, axis, keepdims in cases:
        base = make_data(dt, (shape[0] * 2,) + shape[1:], rng)
        for a in (make_data(dt, shape, rng), base[::2], make_data(dt, shape[::-1], rng).T,
                  make_data(dt, shape, rng)):
            for mask in (rng.random(shape) < 0.6, rng.random(shape) < 0.05,
                         rng.random(shape[-1:]) < 0.7):
                check_call(a, axis=axis, keepdims=keepdims, where=mask)
        kw = dict(axis=axis, keepdims=keepdims, where=rng.random(shape) < 0.6)
        for _ in range(2):
            out = np.full(np.shape(np.mean(a, **kw)), 7, np.mean(a, **kw).dtype)
            check_call(make_data(dt, shape, rng), out=out, **kw)
            if dt.kind not in "c":
                check_call(make_data(dt, shape, rng), dtype=np.float32, **kw)
    assert numpy_api._MASKED, "no call was memoised"
    if dt == np.float64 or dt == np.complex128:
        mask = rng.random((8, 8)) < 0.7

        def huge():  # sums past the float64 range, of means within it
            sign = np.where(rng.random((8, 8)) < 0.8, 1, -1)
            return rng.uniform(0.5, 1.0, (8, 8)) * 2.0**1023 * sign

        for _ in range(3):
            a = huge().astype(dt) + (1j * huge() if dt.kind == "c" else 0)
            got = reducemean.mean(a, axis=1, where=mask)
            for i in range(8):
                sel = a[i][mask[i]]
                for part, g in ((sel.real, got[i].real), (sel.imag, got[i].imag)):
                    if part.size and np.any(part):
                        assert ulp_distance(g, exact_mean(part)[()], np.float64) <= 1, (i, got[i])


# --------------------------------------------------------------------------
# array-likes, scalars, 0-d arrays
# --------------------------------------------------------------------------

ARRAY_LIKES = [
    [1, 2, 3, 4],
    [1.5, 2.25, -3.0],
    [True, False, True],
    [1 + 2j, 3 - 1j],
    [[1, 2, 3], [4, 5, 6]],
    [[1.5, 2.0], [3.25, -4.0], [0.125, 9.0]],
    (1, 2, 3),
    [2**63 - 1, 2**63 - 1, 2**63 - 2],  # int64, sum overflows 64 bits
    [2**64 - 1, 2**64 - 1],  # uint64, sum overflows 64 bits
    [-(2**63), -(2**63), -(2**63) + 1],
    [1, 2.5],
    [0.1] * 10,
    [],
    7,
    -3,
    2.5,
    True,
    1 + 1j,
    0.1,
]


@pytest.mark.parametrize("x", ARRAY_LIKES, ids=repr)
def test_array_likes(x):
    arr = np.asarray(x)
    axes = [None]
    if arr.ndim >= 1:
        axes += [0, -1, ()]
    if arr.ndim == 2:
        axes += [1, (0, 1)]
    if arr.ndim == 0:
        axes += [()]
    for axis in axes:
        for keepdims in (False, True):
            ref, ref_exc, ref_w = run(np.mean, x, axis=axis, keepdims=keepdims)
            got, exc, got_w = run(reducemean.mean, x, axis=axis, keepdims=keepdims)
            assert exc is None, exc
            check_meta(got, ref)
            check_empty_warning(ref, ref_w, got_w)
            check_values(got, arr, axis=axis, np_ref=ref)


class _OwnMean:
    """Not an array: numpy.mean calls its mean (as it does a pandas Series')."""

    def __init__(self, values):
        self.values = values

    def mean(self, axis=None, dtype=None, out=None, **kwargs):
        return ("own mean", axis, dtype, out, kwargs)


def test_objects_with_a_mean_of_their_own_get_numpy_means_call():
    masked = np.ma.array([[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]],
                         mask=[[False, True, False], [False, False, True]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)  # np.matrix's
        m = np.matrix([[1.0, 2.0], [3.0, 5.0]])
        for x in (m, masked):
            for kw in ({}, {"axis": 0}, {"axis": 1}, {"axis": 1, "keepdims": True}):
                if kw.get("keepdims") and type(x) is np.matrix:
                    continue  # np.matrix.mean takes no keepdims, in numpy either
                ref = np.mean(x, **kw)
                got = reducemean.mean(x, **kw)
                assert type(got) is type(ref), (x, kw)
                np.testing.assert_array_equal(np.ma.getdata(got), np.ma.getdata(ref))
                np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(ref))
    # the masked values are left out: (1 + 8) / 2, (16) / 1, (4) / 1
    np.testing.assert_array_equal(reducemean.mean(masked, axis=0), [4.5, 16.0, 4.0])
    own = _OwnMean([1, 2, 3])
    assert reducemean.mean(own, axis=1) == np.mean(own, axis=1) == ("own mean", 1, None, None, {})
    assert reducemean.mean(own, keepdims=True) == np.mean(own, keepdims=True)


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_zero_dim_arrays_and_numpy_scalars(name):
    dt = resolve(name)
    rng = np.random.default_rng(31)
    a0 = make_data(dt, (), rng)
    assert a0.shape == ()
    for x in (a0, a0[()]):
        for axis in (None, ()):
            for keepdims in (False, True):
                ref, _, _ = run(np.mean, x, axis=axis, keepdims=keepdims)
                got, exc, _ = run(reducemean.mean, x, axis=axis, keepdims=keepdims)
                assert exc is None, exc
                check_meta(got, ref)
                check_values(got, np.asarray(x), axis=axis, np_ref=ref)
    out_ref = np.mean(a0)
    out = np.zeros((), dtype=np.asarray(out_ref).dtype)
    got = reducemean.mean(a0, out=out)
    assert got is out
    check_values(out, a0, np_ref=out_ref)


# --------------------------------------------------------------------------
# 2. accuracy: the contract's named cases and other hard inputs
# --------------------------------------------------------------------------

@pytest.mark.slow
def test_named_case_ones_2e7_by_2_float32_axis0():
    a = np.ones((2 * 10**7, 2), np.float32)
    got = reducemean.mean(a, axis=0)
    ref = np.mean(a[:8], axis=0)  # numpy's kind/dtype/shape (numpy's value is wrong here)
    check_meta(got, ref)
    assert (got == np.float32(1.0)).all(), got


@pytest.mark.slow
def test_named_case_ones_1e7_4_15_float32_axis01():
    a = np.ones((10**7, 4, 15), np.float32)
    got = reducemean.mean(a, axis=(0, 1))
    ref = np.mean(a[:8], axis=(0, 1))
    check_meta(got, ref)
    assert got.shape == (15,)
    assert (got == np.float32(1.0)).all(), got


@pytest.mark.slow
def test_named_case_32M_float32_offset_uniform_all_axes():
    rng = np.random.default_rng(2024)
    n = 2**25
    x = (np.float32(1e4) + rng.random(n, dtype=np.float32)).astype(np.float32)
    # math.fsum of the float64-converted values is the correctly rounded exact sum;
    # its rounding error (<= 2**-53 relative) is negligible in float32 ulps.
    exact = Fraction(math.fsum(x.astype(np.float64).tolist())) / n
    for shape in ((n,), (2**12, 2**13), (2**7, 2**9, 2**9)):
        a = x.reshape(shape)
        got = reducemean.mean(a)
        assert type(got) is np.float32
        d = ulp_distance(got, exact, np.float32)
        assert d <= 1, f"shape {shape}: got {got!r}, exact {float(exact)!r}, {d} ulp"
    got = reducemean.mean(x.reshape(2**12, 2**13), axis=(0, 1))
    assert ulp_distance(got, exact, np.float32) <= 1


@pytest.mark.slow
def test_float32_large_axis_reductions_within_one_ulp():
    """4096 x 8192 of 1e4 + U(0, 1): every row and column mean within 1 ulp.
    Values lie in [2**13, 2**14), so value * 1024 is an integer: exact sums in int64."""
    rng = np.random.default_rng(7)
    a = (np.float32(1e4) + rng.random((4096, 8192), dtype=np.float32)).astype(np.float32)
    scaled = (a.astype(np.float64) * 1024).astype(np.int64)
    assert (scaled.astype(np.float64) == a.astype(np.float64) * 1024).all()
    for axis in (0, 1):
        got = reducemean.mean(a, axis=axis)
        sums = scaled.sum(axis=axis)
        n = a.shape[axis]
        exact = np.array([Fraction(int(s), 1024 * n) for s in sums], dtype=object)
        check_values(got, a, exact=exact, inexact_input=True)


def test_bfloat16_many_ones_is_one():
    bf16 = resolve("bfloat16")
    a = np.ones(100_000, bf16)
    got = reducemean.mean(a)
    assert type(got) is type(np.mean(a[:3]))
    assert float(got) == 1.0  # numpy's bfloat16 accumulator stalls at 256
    got = reducemean.mean(np.ones((5000, 3), bf16), axis=0)
    assert got.dtype == bf16 and (got.astype(np.float32) == 1.0).all()


def test_float16_accumulates_wide():
    a = np.full(100_000, 0.1, np.float16)
    got = reducemean.mean(a)
    assert type(got) is np.float16
    assert ulp_distance(got, Fraction(float(np.float16(0.1))), np.float16) <= 1
    a = np.full((3, 70_000), 60000, np.float16)  # sums far beyond float16's max
    got = reducemean.mean(a, axis=1)
    assert got.dtype == np.float16 and (got == np.float16(60000)).all()
    rng = np.random.default_rng(37)
    b = make_floats(np.float16, (20_000,), rng)
    check_values(reducemean.mean(b), b)


@pytest.mark.parametrize("name", ["float32", "bfloat16", "float16"])
def test_no_intermediate_overflow(name):
    """The exact mean of finite values is finite; a wide accumulator does not
    overflow where numpy's same-type sum does."""
    dt = resolve(name)
    big = float(np.finfo(np.float32).max) * 0.9 if name != "float16" else 60000.0
    a = np.array([big] * 8 + [big / 2] * 8, dtype=np.float64).astype(dt)
    check_values(reducemean.mean(a), a)
    check_values(reducemean.mean(a.reshape(4, 4), axis=0), a.reshape(4, 4), axis=0)
    check_values(reducemean.mean(a.reshape(4, 4).T, axis=1), a.reshape(4, 4).T, axis=1)


@pytest.mark.parametrize("name", INT_NAMES)
def test_integer_extremes_exact(name):
    """Sums far beyond 64 bits and massive cancellation: within 1 ulp of exact."""
    dt = np.dtype(name)
    info = np.iinfo(dt)
    cases = [
        np.full(1001, info.max, dt),
        np.full(1001, info.min, dt),
        np.array([info.max, info.max - 1] * 500 + [info.min] * 3, dt),
        np.array([info.max] * 7 + [info.min] * 7 + [1], dt),
        np.array([info.max, info.min, info.max, 1], dt),
    ]
    for a in cases:
        check_call(a)
        check_call(a.reshape(-1, 1), axis=0)
        check_call(np.stack([a, a[::-1]]), axis=1)


def test_int64_cancellation_beyond_float64():
    # float64 conversion of each element loses the +1s; the exact mean is 0.5
    a = np.array([2**62 + 1, -(2**62)] * 1000, dtype=np.int64)
    got = reducemean.mean(a)
    assert got == 0.5
    a = np.array([2**63 - 1] * 3 + [-(2**63)] * 3 + [5], dtype=np.int64)
    got = reducemean.mean(a)
    assert ulp_distance(got, Fraction(2, 7), np.float64) <= 1
    u = np.array([2**64 - 1] * 9 + [0] * 9 + [2], dtype=np.uint64)
    got = reducemean.mean(u)
    assert ulp_distance(got, Fraction(9 * (2**64 - 1) + 2, 19), np.float64) <= 1


def test_float64_at_least_as_accurate_as_numpy():
    rng = np.random.default_rng(41)
    cases = [
        np.full(10**6, 0.1),
        np.full((1000, 1001), 0.1),
        rng.standard_normal(10**6) + 1e3,
        rng.standard_normal((300, 700)) * 1e6 + 0.1,
        np.tile(np.array([1e16, 1.0, -1e16, 3.0]), 10**5),
        np.tile(np.array([1e16, 1.0, -1e16, 3.0]), (3, 4000)),
        make_floats(np.float64, (512, 513), rng),
    ]
    for a in cases:
        axes = [None] + (list(range(a.ndim)) if a.ndim > 1 else [])
        for axis in axes:
            got = reducemean.mean(a, axis=axis)
            ref = np.mean(a, axis=axis)
            ex = exact_mean(a, axis)
            check_values(got, a, axis=axis, np_ref=ref, exact=ex)


@pytest.mark.parametrize("values", [
    [2.0**53, -(2.0**53), 1.0, 0.5, -1.0, -0.5],  # exact mean 0
    [2.0**995, -(2.0**995), -1.0, -1.0, 1.0, 0.5],  # the scaled second pass too
    [1e300, -1e300, -1.0, -1.0, 1.0, 0.5],  # (once each: see below)
    [2.0**52, -(2.0**52), 1.5, 0.0, 0.0, 0.0, 0.0],
    [1e16, 3.0, -1e16, 0.1, 2.0**60, -(2.0**60), 7.0, -0.25, 1e-3],
], ids=["zero", "2**995", "1e300", "2**52", "mixed"])
def test_float64_cancelled_sums_round_once(values):
    # After the large values cancel, the compensated state's low word can be
    # as large as its high word; the mean must still be within an ulp of the
    # exact one (a remainder taken against the high word alone was rounded:
    # 1.7 ulps, and -1.4e-17 for an exact 0).  Layouts that split the values
    # among lanes, rows and columns.  Repeated 1e300 would leave the
    # compensated sum's reach (its partial sums round by 1e284, beyond what
    # the low word holds beside the units), as numpy's pairwise sum does.
    rng = np.random.default_rng(len(values))
    v = np.array(values)
    arrays = [(v, None), (np.repeat(v[:, None], 3, 1), 0), (np.tile(v, (3, 1)), 1),
              (v[::-1], None), (v.astype(np.complex128) * (1 - 1j), None)]
    if values[0] != 1e300:
        arrays += [(np.tile(v, 41), None), (np.tile(v, (5, 23)), 1),
                   (np.tile(v, 23).reshape(-1, 1)[:, [0, 0]], 0), (np.tile(v, 17)[::3], None)]
        arrays += [(rng.permutation(np.tile(v, 9)), None) for _ in range(4)]
    for a, axis in arrays:
        got = reducemean.mean(a, axis=axis)
        for part in ("real", "imag") if np.iscomplexobj(a) else (None,):
            g = np.asarray(getattr(got, part) if part else got)
            ex = np.asarray(exact_mean(getattr(a, part) if part else a, axis=axis))
            for idx in np.ndindex(g.shape):
                assert ulp_distance(g[idx], ex[idx], np.float64) <= 1, (a.shape, axis, part, idx)


# Values that cancel across more than float64's 53 bits once widened: a
# plain float64 sum loses the small ones ([1e20, 1, -1e20] sums to 0).
_CANCEL = {"float32": 1e20, "bfloat16": 2.0**60, "float16": 60000.0, "complex64": 1e20}


def _cancelling(name, n, rng):
    """``n`` values of dtype ``name`` whose large ones cancel, the small ones left."""
    big = _CANCEL[name]
    small = rng.integers(-8, 9, n) * (0.5 if name != "float16" else 2.0**-9)
    v = small.astype(np.float64)
    k = max(1, n // 5)
    at = rng.permutation(n)
    v[at[:k]] = big
    v[at[k:2 * k]] = -big  # as many of each: the large ones cancel exactly
    if name == "complex64":
        w = np.roll(v, 3) * 1j + v
        return w.astype(np.complex64)
    return v.astype(resolve(name))


def _layouts(name, rng):
    """(array, axis) pairs covering the kernels' loops: runs, rows, short rows,
    columns, strided, backwards and transposed views."""
    f = lambda n: _cancelling(name, n, rng)  # noqa: E731
    out = [(f(7), None), (f(40), None), (f(1300), None),         # short, vector steps, blocks
           (f(40 * 6).reshape(6, 40), 1), (f(5 * 9).reshape(9, 5), 1),  # rows, short runs
           (f(4 * 70).reshape(70, 4), 1), (f(8 * 70).reshape(70, 8), 1),  # rows of 4 and 8
           (f(70 * 12).reshape(70, 12), 0), (f(300 * 3).reshape(300, 3), 0),  # columns
           (f(6 * 90).reshape(6, 90)[:, ::2], 1), (f(6 * 90).reshape(6, 90)[:, ::3], 1),
           (f(600)[::5], None), (f(300)[::-1], None), (f(30 * 8).reshape(30, 8).T, 1),
           (f(4 * 6 * 10).reshape(4, 6, 10), (0, 2)), (f(16 * 24).reshape(16, 24)[:, ::2], 0)]
    return out


@pytest.mark.parametrize("name", ["float32", "bfloat16", "float16", "complex64"])
def test_narrow_floats_that_cancel_are_within_an_ulp(name):
    # The contract's rule for narrow floats, where the plain float64 sum
    # loses values (those sums are redone with compensation): every loop's
    # bound must catch them.  numpy's own mean is off here too.  complex64
    # means asked for in complex128 are summed with compensation from the
    # start, contiguous runs in interleaved lanes of their own.
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    own = np.float32 if name == "complex64" else resolve(name)
    calls = [(None, own), (None, own)]  # and the memoised call
    if name == "complex64":
        calls.append((np.complex128, np.float64))
    for a, axis in _layouts(name, rng):
        for dtype, part in calls:
            got = np.asarray(reducemean.mean(a, axis=axis, dtype=dtype))
            parts = ("real", "imag") if a.dtype.kind == "c" else (None,)
            for p in parts:
                g = getattr(got, p) if p else got
                src = getattr(a, p) if p else a
                ex = np.asarray(exact_mean(src.astype(np.float64), axis=axis))
                for idx in np.ndindex(g.shape):
                    d = ulp_distance(g[idx], ex[idx], part)
                    assert d <= 1, (a.shape, a.strides, axis, dtype, p, idx, float(g[idx]),
                                    ex[idx])


def test_float16_columns_past_8192_rows_that_cancel():
    # float16 sums of up to 8192 values are exact in float64; past that a
    # running column sum of the largest values rounds, and the small values
    # added to it then are lost once the large ones cancel.  In float32
    # (dtype=) the means are far above float32's smallest, so a loss shows.
    rng = np.random.default_rng(16)
    half, mid, cols = 16384, 64, 64
    x = np.empty((2 * half + mid, cols), np.float16)
    x[:half] = 65504.0
    x[half + mid:] = -65504.0
    tiny = rng.random((mid, cols)) < 0.5
    x[half:half + mid] = np.where(tiny, np.float16(2.0**-24), np.float16(0))
    got = reducemean.mean(x, axis=0, dtype=np.float32)
    for j in range(cols):
        want = Fraction(int(tiny[:, j].sum()), 2**24 * x.shape[0])
        assert ulp_distance(got[j], want, np.float32) <= 1, (j, float(got[j]), want)


def test_where_narrow_floats_that_cancel_are_within_an_ulp():
    # where= sums its zero-filled temporary with compensation (the states
    # have no second pass for plain sums that cancel).
    rng = np.random.default_rng(5)
    a = _cancelling("float32", 60 * 7, rng).reshape(60, 7)
    mask = rng.random(a.shape) < 0.8
    for axis in (0, 1, None):
        got = np.asarray(reducemean.mean(a, axis=axis, where=mask))
        ex = np.asarray(exact_mean_where(a.astype(np.float64), axis, mask))
        for idx in np.ndindex(got.shape):
            assert ulp_distance(got[idx], ex[idx], np.float32) <= 1, (axis, idx)


def test_complex_parts_accuracy():
    rng = np.random.default_rng(43)
    for name in COMPLEX_NAMES:
        dt = np.dtype(name)
        a = make_data(dt, (2000, 7), rng)
        for axis in (None, 0, 1):
            check_call(a, axis=axis)
    # cancellation in one part only
    a = np.array([1e8 + 1j, -1e8 + 1j, 3 + 1e-3j], np.complex64)
    check_call(a)


# --------------------------------------------------------------------------
# 3. NaN and Inf propagate as in numpy
# --------------------------------------------------------------------------

NONFINITE_PATTERNS = {
    "one_nan": [[1.0, np.nan, 2.0, 3.0]],
    "pos_inf": [[1.0, np.inf, 2.0, 3.0]],
    "neg_inf": [[1.0, -np.inf, 2.0, 3.0]],
    "inf_minus_inf": [[np.inf, 1.0, -np.inf, 3.0]],
    "inf_and_nan": [[np.inf, np.nan, 1.0, 3.0]],
    "two_pos_inf": [[np.inf, 1.0, np.inf, 3.0]],
    "all_nan": [[np.nan, np.nan, np.nan, np.nan]],
}


@pytest.mark.parametrize("pattern", sorted(NONFINITE_PATTERNS))
@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_nonfinite_float(name, pattern):
    dt = resolve(name)
    rows = np.array(NONFINITE_PATTERNS[pattern] + [[1.0, 2.0, 4.0, 0.5]], dtype=np.float64)
    a = rows.astype(dt)
    for x, axes in ((a, (None, 0, 1, ())), (a.T, (None, 0, 1)), (a[0], (None, 0))):
        for axis in axes:
            got, ref = check_call(x, axis=axis)
            g = np.asarray(got).astype(np.float64)
            r = np.asarray(ref).astype(np.float64)
            np.testing.assert_array_equal(np.isnan(g), np.isnan(r))
            np.testing.assert_array_equal(np.where(np.isinf(r), g, 0), np.where(np.isinf(r), r, 0))


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_nonfinite_in_long_slices(name):
    """A single NaN / inf in a long slice (beyond any unrolled or blocked prefix)."""
    dt = resolve(name)
    a = np.ones((3, 10_001), dtype=dt)
    a[0, 9_999] = np.nan
    a[1, 5_000] = np.inf
    a[2, 7] = np.inf
    a[2, 10_000] = -np.inf
    got = reducemean.mean(a, axis=1).astype(np.float64)
    assert math.isnan(got[0]) and got[1] == math.inf and math.isnan(got[2])
    got = reducemean.mean(np.ascontiguousarray(a.T), axis=0).astype(np.float64)
    assert math.isnan(got[0]) and got[1] == math.inf and math.isnan(got[2])
    assert math.isnan(float(reducemean.mean(a)))


COMPLEX_NONFINITE = [
    complex(np.nan, 1.0),
    complex(1.0, np.nan),
    complex(np.inf, 0.0),
    complex(0.0, np.inf),
    complex(-np.inf, 2.0),
    complex(np.inf, np.inf),
]


def _complex_nonfinite_case(name, bad):
    dt = np.dtype(name)
    return np.array([[1 + 1j, bad, 2 - 1j], [1 + 1j, 3 + 0j, 2 - 1j]], dtype=dt)


@pytest.mark.parametrize("name", COMPLEX_NAMES)
@pytest.mark.parametrize("bad", COMPLEX_NONFINITE, ids=repr)
def test_nonfinite_complex_propagates(name, bad):
    """A NaN part makes that part of the mean NaN; an inf part gives that inf
    (or NaN where numpy gives NaN); finite slices are unaffected."""
    a = _complex_nonfinite_case(name, bad)
    for axis in (None, 0, 1):
        got, ref = check_call(a, axis=axis)
        g = np.atleast_1d(np.asarray(got))
        r = np.atleast_1d(np.asarray(ref))
        for part in ("real", "imag"):
            v = getattr(np.complex128(bad), part)
            gp, rp = getattr(g, part), getattr(r, part)
            if math.isnan(v):
                # numpy: NaN in this part wherever the slice holds `bad`
                assert (np.isnan(gp) == np.isnan(rp)).all(), (part, g, r)
            elif math.isinf(v):
                # numpy's inf stays that inf; where numpy has NaN, inf or NaN
                assert (gp[np.isinf(rp)] == rp[np.isinf(rp)]).all(), (part, g, r)
                assert (np.isinf(gp) | np.isnan(gp))[np.isnan(rp)].all(), (part, g, r)
                assert np.isfinite(gp[np.isfinite(rp)]).all(), (part, g, r)
    b = np.array([complex(np.inf, 0), complex(-np.inf, 0), 1 + 1j], dtype=np.dtype(name))
    got = reducemean.mean(b)
    assert math.isnan(got.real)  # inf + -inf


@pytest.mark.parametrize("name", COMPLEX_NAMES)
@pytest.mark.parametrize("bad", COMPLEX_NONFINITE, ids=repr)
def test_nonfinite_complex_exactly_as_numpy(name, bad):
    """CONTRACT: 'NaN and Inf propagate exactly as in numpy'. numpy's complex mean
    divides by a complex count, so a NaN/inf in one part makes the other part NaN
    (nan+1j -> nan+nanj, inf+0j -> inf+nanj, inf+infj -> nan+nanj)."""
    a = _complex_nonfinite_case(name, bad)
    for axis in (None, 0, 1):
        ref = np.mean(a, axis=axis)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got = reducemean.mean(a, axis=axis)
        check_meta(got, ref)
        g, r = np.asarray(got), np.asarray(ref)
        for part in ("real", "imag"):
            gp, rp = getattr(g, part), getattr(r, part)
            np.testing.assert_array_equal(np.isnan(gp), np.isnan(rp), err_msg=f"{part}: {g} vs numpy {r}")
            np.testing.assert_array_equal(np.where(np.isinf(rp), gp, 0), np.where(np.isinf(rp), rp, 0),
                                          err_msg=f"{part}: {g} vs numpy {r}")


# --------------------------------------------------------------------------
# 4. empty slices and zero-size results
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_empty_slice_nan_and_warning(name):
    dt = resolve(name)
    cases = [
        (np.zeros((0,), dt), None),
        (np.zeros((0,), dt), 0),
        (np.zeros((0, 3), dt), 0),
        (np.zeros((3, 0), dt), 1),
        (np.zeros((3, 0), dt), None),
        (np.zeros((2, 0, 3), dt), 1),
        (np.zeros((2, 0, 3), dt), (0, 1)),
        (np.zeros((2, 0, 3), dt), (1, 2)),
    ]
    for a, axis in cases:
        for keepdims in (False, True):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                ref = np.mean(a, axis=axis, keepdims=keepdims)
            with pytest.warns(RuntimeWarning, match=EMPTY_MSG):
                got = reducemean.mean(a, axis=axis, keepdims=keepdims)
            check_meta(got, ref)
            assert all_nan(got), got
    a = np.zeros((0, 4), dt)
    ref = np.mean(np.zeros((1, 4), dt), axis=0)
    out = np.zeros(4, dtype=ref.dtype)
    with pytest.warns(RuntimeWarning, match=EMPTY_MSG):
        got = reducemean.mean(a, axis=0, out=out)
    assert got is out
    assert all_nan(out), out


def all_nan(x):
    g = np.asarray(x)
    if np.iscomplexobj(g):
        return bool(np.isnan(g.real).all() and np.isnan(g.imag).all())
    return bool(np.isnan(g.astype(np.float64)).all())


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_zero_size_output(name):
    """Reducing a non-empty axis of an array with another zero-length axis:
    a zero-size result of numpy's dtype and shape, and no empty-slice warning."""
    dt = resolve(name)
    cases = [
        (np.zeros((0, 3), dt), 1),
        (np.zeros((3, 0), dt), 0),
        (np.zeros((2, 0, 3), dt), 0),
        (np.zeros((2, 0, 3), dt), (0, 2)),
        (np.zeros((2, 0, 3), dt), -1),
        (np.zeros((4, 0), dt), ()),
        (np.zeros((0,), dt), ()),
    ]
    for a, axis in cases:
        for keepdims in (False, True):
            ref, _, ref_w = run(np.mean, a, axis=axis, keepdims=keepdims)
            got, exc, got_w = run(reducemean.mean, a, axis=axis, keepdims=keepdims)
            assert exc is None, exc
            check_meta(got, ref)
            assert np.size(got) == 0
            assert not any(EMPTY_MSG in m for m in got_w), got_w
    a = np.zeros((3, 0), dt)
    ref = np.mean(a, axis=0)
    out = np.zeros((0,), dtype=ref.dtype)
    assert reducemean.mean(a, axis=0, out=out) is out


def test_no_warning_for_nonempty():
    a = np.arange(12.0).reshape(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        reducemean.mean(a)
        reducemean.mean(a, axis=0)
        reducemean.mean(a, axis=(0, 1), keepdims=True)
        reducemean.mean(a.astype(np.int32), axis=1)


# --------------------------------------------------------------------------
# 5. hypothesis property tests
# --------------------------------------------------------------------------

def _float_elements(dt):
    """Hypothesis elements for float dtype dt (bounded exponent range, both signs)."""
    dt = np.dtype(dt)
    if dt == np.float16:
        return st.floats(width=16, allow_nan=False, allow_infinity=False)
    lo, hi, width = (2.0**-20, 2.0**20, 64) if dt == np.float64 else (2.0**-8, 2.0**8, 32)
    mag = st.floats(min_value=lo, max_value=hi, width=width)
    return st.one_of(st.just(0.0), mag, mag.map(lambda v: -v))


@st.composite
def arrays_any_dtype(draw, names=tuple(DTYPE_NAMES), max_side=5):
    name = draw(st.sampled_from(names))
    if name == "bfloat16":
        dt = resolve(name)
    else:
        dt = np.dtype(name)
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=max_side))
    if dt.kind in "biu":
        a = draw(hnp.arrays(dt, shape))
    elif dt.kind == "c":
        p = part_dtype(dt)
        re = draw(hnp.arrays(p, shape, elements=_float_elements(p)))
        im = draw(hnp.arrays(p, shape, elements=_float_elements(p)))
        a = np.empty(shape, dt)
        a.real, a.imag = re, im
    elif is_bf16(dt):
        a = draw(hnp.arrays(np.float32, shape, elements=_float_elements(np.float32))).astype(dt)
    else:
        a = draw(hnp.arrays(dt, shape, elements=_float_elements(dt)))
    return a


@st.composite
def axis_for(draw, ndim):
    choices = [st.none(), st.just(())]
    if ndim:
        choices.append(st.integers(-ndim, ndim - 1))
        perm = st.permutations(list(range(ndim)))

        @st.composite
        def tup(d):
            p = d(perm)
            k = d(st.integers(0, ndim))
            signs = d(st.lists(st.booleans(), min_size=k, max_size=k))
            return tuple(ax - ndim if neg else ax for ax, neg in zip(p[:k], signs))

        choices.append(tup())
    return draw(st.one_of(choices))


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_property_matches_exact_and_numpy(data):
    a = data.draw(arrays_any_dtype(), label="a")
    axis = data.draw(axis_for(a.ndim), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    check_call(a, axis=axis, keepdims=keepdims)


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_property_where_and_out(data):
    a = data.draw(arrays_any_dtype(max_side=4), label="a")
    axis = data.draw(axis_for(a.ndim), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    # a mask broadcastable to a.shape: drop leading dims and squash some to 1
    nlead = data.draw(st.integers(0, a.ndim), label="nlead")
    mshape = tuple(1 if data.draw(st.booleans()) else s for s in a.shape[nlead:])
    mask = data.draw(hnp.arrays(np.bool_, mshape), label="mask")
    kw = dict(axis=axis, keepdims=keepdims, where=mask)
    if data.draw(st.booleans(), label="use_out"):
        ref, _, _ = run(np.mean, a, **kw)
        kw["out"] = np.zeros(np.shape(ref), dtype=np.asarray(ref).dtype)
    check_call(a, **kw)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_property_dtype_argument(data):
    names = ("bool", "int8", "int16", "uint8", "uint16", "float16", "bfloat16", "float32")
    a = data.draw(arrays_any_dtype(names=names), label="a")
    target = data.draw(st.sampled_from([np.float32, np.float64]), label="dtype")
    axis = data.draw(axis_for(a.ndim), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    check_call(a, axis=axis, dtype=target, keepdims=keepdims)


@pytest.fixture
def empty_memo():
    """The memos of repeated small calls, emptied first.

    Each is cleared whenever it fills (numpy_api._DIRECT_MAX), so in a worker
    that has run many tests it could be cleared between a test's calls and
    its look at the keys.
    """
    from reducemean import numpy_api

    numpy_api._DIRECT.clear()
    numpy_api._CAST.clear()
    numpy_api._MASKED.clear()


def _unaligned(x):
    buf = bytearray(x.nbytes + 1)
    u = np.frombuffer(buf, dtype=x.dtype, count=x.size, offset=1).reshape(x.shape)
    u[...] = x
    return u


@pytest.mark.parametrize("name", ["float32", "float64", "int32", "uint8", "int64", "bool",
                                  "float16", "bfloat16", "complex64", "complex128"])
@pytest.mark.parametrize("shape, axis", [((8, 8), None), ((8, 8), 1), ((64, 128), 0),
                                         ((3, 4, 5), 1), ((1,), None), ((300,), 0)])
def test_repeated_small_calls_follow_each_input(name, shape, axis):
    # Small calls are memoised after the first: every later array of the same
    # shape and dtype, whatever its flags, must still get its own mean.
    dt = resolve(name)
    rng = np.random.default_rng(zlib.crc32(f"{name}{shape}{axis}".encode()))
    first = make_data(dt, shape, rng)
    check_call(first, axis=axis)
    second = make_data(dt, shape, rng)
    readonly = make_data(dt, shape, rng)
    readonly.flags.writeable = False
    swapped = make_data(dt, shape, rng).astype(dt.newbyteorder())
    reversed_ = make_data(dt, shape, rng)[::-1]  # same shape, not C-contiguous
    for a in (second, readonly, _unaligned(make_data(dt, shape, rng)), swapped, reversed_,
              first * 0 + second):
        if is_bf16(dt) and a is swapped:
            # ml_dtypes' byte-swapped bfloat16 is a void type to numpy, which
            # is what reducemean hands it to; check_call's exact reference
            # reads bfloat16 in native order only
            continue
        check_call(a, axis=axis)
        check_call(a, axis=axis)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
@pytest.mark.usefixtures("empty_memo")
def test_repeated_small_16bit_calls_take_the_memoised_path(name):
    # float16 and bfloat16 results are written as their bits by the kernel;
    # the memoised call views the result so too (numpy_api._bits_kernel).
    from reducemean import numerics, numpy_api

    if name == "float16" and not numerics.F16C:
        pytest.skip("float16 results are rounded from float32 without F16C: not memoised")
    dt = resolve(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    shapes = [(6, 10), (6, 10), (7, 3, 5), (7, 3, 5)]
    for shape, axis in [(s, ax) for s in shapes for ax in (None, 0, -1)]:
        a = make_data(dt, shape, rng)
        check_call(a, axis=axis)
        check_call(a[::-1], axis=axis)  # a view: its span, in the storage dtype
    keys = {(k[0], k[-3]) for k in numpy_api._DIRECT if k[-3] == dt}
    assert {(6, 10), (7, 3, 5)} <= {shape for shape, _ in keys}


_SUMMED_OR_PERMUTED = [
    # (what the float32 plan is, shape, a view of it or None, axis, keepdims)
    ("block", (64, 8, 8), None, (0, 2), False),
    ("block", (128, 8, 8), np.s_[::2], (0, 2), True),
    ("fold", (4096, 4), None, 0, False),
    ("fold", (8192, 6), None, 0, True),
    ("permute", (16, 64, 3), "T", 0, False),
    ("permute", (16, 64, 3), "T", 0, True),
]


@pytest.mark.parametrize("name", ["float32", "float64", "int32", "uint8", "bool", "float16",
                                  "bfloat16", "complex64"])
@pytest.mark.parametrize("kind, shape, view, axis, keepdims", _SUMMED_OR_PERMUTED)
@pytest.mark.usefixtures("empty_memo")
def test_repeated_summed_and_permuted_calls_follow_each_input(name, kind, shape, view, axis,
                                                             keepdims):
    # Plans summed in steps of their own (a block's columns, folded
    # columns) and plans written in memory order, then transposed, are
    # memoised too (numpy_api._remember): every later input must still get
    # its own mean, in the result's shape and order.
    from reducemean import numpy_api
    from reducemean.plan import normalize_axis, plan_for

    dt = resolve(name)
    rng = np.random.default_rng(zlib.crc32(f"{name}{kind}{shape}{view}{keepdims}".encode()))

    def make():
        a = make_data(dt, shape, rng)
        return a.T if view == "T" else a if view is None else a[view]

    first = make()
    if name == "float32":  # the layouts are what they claim to be
        axes = normalize_axis(axis, first.ndim)
        plan = plan_for(first.shape, first.strides, 4, axes, keepdims)
        assert {"block": plan.block is not None, "fold": plan.folded,
                "permute": plan.permute is not None}[kind]
    check_call(first, axis=axis, keepdims=keepdims)
    for a in (make(), make(), first):
        check_call(a, axis=axis, keepdims=keepdims)
    if name in ("float32", "float64", "int32"):
        assert any(k[0] == first.shape and k[-3] == dt for k in numpy_api._DIRECT)


@pytest.mark.parametrize("kind, shape, view, axis, keepdims", _SUMMED_OR_PERMUTED)
@pytest.mark.usefixtures("empty_memo")
def test_repeated_summed_and_permuted_calls_redo_sums_out_of_range(kind, shape, view, axis,
                                                                   keepdims):
    # float64 sums beyond the float64 range are redone on scaled values, on
    # the memoised path as on the first call.
    rng = np.random.default_rng(zlib.crc32(f"huge{kind}{shape}{view}{keepdims}".encode()))

    def make():
        a = rng.choice([1.5e308, 1.7e308, -0.5e308], size=shape)
        return a.T if view == "T" else a if view is None else a[view]

    for a in (make(), make(), make()):
        check_call(a, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("name", ["float32", "float64", "int32", "bool", "float16", "bfloat16",
                                  "complex64", "complex128"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_repeated_small_views_follow_each_view(name, axis):
    # Views are memoised by shape, strides and flags, and the span a call
    # reads starts at that view's own address: views alike in all of those
    # but their place in memory, their strides or their alignment must each
    # get their own mean.
    dt = resolve(name)
    rng = np.random.default_rng(zlib.crc32(f"views{name}{axis}".encode()))
    base = make_data(dt, (12, 20), rng)
    readonly = base.copy()
    readonly.flags.writeable = False
    for v in (base[:6, ::2], base[6:, ::2], base[6:, 1::2], base[::2, :10], base[::2, 10:],
              base[:6, ::-2], readonly[:6, ::2], _unaligned(base)[6:, ::2], base.T[:10:2]):
        check_call(v, axis=axis)
        check_call(v, axis=axis)


def _exact_means(a, axis):
    """The exact means of integer-valued ``a``, each rounded once to float64 (int / int)."""
    sums = np.asarray(a.astype(np.int64).sum(axis=axis))
    count = a.size // max(sums.size, 1)
    return np.array([int(s) / count for s in sums.ravel()]).reshape(sums.shape)


def _small_integers(dt, shape, seed):
    """Integer values of ``dt`` small enough for exact sums in any type (complex: both parts)."""
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    top = 50 if dt.itemsize == 2 else 100 if dt.kind == "u" else 1000
    x = rng.integers(0 if dt.kind == "u" else -top, top, shape)
    if dt.kind == "c":
        x = x + 1j * rng.integers(-top, top, shape)
    return x.astype(dt)


def _check_other_paths(v, axis):
    """Exact float64 means of integer-valued ``v`` (complex128 for complex) into C- and
    Fortran-ordered ``out``, and by the states reducemean.dask adds up; reduce_mean's
    result, in the input's float type, equal to mean's."""
    from reducemean import states

    wide = np.complex128 if v.dtype.kind == "c" else np.float64
    want = _exact_means(v.real, axis)
    if v.dtype.kind == "c":
        want = want + 1j * _exact_means(v.imag, axis)
    for out in (np.empty(want.shape, wide), np.asfortranarray(np.empty(want.shape, wide))):
        assert reducemean.mean(v, axis=axis, out=out) is out
        assert np.array_equal(out, want)
    if v.dtype.kind == "f":  # reduce_mean keeps the input's type (and takes no complex)
        r = reducemean.reduce_mean(v, axes=[axis], keepdims=0)
        assert r.dtype == v.dtype and r.shape == want.shape
        sums = np.asarray(v.astype(np.int64).sum(axis=axis)).ravel()
        count = v.size // max(sums.size, 1)
        for got, s in zip(r.ravel(), sums):
            assert ulp_distance(got, Fraction(int(s), count), v.dtype) <= 1, (got, int(s), count)
        assert np.array_equal(r, reducemean.mean(v, axis=axis))
    st, count = states.partial(v, axis, keepdims=False)
    assert np.array_equal(states.finish(st, count, v.dtype, wide), want)


def _check_integer_valued_mean(a, axis):
    """reducemean.mean of integer-valued ``a`` against exact means: numpy's dtype and shape,
    values within one unit in the last place of the result type (float64: equal)."""
    got = reducemean.mean(a, axis=axis)
    ref = np.mean(a, axis=axis)
    assert got.dtype == ref.dtype and np.shape(got) == np.shape(ref)
    parts = [(got.real, a.real), (got.imag, a.imag)] if a.dtype.kind == "c" else [(got, a)]
    for g, values in parts:
        want = _exact_means(values, axis)
        if g.dtype == np.float64:
            assert np.array_equal(g, want)
        else:  # rounded once from the exact mean: within one of its ulps
            err = np.abs(g.astype(np.float64) - want)
            assert (err <= np.spacing(np.abs(g)).astype(np.float64)).all()


@pytest.mark.parametrize("run", [7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 24, 32])
@pytest.mark.parametrize("rows", [64, 100, 4097, 40001])  # one step, a short last one, tasks
def test_short_rows_of_wide_values_give_exact_means(rows, run):
    # float64 rows of 7 to 32 values are summed four rows to a vector,
    # compensated (numerics.short_sums_f64), uint64 rows of 8 to 15 but 11
    # and 13 as parts of 3 to 7 values, whose states are merged
    # (kernels.SHORT_PARTS), and its other lengths by the loop of any
    # length or the row loop.  Against exact means (Fractions, Python
    # ints), as the contract has it: float64 of mixed magnitudes, some rows
    # cancelling to far below their values, within 1 ulp or numpy's own
    # error on the row, or else within the compensated sum's own bound,
    # 2**-100 of the mean magnitude (its error is about 2**-106 of the sum
    # of magnitudes, which a deep cancellation makes a few ulps of the
    # mean, or all of it past 106 bits: see README, Known gaps); uint64
    # near 2**64, whose sums need more than 64 bits, within 1 ulp.
    if rows == 40001 and run != 8:
        rows = 4099  # the tasks: one size is enough for the others
    rng = np.random.default_rng(rows * 31 + run)
    x = rng.standard_normal((rows, run)) * 10.0 ** rng.integers(-8, 9, (rows, run))
    half = run // 2
    x[::7, half:2 * half] = -x[::7, :half]  # parts that cancel across the row
    x[::11, 1] = 1e-9
    x[::13, -1] = -x[::13, :-1].sum(axis=1)  # a last part that cancels the rest
    got = reducemean.mean(x, axis=1)
    want = exact_mean(x, 1)
    size = exact_mean(np.abs(x), 1)
    for i, (g, r, w, m) in enumerate(zip(got, np.mean(x, axis=1), want, size)):
        d = ulp_distance(g, w, np.float64)
        assert (d <= max(1.0, ulp_distance(r, w, np.float64))
                or abs(Fraction(g) - w) <= m / 2**100), (i, d)
    u = rng.integers(1 << 62, 1 << 64, (rows, run), dtype=np.uint64, endpoint=False)
    got = reducemean.mean(u, axis=1)
    assert got.dtype == np.float64
    worst = max(ulp_distance(g, Fraction(sum(int(v) for v in row), run), np.float64)
                for g, row in zip(got, u))
    assert worst <= 1.0, worst


@pytest.mark.parametrize("name", ["float32", "float64", "int32", "float16", "complex128"])
@pytest.mark.parametrize("shape, view, axis", [
    ((1024, 512), None, None), ((1024, 512), None, 0), ((1024, 512), None, 1),
    ((512, 1024), np.s_[:, ::2], 1), ((512, 1024), np.s_[::-1, 3:-5], 0),
    ((1 << 17, 3), None, 1),  # short rows
    ((64, 64, 128), None, (0, 2)), ((16, 2048, 16), None, (0, 2)),  # interleaved
])
def test_repeated_big_calls_follow_each_input(name, shape, view, axis):
    # Inputs big enough to run in parallel are memoised too (launch.direct):
    # every later array of the same shape, dtype and strides must get its own
    # mean, in parallel or not.
    import numba

    dt = resolve(name)
    rng = np.random.default_rng(zlib.crc32(f"big{name}{shape}{axis}".encode()))
    top = 50 if name == "float16" else 1000

    def data():
        x = rng.integers(-top, top, shape)
        if dt.kind == "c":
            x = x + 1j * rng.integers(-top, top, shape)
        x = x.astype(dt)
        return x if view is None else x[view]

    arrays = [data() for _ in range(3)]
    _check_integer_valued_mean(arrays[0], axis)
    _check_integer_valued_mean(arrays[1], axis)
    prev = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        _check_integer_valued_mean(arrays[2], axis)
    finally:
        numba.set_num_threads(prev)
    _check_integer_valued_mean(arrays[0], axis)


@pytest.mark.parametrize("name", ["float32", "float64", "int32", "uint8", "float16", "bfloat16",
                                  "complex64", "complex128"])
@pytest.mark.parametrize("shape, axis", [
    ((2000, 64, 3), 0),  # kept dims merged in memory order
    ((50000, 64, 3), 0),  # in tasks
    ((2000, 2, 16), 1),  # and grouped
    ((3000, 64, 3), 2),  # short rows
    ((20, 100, 7, 30), 2),  # three kept dims
])
def test_kept_dims_out_of_memory_order_come_out_in_the_results_order(name, shape, axis):
    # A transposed view's kept dims are summed in their memory order and the
    # means transposed into the result's (plan.Plan.permute), by mean,
    # keepdims and out= included, by reduce_mean and by the states that
    # reducemean.dask adds up: against exact means.
    dt = resolve(name)
    x = _small_integers(dt, shape, f"perm{name}{shape}{axis}")
    v = x.T
    ax = x.ndim - 1 - axis
    _check_integer_valued_mean(v, ax)
    ref = np.mean(v, axis=ax, keepdims=True)
    got = reducemean.mean(v, axis=ax, keepdims=True)
    assert got.shape == ref.shape
    assert np.array_equal(got, reducemean.mean(v, axis=ax).reshape(ref.shape))
    _check_other_paths(v, ax)


@pytest.mark.parametrize("name", ["float32", "float64", "int32", "uint8", "float16", "bfloat16",
                                  "complex64", "complex128"])
@pytest.mark.parametrize("shape, view, axis", [
    ((64, 256), np.s_[:, ::-1], 0),
    ((3000, 600), np.s_[:, ::-1], 0),  # in parallel
    ((8, 100, 64), np.s_[..., ::-1], 0),  # two kept dims, the inner one backwards
    ((8, 100, 64), np.s_[::-1, :, ::-1], 1),  # both backwards
    ((40, 64, 30), "T", 1),  # backwards and out of memory order
    ((3000, 2, 16), "T", 2),  # ... and merged in memory order (plan.Plan.permute)
])
def test_kept_dims_read_backwards_come_out_in_the_results_order(name, shape, view, axis):
    # Columns read backwards are read forwards, their means written
    # backwards and reversed into the result (plan.Plan.flipped): by mean,
    # keepdims, out= and a repeated call, by reduce_mean and by the states
    # that reducemean.dask adds up, laid out as numpy's, against exact means.
    from reducemean.plan import normalize_axis, plan_for

    dt = resolve(name)
    x = _small_integers(dt, shape, f"flip{name}{shape}{view}{axis}")
    v = x[:, :, ::-1].T if view == "T" else x[view]
    if dt == np.float32:  # the case takes the path
        assert plan_for(v.shape, v.strides, 4, normalize_axis(axis, v.ndim), False).flipped
    _check_integer_valued_mean(v, axis)
    _check_integer_valued_mean(v, axis)  # the memo's call
    ref = np.mean(v, axis=axis, keepdims=True)
    got = reducemean.mean(v, axis=axis, keepdims=True)
    assert got.shape == ref.shape
    if view != "T" or shape[1] == 2:  # (kept dims that neither merge nor group in
        # memory order keep the result's order); numpy's length-1 strides are its own
        assert [st for st, n in zip(got.strides, got.shape) if n > 1] == [
            st for st, n in zip(ref.strides, ref.shape) if n > 1]
    assert np.array_equal(got, reducemean.mean(v, axis=axis).reshape(ref.shape))
    _check_other_paths(v, axis)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("rows", [8, 600])  # 600: big enough to run in parallel
def test_strided_complex_columns_match_exact_means(dtype, rows):
    # [:, ::2] over axis 0: the plan makes each part one block of columns
    rng = np.random.default_rng(rows)
    shape = (rows, 1200)
    x = (rng.integers(-50, 50, shape) + 1j * rng.integers(-50, 50, shape)).astype(dtype)
    v = x[:, ::2]
    got = reducemean.mean(v, axis=0)
    part = np.float32 if dtype == np.complex64 else np.float64
    for got_part, values in ((got.real, v.real), (got.imag, v.imag)):
        sums = values.astype(np.int64).sum(axis=0)
        for j in range(0, v.shape[1], 7):
            assert ulp_distance(got_part[j], Fraction(int(sums[j]), rows), part) <= 1, j


@pytest.mark.usefixtures("empty_memo")
def test_repeated_small_complex_views_redo_and_spread_as_the_full_path():
    # The memoised call of a complex view runs the same finish as the full
    # path: sums beyond the float64 range redone, a non-finite part spread
    # into the other as numpy does.
    x = np.full((4, 16), 1e308 - 1e308j, np.complex128)
    for _ in range(3):
        got = reducemean.mean(x[:, ::2], axis=1)
        assert got.tolist() == [1e308 - 1e308j] * 4  # the exact mean; numpy overflows
    from reducemean import numpy_api

    assert (x.shape[0], 8) in {k[0] for k in numpy_api._DIRECT if len(k) == 6}  # memoised
    y = np.ones((4, 16), np.complex128)
    y[1, 2] = complex(np.inf, 0.0)
    y[3, 4] = complex(0.0, -np.inf)
    want = np.mean(y[:, ::2], axis=1)
    assert np.isnan(want[1].imag) and np.isnan(want[3].real)  # numpy's spread
    for _ in range(3):
        got = reducemean.mean(y[:, ::2], axis=1)
        assert np.array_equal(got, want, equal_nan=True)


@pytest.mark.usefixtures("empty_memo")
def test_unaligned_array_does_not_share_an_aligned_arrays_memo():
    # The memo calls compiled kernels past Numba's dispatch, so an unaligned
    # input must reach a kernel compiled for unaligned arrays.
    from reducemean import numpy_api

    a = np.arange(24.0).reshape(4, 6)
    u = _unaligned(a)
    assert a.flags.aligned and not u.flags.aligned
    for x in (a, a, u, u):
        assert reducemean.mean(x, axis=1).tolist() == np.mean(a, axis=1).tolist()
    keys = [k for k in numpy_api._DIRECT if k[0] == (4, 6) and k[2] == a.dtype and k[3] == 1]
    assert len(keys) == 2


def test_concurrent_small_full_reductions_each_get_their_own_mean():
    # A memoised full reduction reuses a one-element buffer; threads calling
    # it at once (the kernels release the GIL) must never see each other's sum.
    from threads import run_threads

    arrays = [np.full((8, 8), float(i), np.float32) for i in range(8)]
    check_call(arrays[0])
    wrong = []

    def work(i):
        for _ in range(3000):
            got = reducemean.mean(arrays[i])
            if got != i:
                wrong.append((i, got))

    assert run_threads(work, [(i,) for i in range(len(arrays))]) == []
    assert not wrong, wrong[:5]


def test_memoised_axes_still_refuse_what_numpy_refuses():
    # 1.0 == 1 and True == 1 as dict keys: a memo keyed on an int axis must
    # not let a float or bool axis through where numpy raises.
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    for good in (1, (1,), (0, 1), None):
        check_call(a, axis=good)
        check_call(a, axis=good)
    for bad in (1.0, (1.0,), (0, 1.0), (True,), True, (1, 1)):
        _, ref_exc, _ = run(np.mean, a, axis=bad)
        _, exc, _ = run(reducemean.mean, a, axis=bad)
        assert ref_exc is not None, f"numpy accepted axis={bad!r}; bad test case"
        assert type(exc) is type(ref_exc), (bad, exc, ref_exc)


_CASTS = [
    # (input dtype, dtype argument, out dtype or None)
    ("float32", np.float64, None), ("float32", "float64", None), ("float32", None, "float32"),
    ("float32", None, "float64"), ("float32", np.dtype(np.float32), "float32"),
    ("float64", np.float32, None), ("int32", np.float32, None), ("int64", None, "float64"),
    ("bool", np.float32, "float32"), ("uint8", float, None), ("float16", np.float32, None),
    ("float16", None, "float16"), ("bfloat16", None, "bfloat16"), ("bfloat16", np.float64, None),
    ("complex64", None, "complex64"), ("complex128", np.complex128, None),
]


@pytest.mark.parametrize("in_name, dtype, out_name", _CASTS,
                         ids=[f"{i}-{getattr(d, '__name__', d)}-{o}" for i, d, o in _CASTS])
@pytest.mark.usefixtures("empty_memo")
def test_repeated_calls_with_dtype_or_out_follow_each_input(in_name, dtype, out_name):
    # Calls with dtype= or out= are memoised after the first (numpy_api._CAST):
    # every later input, and every later out, must get its own means, views
    # and full reductions too; an out that overlaps the input, after the
    # memo holds its shape and flags, still gets the means of the input as
    # given.
    from reducemean import numpy_api

    dt = resolve(in_name)
    rng = np.random.default_rng(zlib.crc32(f"cast {in_name}{dtype}{out_name}".encode()))
    for shape, axis, keepdims, view in [((8, 8), 1, False, None), ((8, 8), None, False, None),
                                        ((3, 4, 5), (0, 2), True, None), ((64, 128), 0, False, None),
                                        ((6, 10), 1, False, np.s_[::-1, ::2])]:
        for _ in range(3):
            a = make_data(dt, shape, rng)
            a = a if view is None else a[view]
            kw = dict(axis=axis, keepdims=keepdims)
            if dtype is not None:
                kw["dtype"] = dtype
            if out_name is not None:
                kw["out"] = np.zeros(np.shape(np.mean(a, **kw)), resolve(out_name))
            check_call(a, **kw)
    assert numpy_api._CAST, "no call was memoised"
    if out_name is not None and out_name == in_name:
        cast = {} if dtype is None else {"dtype": dtype}
        # the last row: every earlier row's mean, written in place, would
        # overwrite a value of it before it is read
        other = np.zeros((64, 64), dt)
        check_call(make_data(dt, (64, 64), rng), axis=1, out=other[-1], **cast)  # memoised
        a = make_data(dt, (64, 64), rng)
        assert numpy_api._cast_key(a, 1, dtype, a[-1], False) in numpy_api._CAST
        given = a.copy()
        got = reducemean.mean(a, axis=1, out=a[-1], **cast)
        assert got.base is a
        check_values(a[-1].copy(), given, axis=1, np_ref=np.mean(given, axis=1))

@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16"])
def test_means_of_negative_zeros_are_positive_zeros_as_numpy_gives(name):
    # numpy's sums start at +0.0, so the mean of -0.0 values is +0.0; rows
    # summed four to a vector (numerics.short_sums: rows of 4 and 8 to 32
    # values) once kept their -0.0, and the lanes of a vector shared by two
    # rows are -0.0 there.  Every short row length, long rows, the whole
    # array and columns, against numpy's float32 or float64 mean.
    dt = resolve(name)
    exact = np.float64 if name == "float64" else np.float32
    for shape, axis in [((100, run), 1) for run in (*range(2, 17), 24, 32, 33)] + [
            ((100, 40), 1), ((3000,), None), ((100, 7), 0), ((64, 7, 3), (0, 2))]:
        x = np.full(shape, -0.0, dt)
        want = np.mean(np.full(shape, -0.0, exact), axis=axis)
        got = np.asarray(reducemean.mean(x, axis=axis)).astype(exact)
        assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want)), shape
        assert not np.signbit(want).any()


# --------------------------------------------------------------------------
# 16-bit results: the float64 mean rounded once
# --------------------------------------------------------------------------

def _near_midpoints(n, result, sign, above):
    """Values of ``n`` (a power of two, at least 4) whose mean lies a little off a midpoint
    of ``result``'s values near 1: above 1 + 2**-m (between 1 and the next value, an even
    one below), or below 1 + 3 * 2**-m (an even one above), so that a float32 rounded
    to nearest would sit on the midpoint and round to the even side, the wrong one."""
    m = 11 if result == np.float16 else 8  # a float16 value near 1 is 1 + k * 2**-10
    delta = 2.0**-26  # below half a float32 ulp at 1
    x = np.zeros(n)
    x[0] = x[1] = n / 2  # each value k * 2**j with k of two bits: every float type holds it
    x[2] = (1 if above else 3) * n * 2.0**-m
    x[3] = n * delta if above else -n * delta
    return sign * x


MIDPOINT_TYPES = [("float16", "float16"), ("bfloat16", "bfloat16"), ("float32", "float16"),
                  ("float32", "bfloat16"), ("float64", "float16"), ("float64", "bfloat16"),
                  ("float16", "bfloat16"), ("bfloat16", "float16")]


@pytest.mark.parametrize("layout", ["whole", "rows", "columns"])
@pytest.mark.parametrize("n", [4, 64])
@pytest.mark.parametrize("name,result", MIDPOINT_TYPES, ids=[f"{a}-{b}" for a, b in MIDPOINT_TYPES])
def test_16_bit_results_are_the_mean_rounded_once(name, result, n, layout):
    """Not through a float32 rounded to nearest, which would round these to even.

    The same in every front-end that gives a 16-bit result: mean (dtype=, or
    the input's own type), mean with where=, reduce_mean, reducemean.dask.
    """
    from exact import round_to_16

    dt, rd = resolve(name), resolve(result)
    for sign, above in itertools.product((1, -1), (True, False)):
        row = _near_midpoints(n, rd, sign, above)
        assert np.array_equal(row.astype(dt).astype(np.float64), row)  # the values are dt's
        want = round_to_16(exact_mean_values(row.tolist()), rd)
        with np.errstate(over="ignore"):
            assert np.float32(exact_mean_values(row.tolist())).astype(rd) != want  # the trap
        if layout == "whole":
            a, axis = row.astype(dt), None
        elif layout == "rows":
            a, axis = np.tile(row, (32, 1)).astype(dt), 1
        else:
            a, axis = np.ascontiguousarray(np.tile(row, (32, 1)).T).astype(dt), 0
        kw = {} if rd == dt else {"dtype": rd}
        got = [reducemean.mean(a, axis=axis, **kw),
               reducemean.mean(a, axis=axis, where=np.ones(a.shape, bool), **kw)]
        if rd == dt:
            got.append(reducemean.reduce_mean(a, axes=axis, keepdims=0))
        try:
            import dask.array as da

            import reducemean.dask as rdask
        except ImportError:  # pragma: no cover - dask is a test dependency
            pass
        else:
            chunks = tuple(max(1, s // 3) for s in a.shape)
            got.append(rdask.mean(da.from_array(a, chunks=chunks), axis=axis,
                                  **kw).compute(scheduler="sync"))
        for g in got:
            g = np.asarray(g)
            assert g.dtype == rd
            assert (g == want).all(), (sign, above, g, want)


@pytest.mark.parametrize("run", [3, 4, 8, 40])
@pytest.mark.parametrize("name,result", [("float32", "float16"), ("bfloat16", "float16"),
                                         ("float16", "bfloat16"), ("float32", "bfloat16")])
def test_16_bit_results_of_cancelling_sums_are_redone(name, result, run):
    """Their float64 means carry the plain sums' marks, redone as a narrow result's are."""
    from exact import round_to_16

    dt, rd = resolve(name), resolve(result)
    big = 1e20 if name == "float32" else 2.0**60 if name == "bfloat16" else 2.0**15
    a = np.ones((6, run), dt)
    a[1, :3] = (big, 1.0, -big)  # a plain float64 sum loses the 1 (not float16's: exact)
    a[3, :3] = (-big, -3.0, big)
    a[5, 0] = np.nan
    for x, axis in ((a, 1), (np.ascontiguousarray(a.T), 0)):
        for got in (reducemean.mean(x, axis=axis, dtype=rd),
                    reducemean.mean(x, axis=axis, dtype=rd, where=np.ones(x.shape, bool))):
            assert got.dtype == rd
            assert np.isnan(got[5])
            for i in range(5):
                want = round_to_16(exact_mean_values(a[i].astype(np.float64).tolist()), rd)
                assert got[i] == want, (i, got, want)


# --------------------------------------------------------------------------
# real input, complex result (dtype= or out=)
# --------------------------------------------------------------------------

REAL_INTO_COMPLEX = ["float16", "float32", "float64", "int64", "int8", "bool", "bfloat16"]


def _same_nonfinite(got, ref):
    """NaN where numpy has NaN and Inf of the same sign where it has Inf, part by part."""
    for part in ("real", "imag"):
        g, r = getattr(np.asarray(got), part), getattr(np.asarray(ref), part)
        assert np.array_equal(np.isnan(g), np.isnan(r)), (part, got, ref)
        assert np.array_equal(g[np.isinf(r)], r[np.isinf(r)]), (part, got, ref)


@pytest.mark.parametrize("how", ["dtype", "out", "dtype-where", "out-where"])
@pytest.mark.parametrize("complex_type", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", REAL_INTO_COMPLEX)
def test_real_input_with_a_complex_result_as_numpy(name, complex_type, how):
    """The exact means in the real part; a non-finite or empty slice's imaginary part NaN,
    as numpy's complex division by ``n + 0j`` makes it."""
    dt = resolve(name)
    a = np.arange(1, 25, dtype=np.float64).reshape(4, 6)
    if dt.kind == "f" or is_bf16(dt):
        a[0, 1], a[1, 2], a[1, 3], a[2, 0] = np.nan, np.inf, -np.inf, -np.inf
    a = a.astype(dt)
    mask = np.ones(a.shape, bool)
    mask[3] = False  # an empty column slice, over axis 0
    for axis in (None, 0, 1):
        kw = {"axis": axis}
        if "where" in how:
            kw["where"] = mask
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # numpy's empty slices, inf - inf
            warnings.simplefilter("ignore", getattr(np, "exceptions", np).ComplexWarning)  # numpy's
            shape = np.mean(a, **kw).shape
            if how.startswith("out"):
                kw["out"] = np.empty(shape, complex_type)
            else:
                kw["dtype"] = complex_type
            got, ref = check_call(a, **kw)
        assert np.asarray(got).dtype == complex_type
        _same_nonfinite(got, ref)
        assert (np.asarray(got).imag[np.isfinite(np.asarray(got).real)] == 0).all()


@pytest.mark.parametrize("values, dtype, complex_type, want", [
    ([2**24, 1, -2**24, 1], np.float32, np.complex64, 0.5),  # numpy's complex64 sum: 0.25
    ([2**62 + 1, -2**62], np.int64, np.complex128, 0.5),  # numpy's: 0
    ([1.7e308, 1.7e308], np.float64, np.complex128, 1.7e308),  # numpy's: inf+nanj
])
def test_real_input_with_a_complex_dtype_is_exact(values, dtype, complex_type, want):
    a = np.array(values, dtype)
    got = reducemean.mean(a, dtype=complex_type)
    assert type(got) is complex_type
    assert got == complex_type(want)
    out = np.empty((), complex_type)
    assert reducemean.mean(a, out=out) is out and out == complex_type(want)
    wide = np.empty((), np.complex128)  # computed for out's type, the cast made once
    assert reducemean.mean(a, dtype=complex_type, out=wide) is wide and wide == want


@pytest.mark.parametrize("scalar", [np.float64(3.0), np.float32(2.5), np.int16(7), np.bool_(True)])
@pytest.mark.parametrize("out_type", [np.float64, np.float32, np.complex128])
def test_numpy_scalar_with_out_returns_a_scalar_as_numpy(scalar, out_type):
    ref_out, out = np.empty((), out_type), np.empty((), out_type)
    with warnings.catch_warnings():  # numpy's, for an integer scalar into a complex out
        warnings.simplefilter("ignore", getattr(np, "exceptions", np).ComplexWarning)
        ref = np.mean(scalar, out=ref_out)
    got = reducemean.mean(scalar, out=out)
    assert type(got) is type(ref)
    assert got == ref and out == ref_out
