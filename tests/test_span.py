"""The flat span of a strided view, checked against numpy's own byte bounds."""

import gc

import numpy as np
import pytest
from numpy.lib.array_utils import byte_bounds

from reducemean.span import span_view

ml_dtypes = pytest.importorskip("ml_dtypes")


def _expected(x, a, storage):
    """``x``'s storage elements from the lowest to the highest address ``a`` reads, and the lead."""
    lo, hi = byte_bounds(a)
    size = np.dtype(storage).itemsize
    start = (lo - x.ctypes.data) // size
    flat = x.reshape(-1).view(storage)
    return flat[start:start + (hi - lo) // size], (a.ctypes.data - lo) // size


VIEWS = [
    lambda x: x[:, ::2],
    lambda x: x[1:, 3::3],
    lambda x: x.T,
    lambda x: x[::-1, ::-2],
    lambda x: x[::2, 1:-1].T[::-1],
    lambda x: x[2, ::-1],
    lambda x: x[:, None, 4:5],
]


@pytest.mark.parametrize("dtype, storage", [
    (np.float32, np.float32), (np.float64, np.float64), (np.int64, np.int64),
    (np.bool_, np.uint8), (np.float16, np.uint16), (ml_dtypes.bfloat16, np.uint16),
    (np.complex64, np.float32), (np.complex128, np.float64),
])
@pytest.mark.parametrize("view", range(len(VIEWS)))
def test_span_is_every_element_between_the_lowest_and_highest_address(dtype, storage, view):
    x = (np.arange(6 * 10) % 7).reshape(6, 10).astype(dtype)
    a = VIEWS[view](x)
    want, lead = _expected(x, a, storage)
    got = span_view(a, want.size, lead, np.dtype(storage))
    assert got.dtype == storage and got.ndim == 1 and got.flags.c_contiguous
    assert got.ctypes.data == want.ctypes.data  # the same memory, not a copy
    assert np.array_equal(got, want)


def test_span_keeps_the_memory_alive():
    x = np.arange(100.0).reshape(10, 10)
    got = span_view(x[::-1, ::3], 100, 90, np.dtype(np.float64))  # first: x[9, 0]
    del x
    gc.collect()
    np.ones(100 * 1000)  # reuse freed memory, if it were freed
    assert np.array_equal(got, np.arange(100.0))


def test_read_only_and_unaligned_views():
    x = np.arange(40.0)
    x.flags.writeable = False
    got = span_view(x[::4], 37, 0, np.dtype(np.float64))
    assert np.array_equal(got, np.arange(37.0))
    raw = np.zeros(8 * 40 + 1, np.uint8)
    u = raw[1:].view(np.float64)  # off by one byte
    u[:] = np.arange(40.0)
    assert not u.flags.aligned
    got = span_view(u[::-3], 40, 39, np.dtype(np.float64))
    assert got.ctypes.data == u.ctypes.data
    assert np.array_equal(got, np.arange(40.0))
