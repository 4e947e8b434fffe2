"""Per-dtype arithmetic, checked exhaustively or against Python integers and Fractions."""

import contextlib
import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from exact import exact_mean, exact_mean_values, ulp_distance
from numba import njit

import reducemean
from reducemean import kernels, launch, numerics
from reducemean.numerics import BF16, HALF, NATIVE, bf16_to_f64, half_to_f64

ml_dtypes = pytest.importorskip("ml_dtypes")


@njit
def _decode_all(bits, kind):
    out = np.empty(bits.shape[0])
    for i in range(bits.shape[0]):
        out[i] = half_to_f64(bits[i]) if kind == 0 else bf16_to_f64(bits[i])
    return out


def _same_floats(got, want):
    # equal values, equal signs of zero, NaN where NaN
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan], want[~nan])
    assert np.array_equal(np.signbit(got[~nan]), np.signbit(want[~nan]))


def test_every_float16_bit_pattern_widens_exactly():
    bits = np.arange(1 << 16, dtype=np.uint16)
    _same_floats(_decode_all(bits, 0), bits.view(np.float16).astype(np.float64))


def test_every_bfloat16_bit_pattern_widens_exactly():
    bits = np.arange(1 << 16, dtype=np.uint16)
    with np.errstate(invalid="ignore"):  # ml_dtypes warns while casting NaN payloads
        want = bits.view(ml_dtypes.bfloat16).astype(np.float64)
    _same_floats(_decode_all(bits, 1), want)


def _states_mean(values, dtype):
    """Run the kernels' state machinery on one run and finish as float and int."""
    a = np.asarray(values, dtype=dtype)
    entry_tok = NATIVE
    st = np.zeros((1, 2), np.int64 if a.dtype.kind == "i" else np.uint64)
    p = np.array([0, a.size, 0, 1, 1, a.size, 1], np.int64)
    kernels.inner_serial(a, p, st, entry_tok, 0, 1)  # its one output
    f = np.empty(1)
    i = np.empty(1, a.dtype)
    kernels.finish_states(st, a.size, f, entry_tok)
    kernels.finish_states(st, a.size, i, entry_tok)
    return f[0], i[0]


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
@pytest.mark.parametrize("seed", range(6))
def test_64_bit_sums_beyond_64_bits_are_exact(dtype, seed):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    n = int(rng.integers(2, 3000))
    # values crowded near the extremes, so the sum leaves the 64-bit range
    lo = info.max - 10**6 if seed % 2 or dtype == np.uint64 else info.min
    vals = rng.integers(lo, lo + 10**6, n, dtype=dtype, endpoint=True)
    f, i = _states_mean(vals, dtype)
    exact = Fraction(sum(int(v) for v in vals), n)
    assert float(exact) == pytest.approx(f, rel=2.5e-16)
    trunc = abs(exact.numerator) // exact.denominator * (1 if exact >= 0 else -1)
    assert int(i) == trunc


@pytest.mark.parametrize("n", [1, 3, 7, 2**31 - 1, 2**40 + 3])
def test_split_divmod_matches_python_integers(n):
    rng = np.random.default_rng(n % 1000)
    # precondition: the quotient (a mean of 64-bit values) fits in int64
    hmax = min(2**40, n * 2**30)
    for _ in range(200):
        h = int(rng.integers(-hmax, hmax))
        l = int(rng.integers(0, 2**32))
        q, r = numerics._split_divmod(np.int64(h), np.int64(l), np.int64(n))
        assert (int(q), int(r)) == divmod(h * 2**32 + l, n)


def test_float_finish_is_the_once_rounded_quotient():
    # (a + b) / n as a double-double over an integer: compare with Fraction rounding
    rng = np.random.default_rng(5)
    cases = []
    for _ in range(2000):
        a = float(rng.standard_normal() * 10.0 ** rng.integers(-5, 5))
        cases.append((a, a * 2.0**-60 * float(rng.standard_normal()), int(rng.integers(1, 10**6))))
    # the whole exponent range: up to the 2**995 headroom, and subnormal quotients
    for _ in range(2000):
        a = float(rng.standard_normal() * 2.0 ** rng.integers(-1074, 994))
        b = a * 2.0**-55 * float(rng.standard_normal())
        cases.append((a, b, int(rng.integers(1, 2**45))))
    for a, b, n in cases:
        got = _to_float_py(a, b, n)
        exact = (Fraction(a) + Fraction(b)) / n
        err = abs(Fraction(got) - exact)
        ulp = Fraction(np.spacing(abs(float(exact))))
        assert err <= ulp / 2 * Fraction(1001, 1000), (a, b, n)


@njit
def _finish_one(a, b, n):
    return numerics.to_float(a, b, n, NATIVE)


def _to_float_py(a, b, n):
    return float(_finish_one(a, b, n))


def test_float_finish_propagates_inf_and_nan():
    assert _to_float_py(np.inf, np.nan, 3) == np.inf
    assert _to_float_py(-np.inf, np.nan, 3) == -np.inf
    assert np.isnan(_to_float_py(np.nan, 0.0, 3))


def test_tokens_are_distinct_types():
    dts = {NATIVE.dtype, HALF.dtype, BF16.dtype}
    assert len(dts) == 3


@njit
def _least_most(a, b):
    return numerics.least(a, b), numerics.most(a, b)


@njit
def _least_most_literal(a):
    return numerics.least(a, 7), numerics.most(1, a)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int32, np.uint8])
def test_least_and_most_are_min_and_max_of_integers(dtype):
    info = np.iinfo(dtype)
    values = sorted({int(info.min), int(info.min) + 1, 0, 1, 7, 8, int(info.max) - 1,
                     int(info.max)} | ({-8, -7, -1} if info.min < 0 else set()))
    for a in values:
        for b in values:
            got = _least_most(dtype(a), dtype(b))
            assert [int(g) for g in got] == [min(a, b), max(a, b)], (a, b)


@pytest.mark.parametrize("a", [-(2**63), -8, 0, 6, 7, 8, 2**63 - 1])
def test_least_and_most_take_literals(a):
    got = _least_most_literal(np.int64(a))
    assert [int(g) for g in got] == [min(a, 7), max(1, a)]


def test_least_and_most_refuse_mixed_signedness():
    # int64 with uint64 has no integer type to compare in (Numba's min gives a float)
    with pytest.raises(Exception, match="least"):
        _least_most(np.int64(1), np.uint64(2))


def _each(fn, dtype):
    """A compiled loop applying the compiled helper ``fn`` to each value of a 1-D array."""

    @njit
    def run(x):
        out = np.empty(x.size, dtype)
        for i in range(x.size):
            out[i] = fn(x[i])
        return out

    return run


_to_bf16_all = _each(numerics.f32_to_bf16_bits, np.uint16)


def test_float32_to_bfloat16_rounds_like_ml_dtypes():
    # random bit patterns cover every exponent, ties, subnormals, Inf and NaN
    rng = np.random.default_rng(11)
    x = rng.integers(0, 2**32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(np.float32)
    ties = (np.arange(1 << 12, dtype=np.uint32) << 16 | 0x8000).view(np.float32)
    x = np.concatenate([x, ties, np.array([np.inf, -np.inf, 0.0, -0.0], np.float32)])
    got = _to_bf16_all(x)
    with np.errstate(invalid="ignore"):
        want = x.astype(ml_dtypes.bfloat16).view(np.uint16)
    nan = np.isnan(x)
    assert np.array_equal(got[~nan], want[~nan])
    assert np.isnan(got[nan].view(ml_dtypes.bfloat16).astype(np.float32)).all()


_to_f32_odd_all = _each(numerics.f64_to_f32_odd, np.float32)


def _odd_reference(x):
    """x rounded to float32 to odd, from Fractions: x if float32 holds it, else the
    float32 value of the two around x whose last bit is 1; from 2**128, Inf; between
    the largest float32 and 2**128, the largest (odd).  Normal float32 results only."""
    if not math.isfinite(x) or abs(x) >= 2.0**128:
        return np.float32(math.copysign(math.inf, x))
    big = float(np.finfo(np.float32).max)
    if abs(x) > big:
        return np.float32(math.copysign(big, x))
    with np.errstate(over="ignore"):
        y = np.float32(x)
    if Fraction(float(y)) == Fraction(x):
        return y
    towards = np.float32(math.copysign(math.inf, x))
    below = y if abs(Fraction(float(y))) < abs(Fraction(x)) else np.nextafter(y, -towards)
    above = np.nextafter(below, towards)
    return below if below.view(np.uint32) & 1 else above


def test_float64_to_float32_rounds_to_odd():
    # random bit patterns cover every exponent, subnormal results and values
    # past float32's range; values within float32's precision come back exact
    rng = np.random.default_rng(12)
    x = rng.integers(0, 2**64, 1 << 14, dtype=np.uint64).view(np.float64)
    x = x[np.isfinite(x)]
    narrow = rng.standard_normal(1 << 12) * 10.0 ** rng.integers(-50, 50, 1 << 12)
    exact32 = rng.standard_normal(256).astype(np.float32).astype(np.float64)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, 3.5e38, -3.5e38, 2.0**128, -(2.0**129),
                         float(np.finfo(np.float32).max), 2.0**-126, 1.5 * 2.0**-126])
    x = np.concatenate([x, narrow, exact32, specials])
    # below float32's normals the conversion rounds again (see f64_to_f32_odd);
    # a float16 rounds all of them to 0 (the next test), a bfloat16 within 1 ulp
    x = x[(np.abs(x) >= 2.0**-126) | (x == 0)]
    got = _to_f32_odd_all(x)
    want = np.array([_odd_reference(float(v)) for v in x], np.float32)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert np.isnan(_to_f32_odd_all(np.array([np.nan, -np.nan]))).all()


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_float64_through_odd_float32_rounds_once_to_16_bits(dtype):
    """The 16-bit value of f64_to_f32_odd(x) is x's own rounding, by exact reference."""
    from exact import round_to_16

    dtype = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(13)
    # near midpoints of the 16-bit type: a midpoint plus or minus a little,
    # which a float32 rounded to nearest would land on
    mant = 11 if dtype == np.float16 else 8
    base = rng.uniform(1, 2, 2000).astype(dtype).astype(np.float64)
    mid = base + 2.0 ** -mant
    x = np.concatenate([mid + 2.0**-30, mid - 2.0**-30, mid, -(mid + 2.0**-30),
                        rng.standard_normal(2000) * 10.0 ** rng.integers(-6, 5, 2000)])
    if dtype == np.float16:  # below float32's normals: float16's 0
        x = np.concatenate([x, rng.standard_normal(200) * 2.0**-130])
    odd = _to_f32_odd_all(x)
    if dtype == np.float16:
        got = odd.astype(np.float16)
    else:
        got = _to_bf16_all(odd).view(dtype)
    want = np.array([round_to_16(Fraction(float(v)), dtype) for v in x], dtype)
    assert np.array_equal(got.astype(np.float64), want.astype(np.float64))


@pytest.mark.parametrize(
    "n", [1, 3, 4, 5, 7, 8, 12, 15, 16, 17, 20, 23, 24, 28, 31, 63, 64, 65, 100, 127, 128, 129,
          160, 1023, 1024, 1025, 3001],
)
def test_float64_runs_are_compensated_at_every_lane_count(n):
    # Rows of n values cross each path of the float64 run sum.  Contiguous
    # runs take the vector lanes (blocks of eight, a last block of four, then
    # up to three values one by one): in the row kernel (rows of 16 or more,
    # and a whole reduction), and inside the general inner kernel (the 3-D
    # view).  The row kernel sums contiguous rows two at a time in one loop;
    # an odd row count leaves one row alone.  Reversed and strided rows take
    # the same lanes with each vector put together from strided loads, and
    # their tails.
    # Large pairs cancel (1e15 - 1e15), so a plain float64 sum would lose the
    # small values (by about 1e14 ulps); the exact mean is a Fraction.  The
    # compensated state's low word is itself a plain sum of the rounding
    # errors, here of the small values, so its own rounding can put the mean
    # a little past one ulp (1.19 for n = 5, row 3, every third value):
    # within two.
    rng = np.random.default_rng(n)
    rows = 7
    x = rng.choice([-1.0, 1.0], (rows, 3 * n)) * 10.0 ** rng.uniform(-6, 6, (rows, 3 * n))
    big = 1e15 * (1 + rng.random(rows))
    for r in range(rows):
        i, j = rng.choice(3 * n, 2, replace=False) if n > 1 else (0, 1)
        x[r, i], x[r, j] = big[r], -big[r]
    views = [x[:, :n], x[:, n - 1::-1], x[:, ::3]]
    for v in views:
        got = reducemean.mean(v, axis=1)
        for r in range(rows):
            exact = exact_mean_values(v[r].tolist())
            assert ulp_distance(got[r], exact, np.float64) <= 2, (n, r)
    whole = reducemean.mean(x[0, :n])
    assert ulp_distance(whole, exact_mean_values(x[0, :n].tolist()), np.float64) <= 2, n
    # outputs over two reduced dims: each sums two contiguous runs of n
    v3 = x[:6, :n].reshape(2, 3, n)
    got = reducemean.mean(v3, axis=(0, 2))
    for k in range(3):
        exact = exact_mean_values(v3[:, k].ravel().tolist())
        assert ulp_distance(got[k], exact, np.float64) <= 2, (n, k)


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_every_third_value_of_narrow_floats(name):
    # Runs of every third value are summed by a loop of constant stride,
    # vectorised: NaN and Inf placed only between the kept values must not
    # reach the mean (a loop that loaded whole vectors would read them),
    # and those placed in the run must.  Lengths around the vector widths (the
    # loop's last values are read one at a time), whole runs, rows and a
    # parallel whole reduction, against means of the correctly rounded
    # float64 sums (math.fsum), within half a float64 ulp of the exact ones.
    dtype = np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)
    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 8, 9, 31, 33, 100, 1001, 1 << 19):
        x = (rng.standard_normal(3 * n + 1) * 2.0 ** rng.integers(-8, 9, 3 * n + 1)).astype(dtype)
        between = np.arange(3 * n + 1) % 3 != 1
        x[between] = rng.choice(np.array([np.nan, np.inf, -np.inf], dtype), between.sum())
        v = x[1::3]
        assert v.size == n and np.isfinite(v.astype(np.float32)).all()
        exact = math.fsum(v.astype(np.float64).tolist()) / n
        got = reducemean.mean(v)
        assert ulp_distance(got, Fraction(exact), dtype) <= 1, n
        if n >= 8:
            w = x[1: 1 + 3 * (n // 4) * 4].reshape(4, -1)[:, ::3]  # four rows
            got_rows = reducemean.mean(w, axis=1)
            for r in range(4):
                want = math.fsum(w[r].astype(np.float64).tolist()) / w.shape[1]
                assert ulp_distance(got_rows[r], Fraction(want), dtype) <= 1, (n, r)
        if n == 100:
            x[1 + 3 * 50] = np.nan  # in the run now
            assert np.isnan(np.float32(reducemean.mean(x[1::3])))
            x[1 + 3 * 50], x[1 + 3 * 7] = np.inf, -np.inf
            assert np.isnan(np.float32(reducemean.mean(x[1::3])))
            x[1 + 3 * 7] = np.inf
            assert np.float32(reducemean.mean(x[1::3])) == np.inf


@pytest.mark.parametrize("rows, cols", [(7, 3), (8, 100), (13, 200), (17, 600), (64, 33), (67, 50),
                                        (3, 1000)])
def test_float64_columns_and_short_rows_are_compensated(rows, cols):
    # Column states take one value at a time (eight rows a pass, an eighth
    # of the rows apart for narrow blocks, then single rows), and rows of a
    # few values are summed value by value across rows, contiguous or
    # strided: they add with TwoSum (three of its additions fused where the
    # CPU has FMA).  Each column holds a cancelling pair of 1e15, so a
    # plain float64 sum would lose the small values.
    rng = np.random.default_rng(rows * cols)
    x = rng.choice([-1.0, 1.0], (rows, cols)) * 10.0 ** rng.uniform(-6, 6, (rows, cols))
    x[0], x[rows // 2] = 1e15 * (1 + rng.random(cols)), 0.0
    x[rows // 2] = -x[0]
    got = reducemean.mean(x, axis=0)
    for j in range(cols):
        exact = exact_mean_values(x[:, j].tolist())
        assert ulp_distance(got[j], exact, np.float64) <= 1, (rows, cols, j)
    t = np.ascontiguousarray(x.T)  # rows of `rows` values
    wide = np.zeros((cols, 3 * rows))
    wide[:, ::3] = t
    for view in (t, wide[:, ::3]):  # contiguous short rows, and strided ones
        got = reducemean.mean(view, axis=1)
        for j in range(cols):
            exact = exact_mean_values(t[j].tolist())
            assert ulp_distance(got[j], exact, np.float64) <= 1, (rows, cols, j)


@pytest.mark.parametrize("n", [16, 17, 18, 19, 20, 21, 22, 23, 31, 33, 100])
def test_float64_runs_of_one_output_share_one_set_of_lanes(n):
    # An output over several reduced dims sums its whole runs in one set of
    # vector lanes (numerics.run_rows): blocks of eight, then each run's
    # last n % 8 values padded with -0.0 (runs under 16 values are summed
    # as columns instead).  Runs here are contiguous, strided and
    # backwards; each output's runs follow one another along the next
    # reduced dim, or stop where it ends (three reduced dims); and large
    # inputs are cut into pieces that start and end inside runs.  Each
    # output holds a cancelling pair of 1e15, so a plain float64 sum would
    # lose the small values; a value skipped, read twice or from past a
    # run's end (the padding) shows against the exact mean.
    rng = np.random.default_rng(100 + n)

    def data(shape):
        x = rng.choice([-1.0, 1.0], shape) * 10.0 ** rng.uniform(-6, 6, shape)
        big = 1e15 * (1 + rng.random(shape[-2]))
        x[(0,) * (len(shape) - 2) + (slice(None), 0)] = big
        x[(-1,) * (len(shape) - 2) + (slice(None), n - 1)] = -big
        return x

    _check_runs_of_runs(data, n, np.float64)


def _check_runs_of_runs(data, n, dtype):
    """Means of views whose outputs sum several runs of ``n`` values, against exact means.

    ``data(shape)`` makes the arrays: contiguous, strided and backwards
    runs; three reduced dims; and two outputs of many runs, in parallel,
    whose pieces split runs.
    """
    x = data((9, 5, 3 * n))
    big = data((6001, 2, 3 * n))
    cases = [
        (x[:, :, :n], (0, 2)),
        (x[:, :, ::3], (0, 2)),
        (x[:, :, ::-3], (0, 2)),
        (x[:, :, 1:2 * n:2], (0, 2)),  # every second value (numerics._rows_f_step2)
        (data((4, 3, 5, 3 * n))[:, ::2, :, :n], (0, 1, 3)),
        (big[:, :, :n], (0, 2)),
        (big[:, :, 1::3], (0, 2)),
    ]
    for v, axes in cases:
        got = np.asarray(reducemean.mean(v, axis=axes)).ravel()
        kept = [d for d in range(v.ndim) if d not in axes]
        values = np.moveaxis(v, kept, 0).reshape(len(got), -1).astype(np.float64)
        for k in range(len(got)):
            exact = exact_mean_values(values[k].tolist())
            assert ulp_distance(got[k], exact, dtype) <= 1, (v.shape, axes, k)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("n", [5, 16, 17, 23, 40])
def test_narrow_float_runs_of_one_output_are_one_sum(dtype, n):
    # float32 and the 16-bit floats sum an output's whole runs in one
    # float64 sum (numerics.run_rows: contiguous runs vectorised, strided
    # ones, and runs of every second value up to 16 long, in eight scalar
    # lanes).  Integer values keep every sum exact, so
    # a value skipped, read twice or read from past a run shows against the
    # exact mean.
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(n)

    def data(shape):
        return rng.integers(-200, 200, shape).astype(np.float32).astype(dt)

    _check_runs_of_runs(data, n, dt)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("n", [31, 32, 33, 520, 1030])
def test_narrow_float_runs_end_in_one_masked_step(dtype, n):
    # Contiguous runs of 16 values or more share one set of vector lanes
    # (numerics._unit_runs_codegen): blocks of whole runs up to 512 values
    # (40 runs of 31 make three), longer runs cut into blocks of 512 and
    # the rest (520: a block of 8).  A run's last n % 16 values are the 16
    # values that end it, the lanes summed before masked off.  Every value
    # is a nonzero integer, so a lane counted twice, dropped or read past a
    # run shows against the exact mean.  The last two outputs hold +-2**60
    # (+-2**15 for float16, which float64 sums exactly), in one block (the
    # first two values) and in two (the first run's and the last's): the
    # float64 sum then loses the small values, and only a bound that says
    # so (a redo) gives the exact mean.
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(n)
    runs = 40 if n < 512 else 3
    x = rng.integers(1, 100, (4, runs, n + 5)) * rng.choice([-1, 1], (4, runs, n + 5))
    x = x.astype(np.float32)
    big = 2.0**15 if dtype == "float16" else 2.0**60
    x[2:, 0, 2] = big
    x[2, 0, 3] = -big
    x[3, -1, n + 1] = -big
    v = x.astype(dt)[:, :, 2:n + 2]
    got = reducemean.mean(v, axis=(1, 2))
    for k in range(4):
        exact = exact_mean_values(v[k].astype(np.float64).ravel().tolist())
        assert ulp_distance(got[k], exact, dt) <= 1, (k, got[k], float(exact))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("n", [19, 20, 24, 31, 517, 1029])
def test_narrow_float_rows_end_in_one_masked_step(dtype, n):
    # A run of 16 values or more on its own or in a pair of rows
    # (numerics._unit_codegen: rows, whole runs) ends each block's last
    # n % 16 values, at least UNIT_CUT_MIN of them, in one more vector step
    # of the 16 values that end the block, the lanes summed before masked
    # off; a last block under 16 values (517 = 512 + 5, 1029) reads back
    # into the block before.  Rows of 19 keep their last 3 one at a time.
    # Nonzero integers, and rows apart with values between them, so a lane
    # counted twice, dropped or read past a row shows against the exact
    # mean.  Rows 2 and 3 hold +-2**60 (+-2**15 in float16), cancelling in
    # the first values and between the first and the last (in the masked
    # step): only a bound that says so (a redo) gives the exact mean.
    dt = _pair_dtype(dtype)
    rng = np.random.default_rng(n)
    rows = 9
    x = rng.integers(1, 100, (rows, n + 5)) * rng.choice([-1, 1], (rows, n + 5))
    x = x.astype(np.float32)
    big = 2.0**15 if dtype == "float16" else 2.0**60
    x[2:4, 2] = big
    x[2, 3] = -big
    x[3, n + 1] = -big
    v = x.astype(dt)[:, 2:n + 2]
    got = reducemean.mean(v, axis=1)
    for k in range(rows):
        exact = exact_mean_values(v[k].astype(np.float64).tolist())
        assert ulp_distance(got[k], exact, dt) <= 1, (k, got[k], float(exact))
        whole = reducemean.mean(np.ascontiguousarray(v[k]))
        assert ulp_distance(whole, exact, dt) <= 1, (k, whole, float(exact))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int32", "int8",
                                   "uint8", "int16", "uint16", "uint32", "bool", "int64",
                                   "uint64"])
@pytest.mark.parametrize("n", range(2, 16))
def test_short_runs_sum_each_value_once(dtype, n):
    # Contiguous runs of fewer than 16 values under two reduced dims go
    # through kernels.inner_two_short: float32 and 16-bit runs as windows
    # of four values clamped into the run, the values an earlier window
    # summed masked off, runs of 2 or 3 one window of clamped loads
    # (numerics._unit_short_codegen), integers in the same windows as
    # int64 lanes (64-bit ones as two halves); float64 in its own lanes.  40 runs an
    # output make two blocks of whole runs from 13 values (BOUND_BLOCK).
    # Every value is a nonzero integer, so a value counted twice, dropped
    # or read past a run (the view keeps two values either side) shows
    # against the exact mean.  Integer values near their type's extremes
    # would overflow a sum in their own width, and show a sign or zero
    # extension confused.  The outputs lie on two kept dims that do not
    # merge (a crop of the second), so they take the general offsets; two
    # hold +-2**60 (+-2**15 in float16), whose float64 sum loses the small
    # values: only a bound that says so (a redo) gives the exact mean.
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(n)
    runs = 40
    x = rng.integers(1, 100, (24, 5, runs, 18)) * rng.choice([-1, 1], (24, 5, runs, 18))
    if dtype in ("int64", "int32", "int16"):
        x = x + np.sign(x) * np.int64(2 ** (np.dtype(dtype).itemsize * 8 - 1) - 100)
    elif dtype in ("uint8", "uint16", "uint32", "uint64"):
        x = np.abs(x).astype(np.uint64) + np.uint64(2 ** (np.dtype(dtype).itemsize * 8) - 100)
    elif dtype == "bool":
        x = x > 0
    x = x.astype(np.float64 if dt.kind in "fV" or dtype == "bfloat16" else dt)
    if dt.kind == "f" or dtype == "bfloat16":
        big = 2.0**15 if dtype == "float16" else 2.0**60
        x[1, 0, 0, 2] = big
        x[1, 0, 0, 3] = -big
        x[1, 1, 0, 2] = big
        x[1, 1, -1, n + 1] = -big
    v = x.astype(dt)[:, :3, :, 2:n + 2]
    plan = reducemean.plan.plan_for(v.shape, v.strides, v.itemsize, (2, 3), False)
    assert plan.family == "inner" and len(plan.kept) == 2
    assert launch.inner_kernel(plan) is kernels.inner_two_short
    got = reducemean.mean(v, axis=(2, 3))
    result = _result_dtype(dt)
    exact_values = v if dt.kind in "iub" else v.astype(np.float64)
    for k in np.ndindex(24, 3):
        total = sum(map(int, exact_values[k].ravel().tolist()))  # exact
        exact = Fraction(total, runs * n)
        assert ulp_distance(got[k], exact, result) <= 1, (k, got[k], float(exact))


def _pair_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _result_dtype(dt):
    return np.dtype(np.float64) if dt.kind in "iub" else dt


def _assert_row_means_exact(v):
    """Each row's mean of the integer-valued 2-D ``v`` within 1 ulp of the exact one."""
    got = reducemean.mean(v, axis=1)
    result = _result_dtype(v.dtype)
    assert got.dtype == result
    for r in range(v.shape[0]):
        exact = Fraction(int(v[r].astype(np.int64).sum()), v.shape[1])
        assert ulp_distance(got[r], exact, result) <= 1, r


@pytest.mark.parametrize("name", ["float64", "float32", "float16", "bfloat16", "int32"])
@pytest.mark.parametrize("n", [3, 1023, 1024])
def test_row_pairs_cover_every_row_once(name, n):
    # Contiguous rows of these types are summed in pairs up to
    # kernels.PAIR_GAP bytes apart: blocks of 2 * gap rows, then a shorter
    # last block and a lone row, paired with itself (its state counted
    # once).  Each row has its own offset, so a row or
    # value skipped, read twice, or summed into another row's output, shows.
    dt = _pair_dtype(name)
    gap_rows = kernels.PAIR_GAP // (dt.itemsize * n)
    rows = 2 * gap_rows + 5
    rng = np.random.default_rng(n)
    # integers exact in every type; rows apart (one spare value each)
    x = rng.integers(-8, 9, (rows, n + 1)) + 16 * (np.arange(rows) % 7)[:, None]
    _assert_row_means_exact(x.astype(np.float32).astype(dt)[:, :n])


@pytest.mark.parametrize("name", ["float64", "float32", "float16", "bfloat16", "int32"])
@pytest.mark.parametrize("n", [17, 1023, 1024])
def test_row_pairs_of_every_second_value_cover_every_row_once(name, n):
    # Rows of every second value go in pairs too (numerics.pair_sum with a
    # rank-3 token), as contiguous rows do: each run's vector steps end
    # before its last value, whose remainder goes one value at a time, and
    # a lone last row is paired with itself (its state counted once).  The
    # odd elements, which the vector steps load and drop, are set far off
    # every mean: one read as a kept value shows.
    dt = _pair_dtype(name)
    gap_rows = kernels.PAIR_GAP // (dt.itemsize * 2 * n)
    rows = 2 * gap_rows + 5
    rng = np.random.default_rng(n)
    x = np.full((rows, 2 * n + 2), 1000.0)
    x[:, ::2] = rng.integers(-8, 9, (rows, n + 1)) + 16 * (np.arange(rows) % 7)[:, None]
    x = x.astype(np.float32).astype(dt)
    _assert_row_means_exact(x[:, : 2 * n: 2])


@pytest.mark.parametrize("name", ["float64", "float32", "float16", "bfloat16", "int32"])
def test_long_runs_in_pairs_of_blocks_read_every_value_once(name):
    # A whole contiguous run of at least two PAIR_BLOCKs is summed as pairs
    # of adjacent blocks, what is left as its two halves and, for an odd
    # count, its middle value (kernels._long_run), serially and in pieces.
    # Values 2**k apart: a value skipped or read twice moves the exact sum.
    dt = _pair_dtype(name)
    v = numerics.PAIR_BLOCK // dt.itemsize
    rng = np.random.default_rng(v)
    base = rng.integers(0, 4, 4 * v + 7).astype(np.float32).astype(dt)
    for n in (2 * v, 2 * v + 1, 3 * v + 3, 4 * v - 1, 4 * v + 7):
        x = base[:n].copy()
        x[rng.integers(0, n, 3)] = 64  # a few values that stand out
        exact = Fraction(int(x.astype(np.int64).sum()), n)
        for serial in (True, False):
            with (launch.serial_only() if serial else contextlib.nullcontext()):
                got = reducemean.mean(x)
            assert ulp_distance(got, exact, _result_dtype(dt)) <= 1, (n, serial)


@pytest.mark.parametrize("name", ["float64", "float32", "float16", "bfloat16", "int32"])
@pytest.mark.parametrize("step", [1, 2])
def test_interleaved_runs_in_pairs_cover_every_output(name, step):
    # (n, c, hw) over (0, 2) with few outputs goes in parallel by outer
    # reduced offsets, every output's run in turn (interleaved_pieces):
    # contiguous runs, or runs of every second value, two outputs at a time,
    # an odd last output with itself.  The values a step-2 view leaves out
    # are far from every mean: one read as a kept value shows.
    dt = _pair_dtype(name)
    rng = np.random.default_rng(3)
    c, hw = 33, 1031
    x = np.full((16, c, step * hw), 1000.0)
    x[..., ::step] = rng.integers(-4, 5, (16, c, hw)) + 8 * np.arange(c)[None, :, None]
    x = x.astype(np.float32).astype(dt)[..., ::step]
    got = reducemean.mean(x, axis=(0, 2))
    sums = x.astype(np.int64).sum(axis=(0, 2))
    for o in range(c):
        assert ulp_distance(got[o], Fraction(int(sums[o]), 16 * hw), _result_dtype(dt)) <= 1, o


def _runs_apart(x, k, step=1):
    """``k`` copies of each row of ``x``, each a run of its own: shape (rows, k, n), runs apart.

    The runs' values are ``step`` elements apart.
    """
    rows, n = x.shape
    y = np.zeros((rows, k, step * n + 2), x.dtype)
    y[:, :, :step * n:step] = x[:, None, :]
    return y[:, :, :step * n:step]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 17, 100, 256, 259, 1001])
def test_complex_rows_sum_both_parts_in_one_pass(dtype, n):
    # Contiguous complex rows are read once for both parts (numerics.run_parts):
    # vector lanes whose parity is the part, blocks of four float64 and a last
    # odd value for complex128.  Strided complex128 rows are too
    # (run_parts_strided): a pair per value, two pairs a vector, also across
    # the runs of several reduced dims (run_parts_rows); and
    # strided complex64 rows, two sums a part under PARTS_F_ONE_PASS
    # values and four from there.  Each part of each row has its own offset
    # and a cancelling pair, so a value given to the wrong part or row,
    # skipped, or added without compensation (complex128) shows.
    rows = 6
    rng = np.random.default_rng(n)
    part = np.float32 if dtype == np.complex64 else np.float64
    re = rng.standard_normal((rows, n)) + 100.0 * np.arange(rows)[:, None]
    im = rng.standard_normal((rows, n)) - 7.0 * np.arange(rows)[:, None]
    if n >= 3:
        big = 1e7 if dtype == np.complex64 else 1e15
        re[:, 0], re[:, -1] = big, -big
        im[:, 1], im[:, -1] = -big, big
    x = (re.astype(part) + 1j * im.astype(part)).astype(dtype)
    cases = [
        (x, 1),  # contiguous rows
        (x[2:3], None),  # one contiguous run
        (np.repeat(x, 2, axis=1)[:, ::2], 1),  # every second value: pairs in one pass
        (np.repeat(x, 3, axis=1)[:, ::3], 1),  # strided rows: each value's pair loaded
        (x[:, ::-1], 1),  # backwards: strided too
        (x.reshape(2, 3, n).transpose(1, 0, 2), (1, 2)),  # two reduced dims
        (_runs_apart(x, 3), (1, 2)),  # runs of runs (numerics.run_parts_rows)
        # strided runs of runs, each value's pair read once across the runs
        # (numerics.run_parts_rows): every third value, and every fifth of
        # a reversed view (which the plan reads forwards)
        (np.repeat(x.reshape(2, 3, n), 3, axis=2)[..., ::3].transpose(1, 0, 2), (1, 2)),
        (_runs_apart(x, 3, 5)[..., ::-1], (1, 2)),
    ]
    for a, axis in cases:
        got = np.asarray(reducemean.mean(a, axis=axis)).reshape(-1)
        rows_of = a.reshape(got.size, -1)  # each output's values
        for r in range(got.size):
            for got_part, values in ((got[r].real, rows_of[r].real), (got[r].imag, rows_of[r].imag)):
                exact = exact_mean_values(values.astype(np.float64).tolist())
                assert ulp_distance(got_part, exact, part) <= 1, (a.shape, axis, r)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64, np.bool_])
def test_integer_column_blocks_finish_exactly(dtype):
    # A block of integer column sums below 2**52 is finished with one
    # division each (numerics.store_block): exact operands, so the mean is
    # correctly rounded, as float(Fraction) is.  A block with one larger sum
    # takes the exact finish of each state: within 1 ulp.
    rng = np.random.default_rng(5)
    if dtype == np.bool_:
        x = rng.integers(0, 2, (7, 300)).astype(bool)
    else:
        hi = min(np.iinfo(dtype).max, 10**9)
        x = rng.integers(-hi if np.iinfo(dtype).min else 0, hi, (7, 300)).astype(dtype)
    for out in (np.float64, np.float32):
        got = reducemean.mean(x, axis=0, dtype=out)
        for j in range(x.shape[1]):
            exact = Fraction(sum(int(v) for v in x[:, j]), x.shape[0])
            assert got[j] == out(float(exact)), (out, j)
    if dtype in (np.int64, np.uint64):
        y = x.copy()
        y[:, 5] = np.iinfo(dtype).max - np.arange(7, dtype=dtype)  # a sum past 2**64
        got = reducemean.mean(y, axis=0)
        for j in range(y.shape[1]):
            exact = Fraction(sum(int(v) for v in y[:, j]), y.shape[0])
            assert ulp_distance(got[j], exact, np.float64) <= 1, j


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "int16"])
@pytest.mark.parametrize("shape, perm", [((2, 301), None), ((3, 4097), None),
                                         ((5, 3, 300), (0, 2, 1))])
def test_column_blocks_store_every_output_in_place(name, shape, perm):
    # store_block writes a block's means in one loop, at output offsets
    # that step by one or, for kept dims taken in memory order, by more
    # (the transposed case: 300 columns whose outputs are 3 apart).
    # Few rows, so the store is most of the work.  Small integers: every
    # mean is one rounding of an exact quotient.
    dtype = ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)
    x = np.random.default_rng(11).integers(-50, 50, shape).astype(dtype)
    if perm:
        x = x.transpose(perm)
    got = reducemean.mean(x, axis=0)
    rtype = np.float64 if name == "int16" else dtype
    assert got.dtype == rtype and got.shape == x.shape[1:]
    wide = x.astype(np.int64)
    for idx in np.ndindex(*x.shape[1:]):
        exact = Fraction(int(wide[(slice(None),) + idx].sum()), x.shape[0])
        assert ulp_distance(got[idx], exact, rtype) <= 0.5, idx


def _truncated(s, n):
    q = abs(s) // n
    return q if s >= 0 else -q


@pytest.mark.parametrize("name", ["int64", "uint64", "int32", "uint32", "int8", "uint16"])
@pytest.mark.parametrize("run", [2, 3, 4, 8, 9, 10, 12, 13, 15])  # 9-15: parts (kernels.SHORT_PARTS)
def test_short_integer_rows_divide_once_below_2_53_and_finish_exactly_above(name, run):
    # Short rows divide their exact sum once when it is below 2**53, for a
    # float mean and for the operators' truncated integer mean alike; a
    # 64-bit row past that sends its range to the exact finish.  Values
    # from the whole range and from 2**53 to 2**58 (sums a float64 cannot
    # hold, but whose high words look small), with every fifth row small,
    # cover both in one range; small values alone the fast path everywhere.
    info = np.iinfo(name)
    rng = np.random.default_rng(run)
    for regime in ("small", "whole", "past 2**53"):
        if regime == "small":
            x = rng.integers(max(info.min, -1000), min(info.max, 1000), (600, run)).astype(name)
        elif regime == "whole":
            x = rng.integers(info.min, info.max, (600, run), dtype=name, endpoint=True)
        elif info.bits == 64:
            x = rng.integers(1 << 53, 1 << 58, (600, run), dtype=name)
        else:
            continue
        x[::5] = rng.integers(0, 100, x[::5].shape).astype(name)
        got = reducemean.mean(x, axis=1)
        got_int = reducemean.reduce_mean(x, axes=[1], keepdims=0)
        assert got.dtype == np.float64 and got_int.dtype == x.dtype
        for o in range(x.shape[0]):
            s = sum(int(v) for v in x[o])
            if name == "uint64" and regime == "whole":  # sums past 2**64: the contract's 1 ulp
                assert ulp_distance(got[o], Fraction(s, run), np.float64) <= 1, (regime, o)
            else:
                assert got[o] == float(Fraction(s, run)), (regime, o)  # correctly rounded
            assert int(got_int[o]) == _truncated(s, run), (regime, o)


@pytest.mark.parametrize("name", ["int8", "uint8", "int32", "int64", "uint64"])
def test_integer_results_truncate_exactly_in_column_blocks_and_rows(name):
    # The operators' integer means: a block of columns or a row with its
    # sum below 2**53 divides once and truncates (store_block, to_int), a
    # larger one takes the exact divmod.  Negative quotients truncate
    # toward zero.  Columns and rows (20 values: the row loop, not the short
    # one) of 300 outputs, small values and, for 64-bit types, values from
    # the whole range (one column of them only, so that block mixes both).
    info = np.iinfo(name)
    rng = np.random.default_rng(9)
    for whole_range in (False, True):
        if whole_range and info.bits < 64:
            continue
        x = rng.integers(max(info.min, -1000), min(info.max, 1000), (20, 300)).astype(name)
        if whole_range:
            x[:, 5] = rng.integers(info.min, info.max, 20, dtype=name, endpoint=True)
        for axis, view in ((0, x), (1, np.ascontiguousarray(x.T))):
            got = reducemean.reduce_mean(view, axes=[axis], keepdims=0)
            assert got.dtype == x.dtype and got.shape == (300,)
            for j in range(300):
                s = sum(int(v) for v in x[:, j])
                assert int(got[j]) == _truncated(s, 20), (axis, whole_range, j)


def _uint32_past_2_53():
    """2**21 + 1 uint32 values whose sum passes 2**53, and their exact mean.

    float64 cannot hold that sum (it is odd), and its rounded value over
    the count is one ulp off the correctly rounded mean.
    """
    n, q, r = (1 << 21) + 1, 4294966413, 1530814
    x = np.full(n, q, np.uint32)
    x[:r] += 1
    return x, Fraction(q * n + r, n)


@pytest.mark.parametrize("cols", [None, 8])
def test_integer_sums_to_2_53_divide_once_and_larger_ones_finish_exactly(cols):
    # Up to 2**(53 - bits) values of at most 32 bits, every sum is exact in
    # float64 and the kernels divide it once (numerics.small_sums_token);
    # past that, a sum may not be, and the exact finish must be used.
    n = 1 << 21
    low = np.full(n, np.iinfo(np.int32).min, np.int32)  # a sum of -2**52
    high = np.full(n, np.iinfo(np.uint32).max, np.uint32)  # 2**53 - 2**21
    past, want = _uint32_past_2_53()
    total = int(past.sum(dtype=np.uint64))
    assert total > 1 << 53 and float(total) / past.size != float(want)  # the case discriminates
    for v, exact in ((low, Fraction(int(low[0]))), (high, Fraction(int(high[0]))), (past, want)):
        a = v if cols is None else np.repeat(v[:, None], cols, axis=1)  # whole, or column blocks
        got = reducemean.mean(a, axis=0)
        assert np.all(got == float(exact)), (v.dtype, v.size)


@pytest.mark.parametrize("n", [127, 128, 129, 136, 137, 1000, 1001])
def test_float64_every_second_value_is_compensated(n):
    # Runs of every second float64 (a [..., ::2] view) load whole vectors and
    # keep the even lanes, then finish the last few values one by one.  Each
    # row has a cancelling pair of 1e15 and its own offset, so a lost small
    # value, a value from the odd lanes or from another row shows.
    rng = np.random.default_rng(n)
    x = rng.standard_normal((3, 2 * n)) * 10.0 ** rng.uniform(-3, 3, (3, 2 * n))
    x += 100.0 * np.arange(3)[:, None]
    x[:, 1::2] = 1e10  # never read (and in range: an out-of-range sum would be redone)
    x[:, 2], x[:, -2] = 1e15, -1e15
    for view in (x[:, ::2], x[:, -2::-2]):  # the same values, the second read backwards
        got = reducemean.mean(view, axis=1)
        for r in range(3):
            exact = exact_mean_values(view[r].tolist())
            assert ulp_distance(got[r], exact, np.float64) <= 1, r


def test_run_tokens_read_as_their_plain_tokens():
    # A plan of contiguous runs, or of [::2] runs, gets a token of the same
    # dtype and another rank (a separate kernel specialisation); other
    # steps, scaled and exact reads keep their own.
    for tok in (NATIVE, HALF, BF16, numerics.NATIVE_SMALL):
        ranks = [numerics.run_token(tok, step).ndim for step in (1, 2)]
        assert ranks == [2, 3]
        for step in (1, 2):
            t = numerics.run_token(tok, step)
            assert t.size == 0 and t.dtype == tok.dtype
            assert t.flags.writeable == tok.flags.writeable  # the small-sums mark stays
            assert numerics.run_token(tok, step) is t
        assert numerics.run_token(tok, 3) is tok
    for tok in (numerics.NATIVE_EXACT, numerics.HALF_EXACT, numerics.scaled_token(10)[0]):
        assert numerics.run_token(tok, 1) is tok and numerics.run_token(tok, 2) is tok


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16, "bfloat16"])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 31, 32, 33, 47, 48, 49, 130, 1000])
def test_every_second_narrow_value_is_summed_exactly(dtype, n):
    # [..., ::2] runs of float32, int32, float16 and bfloat16 load whole
    # vectors, keep the even elements and widen them (16 per step), then
    # finish the last values one by one.  The skipped elements are large, so
    # one read shows; each row has its own offset, so a value from another
    # row shows; the cancelling pair shows a sum kept in the input type.
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(n)
    if dt.kind == "i":
        x = rng.integers(-(10**6), 10**6, (3, 2 * n)) + 10**7 * np.arange(3)[:, None]
        big, skipped = 2**30, 2**31 - 1
    else:
        x = rng.standard_normal((3, 2 * n)) + 8.0 * np.arange(3)[:, None]
        big, skipped = (2048.0, 60000.0) if dt == np.float16 else (1e6, 1e30)
    x = x.astype(dt)
    x[:, 1::2] = skipped
    if n >= 3:
        x[:, 2], x[:, -2] = big, -big
    for view in (x[:, ::2], x[:, -2::-2]):  # the same values, the second read backwards
        got = reducemean.mean(view, axis=1)
        for r in range(3):
            exact = exact_mean_values(view[r].astype(np.float64).tolist())
            assert ulp_distance(got[r], exact, got.dtype) <= 1, r


@pytest.mark.parametrize("dtype", [np.float64, np.float16, "bfloat16", np.int16, np.float32])
@pytest.mark.parametrize("rows, cols", [(3, 9), (13, 40), (21, 600), (21, 1200)])
def test_every_second_column_is_summed_exactly(dtype, rows, cols):
    # Columns of a [:, ::2] view: float64 and 16-bit types take constant-
    # stride loops (eight rows a pass for wide or cached blocks, then one at
    # a time).  The skipped columns are large, so one read shows; each column
    # has its own offset; float64 columns hold a cancelling pair.
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(rows * cols)
    if dt.kind == "i":
        x = rng.integers(-100, 100, (rows, cols)) + np.arange(cols) % 50
        skipped = 30000
    else:
        # (offsets keep each float64 sum far above the pair's rounding errors:
        # one error word cannot give 1 ulp at any cancellation)
        x = rng.standard_normal((rows, cols)) + 8.0 + np.arange(cols) % 50
        skipped = {np.float16: 60000.0, np.float64: 1e10}.get(dt.type, 1e30)
    x = x.astype(dt)
    x[:, 1::2] = skipped
    if dt == np.float64 and rows >= 3:
        x[0, ::2], x[-1, ::2] = 1e15, -1e15
    view = x[:, ::2]
    got = reducemean.mean(view, axis=0)
    for j in range(view.shape[1]):
        exact = exact_mean_values(view[:, j].astype(np.float64).tolist())
        assert ulp_distance(got[j], exact, got.dtype) <= 1, j



@njit
def _fused_sums(x, y):
    one = numerics.opaque_one()
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = numerics.fused_add(x[i], y[i], one)
    return out


def test_fused_adds_are_plain_adds():
    # On FMA hosts the column passes add as fma(x, 1.0, y): the same value,
    # Inf, NaN and sign of zero as x + y, Python's own float addition.
    special = [0.0, -0.0, 1.0, -1.0, 2.0**-1074, -(2.0**-1074), 2.0**-1022, 1e308,
               -1e308, 1.7976931348623157e308, math.inf, -math.inf, math.nan, 1 / 3,
               2.0**53, 1.0 + 2.0**-52, -(2.0**-53)]
    pairs = [(a, b) for a in special for b in special]
    x = np.array([a for a, _ in pairs])
    y = np.array([b for _, b in pairs])
    _same_floats(_fused_sums(x, y), np.array([a + b for a, b in pairs]))


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16", np.float32])
def test_column_passes_of_eight_rows_propagate_nan_and_inf(dtype):
    # 16 rows of 2048 columns: wide blocks, added eight rows a pass
    # (numerics.col_add8).  Non-finite values in either pass and any row of
    # one; large values whose sum passes the type's range (not float64's).
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    x = np.random.default_rng(5).standard_normal((16, 2048)).astype(dt)
    big = float(np.finfo(np.float16).max) if dt == np.float16 else 3e38
    marks = {0: [(3, math.nan)], 1: [(5, math.inf)], 2: [(7, -math.inf)],
             3: [(0, math.inf), (15, -math.inf)], 4: [(1, math.inf), (6, -math.inf)],
             5: [(2, math.inf), (12, math.inf)], 6: [(8, -math.inf), (9, math.nan)],
             7: [(r, big) for r in range(16)], 8: [(r, -big) for r in range(0, 16, 2)]}
    for j, cells in marks.items():
        for r, v in cells:
            x[r, j] = v
    got = reducemean.mean(x, axis=0)
    want = exact_mean(x, axis=0)
    for j in range(x.shape[1]):
        assert ulp_distance(got[j], want[j], dt) <= 1, (j, got[j], want[j])


_GUARD_PAGE = """
import ctypes, mmap, numpy as np, reducemean
libc = ctypes.CDLL(None, use_errno=True)
page = mmap.PAGESIZE
mem = mmap.mmap(-1, 2 * page)
addr = ctypes.addressof(ctypes.c_char.from_buffer(mem))
assert libc.mprotect(ctypes.c_void_p(addr + page), page, 0) == 0  # no access past the first page
n = page // 8
x = np.frombuffer(mem, np.float64, count=n)  # its last value ends at the guard page
x[:] = 1.0
print(float(reducemean.mean(x[1::2])), float(reducemean.mean(x[::-2])), flush=True)
c = np.frombuffer(mem, np.complex128, count=n // 2)  # every second complex value
c[:] = 1 - 1j
print(complex(reducemean.mean(c[1::2])), flush=True)
c = np.frombuffer(mem, np.complex64, count=n)
c[:] = 1 - 1j
print(complex(reducemean.mean(c[1::2])), flush=True)
import ml_dtypes
for dt in (np.float32, np.int32, np.float16, ml_dtypes.bfloat16):  # 16 kept per step
    y = np.frombuffer(mem, dt, count=page // np.dtype(dt).itemsize)
    y[:] = 1
    print(float(reducemean.mean(y[1::2])), float(reducemean.mean(y[::-2])), flush=True)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="mprotect through ctypes")
def test_every_second_value_never_reads_past_the_last():
    # The vector loads of a [::2] run (float64, complex pairs, and the
    # narrow types) take whole vectors: they must stop before the value
    # after the run's last, which may be unmapped memory.
    r = subprocess.run([sys.executable, "-c", _GUARD_PAGE], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["1.0", "1.0", "(1-1j)", "(1-1j)"] + ["1.0"] * 8


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("n", [1, 4, 5, 8, 9, 130])
def test_every_second_complex_value_sums_both_parts(dtype, n):
    # complex [..., ::2] rows: complex128 loads whole vectors and keeps the
    # even pairs, stopping the blocks before the run's last value.  The
    # skipped values are large, each row has its own offset and a
    # cancelling pair in each part.
    part = np.float32 if dtype == np.complex64 else np.float64
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((3, 2 * n)) + 10.0 * np.arange(3)[:, None]
         + 1j * (rng.standard_normal((3, 2 * n)) - 5.0 * np.arange(3)[:, None])).astype(dtype)
    x[:, 1::2] = 1e10 + 1e10j
    if n >= 3:
        big = 1e7 if dtype == np.complex64 else 1e15
        x[:, 0] += big - 1j * big
        x[:, -2] += -big + 1j * big
    view = x[:, ::2]
    got = reducemean.mean(view, axis=1)
    for r in range(3):
        for got_part, values in ((got[r].real, view[r].real), (got[r].imag, view[r].imag)):
            exact = exact_mean_values(values.astype(np.float64).tolist())
            assert ulp_distance(got_part, exact, part) <= 1, r
