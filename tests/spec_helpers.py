"""Helpers shared by the spec front-end tests: dtypes by spec name, data, and the exact check."""

import math

import numpy as np
import pytest

import exact


def dtype_by_name(name):
    if name == "bfloat16":
        ml = pytest.importorskip("ml_dtypes")
        return np.dtype(ml.bfloat16)
    return np.dtype(name)


def random_data(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    return (rng.standard_normal(shape) * 50.0).astype(dtype)


def check_result(got, data, ax, keepdims):
    """``got`` equals the ReduceMean of ``data`` over the normalised axes ``ax``."""
    got = np.asarray(got)
    nd = data.ndim
    assert got.dtype == data.dtype
    if keepdims:
        shape = tuple(1 if d in ax else n for d, n in enumerate(data.shape))
    else:
        shape = tuple(n for d, n in enumerate(data.shape) if d not in ax)
    assert got.shape == shape
    kept = [d for d in range(nd) if d not in ax]
    moved = np.moveaxis(data, kept + list(ax), range(nd)) if nd else data
    kshape = tuple(data.shape[d] for d in kept)
    flat = moved.reshape(kshape + (math.prod(data.shape[d] for d in ax),))
    g = got.reshape(kshape)
    if data.dtype.kind in "iu":
        for idx in np.ndindex(*kshape):
            assert int(g[idx]) == exact.trunc_mean(flat[idx].tolist()), idx
    else:
        ex = exact.exact_mean(data, ax)
        for idx in np.ndindex(*kshape):
            assert exact.ulp_distance(g[idx], ex[idx], data.dtype) <= 1.0, idx
