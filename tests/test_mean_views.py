"""``reducemean.mean`` on views, and under load (CONTRACT.md section 5).

* every view numpy can make (transposed, stepped, negative steps, Fortran,
  broadcast stride 0, read-only, unaligned, overlapping, permuted 3-d/4-d,
  parts of complex arrays, non-native byte order) gives correct values;
* none of them but non-native byte order is copied: the peak of traced memory
  (tracemalloc traces numpy's allocations) and, on Linux, the peak resident
  set during the call stay far below the input's size;
* more than 2**31 elements;
* many Python threads at once, and a child made by fork after the parent used it.

Expected values come from exact.py (Fractions) or from exact integer sums
computed by numpy on integer arrays; dtype/shape/kind from numpy.
"""

from __future__ import annotations

import multiprocessing
import re
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exact import ulp_distance
from threads import run_threads

import reducemean
from test_mean import (  # shared reference helpers (no test functions)
    DTYPE_NAMES,
    all_axis_forms,
    arrays_any_dtype,
    axis_for,
    check_call,
    check_meta,
    check_values,
    make_data,
    normalize_axes,
    resolve,
    run,
)


# --------------------------------------------------------------------------
# small views: values against the exact reference, meta against numpy
# --------------------------------------------------------------------------

def unaligned_copy(x):
    """A copy of ``x`` whose data pointer is off by one byte (unaligned)."""
    x = np.asarray(x)
    buf = bytearray(x.nbytes + 1)
    u = np.frombuffer(buf, dtype=x.dtype, count=x.size, offset=1).reshape(x.shape)
    u[...] = x
    return u


def readonly(x):
    v = x.view()
    v.flags.writeable = False
    return v


VIEWS = {
    # name: (base shape, function of the base)
    "transpose_2d": ((6, 7), lambda b: b.T),
    "step": ((12, 14), lambda b: b[::2, ::3]),
    "negative_step": ((12, 14), lambda b: b[::-1, ::-2]),
    "negative_step_offset": ((12, 14), lambda b: b[10:1:-3, 13::-4]),
    "step_3d": ((6, 8, 10), lambda b: b[1::2, ::-3, 2:9:2]),
    "fortran_2d": ((6, 7), np.asfortranarray),
    "fortran_3d": ((3, 4, 5), np.asfortranarray),
    "broadcast_row": ((7,), lambda b: np.broadcast_to(b, (5, 7))),
    "broadcast_col": ((5, 1), lambda b: np.broadcast_to(b, (5, 7))),
    "broadcast_middle": ((4, 1, 6), lambda b: np.broadcast_to(b, (4, 5, 6))),
    "broadcast_scalar": ((), lambda b: np.broadcast_to(b, (3, 4, 5))),
    "broadcast_transposed": ((7,), lambda b: np.broadcast_to(b, (5, 7)).T),
    "readonly": ((6, 7), readonly),
    "readonly_transposed": ((3, 4, 5), lambda b: readonly(b).transpose(1, 2, 0)),
    "unaligned": ((6, 7), unaligned_copy),
    "unaligned_transposed": ((3, 4, 5), lambda b: unaligned_copy(b).transpose(2, 0, 1)),
    "unaligned_step": ((8, 10), lambda b: unaligned_copy(b)[::-2, 1::3]),
    "overlapping_windows": ((20,), lambda b: np.lib.stride_tricks.sliding_window_view(b, 5)),
    "permuted_3d": ((3, 4, 5), lambda b: b.transpose(2, 0, 1)),
    "permuted_3d_b": ((3, 4, 5), lambda b: b.transpose(1, 2, 0)),
    "permuted_4d": ((2, 3, 4, 5), lambda b: b.transpose(3, 1, 0, 2)),
    "permuted_4d_step": ((4, 6, 4, 5), lambda b: b[::2, ::-2, :, 1::2].transpose(1, 3, 0, 2)),
    "swapaxes_4d": ((2, 3, 4, 5), lambda b: np.swapaxes(b, 0, 3)),
    "newaxis": ((6, 7), lambda b: b[:, None, ::-1]),
    # rows wider than kernels.NARROW: the column loop's stride-2 path
    "step2_wide": ((5, 1100), lambda b: b[:, ::2]),
    "step2_wide_negative": ((5, 1100), lambda b: b[::-1, ::-2]),
    # wide rows, enough of them for the column loop's eight-row passes and the
    # one-row passes after: unit, stride-2 and stride-3 columns
    "wide_block": ((15, 1200), lambda b: b[:, 100:700]),
    "wide_block_3d": ((2, 17, 700), lambda b: b[:, :, 50:650]),
    "step2_wide_tall": ((15, 1100), lambda b: b[:, ::2]),
    "step3_wide_tall": ((13, 1800), lambda b: b[::-1, ::3]),
    # a narrow crop or step of the last axis under many offsets of the next
    # and few rows: over axis 0 the narrow dim goes outermost (plan.NARROW_KEPT)
    "narrow_crop_many_offsets": ((3, 70, 16), lambda b: b[..., 2:5]),
    "narrow_step_many_offsets": ((2, 66, 5), lambda b: b[:, ::-1, ::2]),
    "zero_d_view": ((6, 7), lambda b: b[2, 3, ...]),
    "column": ((6, 7), lambda b: b[:, 3]),
}


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_views_values_and_meta(name, view):
    dt = resolve(name)
    shape, fn = VIEWS[view]
    if view.startswith("unaligned") and dt.itemsize == 1:
        pytest.skip("1-byte types are always aligned")
    rng = np.random.default_rng(sum(map(ord, name + view)))
    base = make_data(dt, shape, rng)
    v = fn(base)
    if view.startswith("unaligned"):
        assert not v.flags.aligned
    if not view.startswith(("fortran", "unaligned", "readonly", "zero_d")):
        assert not v.flags.c_contiguous or v.ndim <= 1
    for axis in all_axis_forms(v.ndim):
        for keepdims in (False, True):
            check_call(v, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("name", ["complex64", "complex128"])
def test_views_of_complex_arrays(name):
    dt = np.dtype(name)
    rng = np.random.default_rng(5)
    c = make_data(dt, (4, 6, 5), rng)
    views = [c.real, c.imag, c.T, c[::-1, ::2], c.transpose(1, 2, 0).real, c[:, ::-2].imag,
             np.broadcast_to(c[0], (3, 6, 5)), unaligned_copy(c).transpose(2, 1, 0)]
    for v in views:
        for axis in all_axis_forms(v.ndim):
            check_call(v, axis=axis)


NON_NATIVE = ["int16", "int32", "int64", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("name", NON_NATIVE)
def test_non_native_byte_order(name):
    dt = np.dtype(name)
    rng = np.random.default_rng(7)
    native = make_data(dt, (4, 5, 6), rng)
    swapped = native.astype(dt.newbyteorder())
    assert not swapped.dtype.isnative
    np.testing.assert_array_equal(swapped, native)
    for v in (swapped, swapped.T, swapped[::-1, 1::2], unaligned_copy(swapped)):
        for axis in (None, 0, 2, (0, 1), (2, 0), ()):
            for keepdims in (False, True):
                check_call(v, axis=axis, keepdims=keepdims)


_SWAPPED_OUT = {"int32": ["float64", "float32", "complex128"],
                "float64": ["float64", "float32", "complex128"],
                "float32": ["float32", "float64", "float16", "complex64"],
                "float16": ["float16", "float32"],
                "complex64": ["complex64", "complex128"],
                "complex128": ["complex128", "complex64"]}


@pytest.mark.parametrize("name", sorted(_SWAPPED_OUT))
def test_out_of_non_native_byte_order_is_filled_as_numpy_fills_it(name):
    # numpy casts the mean into such an ``out``; the kernels write native
    # values, which a swapped float64 read back as float32 values and a
    # swapped complex as garbage (with where=, past its buffer's end)
    dt = np.dtype(name)
    rng = np.random.default_rng(17)
    a = make_data(dt, (5, 7, 3), rng)
    for out_name in _SWAPPED_OUT[name]:
        od = np.dtype(out_name).newbyteorder()
        for axis, where in ((1, True), ((0, 2), True), (0, rng.random((5, 7, 3)) < 0.7),
                            (1, np.array([True, False, True]))):
            shape = np.mean(a, axis=axis).shape
            with np.errstate(all="ignore"):
                got, ref = check_call(a, axis=axis, out=np.zeros(shape, od), where=where)
            assert got.dtype == od
            keep = np.zeros((1,) + shape, od)  # keepdims too, into a view of its own
            check_call(a, axis=axis, keepdims=True, out=keep.reshape(np.mean(
                a, axis=axis, keepdims=True).shape), where=where)


@pytest.mark.parametrize("dtype", [">f8", ">f4", ">c8", ">f2", ">c16"])
def test_dtype_of_non_native_byte_order_as_numpy(dtype):
    # numpy 2 refuses such a ``dtype`` (its ufuncs select only the general type)
    a = np.arange(12.0).reshape(3, 4)
    ref, ref_exc, _ = run(np.mean, a, axis=1, dtype=dtype)
    got, exc, _ = run(reducemean.mean, a, axis=1, dtype=dtype)
    if ref_exc is not None:
        assert type(exc) is type(ref_exc), (exc, ref_exc)
    else:
        assert exc is None and got.dtype == ref.dtype
        np.testing.assert_array_equal(got, ref)


def test_masked_complex128_of_fortran_order_with_a_broadcast_mask_redoes_large_sums():
    # the zero-filled temporary must be C-ordered: a Fortran one's flat view
    # was a copy, so the scaled second pass of sums past the float64 range
    # scaled nothing, and a finite mean came back inf+nanj
    big = np.finfo(np.float64).max / 8
    a = np.asfortranarray(np.array([[1 + 1j, 1 + 1j, 3 - 2j], [big + 1j, big - 1j, 1 + 1j],
                                    [big - 3j, 5 + 1j, big + big * 1j]]))
    for mask in (np.array([[True, True, False]]), np.array([[True], [True], [False]]),
                 np.ones((3, 3), bool)):
        for axis in ((), 0, 1, None):
            check_call(a, axis=axis, where=mask)
            check_call(a.T, axis=axis, where=mask.T if mask.shape != (3, 3) else mask)


@pytest.mark.parametrize("dtype", ["f4", "f8", "f2", "c8", "c16", "i4", "i8", "?", "bfloat16"])
@pytest.mark.parametrize("shape, strides", [
    ((1,), (5,)), ((3, 1), (4, 9)), ((1, 3), (9, 4)), ((1, 1, 2), (3, 5, 4)), ((2, 1, 1), (4, 3, 5)),
    ((1, 0), (3, 5)), ((0, 3), (7, 4)),
])
def test_length_one_axes_with_strides_of_no_whole_element(dtype, shape, strides):
    """A length-1 axis's stride is not used (numpy ignores it too): a record field of one
    record has its record's stride, which had made the plan give up, and the copy meant
    to mend that kept the stride (numpy's copy of a C-contiguous array is itself)."""
    dt = resolve(dtype)
    unit = 4  # the strides above are in units of 4 bytes for axes longer than 1
    strides = tuple(dt.itemsize * (s // unit) if n > 1 else s for s, n in zip(strides, shape))
    buf = np.zeros(256, np.uint8)
    a = np.ndarray(shape, dtype=dt, buffer=buf, offset=1, strides=strides)
    a[...] = np.arange(a.size).reshape(a.shape) + 1 if dt.kind != "b" else True
    for axis in (None, 0, -1):
        check_call(a, axis=axis)
        check_call(a, axis=axis, keepdims=True)
        check_call(a, axis=axis, where=np.ones(a.shape, bool))
        if dt.kind == "f" and a.size:  # small integers: every mean is exact
            got = reducemean.reduce_mean(a, axes=axis, keepdims=0)
            assert np.array_equal(got, np.mean(a.astype(np.float64), axis=axis).astype(dt))


def test_a_record_field_of_one_record():
    x = np.zeros(1, dtype=[("a", "f4"), ("b", "u1")])["a"]  # shape (1,), strides (5,)
    x[...] = 2.5
    assert x.strides == (5,)
    check_call(x)
    assert reducemean.reduce_mean(x).tolist() == [2.5]


# hypothesis: random strided / permuted views of random arrays

@st.composite
def random_views(draw):
    a = draw(arrays_any_dtype(max_side=6))
    idx = []
    for n in a.shape:
        step = draw(st.sampled_from([1, 2, 3, -1, -2]))
        start = draw(st.integers(0, max(n - 1, 0))) if n else 0
        idx.append(slice(start if step > 0 else (n - 1 - start if n else None), None, step))
    v = a[tuple(idx) + (Ellipsis,)]
    if v.ndim:
        v = v.transpose(draw(st.permutations(list(range(v.ndim)))))
    if draw(st.booleans()) and v.dtype.itemsize > 1 and v.size:
        v = unaligned_copy(v)
        if v.ndim:
            v = v.transpose(draw(st.permutations(list(range(v.ndim)))))
    if draw(st.booleans()):
        v = readonly(v)
    return v


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_property_random_views(data):
    v = data.draw(random_views(), label="view")
    axis = data.draw(axis_for(v.ndim), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    check_call(v, axis=axis, keepdims=keepdims)


# --------------------------------------------------------------------------
# big views: no copy of the input
# --------------------------------------------------------------------------

BIG = 2**23  # 8 Mi elements: 32 MiB of float32


@pytest.fixture(scope="module")
def big_ints():
    rng = np.random.default_rng(99)
    return rng.integers(-1000, 1001, size=BIG).astype(np.int64)


def _logical(kind, src):
    """The logical view ``kind`` of the flat array ``src`` (any dtype)."""
    m2 = src.reshape(4096, 2048)
    if kind == "transposed":
        return m2.T
    if kind == "stepped":
        return src.reshape(8192, 1024)[::2, ::-1]
    if kind == "negative_steps":
        return m2[::-1, ::-1]
    if kind == "fortran":
        return m2  # made Fortran-ordered for the test array only
    if kind == "readonly":
        return m2
    if kind == "unaligned":
        return m2
    if kind == "broadcast_row":
        return np.broadcast_to(src[:2048], (4096, 2048))
    if kind == "broadcast_col":
        return np.broadcast_to(src[:4096, None], (4096, 2048))
    if kind == "permuted_3d":
        return src.reshape(256, 128, 256).transpose(2, 0, 1)
    if kind == "permuted_4d":
        return src.reshape(16, 32, 128, 128).transpose(3, 1, 0, 2)
    if kind == "permuted_4d_steps":
        return src.reshape(32, 32, 64, 128)[:, ::-1, :, ::2].transpose(2, 0, 3, 1)
    raise AssertionError(kind)


BIG_CASES = {
    # kind: axes with small outputs
    "transposed": (None, 0, 1, (1, 0)),
    "stepped": (None, 0, 1),
    "negative_steps": (None, 0, 1),
    "fortran": (None, 0, 1),
    "readonly": (None, 0, 1),
    "unaligned": (None, 0, 1),
    "broadcast_row": (None, 0, 1),
    "broadcast_col": (None, 0, 1),
    "permuted_3d": (None, (0, 1), (1, 2), (0, 2)),
    "permuted_4d": (None, (0, 1, 2), (1, 2, 3), (0, 3)),
    "permuted_4d_steps": (None, (0, 1, 2), (1, 3)),
}


def _make_test_view(kind, src_f):
    v = _logical(kind, src_f)
    if kind == "fortran":
        v = np.asfortranarray(v)
        assert v.flags.f_contiguous and not v.flags.c_contiguous
    elif kind == "readonly":
        v = readonly(v)
    elif kind == "unaligned":
        v = unaligned_copy(v)
        assert not v.flags.aligned
    return v


def _peak_traced(fn):
    """Peak tracemalloc memory while running fn (after warming it up twice)."""
    fn()
    fn()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        res = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return res, peak - base


def _status_bytes(key):
    with open("/proc/self/status") as f:
        m = re.search(rf"^{key}:\s+(\d+) kB", f.read(), re.M)
    return int(m.group(1)) * 1024


def _peak_rss_increase(fn):
    """Increase of the resident-set high-water mark during fn (Linux), or None."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        before = _status_bytes("VmRSS")
    except OSError:
        return None
    fn()
    return _status_bytes("VmHWM") - before


def _exact_big(ref_int_view, axis, scale=1):
    s = np.sum(ref_int_view, axis=axis, dtype=np.int64)
    n = ref_int_view.size // max(np.size(s), 1) if ref_int_view.size else 0
    s = np.asarray(s)
    out = np.empty(s.shape, dtype=object)
    for idx in np.ndindex(*s.shape):
        out[idx] = Fraction(int(s[idx]), n * scale)
    return out


@pytest.mark.parametrize("kind", sorted(BIG_CASES))
def test_big_views_no_copy(kind, big_ints):
    src_f = big_ints.astype(np.float32)
    v = _make_test_view(kind, src_f)
    ref_i = _logical(kind, big_ints)
    assert v.shape == ref_i.shape
    nbytes = v.size * v.itemsize
    assert nbytes >= 16 * 2**20
    for axis in BIG_CASES[kind]:
        call = lambda: reducemean.mean(v, axis=axis)  # noqa: E731
        got, peak = _peak_traced(call)
        assert peak < nbytes / 4, (
            f"{kind}, axis={axis}: {peak / 2**20:.1f} MiB traced during the call "
            f"for a {nbytes / 2**20:.0f} MiB input (a copy?)")
        rss = _peak_rss_increase(call)
        if rss is not None:
            assert rss < nbytes / 2, (
                f"{kind}, axis={axis}: resident set grew by {rss / 2**20:.1f} MiB "
                f"for a {nbytes / 2**20:.0f} MiB input (a copy?)")
        check_meta(got, np.mean(v, axis=axis))
        exact = _exact_big(ref_i, normalize_axes(axis, v.ndim))
        check_values(got, v, exact=exact, inexact_input=True)


@pytest.mark.parametrize("kind", ["transposed", "permuted_3d", "broadcast_col", "negative_steps"])
def test_big_complex_views_no_copy(kind, big_ints):
    half = BIG // 2  # 4 Mi complex64 = 32 MiB
    re_i, im_i = big_ints[:half], big_ints[half:]
    c = np.empty(half, np.complex64)
    c.real, c.imag = re_i, im_i
    # logical views need 2**23 elements; use the half-size reshape instead
    shapes = {"transposed": lambda s: s.reshape(2048, 2048).T,
              "permuted_3d": lambda s: s.reshape(128, 128, 256).transpose(2, 0, 1),
              "broadcast_col": lambda s: np.broadcast_to(s[:2048, None], (2048, 2048)),
              "negative_steps": lambda s: s.reshape(2048, 2048)[::-1, ::-1]}
    f = shapes[kind]
    v, vr, vi = f(c), f(re_i), f(im_i)
    nbytes = v.size * v.itemsize
    for axis in (None, 0, (0, 1)) if v.ndim == 2 else (None, (0, 1), (1, 2)):
        call = lambda: reducemean.mean(v, axis=axis)  # noqa: E731
        got, peak = _peak_traced(call)
        assert peak < nbytes / 4, f"{kind}, axis={axis}: {peak / 2**20:.1f} MiB traced"
        rss = _peak_rss_increase(call)
        if rss is not None:
            assert rss < nbytes / 2, f"{kind}, axis={axis}: RSS +{rss / 2**20:.1f} MiB"
        ax = normalize_axes(axis, v.ndim)
        exact = (_exact_big(vr, ax), _exact_big(vi, ax))
        check_values(got, v, exact=exact, inexact_input=True)
        # the real / imag parts are strided float32 views: no copy either
        for part, ref_i in ((v.real, vr), (v.imag, vi)):
            call = lambda: reducemean.mean(part, axis=axis)  # noqa: E731
            got, peak = _peak_traced(call)
            assert peak < nbytes / 8, f"{kind} part, axis={axis}: {peak / 2**20:.1f} MiB traced"
            check_values(got, part, exact=_exact_big(ref_i, ax), inexact_input=True)


def test_big_non_native_byte_order_values(big_ints):
    v = big_ints.astype(">f4").reshape(4096, 2048)
    for axis in (None, 0, 1):
        got = reducemean.mean(v, axis=axis)
        check_meta(got, np.mean(v, axis=axis))
        check_values(got, v, exact=_exact_big(big_ints.reshape(4096, 2048), axis), inexact_input=True)


def test_int_views_no_copy(big_ints):
    """Integer input: no float64 copy of the input either."""
    for v, ref in ((big_ints.reshape(4096, 2048).T, big_ints.reshape(4096, 2048).T),
                   (big_ints.astype(np.int16).reshape(8192, 1024)[::-1, ::2],
                    big_ints.reshape(8192, 1024)[::-1, ::2])):
        nbytes = v.size * v.itemsize
        for axis in (None, 0, 1):
            call = lambda: reducemean.mean(v, axis=axis)  # noqa: E731
            got, peak = _peak_traced(call)
            assert peak < nbytes / 4, f"{v.dtype}, axis={axis}: {peak / 2**20:.1f} MiB traced"
            rss = _peak_rss_increase(call)
            if rss is not None:
                assert rss < nbytes / 2, f"{v.dtype}, axis={axis}: RSS +{rss / 2**20:.1f} MiB"
            check_values(got, v, exact=_exact_big(ref, normalize_axes(axis, v.ndim)))


# --------------------------------------------------------------------------
# more than 2**31 elements
# --------------------------------------------------------------------------

@pytest.mark.slow
def test_more_than_2_31_elements_broadcast():
    pattern = np.arange(1, 9, dtype=np.int8)
    v = np.broadcast_to(pattern, (2**28 + 1, 8))  # 2**31 + 8 elements, no memory
    assert v.size > 2**31
    got = reducemean.mean(v)
    assert got == 4.5 and type(got) is np.float64
    got = reducemean.mean(v, axis=0)
    np.testing.assert_array_equal(got, pattern.astype(np.float64))
    w = np.broadcast_to(np.float32(0.75), (2**31 + 3,))
    got = reducemean.mean(w)
    assert type(got) is np.float32 and got == np.float32(0.75)


@pytest.mark.slow
def test_more_than_2_31_elements_materialized():
    n = 2**31 + 17
    a = np.zeros(n, np.uint8)
    a[2**31 + 1] = 7  # beyond any 32-bit index
    a[-5:] = 200
    a[3] = 1
    exact = Fraction(7 + 5 * 200 + 1, n)
    got = reducemean.mean(a)
    assert type(got) is np.float64
    assert ulp_distance(got, exact, np.float64) <= 1, (got, float(exact))
    got = reducemean.mean(a[2**31:])
    assert ulp_distance(got, Fraction(7 + 1000, n - 2**31), np.float64) <= 1


# --------------------------------------------------------------------------
# threads and fork
# --------------------------------------------------------------------------

def _thread_tasks():
    rng = np.random.default_rng(123)
    ints = rng.integers(-(2**20), 2**20, size=2**22)  # multiples of 2**-10 below
    big = (ints / 1024).astype(np.float32).reshape(2048, 2048)
    assert (big.astype(np.float64) * 1024 == ints.reshape(2048, 2048)).all()
    ints2 = ints.reshape(2048, 2048)
    tasks = [
        (big, None, _exact_big(ints2, (0, 1), 1024)),
        (big, 0, _exact_big(ints2, (0,), 1024)),
        (big.T, 0, _exact_big(ints2.T, (0,), 1024)),
    ]
    # small inputs whose exact sums are exact in float64 (this test is about
    # threads, not about rounding)
    small = [
        ((rng.integers(-1000, 1000, (7, 5)) / 8).astype(np.float32), 1),
        ((rng.integers(-1000, 1000, (3, 4, 5)) / 8).astype(np.float64), (0, 2)),
        (rng.integers(-30000, 30000, 9).astype(np.int16), None),
        ((rng.integers(-99, 99, (4, 4)) + 1j * rng.integers(-99, 99, (4, 4))).astype(np.complex64), 0),
        ((rng.integers(-99, 99, (6, 3)) / 4).astype(np.float16), None),
        (rng.integers(0, 255, (5, 5, 5)).astype(np.uint8), (1,)),
    ]
    from exact import exact_mean
    for a, axis in small:
        tasks.append((a, axis, exact_mean(a, axis)))
    return tasks


def _check_result(got, a, axis, exact):
    check_values(got, a, axis=axis, exact=exact, np_ref=np.mean(a, axis=axis),
                 inexact_input=a.dtype.kind in "fc")


@pytest.mark.timeout(300)
def test_many_threads_at_once():
    tasks = _thread_tasks()
    n_threads, rounds = 8, 12
    results = [[] for _ in range(n_threads)]

    def worker(k):
        for r in range(rounds):
            for j in range(len(tasks)):
                a, axis, _ = tasks[(j + k + r) % len(tasks)]
                got = reducemean.mean(a, axis=axis)
                results[k].append(((j + k + r) % len(tasks), np.array(got, copy=True)))

    errors = run_threads(worker, [(k,) for k in range(n_threads)], timeout=240)
    assert not errors, errors
    # validate each distinct result once
    seen = {}
    for res in results:
        assert len(res) == rounds * len(tasks)
        for ti, got in res:
            key = (ti, got.tobytes())
            if key not in seen:
                a, axis, exact = tasks[ti]
                _check_result(got if got.ndim else got[()], a, axis, exact)
                seen[key] = True


def _fork_child(conn, tasks):
    try:
        out = [np.asarray(reducemean.mean(a, axis=axis)) for a, axis, _ in tasks]
        conn.send(out)
    finally:
        conn.close()


@pytest.mark.timeout(120)
def test_fork_after_parent_used_it():
    tasks = _thread_tasks()
    # parent first: the same calls (big and small), results checked
    for a, axis, exact in tasks:
        _check_result(reducemean.mean(a, axis=axis), a, axis, exact)
    ctx = multiprocessing.get_context("fork")
    parent_conn, child_conn = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_fork_child, args=(child_conn, tasks))
    p.start()
    child_conn.close()
    try:
        assert parent_conn.poll(90), "no result from the forked child within 90 s (hang?)"
        out = parent_conn.recv()
        p.join(30)
        assert not p.is_alive(), "forked child did not exit"
        assert p.exitcode == 0, f"forked child exit code {p.exitcode}"
    finally:
        if p.is_alive():
            p.kill()
            p.join(5)
    assert len(out) == len(tasks)
    for got, (a, axis, exact) in zip(out, tasks):
        _check_result(got if got.ndim else got[()], a, axis, exact)
    # and the parent still works after the fork
    for a, axis, exact in tasks[:2]:
        _check_result(reducemean.mean(a, axis=axis), a, axis, exact)
