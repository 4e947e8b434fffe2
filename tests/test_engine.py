"""Tests for ``reducemean.engine``: the second pass for float64 sums beyond range.

A float64 sum of values near the largest float64 overflows where the mean
does not.  The exact reference is ``exact.exact_mean`` (Fractions); every
finite mean must come back within 1 ulp, on every kernel family and through
every front-end, and a true Inf or NaN input must still give Inf or NaN.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from exact import exact_mean, ulp_distance

import reducemean
from reducemean import engine, launch, numerics

BIG = 2.0**1023  # a sum of two of these is beyond the float64 range


def huge(shape, seed):
    """Values of magnitude 2**1022..2**1023 (mostly positive), so sums overflow."""
    rng = np.random.default_rng(seed)
    mag = rng.uniform(0.5, 1.0, size=shape) * BIG
    sign = np.where(rng.random(shape) < 0.8, 1.0, -1.0)
    return mag * sign


def check_within_one_ulp(got, a, axis, dtype=np.float64):
    want = exact_mean(a, axis)
    got = np.asarray(got)
    assert got.shape == want.shape
    for idx in np.ndindex(*want.shape):
        d = ulp_distance(got[idx], want[idx], dtype)
        assert d <= 1.0, (idx, float(got[idx]), float(want[idx]), d)


# (shape, axis, view): one case per kernel family and walk
LAYOUTS = [
    ((64,), None, None),  # whole, small: numpy_api's memoised direct path
    ((1 << 19,), None, None),  # whole, large: parallel split over the range
    ((48, 300), 1, None),  # rows (inner)
    ((300, 48), 0, None),  # columns (outer)
    ((4000, 4), 1, None),  # short rows
    ((4000, 8), 1, None),  # short rows of 8 float64 values, as their halves
    ((4000, 8), 1, "step"),  # short rows of every second value: the row loop
    ((20, 6, 30), (0, 2), None),  # RKR
    ((300, 64), 1, "T"),  # a transposed view
    ((64, 600), 1, "step"),  # a step-2 view
    ((600, 600), 0, None),  # columns, large enough to run in parallel
    # each parallel kernel whose tasks count their out-of-range sums apart
    ((2048, 128), 1, None),  # rows
    ((65536, 4), 1, None),  # short rows
    ((65536, 8), 1, None),  # short rows of 8, as their halves
    ((128, 2048), 0, None),  # columns, a block per thread
    ((8, 32, 1024), 1, None),  # columns (KRK), a unit per block
]


@pytest.mark.parametrize("shape,axis,view", LAYOUTS)
def test_float64_overflowing_sums_give_exact_means(shape, axis, view):
    a = huge(shape, seed=len(shape) * 1000 + shape[0])
    if view == "T":
        a = a.T
    elif view == "step":
        a = a[:, ::2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's own overflow
        ref = np.mean(a, axis=axis)
    assert not np.isfinite(ref).all()  # the case numpy overflows on
    check_within_one_ulp(reducemean.mean(a, axis=axis), a, axis)
    check_within_one_ulp(reducemean.mean(a, axis=axis), a, axis)  # memoised path too
    axes = None if axis is None else [axis] if isinstance(axis, int) else list(axis)
    check_within_one_ulp(reducemean.reduce_mean(a, axes=axes, keepdims=0), a, axis)


def test_float64_overflow_serial_and_parallel_agree_with_exact():
    a = huge((1 << 19,), seed=7)
    with launch.serial_only():
        check_within_one_ulp(reducemean.mean(a), a, None)
    check_within_one_ulp(reducemean.mean(a), a, None)


def test_complex128_overflowing_parts():
    a = huge((500,), seed=3) + 1j * huge((500,), seed=4)
    want_re, want_im = exact_mean(a)
    for _ in range(2):  # the second call takes numpy_api's remembered path
        got = reducemean.mean(a)
        assert ulp_distance(got.real, want_re[()], np.float64) <= 1
        assert ulp_distance(got.imag, want_im[()], np.float64) <= 1
    for rows in (a.reshape(20, 25), huge((2048, 64), seed=5) + 1j * huge((2048, 64), seed=6)):
        # the second: large enough for the parallel kernel
        want_re, want_im = exact_mean(rows, axis=1)
        for _ in range(2):
            got = reducemean.mean(rows, axis=1)
            for r in range(rows.shape[0]):
                assert ulp_distance(got[r].real, want_re[r], np.float64) <= 1
                assert ulp_distance(got[r].imag, want_im[r], np.float64) <= 1


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_non_finite_parts_spread_as_numpy_on_every_path(dtype):
    # numpy divides the complex sum by n + 0j: a non-finite part spreads NaN
    # into the other part.  Kernels that see only finite sums skip that step,
    # so each kind of slice is checked, on the first call and on the
    # remembered path.
    x = np.arange(1, 41, dtype=np.float64).reshape(8, 5) * (1 - 2j)
    x[1, 2] = complex(np.inf, 0)
    x[3, 0] = complex(0, -np.inf)
    x[5, 4] = complex(np.nan, 1)
    x = x.astype(dtype)
    for axis in (None, 0, 1):
        with np.errstate(invalid="ignore"):
            want = np.mean(x, axis=axis)
        for _ in range(2):
            got = reducemean.mean(x, axis=axis)
            assert np.array_equal(got, want, equal_nan=True), axis
    # a complex128 mean beyond complex64's range, narrowed by dtype=: its
    # sum is finite, and the infinite part still spreads
    big = np.full(4, 1e298 + 1j, np.complex128)  # sum below the 2**995 redo limit
    with np.errstate(over="ignore", invalid="ignore"):
        want = np.mean(big, dtype=np.complex64)
        got = reducemean.mean(big, dtype=np.complex64)
    assert np.isinf(want.real) and np.isnan(want.imag)
    assert np.array_equal(got, want, equal_nan=True)


def test_overflowing_sum_with_true_infinities_stays_infinite():
    a = np.full(100, BIG)
    a[50] = -np.inf
    assert reducemean.mean(a) == -np.inf  # the exact answer: the sum is -inf
    a[50] = np.inf
    assert reducemean.mean(a) == np.inf
    a[51] = -np.inf
    assert math.isnan(reducemean.mean(a))
    a = np.full(100, BIG)
    a[7] = np.nan
    assert math.isnan(reducemean.mean(a))
    cols = np.full((10, 3), BIG)
    cols[4, 1] = -np.inf
    got = reducemean.mean(cols, axis=0)
    assert got[0] == BIG and got[2] == BIG and got[1] == -np.inf


def test_cancelling_overflow_to_a_narrower_result():
    # the float64 sum overflows on the way, the mean is small: dtype=float32
    # and out= of float32 get the exact mean rounded once
    a = np.concatenate([np.full(8, 1e308), np.full(8, -1e308), np.full(16, 6.0)])
    want = exact_mean(a)[()]
    got = reducemean.mean(a, dtype=np.float32)
    assert got.dtype == np.float32 and ulp_distance(got, want, np.float32) <= 1
    out = np.empty((), np.float32)
    reducemean.mean(a, out=out)
    assert ulp_distance(out[()], want, np.float32) <= 1
    assert ulp_distance(reducemean.mean(a), want, np.float64) <= 1


def test_where_overflow():
    a = huge((40, 50), seed=11)
    mask = np.random.default_rng(12).random(a.shape) < 0.7
    got = reducemean.mean(a, axis=1, where=mask)
    for i in range(a.shape[0]):
        want = exact_mean(a[i][mask[i]])[()]
        assert ulp_distance(got[i], want, np.float64) <= 1, i


def test_mean_beyond_float64_is_inf():
    # every value at the largest float64 and a mean of it: finite; the same
    # values cast to float16 as a result overflow, as the exact mean does
    top = np.finfo(np.float64).max
    a = np.full(1000, top)
    assert reducemean.mean(a) == top
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert reducemean.mean(a, dtype=np.float16) == np.inf


@pytest.mark.parametrize(("shape", "order"), [
    ((100003, 16), (1, 0)),  # pieces of 2048 rows, a short last one
    ((3, 70000, 5), (2, 0, 1)),  # rows of 2.7 MiB: a piece a row
    ((9000, 7, 40), (1, 2, 0)),
    ((9000, 7, 40), (0, 2, 1)),  # the first axis stays first
    ((500, 300), (1, 0)),  # under the piece threshold: one copy
])
def test_permute_into_is_numpys_transpose(shape, order):
    # the permuted plans' copy (engine.reduce_into, states.partial), in
    # pieces of its source's first axis, against numpy's own transpose
    from reducemean.engine import permute_into

    src = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    dst = np.full(tuple(shape[k] for k in order), -1.0)
    permute_into(dst, src, order)
    assert np.array_equal(dst, src.transpose(order))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex128])
def test_big_permuted_results_come_out_in_the_results_order(dtype):
    # (n, 2, 16).T over its middle axis: planned in memory order, then
    # permuted into a C-contiguous ``out`` and the dask states in pieces
    # (engine.permute_into), or returned transposed (engine.reduce_new);
    # against exact means of integer values
    from reducemean import states

    rng = np.random.default_rng(8)
    x = rng.integers(-1000, 1000, (40000, 2, 16))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.integers(-1000, 1000, x.shape)
    v = x.astype(dtype).T
    got = reducemean.mean(v, axis=1)
    into = np.full(got.shape, -7, got.dtype)
    assert reducemean.mean(v, axis=1, out=into) is into
    into_f = np.asfortranarray(np.full(got.shape, -7, got.dtype))  # out not C-contiguous
    assert reducemean.mean(v, axis=1, out=into_f) is into_f
    st, count = states.partial(v, 1, keepdims=False)
    via_states = states.finish(st, count, v.dtype)
    assert got.shape == via_states.shape == (16, 40000)
    for part in ("real", "imag") if np.dtype(dtype).kind == "c" else ("real",):
        want = getattr(v, part).astype(np.int64).sum(axis=1) / 2  # halves: exact
        for res in (got, into, into_f, via_states):
            assert np.array_equal(getattr(res, part), want.astype(getattr(got, part).dtype))


def _memory_order(a):
    """``a``'s axes of more than one value, outermost in memory first."""
    axes = [d for d in range(a.ndim) if a.shape[d] > 1]
    return sorted(axes, key=lambda d: -abs(a.strides[d]))


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("case", [
    ("float32", (3000, 2, 16), (2, 1, 0), (1,)),
    ("int32", (512, 3, 4, 8), (3, 0, 2, 1), (2,)),
    ("float64", (300, 4, 6, 5), (3, 2, 1, 0), (2,)),
    ("uint8", (2000, 3, 5), (2, 1, 0), (1,)),
    ("complex64", (700, 2, 9), (2, 1, 0), (1,)),
    ("float16", (900, 4, 3, 2), (3, 2, 0, 1), (1,)),
])
def test_permuted_means_are_laid_out_as_numpys(case, keepdims):
    # A view whose kept axes lie in another order in memory than in the
    # result: the means are summed in memory order and returned as that
    # array transposed, not copied into result order.  numpy lays its own
    # result out in its input's memory order too, so the two match in
    # layout as well as in value (exact means of integer values).
    from reducemean.dispatch import entry_for
    from reducemean.engine import get_plan

    name, shape, order, axis = case
    rng = np.random.default_rng(len(shape) * 100 + shape[0])
    x = rng.integers(0, 100, shape)
    if name.startswith("complex"):
        x = x + 1j * rng.integers(0, 100, shape)
    v = x.astype(name).transpose(order)
    _, plan = get_plan(v, axis, keepdims, entry_for(v.dtype))
    assert plan.permute is not None  # the case takes the permuted path
    got = reducemean.mean(v, axis=axis, keepdims=keepdims)
    ref = np.mean(v, axis=axis, keepdims=keepdims)
    assert got.shape == ref.shape and got.dtype == ref.dtype
    assert _memory_order(got) == _memory_order(ref)
    assert not got.flags.c_contiguous
    exact = exact_mean(v, axis=axis)
    parts = exact if name.startswith("complex") else (exact,)
    for part, want in zip(("real", "imag"), parts):
        flat = getattr(got, part).reshape(want.shape)
        dist = max(ulp_distance(g, w, flat.dtype) for g, w in zip(flat.ravel(), want.ravel()))
        assert dist <= 0.501  # rounded once (float32 from float64: at most 2^-29 ulp more)
    if name in ("float32", "float64", "int32", "uint8"):  # ONNX's front end, in its own type
        op = reducemean.reduce_mean(v, axes=list(axis), keepdims=int(keepdims))
        assert _memory_order(op) == _memory_order(got)
        assert op.dtype == v.dtype


# --- the second pass of narrow floats whose plain sums cancel -----------------

def _rows_that_cancel(rows, cancel, seed):
    """(rows, 40) float32, ``cancel`` of the rows holding 1e20 and -1e20 among small values."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-50, 51, (rows, 40)).astype(np.float32) / 4
    for r in rng.choice(rows, cancel, replace=False):
        a[r, :3] = (1e20, 1.0, -1e20)
    return a


@pytest.mark.parametrize("cancel", [3, 40])
@pytest.mark.parametrize("mend_max", [0, 16, 1000])
def test_narrow_sums_redone_one_by_one_or_whole(monkeypatch, cancel, mend_max):
    # A few marked outputs are redone from their own values, many by a
    # second pass of the whole plan: both within an ulp of the exact means,
    # rows and columns, in the plan's order and in a transposed result.
    monkeypatch.setattr(engine, "MEND_MAX", mend_max)
    a = _rows_that_cancel(200, cancel, cancel)
    for x, axis in ((a, 1), (a.T, 0), (np.ascontiguousarray(a.T), 0), (a.T, 1),
                    (a.reshape(10, 20, 40), (0, 2))):
        want = exact_mean(x.astype(np.float64), axis)
        for keepdims in (False, True):
            got = np.asarray(reducemean.mean(x, axis=axis, keepdims=keepdims))
            if keepdims:
                got = got.reshape(want.shape)
            for idx in np.ndindex(*want.shape):
                assert ulp_distance(got[idx], want[idx], np.float32) <= 1, (x.shape, axis, idx)


def _layouts_without_marks():
    rng = np.random.default_rng(7)
    normal = rng.standard_normal
    real = (normal(4000) + 0j).astype(np.complex64)  # a real array held as complex64
    rows = (normal((64, 40)) + 0j).astype(np.complex64)
    step2 = (normal((8, 400)) + 0j).astype(np.complex64)[:, ::2]
    imag = (1j * normal((64, 40))).astype(np.complex64)
    half = normal((4096, 4)).astype(np.float16)
    half8 = normal((4096, 8)).astype(np.float16)
    bf16 = np.dtype(pytest.importorskip("ml_dtypes").bfloat16)
    brain = normal((65536, 4)).astype(bf16)  # about 20 rows sum to exactly 0
    brain8 = normal((32768, 8)).astype(bf16)
    brain12 = normal((32768, 12)).astype(bf16)
    half16 = normal((4096, 16)).astype(np.float16)
    brain16 = normal((32768, 16)).astype(bf16)
    pairs = normal((4096, 8)).astype(bf16)  # rows of values and their negatives: sums of 0
    brain16[:4096] = rng.permuted(np.concatenate([pairs, -pairs], axis=1), axis=1)
    brain5 = normal((65536, 5)).astype(bf16)  # about 900 rows sum to exactly 0
    brain9 = normal((65536, 9)).astype(bf16)
    signs6 = np.sign(normal((4096, 6))).astype(np.float32)  # a third sum to 0
    brain24 = normal((32768, 24)).astype(bf16)
    pairs = normal((4096, 12)).astype(bf16)
    brain24[:4096] = rng.permuted(np.concatenate([pairs, -pairs], axis=1), axis=1)
    return [(real, None), (rows, 1), (step2, 1), (imag, 1), (half, 1), (half8, 1),
            (brain, 1), (brain8, 1), (brain12, 1), (half16, 1), (brain16, 1), (brain5, 1),
            (brain9, 1), (signs6, 1), (brain24, 1)]


@pytest.mark.parametrize("case", range(15))
def test_sums_that_are_exact_or_of_zeros_are_not_redone(monkeypatch, case):
    # A complex part of zeros sums to exactly 0 with a bound of 0 (its own
    # magnitudes, not the other part's); float16 rows of 4 to 32 values
    # sum exactly, and so do bfloat16 rows whose values span at most 42
    # binades (41 for rows of 9 to 16, 40 to 32: numerics.short_certified),
    # rows of 5 to 7 too once their stores marked them (numerics.
    # short_mend).  None may be marked for the second pass, whatever the
    # signs of the values (zero-mean values are the common case, and with 8
    # bits of precision their sums are often 0).
    x, axis = _layouts_without_marks()[case]
    marks = []
    real = engine.marked_for_redo
    monkeypatch.setattr(engine, "marked_for_redo",
                        lambda flat, entry: marks.append(real(flat, entry).size) or real(flat, entry))
    got = np.asarray(reducemean.mean(x, axis=axis))
    assert sum(marks) == 0
    parts = ((got.real, x.real), (got.imag, x.imag)) if x.dtype.kind == "c" else ((got, x),)
    unit = np.float32 if x.dtype.kind == "c" else x.dtype
    for g, values in parts:
        want = exact_mean(values.astype(np.float64), axis)
        for idx in np.ndindex(g.shape):
            assert ulp_distance(g[idx], want[idx], unit) <= 1, (case, idx)


def test_a_nan_with_the_marks_payload_stays_nan():
    # The kernels mark a mean to redo as a NaN of a payload of their own; an
    # input NaN with that payload is only redone (and stays NaN), other NaN
    # and Inf inputs propagate as in numpy.
    mark = np.array(numerics.REDO_F32, np.uint32).view(np.float32)
    a = np.ones((5, 40), np.float32)
    a[1, 3] = mark
    a[2, 0] = np.nan
    a[3, 7] = np.inf
    a[4, :3] = (1e20, 1.0, -1e20)
    got = reducemean.mean(a, axis=1)
    assert np.isnan(got[1]) and np.isnan(got[2]) and got[3] == np.inf
    want = exact_mean(a[4:].astype(np.float64), 1)[0]
    assert got[0] == 1 and ulp_distance(got[4], want, np.float32) <= 1


@pytest.mark.parametrize("run", [4, 8])
def test_non_finite_rows_leave_their_neighbours_bounded(run):
    # Rows of 4 and 8 share their step's largest negative magnitude; a
    # negative NaN (x86's default NaN) or -Inf among them must not hide
    # another row's cancellation.
    a = np.ones((200, run), np.float32)
    a[3, 0] = np.array(0xFFC00000, np.uint32).view(np.float32)  # -NaN
    a[4, 1] = -np.inf
    a[5, :3] = (1e20, 1.0, -1e20)
    a[197, :3] = (1e20, 1.0, -1e20)  # among the last rows, summed one by one
    a[198, 0] = np.array(0xFFC00000, np.uint32).view(np.float32)
    got = reducemean.mean(a, axis=1)
    assert np.isnan(got[3]) and np.isnan(got[198]) and got[4] == -np.inf
    want = exact_mean(a[5:6].astype(np.float64), 1)[0]
    assert ulp_distance(got[5], want, np.float32) <= 1
    assert ulp_distance(got[197], want, np.float32) <= 1
