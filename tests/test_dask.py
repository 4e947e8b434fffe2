"""``reducemean.dask.mean``: lazy, chunked, and equal to ``reducemean.mean``.

The blocked result is checked against the exact mean of the computed array
(``exact.py``: Fractions and Python ints, through test_mean.check_values,
with numpy.mean's result for the float64 rule), which shares no code with
the package, and compared with ``reducemean.mean`` of the whole array (a
different path: one kernel launch over the full array, no states crossing
chunk boundaries), bit for bit with ``np.array_equal``.  The dtype and
shape come from ``numpy.mean``.

The scheduler tests use dask's threaded scheduler; the cluster tests start a
two-process ``dask.distributed.LocalCluster`` of their own.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

import exact  # noqa: E402
import reducemean  # noqa: E402
import reducemean.dask as rdask  # noqa: E402
from reducemean import launch, states  # noqa: E402
from reducemean.numpy_compat import AxisError  # noqa: E402
from test_mean import check_values  # noqa: E402  (the exact reference's checks)

SHAPE = (23, 17, 9)


def _data(name, shape=SHAPE, seed=0):
    rng = np.random.default_rng(seed)
    if name == "int64_big":
        # Sums of these exceed 64 bits in every slice.
        return rng.integers(2**62, 2**63 - 1, shape, dtype=np.int64) * rng.choice(
            np.array([1, 1, 1, -1], np.int64), shape
        )
    if name == "complex64":
        re_, im_ = rng.standard_normal((2,) + shape)
        return (re_ + 1j * im_).astype(np.complex64)
    if name == "float16":
        return rng.uniform(-100, 100, shape).astype(np.float16)
    if name == "bool":
        return rng.random(shape) < 0.3
    if name == "float64_small":  # fits float16 results
        return rng.uniform(-50, 50, shape)
    if name == "uint64_big":
        return rng.integers(2**63, 2**64 - 1, shape, dtype=np.uint64)
    # a wide spread of magnitudes, so the order of float additions matters
    return (rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 7, shape)).astype(name)


DTYPES = ["float32", "float64", "int64_big", "float16", "complex64"]
CHUNKS = {
    "regular": (8, 5, 9),
    "single": SHAPE,
    "uneven": ((1, 15, 7), (2, 11, 4), (5, 1, 3)),
    "ones": (1, 17, 2),
}
AXES = [None, 0, 1, -1, (0, 2), (-1, -3), (2, 0, 1), ()]


def _check(lazy, x, axis, keepdims, dtype=None):
    want = reducemean.mean(x, axis=axis, keepdims=keepdims, dtype=dtype)
    ref = np.mean(x, axis=axis, keepdims=keepdims, dtype=dtype)
    assert isinstance(lazy, da.Array)
    assert lazy.dtype == ref.dtype
    assert lazy.shape == np.shape(ref)
    got = lazy.compute()
    assert got.dtype == ref.dtype
    assert np.shape(got) == np.shape(ref)
    check_values(got, x, axis, np_ref=ref)
    assert np.array_equal(got, want), (got, want)
    return got


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=[f"axis{a}" for a in AXES])
@pytest.mark.parametrize("chunks", list(CHUNKS.values()), ids=list(CHUNKS))
@pytest.mark.parametrize("name", DTYPES)
def test_threaded_equals_reducemean_mean(name, chunks, axis, keepdims):
    x = _data(name)
    with dask.config.set(scheduler="threads"):
        _check(rdask.mean(da.from_array(x, chunks=chunks), axis=axis, keepdims=keepdims),
               x, axis, keepdims)


@pytest.mark.parametrize("axis", [None, 0, (0, 2)], ids=str)
@pytest.mark.parametrize("name", ["float64", "int64_big", "complex64"])
def test_deep_reduction_tree(name, axis):
    """``split_every=2`` makes dask build intermediate (combine) levels."""
    x = _data(name, shape=(40, 6, 12))
    with dask.config.set(scheduler="threads", split_every=2):
        lazy = rdask.mean(da.from_array(x, chunks=(3, 4, 2)), axis=axis)
        assert any("partial" in str(k) for k in lazy.dask.layers)
        _check(lazy, x, axis, False)


def test_several_means_of_one_array_in_one_graph():
    x = _data("float64_small", shape=(30, 20)).astype(np.float32)  # fits a float16 result
    dx = da.from_array(x, chunks=(7, 6))
    lazies = [rdask.mean(dx, 0), rdask.mean(dx, 1), rdask.mean(dx, 0, keepdims=True),
              rdask.mean(dx), rdask.mean(dx, 0, dtype=np.float16)]
    assert len({lz.name for lz in lazies}) == len(lazies)
    got = dask.compute(*lazies, scheduler="threads")
    for g, (axis, kw) in zip(got, [(0, {}), (1, {}), (0, {"keepdims": True}), (None, {}),
                                    (0, {"dtype": np.float16})]):
        want = reducemean.mean(x, axis=axis, **kw)
        check_values(g, x, axis, np_ref=np.mean(x, axis=axis, **kw))
        assert g.dtype == want.dtype and np.array_equal(g, want)


@pytest.mark.parametrize("name", ["bool", "uint64_big", "int32", "uint8"])
def test_other_dtypes(name):
    x = _data(name) if name in ("bool", "uint64_big") else (
        np.random.default_rng(5).integers(0, 200, SHAPE).astype(name))
    with dask.config.set(scheduler="threads"):
        for axis in (None, 1, (0, 2)):
            _check(rdask.mean(da.from_array(x, chunks=(7, 6, 4)), axis=axis), x, axis, False)


def test_bfloat16():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = _data("float64_small").astype(ml_dtypes.bfloat16)
    with dask.config.set(scheduler="threads"):
        for axis in (None, 0, (1, 2)):
            got = rdask.mean(da.from_array(x, chunks=(5, 7, 4)), axis=axis).compute()
            want = reducemean.mean(x, axis=axis)
            assert got.dtype == want.dtype == x.dtype
            check_values(got, x, axis)
            assert np.array_equal(np.asarray(got, np.float32), np.asarray(want, np.float32))


@pytest.mark.parametrize(
    "name,dtype", [("int64_big", np.float32), ("float16", np.float32), ("float64_small", np.float16),
                   ("int64_big", np.float64)]
)
def test_dtype_argument(name, dtype):
    x = _data(name)
    with dask.config.set(scheduler="threads"):
        for axis in (None, 0, (1, 2)):
            _check(rdask.mean(da.from_array(x, chunks=(5, 7, 4)), axis=axis, dtype=dtype),
                   x, axis, False, dtype=dtype)


@pytest.mark.parametrize("name,dtype", [("float32", np.float64), ("complex64", np.complex128)])
def test_dtype_wider_than_a_narrow_float_input(name, dtype):
    """Narrow floats wanted in float64 are summed with compensation in every
    chunk, as reducemean.mean sums them, so the blocked mean is the same."""
    x = _data(name)
    with dask.config.set(scheduler="threads"):
        for axis in (None, 0, (1, 2)):
            _check(rdask.mean(da.from_array(x, chunks=(5, 7, 4)), axis=axis, dtype=dtype),
                   x, axis, False, dtype=dtype)


def test_int64_beyond_64_bits_is_exact():
    """Against Python ints: each mean within 1 ulp of the exact value."""
    x = _data("int64_big", shape=(50, 3))
    with dask.config.set(scheduler="threads"):
        got = rdask.mean(da.from_array(x, chunks=(7, 2)), axis=0).compute()
    for j in range(3):
        total = sum(int(v) for v in x[:, j])
        assert abs(total) > 2**64  # the case is really beyond 64 bits
        assert exact.ulp_distance(got[j], exact.Fraction(total, 50), np.float64) <= 1.0


@pytest.mark.parametrize("name", ["float32", "float16", "complex64"])
def test_floats_within_one_ulp_of_exact(name):
    x = _data(name, shape=(30, 4))
    with dask.config.set(scheduler="threads"):
        got = rdask.mean(da.from_array(x, chunks=(4, 3)), axis=0).compute()
    ex = exact.exact_mean(x, 0)
    part = np.float32 if name == "complex64" else np.dtype(name)
    if name == "complex64":
        pairs = [(got.real, ex[0]), (got.imag, ex[1])]
    else:
        pairs = [(got, ex)]
    for g, e in pairs:
        for j in range(4):
            assert exact.ulp_distance(g[j], e[j], part) <= 1.0


@pytest.mark.parametrize("name,big", [("float32", 1e20), ("bfloat16", 2.0**60),
                                      ("complex64", 1e20)])
def test_narrow_floats_that_cancel_across_chunks(name, big):
    """Values whose plain float64 sums lose the small ones ([1e20, 1, -1e20]),
    cancelling across chunks (no chunk's values left to redo a sum from):
    within an ulp of exact, in their own type and in float64."""
    dt = np.dtype(pytest.importorskip("ml_dtypes").bfloat16) if name == "bfloat16" else name
    x = np.ones((40, 3)).astype(dt)
    x[:, 1] = np.tile(np.array([big, 1.0, -big, 2.0]), 10).astype(dt)
    if name == "complex64":
        x[:, 1] = x[:, 1] - 1j * x[::-1, 1].real
    wide_dt = np.complex128 if name == "complex64" else np.float64
    part = np.float32 if name == "complex64" else dt
    with dask.config.set(scheduler="threads"):
        wide = rdask.mean(da.from_array(x, chunks=(6, 2)), axis=0, dtype=wide_dt).compute()
        own = rdask.mean(da.from_array(x, chunks=(6, 2)), axis=0).compute()
    assert own.dtype == x.dtype
    for got, dtype in [(wide, np.float64), (own, part)]:
        if name == "complex64":
            pairs = [(got.real, np.real(x).astype(np.float64)),
                     (got.imag, np.imag(x).astype(np.float64))]
        else:
            pairs = [(got, x.astype(np.float64))]
        for g, values in pairs:
            ex = exact.exact_mean(values, 0)
            for j in range(3):
                assert exact.ulp_distance(g[j], ex[j], dtype) <= 1.0, (got.dtype, j, g[j])


def test_float32_accuracy_case_from_the_contract():
    """numpy's float32 mean of 2e7 ones is far off; the blocked mean is exactly 1."""
    x = da.ones((2 * 10**7, 2), dtype=np.float32, chunks=(3 * 10**6, 2))
    with dask.config.set(scheduler="threads"):
        got = rdask.mean(x, axis=0).compute()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.ones(2, np.float32))


def test_nan_and_inf_propagate():
    x = np.zeros((6, 4))
    x[1, 0] = np.nan
    x[0, 1], x[5, 1] = np.inf, -np.inf
    x[3, 2] = np.inf
    with dask.config.set(scheduler="threads"):
        got = rdask.mean(da.from_array(x, chunks=(2, 2)), axis=0).compute()
    np.testing.assert_array_equal(got, [np.nan, np.nan, np.inf, 0.0])


def _near_the_top(shape, complex_=False, seed=3):
    """float64 values near +-1.7e308, whose sums leave the range but whose means do not."""
    rng = np.random.default_rng(seed)

    def part():
        return rng.choice([1.7e308, -1.7e308, 1e308, -9e307], shape) * rng.uniform(0.5, 1, shape)

    return part() + 1j * part() if complex_ else part()


@pytest.mark.parametrize("complex_, dtype", [(False, None), (False, np.float32), (True, None)],
                         ids=["float64", "float64-to-float32", "complex128"])
@pytest.mark.parametrize("axis", [None, 0, (0, 2)], ids=str)
@pytest.mark.parametrize("chunks", [(8, 5, 9), ((1, 15, 7), (2, 11, 4), (5, 1, 3))],
                         ids=["regular", "uneven"])
def test_float64_sums_past_the_range_are_redone_scaled(chunks, axis, complex_, dtype):
    """As reducemean.mean redoes them: numpy's sums (and dask's) overflow to inf or NaN."""
    x = _near_the_top(SHAPE, complex_)
    with dask.config.set(scheduler="threads"):
        got = rdask.mean(da.from_array(x, chunks=chunks), axis=axis, dtype=dtype).compute()
    want = reducemean.mean(x, axis=axis, dtype=dtype)
    assert np.array_equal(got, want, equal_nan=True), (got, want)
    if dtype is None:
        assert np.isfinite(want).all()
        with np.errstate(over="ignore", invalid="ignore"):  # numpy's own sums overflow
            ref = np.mean(x, axis=axis)
        check_values(got, x, axis, np_ref=ref)
    else:  # means past float32's range: Inf of their sign, where numpy's are NaN
        wide = reducemean.mean(x, axis=axis)
        with np.errstate(over="ignore"):
            assert np.array_equal(got, np.asarray(wide).astype(dtype))


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # inf * 0, as in numpy
def test_sums_past_the_range_beside_inf_and_nan_inputs():
    """A chunk with an Inf or NaN input is redone too; its means stay Inf or NaN."""
    for complex_ in (False, True):
        x = _near_the_top((6, 4), complex_)
        x[0, 1] = np.inf
        x[4, 2] = -np.inf
        x[5, 3] = np.nan
        x[1, 0] = complex(1.7e308, np.inf) if complex_ else 1.7e308
        for chunks in [(2, 2), (1, 4), (6, 1)]:
            with dask.config.set(scheduler="threads"):
                got = rdask.mean(da.from_array(x, chunks=chunks), axis=0).compute()
            want = reducemean.mean(x, axis=0)
            assert np.array_equal(got, want, equal_nan=True), (chunks, got, want)
            assert np.isinf(got.real[1]) and np.isinf(got.real[2]) and np.isnan(got.real[3])
            if not complex_:
                assert exact.ulp_distance(got[0], exact.exact_mean_values(x[:, 0].tolist()), np.float64) <= 1


def test_merges_that_pass_the_range_are_redone_from_their_chunks(monkeypatch):
    """Chunks whose sums stay in range can merge past it: those merges are redone scaled.

    It takes some 2**29 chunks to merge sums below the kernels' limit
    (2**995) past the float64 range; with the limit raised to 1.7e308 two
    chunks of 1.5e308 do.
    """
    monkeypatch.setattr(states, "SUM_LIMIT", 1.7e308)
    x = np.full((6, 3), 1.5e308)
    x[::2, 1] *= -1.0
    x[:3, 2] = 3.0
    with dask.config.set(scheduler="threads"):
        got = rdask.mean(da.from_array(x, chunks=(1, 3)), axis=0).compute()
    assert np.array_equal(got, reducemean.mean(x, axis=0))
    for k in range(3):
        assert exact.ulp_distance(got[k], exact.exact_mean_values(x[:, k].tolist()), np.float64) <= 1


def test_sums_past_the_range_with_chunks_of_unknown_size():
    """The scale must hold for any count when dask cannot tell the count."""
    x = _near_the_top((40, 6))
    lazy = da.from_array(x, chunks=(7, 3))
    unknown = lazy[lazy[:, 0] == lazy[:, 0]]  # every row, in chunks of unknown length
    assert np.isnan(unknown.shape[0])
    with dask.config.set(scheduler="threads"):
        got = rdask.mean(unknown, axis=0).compute()
    assert np.array_equal(got, reducemean.mean(x, axis=0))
    with np.errstate(over="ignore", invalid="ignore"):  # numpy's own sums overflow
        ref = np.mean(x, axis=0)
    check_values(got, x, 0, np_ref=ref)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # inf * 0, as in numpy
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_non_finite_parts_as_numpy(dtype):
    x = np.ones((6, 4), dtype)
    x[1, 0] = complex(np.inf, 0)
    x[2, 1] = complex(0, np.nan)
    x[4, 2] = complex(-np.inf, np.inf)
    with dask.config.set(scheduler="threads"):
        got = rdask.mean(da.from_array(x, chunks=(4, 3)), axis=0).compute()
    assert got.dtype == dtype
    assert np.array_equal(got, reducemean.mean(x, axis=0), equal_nan=True)
    assert np.array_equal(got, np.mean(x, axis=0), equal_nan=True)


@pytest.mark.parametrize("name", ["float64", "float32", "int64_big", "complex64"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_empty_slices_warn_and_give_nan(name, keepdims):
    x = _data(name, shape=(0, 4))
    dx = da.from_array(x, chunks=(1, 3))
    ref_dtype = np.mean(np.zeros(1, x.dtype)).dtype
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        lazy = rdask.mean(dx, axis=0, keepdims=keepdims)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once, at the call, like numpy
        got = lazy.compute(scheduler="sync")
    assert got.dtype == ref_dtype and got.shape == ((1, 4) if keepdims else (4,))
    assert np.all(np.isnan(got.real)) and (ref_dtype.kind != "c" or np.all(np.isnan(got.imag)))
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        assert np.isnan(rdask.mean(dx).compute(scheduler="sync"))


def test_reducing_only_kept_empty_axes_does_not_warn():
    dx = da.zeros((0, 4), chunks=(1, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rdask.mean(dx, axis=1).compute(scheduler="sync")
    assert got.shape == (0,) and got.dtype == np.float64


def test_empty_slice_of_unknown_size_warns_at_compute():
    dx = da.from_array(np.arange(10.0), chunks=3)
    picked = dx[dx > 100]  # chunk sizes unknown until computed
    assert np.isnan(picked.shape[0])
    lazy = rdask.mean(picked)
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        got = lazy.compute(scheduler="sync")
    assert np.isnan(got)
    some = rdask.mean(dx[dx > 4]).compute(scheduler="sync")
    assert some == 7.0


@pytest.mark.parametrize(
    "axis,error", [(3, AxisError), (-4, AxisError), ((0, 0), ValueError), ((1, -2), ValueError),
                   (1.0, TypeError), ([0, 1], TypeError)]
)
def test_axis_errors_are_numpys_and_immediate(axis, error):
    x = np.zeros((2, 3, 4))
    with pytest.raises(error):
        np.mean(x, axis=axis)
    with pytest.raises(error):
        rdask.mean(da.from_array(x), axis=axis)


def test_array_likes_are_accepted():
    got = rdask.mean([[1, 2], [3, 5]], axis=0).compute()
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [2.0, 3.5])


def test_rank0_input():
    x = np.float32(3.25)
    got = rdask.mean(da.from_array(np.asarray(x))).compute()
    assert got.dtype == np.float32 and got == x


def test_lazy_and_chunks_run_serial_kernels(monkeypatch):
    """Nothing is summed until compute; each chunk is summed under serial_only."""
    seen = []
    real = states.partial

    def spy(*args, **kwargs):
        seen.append(getattr(launch._local, "serial", False))
        return real(*args, **kwargs)

    monkeypatch.setattr(states, "partial", spy)
    x = _data("float64", shape=(400, 300))
    lazy = rdask.mean(da.from_array(x, chunks=(100, 150)), axis=0)
    assert seen == []
    with dask.config.set(scheduler="threads"):
        got = lazy.compute()
    assert len(seen) == 8 and all(seen)
    check_values(got, x, 0, np_ref=np.mean(x, axis=0))
    assert np.array_equal(got, reducemean.mean(x, axis=0))


def test_importing_reducemean_does_not_import_dask():
    code = (
        "import sys, reducemean\n"
        "assert 'dask' not in sys.modules, 'dask imported'\n"
        "import reducemean.dask\n"
        "assert 'dask.array' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_dask_names_the_extra():
    code = (
        "import sys\n"
        "sys.modules['dask'] = None\n"
        "sys.modules['dask.array'] = None\n"
        "try:\n"
        "    import reducemean.dask\n"
        "except ImportError as e:\n"
        "    print(e)\n"
        "else:\n"
        "    raise SystemExit('no ImportError')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert "reducemean[dask]" in out.stdout and "'dask' extra" in out.stdout


# --- on a dask.distributed cluster ----------------------------------------


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(
        n_workers=2,
        processes=True,
        host="127.0.0.1",
        threads_per_worker=1,
        dashboard_address=None,
    ) as cluster, distributed.Client(cluster, set_as_default=False) as c:
        yield c


CLUSTER_CASES = [
    ("float64", ((1, 15, 7), (2, 11, 4), (5, 1, 3)), (0, 2), False),
    ("float32", (8, 5, 9), None, True),
    ("int64_big", (6, 17, 2), 1, False),
    ("float16", ((1, 15, 7), (2, 11, 4), (5, 1, 3)), -1, True),
    ("complex64", (4, 4, 4), (0, 1), False),
]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name,chunks,axis,keepdims", CLUSTER_CASES,
                         ids=[c[0] for c in CLUSTER_CASES])
def test_distributed_equals_reducemean_mean(client, name, chunks, axis, keepdims):
    x = _data(name)
    lazy = rdask.mean(da.from_array(x, chunks=chunks), axis=axis, keepdims=keepdims)
    got = client.compute(lazy).result()
    want = reducemean.mean(x, axis=axis, keepdims=keepdims)
    ref = np.mean(x, axis=axis, keepdims=keepdims)
    assert got.dtype == ref.dtype and np.shape(got) == np.shape(ref)
    check_values(got, x, axis, np_ref=ref)
    assert np.array_equal(got, want)


@pytest.mark.timeout(300)
def test_distributed_runs_chunks_on_workers(client):
    x = _data("float64", shape=(64, 10))
    lazy = rdask.mean(da.from_array(x, chunks=(8, 10)), axis=0)
    fut = client.compute(lazy)
    got = fut.result()
    check_values(got, x, 0, np_ref=np.mean(x, axis=0))
    assert np.array_equal(got, reducemean.mean(x, axis=0))
    # a worker process imported reducemean.dask to run the tasks (the
    # scheduler may give every task to one of the two)
    loaded = client.run(lambda: "reducemean.dask" in sys.modules)
    assert len(loaded) == 2 and any(loaded.values())
