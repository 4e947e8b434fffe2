"""The machine's read-bandwidth ceiling: how fast a plain parallel sum can stream memory.

A reduction reads every input byte once and writes almost nothing, so no
reduce-mean can beat the rate at which the cores can read memory.  That rate
is measured here with the simplest kernel that reaches it: a Numba ``prange``
sum over 256 MiB of float32 (far larger than any cache), best of several
passes.  Each thread reads four streams at once, 128 KiB blocks side by
side: on the 2-core machine here, one stream a thread read 35.8 GB/s where
two read 42.2 and four 45.0 (medians, alternating in one process; another
time 29.8, 32.0 and 32.6), and reducemean's own loops read two streams a
core (numerics.pair_sum).  Each large case's share of the ceiling comes
from calls paired with this same read (see ``timing.paired``): on a shared
machine whose bandwidth comes and goes, a ceiling from minutes earlier can
be twice or half the one the case ran under.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from .timing import compare

#: Bytes streamed by one pass.
CEILING_BYTES = 256 << 20
#: float32 values in each of the four blocks a ceiling step reads side by side
_BLOCK = 32 << 10


@njit(fastmath=True, cache=True, nogil=True)
def _four_sum(w, x, y, z):
    s0 = s1 = s2 = s3 = np.float32(0.0)
    for i in range(w.size):  # (indices from 0: no negative-index check, so it vectorises)
        s0 += w[i]
        s1 += x[i]
        s2 += y[i]
        s3 += z[i]
    return (s0 + s1) + (s2 + s3)


# fastmath lets LLVM reorder the additions into vector lanes; without it the
# sum is one dependent chain and measures the adder's latency, not memory.
@njit(parallel=True, fastmath=True, cache=True, nogil=True)
def _stream_sum(a):
    steps = a.size // (4 * _BLOCK)
    s = np.float32(0.0)
    for k in prange(steps):
        lo = k * 4 * _BLOCK
        s += _four_sum(a[lo:lo + _BLOCK], a[lo + _BLOCK:lo + 2 * _BLOCK],
                       a[lo + 2 * _BLOCK:lo + 3 * _BLOCK], a[lo + 3 * _BLOCK:lo + 4 * _BLOCK])
    for i in range(steps * 4 * _BLOCK, a.size):  # the rest, under four blocks
        s += a[i]
    return s


def reader(nbytes=CEILING_BYTES):
    """The ceiling's read as a zero-argument callable, and the bytes one call streams."""
    a = np.ones(max(1, nbytes // 4), np.float32)  # written once: every page is real
    return (lambda: _stream_sum(a)), a.nbytes


def measure(nbytes=CEILING_BYTES, repeat=7, threads=None):
    """Best and median read bandwidth (GB/s, 1e9 bytes) of a parallel float32 sum.

    ``threads`` sets Numba's thread count for the measurement only.
    """
    read, nbytes = reader(nbytes)
    prev = numba.get_num_threads()
    if threads is not None:
        numba.set_num_threads(threads)
    try:
        t = compare({"ceiling": read}, repeat=repeat, warmup=2)["ceiling"]
    finally:
        numba.set_num_threads(prev)
    return {
        "bytes": nbytes,
        "threads": threads or prev,
        "gbps_best": nbytes / t.best / 1e9,
        "gbps_median": nbytes / t.median / 1e9,
        **t.as_dict(),
    }
