"""Stress: random shapes, views, dtypes and axes from several threads, against exact means."""

import time
import warnings

import numpy as np
import pytest

import exact
from threads import run_threads
import reducemean

ml_dtypes = pytest.importorskip("ml_dtypes")

pytestmark = pytest.mark.slow

DTYPES = [np.bool_, np.int8, np.uint16, np.int32, np.int64, np.uint64, np.float16,
          np.float32, np.float64, np.complex64, ml_dtypes.bfloat16]
BUDGET_S = 25.0
MIN_CASES = 10  # cases each thread runs whatever the budget, so the test never passes empty


def _random_case(rng):
    dt = np.dtype(DTYPES[rng.integers(len(DTYPES))])
    ndim = int(rng.integers(0, 4))
    shape = tuple(int(x) for x in rng.integers(0, 7, ndim))
    if dt.kind == "b":
        a = rng.integers(0, 2, shape).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    elif dt.kind == "c":
        a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    else:
        a = (rng.standard_normal(shape) * 100).astype(dt)
    view = a
    if ndim and rng.random() < 0.5:
        view = view.transpose(rng.permutation(ndim))
    if ndim and rng.random() < 0.5:
        ax = int(rng.integers(ndim))
        idx = [slice(None)] * ndim
        idx[ax] = slice(None, None, int(rng.choice([-2, -1, 2])))
        view = view[tuple(idx)]
    axis = None
    if ndim and rng.random() < 0.7:
        k = int(rng.integers(0, ndim + 1))
        axis = tuple(int(x) for x in rng.choice(ndim, k, replace=False))
    return view, axis


def _check(view, axis):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = np.asarray(reducemean.mean(view, axis=axis))
    want = exact.exact_mean(view, axis)
    if np.iscomplexobj(got):
        pairs = [(got.real, want[0]), (got.imag, want[1])]
        rdt = got.real.dtype
    else:
        pairs = [(got, want)]
        rdt = got.dtype
    for g, w in pairs:
        w = np.asarray(w, dtype=object).reshape(g.shape)
        for idx in np.ndindex(*g.shape):
            if exact.ulp_distance(g[idx], w[idx], rdt) > 1:
                return f"{view.dtype} {view.shape} {view.strides} axis={axis}: {g[idx]} vs {w[idx]}"
    return None


@pytest.mark.timeout(120)
def test_threads_random_views_against_exact_reference():
    failures = []
    deadline = time.monotonic() + BUDGET_S

    def worker(seed):
        rng = np.random.default_rng(seed)
        n = 0
        # at least MIN_CASES each, then as many as the budget allows
        while n < MIN_CASES or (time.monotonic() < deadline and n < 400):
            view, axis = _random_case(rng)
            msg = _check(view, axis)
            if msg:
                failures.append(msg)
            n += 1

    assert run_threads(worker, [(s,) for s in range(4)]) == []
    assert failures == []
