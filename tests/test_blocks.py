"""Reduced dims inside the kept dims' block (reducemean.blocks), against exact means."""

from fractions import Fraction

import numpy as np
import pytest
from exact import BFLOAT16, exact_mean, ulp_distance

import reducemean
from reducemean import blocks, fold, launch, plan
from reducemean.dispatch import entry_for
from reducemean.plan import normalize_axis, plan_for

N = 4096  # rows: enough for every block of six values or more


def _plan(a, axis):
    return plan_for(a.shape, a.strides, a.itemsize, normalize_axis(axis, a.ndim), False,
                    entry_for(a.dtype).pairs)


def test_which_plans_sum_their_blocks_columns():
    a = np.zeros((N, 2, 3), np.float32)
    assert blocks.applies(_plan(a, (0, 2)))
    assert blocks.applies(_plan(a.T, (0, 2)))  # the same memory
    assert blocks.applies(_plan(np.zeros((N, 2, 3, 4)), (0, 2)))  # R K R K
    assert blocks.applies(_plan(np.zeros((N, 5, 2, 3)), (0, 1, 3)))  # outer reduced dims merge
    assert blocks.applies(_plan(np.zeros((4, 2, N, 2, 3))[:, 1], (0, 1, 3)))  # ... or not
    assert blocks.applies(_plan(a[: plan.BLOCK_ROWS], (0, 2)))  # small, but rows enough
    assert not blocks.applies(_plan(np.zeros((plan.BLOCK_ROWS - 1, 100, 3)), (0, 2)))  # few rows
    assert blocks.applies(_plan(np.zeros((plan.BLOCK_ROWS, 100, 3)), (0, 2)))
    assert not blocks.applies(_plan(a, 1))  # a kept dim outside the block
    assert not blocks.applies(_plan(a, 0))  # no reduced dim inside it
    gap = _plan(a[:, :, :2], (0, 2))  # a gap in it: summed as its runs' columns instead
    assert blocks.applies(gap) and gap.block[0].group == 2
    rev = _plan(a[:, ::-1], (0, 2))  # a kept dim read backwards: read forwards, the block
    assert blocks.applies(rev) and rev.flipped == (0,) and rev.block[0].kept == ((6, 1, 1),)
    runs = np.zeros((plan.BLOCK_MIN_RUNS // 32, 64), np.float32)[:, :48]
    assert not blocks.applies(_plan(runs, None))  # nothing kept
    big = plan.BLOCK_VALUES // 2 + 1
    assert not blocks.applies(_plan(np.zeros((64, big, 2), np.float32), (0, 2)))  # too wide
    # runs: shorter than BLOCK_RUN, over BLOCK_MIN_RUNS values
    runs = plan.BLOCK_MIN_RUNS // (4 * 16)
    assert blocks.applies(_plan(np.zeros((runs, 4, 16), np.float32), (0, 2)))
    assert not blocks.applies(_plan(np.zeros((runs // 2, 4, 16), np.float32), (0, 2)))
    long = plan.BLOCK_RUN
    assert not blocks.applies(_plan(np.zeros((runs, 4, long), np.float32), (0, 2)))
    # complex values: runs of values (the parts family), from BLOCK_MIN_RUNS
    c = np.zeros((fold.FOLD_MIN_WIDE, 2, 3), np.complex64)  # twelve float columns, folded
    assert blocks.applies(_plan(c, (0, 2)))
    assert not blocks.applies(_plan(c[: fold.FOLD_MIN // 4], (0, 2)))
    assert not blocks.applies(_plan(c.astype(np.complex128), (0, 2)))  # not by the float64 fold
    assert blocks.applies(_plan(np.zeros((3000, 4, 8), np.complex128), (0, 2)))
    # every second value: the block at a step of 2 (the column loop's superset)
    krk = _plan(np.zeros((N, 2, 3, 8), np.float32)[..., ::2], (0, 2))
    assert blocks.applies(krk) and krk.block[0].kept == ((24, 2, 1),)
    assert not blocks.applies(_plan(np.zeros((N, 2, 3, 12), np.float32)[..., ::3], (0, 2)))
    step2 = _plan(np.zeros((runs, 4, 32), np.float32)[..., ::2], (0, 2))
    assert blocks.applies(step2) and step2.block[0].kept == ((64, 2, 1),)
    assert not blocks.applies(_plan(np.zeros((runs // 2, 4, 32), np.float32)[..., ::2], (0, 2)))


def _exact_check(x, axes, got, tol=0.5):
    """Assert ``got`` within ``tol`` ulps of the exact means, and return those."""
    want = exact_mean(x, axes)
    if np.iscomplexobj(x):
        parts = ((got.real, want[0]), (got.imag, want[1]))
        rd = got.real.dtype
    else:
        parts = ((got, want),)
        rd = got.dtype
    for g, w in parts:
        for idx in np.ndindex(*w.shape):
            assert ulp_distance(g[idx], w[idx], rd) <= tol, (idx, g[idx], w[idx])
    return want


def _spread_values(dtype, shape):
    """Integers in the top half of their type, floats over six decades (bool: either)."""
    rng = np.random.default_rng(sum(shape))
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.max // 2, info.max, shape, dtype=dtype, endpoint=True)
    return (rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3, shape)).astype(dtype)


@pytest.mark.parametrize(("shape", "axes"), [
    ((700, 2, 3), (0, 2)),
    ((123, 7, 5), (0, 2)),
    ((180, 3, 2, 4), (0, 2)),  # groups of kept columns too
    ((70, 2, 3, 2, 5), (0, 2, 4)),
    ((3, 120, 4, 3), (0, 1, 3)),
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.uint8,
                                   np.float16, np.bool_])
def test_block_means_are_exact(shape, axes, dtype):
    # float64 values spread over many binades, with a cancelling pair in
    # every output, so a column merged into the wrong output or left out, or
    # an uncompensated merge, shows
    x = _spread_values(dtype, shape)
    if dtype == np.float64:
        first = (0,) * x.ndim
        last = tuple(n - 1 if d in axes else 0 for d, n in enumerate(shape))
        x[first], x[last] = 1e15, -1e15
    assert blocks.applies(_plan(x, axes))
    got = reducemean.mean(x, axis=axes)
    _exact_check(x, axes, got, 1 if dtype == np.float16 else 0.5)
    with launch.serial_only():
        assert np.array_equal(reducemean.mean(x, axis=axes), got)


@pytest.mark.parametrize(("shape", "view", "axes"), [
    ((180, 3, 2, 8), np.s_[..., ::2], (0, 2)),  # R K R K
    ((180, 3, 2, 8), np.s_[..., 1::2], (0, 2)),
    ((4400, 5, 12), np.s_[..., ::2], (0, 2)),  # R K R: runs of every second value
    ((4400, 5, 12), np.s_[::-1, :, ::-2], (0, 2)),  # read backwards
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.uint8,
                                   np.float16, np.bool_])
def test_blocks_of_every_second_value_give_exact_means(shape, view, axes, dtype):
    # The block's columns at a step of 2, summed with the values between
    # them (the column loop's superset); those must not reach any output.
    # float64 with a cancelling pair in every output, as above.
    x = _spread_values(dtype, shape)
    if dtype == np.float64:
        x[..., 1::2] = 1e300  # between the columns of the first two views
        x[0, ..., 0], x[-1, ..., -2] = 1e15, -1e15
        x[0, ..., 1], x[-1, ..., -1] = 1e15, -1e15
    v = x[view]
    assert blocks.applies(_plan(v, axes))
    got = reducemean.mean(v, axis=axes)
    _exact_check(v, axes, got, 1 if dtype == np.float16 else 0.5)
    with launch.serial_only():
        assert np.array_equal(reducemean.mean(v, axis=axes), got)
    assert np.array_equal(reducemean.mean(v, axis=axes, keepdims=True).squeeze(axes), got)


def test_kept_dims_in_another_order_than_memory():
    # the result's axes (c, a) lie in memory as (a, c); every output must
    # land in its own place
    rng = np.random.default_rng(1)
    base = rng.integers(-1000, 1000, (N // 8, 3, 5, 4)).astype(np.float32)
    v = base.transpose(0, 3, 2, 1)  # (n, c, r, a)
    assert blocks.applies(_plan(v, (0, 2)))
    got = reducemean.mean(v, axis=(0, 2))
    assert got.shape == (4, 3)
    sums = base.astype(np.int64).sum(axis=(0, 2))  # (a, c), exact
    count = v.shape[0] * v.shape[2]
    for a in range(3):
        for c in range(4):
            assert ulp_distance(got[c, a], Fraction(int(sums[a, c]), count), np.float32) <= 0.5


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
@pytest.mark.parametrize("w", [16, 40])
def test_short_runs_over_many_rows(dtype, w):
    # runs of w values, past the parallel threshold, integer-valued so the
    # exact mean is a ratio of int64 sums
    m = 4
    n = -(-plan.BLOCK_MIN_RUNS // (m * w)) * 2 + 3
    rng = np.random.default_rng(w)
    x = rng.integers(-100, 100, (n, m, w)).astype(dtype)
    assert blocks.applies(_plan(x, (0, 2)))
    got = reducemean.mean(x, axis=(0, 2))
    sums = x.astype(np.int64).sum(axis=(0, 2))
    for k in range(m):
        assert ulp_distance(got[k], Fraction(int(sums[k]), n * w), got.dtype) <= 0.5, k
    with launch.serial_only():
        assert np.array_equal(reducemean.mean(x, axis=(0, 2)), got)


def test_which_runs_of_sixteen_values_or_more_go_as_columns():
    # Runs under BLOCK_RUN values with a reduced dim outside a kept one,
    # too many columns for a block of plan._block: the runs as columns
    # (plan._runs_block) from BLOCK_ROWS rows and RUNS_BLOCK_MIN values.
    def runs_block(x, axes):  # a state per value of a run, each merged into its output's
        p = _plan(x, axes)
        return p.block is not None and p.block[0].nout == p.nout * p.reduced[-1][0]

    w = plan.SHORT_RUN
    m = plan.BLOCK_VALUES // w + 1  # one column more than a block holds
    assert runs_block(np.zeros((plan.BLOCK_ROWS, m, w), np.float32), (0, 2))
    assert not runs_block(np.zeros((plan.BLOCK_ROWS - 1, m, w), np.float32), (0, 2))
    long = plan.BLOCK_RUN
    assert runs_block(np.zeros((64, 100, long - 1), np.float32), (0, 2))
    assert not runs_block(np.zeros((64, 100, long), np.float32), (0, 2))
    wide = plan.RUNS_STATES // w  # a state per column: at most RUNS_STATES of them
    assert runs_block(np.zeros((64, wide, w), np.uint8), (0, 2))
    assert not runs_block(np.zeros((64, wide + 1, w), np.uint8), (0, 2))
    assert runs_block(np.zeros((64, 300, 4, 5), np.float32), (0, 2, 3))  # NCHW, small images
    assert runs_block(np.zeros((64, 300, 32), np.float32)[..., :20], (0, 2))  # cropped runs
    assert 64 * 200 * 20 < plan.RUNS_BLOCK_MIN <= 64 * 300 * 20  # values read, either side
    assert not runs_block(np.zeros((64, 200, 32), np.float32)[..., :20], (0, 2))
    # ... unless their columns do not group: each run alone a narrow block
    assert not runs_block(np.zeros((256, 256, 64))[..., :32], (0, 2))
    # every kept dim outside the reduced ones (KRR): each output's runs lie together
    assert not runs_block(np.zeros((64, 8, 1024, 32), np.float32)[..., :20], (1, 2, 3))
    # runs of every second value: the interleaved kernel's pair loops
    assert not runs_block(np.zeros((256, 1024, 40), np.float32)[..., ::2], (0, 2))


@pytest.mark.parametrize(("shape", "view", "axes"), [
    ((64, 300, 17), np.s_[:], (0, 2)),
    ((67, 129, 47), np.s_[::-1], (0, 2)),  # rows read backwards
    ((64, 300, 32), np.s_[..., 3:23], (0, 2)),  # cropped runs
    ((65, 300, 4, 5), np.s_[:], (0, 2, 3)),  # NCHW of small images
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.uint8,
                                   np.float16, np.bool_, "bfloat16"])
def test_runs_as_columns_give_exact_means(shape, view, axes, dtype):
    # Each column's state merges into its output's: a column merged into the
    # wrong output or left out, or a value between cropped runs read, shows.
    # float64 with a cancelling pair in every output, in two columns: each
    # column's low word is a plain sum of its adds' errors beside 1e15, so
    # after the pair cancels the mean is within one ulp, not always half
    # ((64, 300, 17): 0.52 at output 285, as a double-word sum gives it; see
    # README, Known gaps), and never further than numpy's.
    if dtype == "bfloat16":
        if BFLOAT16 is None:
            pytest.skip("needs ml_dtypes")
        x = _spread_values(np.float32, shape).astype(BFLOAT16)
    else:
        x = _spread_values(dtype, shape)
    if dtype == np.float64:
        x[0, ..., 3], x[-1, ..., 4] = 1e15, -1e15
        if isinstance(view, tuple):
            x[..., :3] = 1e300  # outside the cropped runs
    v = x[view]
    p = _plan(v, axes)
    assert p.block is not None and p.block[0].nout == p.nout * p.reduced[-1][0]  # runs' columns
    got = reducemean.mean(v, axis=axes)
    want = _exact_check(v, axes, got, 1 if dtype in (np.float16, "bfloat16", np.float64) else 0.5)
    if dtype == np.float64:
        theirs = np.mean(v, axis=axes)
        for idx in np.ndindex(*want.shape):
            assert (ulp_distance(got[idx], want[idx], got.dtype)
                    <= max(0.5, ulp_distance(theirs[idx], want[idx], got.dtype))), idx
    with launch.serial_only():
        assert np.array_equal(reducemean.mean(v, axis=axes), got)


@pytest.mark.parametrize(("shape", "folded"), [((fold.FOLD_MIN_WIDE + 5, 2, 3), True),
                                               ((3001, 4, 8), False)])
def test_compensated_block_columns_and_complex_values(shape, folded):
    # six float64 columns a row: the fold sums them; complex128: 64 float
    # columns, by the column loop.  A cancelling pair in the first output.
    rng = np.random.default_rng(4)
    x = rng.integers(-1000, 1000, shape).astype(np.float64) + 0.5
    x[0, 0, 0], x[-1, 0, -1] = 1e15, -1e15
    if not folded:
        x = x + 1j * x[::-1]
    assert blocks.applies(_plan(x, (0, 2)))
    assert fold.applies(_plan(x, (0, 2)).block[0]) == folded
    got = reducemean.mean(x, axis=(0, 2))
    count = shape[0] * shape[2]
    for part in ("real", "imag") if not folded else ("real",):
        # exact in any order: halves, every partial sum below 2**51
        sums = getattr(x, part).sum(axis=(0, 2))
        g = getattr(got, part)
        for k in range(shape[1]):
            assert g[k] == sums[k] / count, (part, k)


def test_nonfinite_values_and_sums_beyond_range():
    y = np.ones((N, 3, 2))
    y[5, 1, 0] = np.nan
    y[N - 1, 2, 1] = np.inf
    got = reducemean.mean(y, axis=(0, 2))
    assert got[0] == 1.0 and np.isnan(got[1]) and got[2] == np.inf
    # values near the float64 maximum: the sums overflow, the means do not,
    # so the scaled second pass (through the block's columns too) must give them
    rng = np.random.default_rng(9)
    x = rng.uniform(0.5, 1.0, (N, 2, 3)) * 2.0**1023 * np.where(rng.random((N, 2, 3)) < 0.8, 1, -1)
    got = reducemean.mean(x, axis=(0, 2))
    _exact_check(x, (0, 2), got, 1)


def test_every_front_end_and_result_type():
    rng = np.random.default_rng(6)
    x = rng.integers(-50, 50, (N, 2, 3)).astype(np.float32)
    sums = x.astype(np.int64).sum(axis=(0, 2))
    count = 3 * N
    want = np.array([float(Fraction(int(s), count)) for s in sums])
    got = reducemean.mean(x, axis=(0, 2), keepdims=True)
    assert got.shape == (1, 2, 1) and np.array_equal(got.ravel(), want.astype(np.float32))
    out = np.empty(2, np.float64)
    reducemean.mean(x, axis=(0, 2), out=out)
    assert np.array_equal(out, want)
    assert np.array_equal(reducemean.mean(x, axis=(0, 2), dtype=np.float64), want)
    assert np.array_equal(reducemean.reduce_mean(x, axes=[0, 2], keepdims=0),
                          want.astype(np.float32))
    h = x.astype(np.float16)
    assert np.array_equal(reducemean.mean(h, axis=(0, 2)), want.astype(np.float16))
    if BFLOAT16 is not None:
        b = x.astype(BFLOAT16)
        assert np.array_equal(reducemean.mean(b, axis=(0, 2)).astype(np.float64),
                              want.astype(BFLOAT16).astype(np.float64))


@pytest.mark.parametrize("view", ["rev0", "rev2", "step0", "crop0", "rev0+rev2"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex64])
def test_views_whose_first_value_is_not_the_first_in_memory(view, dtype):
    # reduced dims read backwards start from their other end; steps and
    # crops of the outer dim leave the block whole
    rng = np.random.default_rng(7)
    x = rng.integers(-1000, 1000, (fold.FOLD_MIN_WIDE // 4, 2, 3)).astype(dtype)
    if dtype == np.complex64:
        x = x + 1j * rng.integers(-1000, 1000, x.shape).astype(np.float32)
    index = {"rev0": np.s_[::-1], "rev2": np.s_[:, :, ::-1], "step0": np.s_[::2],
             "crop0": np.s_[5:-3], "rev0+rev2": np.s_[::-1, :, ::-1]}[view]
    v = x[index]
    assert blocks.applies(_plan(v, (0, 2)))
    got = reducemean.mean(v, axis=(0, 2))
    count = v.shape[0] * v.shape[2]
    for part in ("real", "imag") if dtype == np.complex64 else ("real",):
        sums = getattr(v, part).astype(np.int64).sum(axis=(0, 2))
        g = getattr(got, part)
        for k in range(2):
            assert ulp_distance(g[k], Fraction(int(sums[k]), count), g.dtype) <= 0.5, (part, k)


@pytest.mark.parametrize(("shape", "axes", "way"), [
    ((11000, 2, 3), (0, 2), blocks),  # complex64: twelve columns, folded
    ((fold.FOLD_MIN + 1, 3), 0, fold),
])
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.complex64])
def test_blockwise_states_are_summed_the_same_way(monkeypatch, shape, axes, way, dtype):
    # reducemean.dask's chunks: states of block plans by their columns, of
    # narrow columns by the fold, finished into exact means
    from reducemean import states

    rng = np.random.default_rng(2)
    x = rng.integers(-1000, 1000, shape).astype(dtype)
    if dtype == np.complex64:
        x = x + 1j * rng.integers(-1000, 1000, shape).astype(np.float32)
    calls = []
    real = way.states
    monkeypatch.setattr(way, "states", lambda *a: calls.append(1) or real(*a))
    st, count = states.partial(x, axes, keepdims=False)
    assert calls
    got = states.finish(st, count, x.dtype)
    ax = normalize_axis(axes, x.ndim)
    for part in ("real", "imag") if x.dtype.kind == "c" else ("real",):
        sums = getattr(x, part).astype(np.int64).sum(axis=ax)
        g = getattr(got, part)
        for idx in np.ndindex(*sums.shape):
            assert ulp_distance(g[idx], Fraction(int(sums[idx]), count), g.dtype) <= 0.5, idx


def _runs(shape, view, dtype=np.float32):
    return np.zeros(shape, dtype)[view]


def test_which_plans_sum_short_runs_as_columns():
    # a short reduced run under kept dims far from it: its values as
    # columns (plan.RUNS_ROWS and the limits after it)
    p = _plan(_runs((4, 64, 16), np.s_[..., :12]), (1, 2))
    assert blocks.applies(p) and p.block[0].kept[-1][:2] == (12, 1)  # the run, kept
    assert blocks.applies(_plan(_runs((4, 128, 16), np.s_[..., :3]), (1, 2)))
    assert blocks.applies(_plan(_runs((4, 32, 16), np.s_[..., :12]), (1, 2)))  # 384 values
    assert not blocks.applies(_plan(_runs((4, 16, 16), np.s_[..., :12]), (1, 2)))  # 16 runs
    assert not blocks.applies(_plan(_runs((4, 64, 16), np.s_[..., :3]), (1, 2)))  # 192 values
    # more than RUNS_FEW outputs: runs of RUNS_WIDE values, RUNS_ROWS_MANY of them
    assert blocks.applies(_plan(_runs((256, 256, 16), np.s_[..., :8]), (1, 2)))
    assert not blocks.applies(_plan(_runs((256, 128, 16), np.s_[..., :8]), (1, 2)))
    assert not blocks.applies(_plan(_runs((256, 256, 16), np.s_[..., :5]), (1, 2)))
    # ... unless the runs' columns group: from RUNS_ROWS_GROUPED runs
    grouped = np.zeros((64, 1024, 10), np.float32).transpose(1, 0, 2)[..., :5]
    p = _plan(grouped, (1, 2))
    assert blocks.applies(p) and p.block[0].group == 5
    assert not blocks.applies(_plan(grouped[:, :52], (1, 2)))
    # runs a few values apart along the reduced dim right above them: that
    # dim's places as groups of the runs' columns, from RUNS_GROUP_ROWS rows
    rows = plan.RUNS_GROUP_ROWS
    p = _plan(_runs((8, rows, 17, 12), np.s_[:, :, :16, :4]), (1, 2, 3))
    assert blocks.applies(p) and p.block[0].group == 4 and p.block[0].kept[-1][:2] == (64, 12)
    assert p.block[0].reduced == ((rows, 17 * 12),)
    p = _plan(_runs((8, rows - 1, 17, 12), np.s_[:, :, :16, :4]), (1, 2, 3))
    assert blocks.applies(p) and p.block[0].group == 1  # the runs' columns alone
    p = _plan(_runs((plan.RUNS_FEW + 1, 64, 17, 12), np.s_[:, :, :16, :8]), (1, 2, 3))
    assert blocks.applies(p) and p.block[0].kept[-1][:2] == (8, 1)
    p = _plan(_runs((8, rows, 17, 20), np.s_[:, :, :16, :4]), (1, 2, 3))  # too far apart
    assert blocks.applies(p) and p.block[0].group == 1
    # at most RUNS_STATES column states
    assert not blocks.applies(_plan(_runs((8192, 32, 16), np.s_[..., :12]), (1, 2)))
    assert blocks.applies(_plan(_runs((5000, 256, 16), np.s_[..., :12]), (1, 2)))
    # nothing kept, runs kept dims lie next to, complex values: not these
    assert not blocks.applies(_plan(_runs((64, 64, 16), np.s_[..., :12]), None))
    assert not blocks.applies(_plan(_runs((4, 64, 16), np.s_[..., :12], np.complex64), (1, 2)))


_RUN_VIEWS = [
    ((5, 64, 16), np.s_[..., :12], (1, 2)),
    ((5, 64, 16), np.s_[::-1, :, 2:14], (1, 2)),  # a kept dim read backwards
    ((5, 64, 16), np.s_[..., 12:0:-1], (1, 2)),  # the runs read backwards
    ((6, 40, 3, 16), np.s_[..., 1:13:2], (1, 2, 3)),  # runs of every second value
    ((3, 4, 50, 16), np.s_[..., :9], (2, 3)),  # two kept dims
    ((3, 50, 4, 16), "T", (2, 3)),  # kept dims out of memory order
    ((64, 7, 10), "grouped", (1, 2)),
    ((4, 12, 17, 12), np.s_[:, :, :16, :4], (1, 2, 3)),  # runs as groups (RUNS_GROUP_ROWS)
    ((4, 12, 33, 6), np.s_[::-1, :, ::2, 3::-1], (1, 2, 3)),  # ... of every second run, reversed
]


def _run_view(shape, view, x):
    if view == "T":  # (4, 3, 50, 9): kept dims 4 and 3, in memory 3 then 4
        return x.transpose(2, 0, 1, 3)[..., :9]
    if view == "grouped":  # (7, 64, 5): runs of 5, ten apart, under the kept dim
        return x.transpose(1, 0, 2)[..., :5]
    return x[view]


@pytest.mark.parametrize(("shape", "view", "axes"), _RUN_VIEWS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint8, np.float16,
                                   np.bool_])
def test_short_runs_as_columns_give_exact_means(shape, view, axes, dtype):
    # values as in test_block_means_are_exact: a state merged into the
    # wrong output, or left out, shows
    x = _spread_values(dtype, shape)
    v = _run_view(shape, view, x)
    if dtype == np.float64:  # a cancelling pair in the first output
        first = (0,) * v.ndim
        last = tuple(n - 1 if d in axes else 0 for d, n in enumerate(v.shape))
        v[first], v[last] = 1e15, -1e15
    assert blocks.applies(_plan(v, axes))
    got = reducemean.mean(v, axis=axes)
    _exact_check(v, axes, got, 1 if dtype == np.float16 else 0.5)
    assert np.array_equal(reducemean.mean(v, axis=axes), got)  # the memo's call


def test_short_runs_as_columns_propagate_nonfinite_values_and_redo_large_sums():
    y = np.ones((4, 64, 16))[..., :12]
    y[1, 5, 3] = np.nan
    y[2, 63, 11] = np.inf
    y[3, 0, 0] = -np.inf
    got = reducemean.mean(y, axis=(1, 2))
    assert got[0] == 1.0 and np.isnan(got[1]) and got[2] == np.inf and got[3] == -np.inf
    rng = np.random.default_rng(10)
    x = rng.uniform(0.5, 1.0, (4, 64, 16)) * 2.0**1023 * np.where(
        rng.random((4, 64, 16)) < 0.8, 1, -1)
    v = x[..., :12]
    assert blocks.applies(_plan(v, (1, 2)))
    _exact_check(v, (1, 2), reducemean.mean(v, axis=(1, 2)), 1)


def test_runs_as_columns_propagate_nonfinite_values_and_redo_what_cancels():
    # Runs of SHORT_RUN values or more summed as columns (plan._runs_as_columns):
    # NaN and Inf reach their output alone; float64 sums past the range and
    # float32 sums that cancel past float64's 53 bits take the second pass.
    shape = (64, 300, 17)
    y = np.ones(shape)
    y[1, 5, 3] = np.nan
    y[2, 7, 16] = np.inf
    y[3, 9, 0] = -np.inf
    y[4, 11, 1], y[60, 11, 2] = np.inf, -np.inf
    assert blocks.applies(_plan(y, (0, 2)))
    got = reducemean.mean(y, axis=(0, 2))
    assert np.isnan(got[5]) and got[7] == np.inf and got[9] == -np.inf and np.isnan(got[11])
    others = np.delete(got, [5, 7, 9, 11])
    assert np.array_equal(others, np.ones_like(others))
    rng = np.random.default_rng(11)
    x = rng.uniform(0.5, 1.0, shape) * 2.0**1023 * np.where(rng.random(shape) < 0.8, 1, -1)
    _exact_check(x, (0, 2), reducemean.mean(x, axis=(0, 2)), 1)
    f = rng.integers(-8, 8, shape).astype(np.float32)
    f[0, :, 0], f[-1, :, -1] = 1e30, -1e30  # every output: a pair that cancels
    got = reducemean.mean(f, axis=(0, 2))
    g = f.copy()
    g[0, :, 0] = g[-1, :, -1] = 0  # the pair's own sum
    sums = g.astype(np.int64).sum(axis=(0, 2))
    for k in range(0, shape[1], 7):
        assert ulp_distance(got[k], Fraction(int(sums[k]), 64 * 17), np.float32) <= 0.5, k
