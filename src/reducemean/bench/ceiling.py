"""The machine's read-bandwidth ceiling: how fast a plain parallel sum can stream memory.

A reduction reads every input byte once and writes almost nothing, so no
reduce-mean can beat the rate at which the cores can read memory.  That rate
is measured here with the simplest kernel that reaches it: a Numba ``prange``
sum over 256 MiB of float32 (far larger than any cache), best of several
passes.  Each large case's share of the ceiling comes from calls paired
with this same read (see ``timing.paired``): on a shared machine whose
bandwidth comes and goes, a ceiling from minutes earlier can be twice or
half the one the case ran under.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from .timing import compare

#: Bytes streamed by one pass.
CEILING_BYTES = 256 << 20


# fastmath lets LLVM reorder the additions into vector lanes; without it the
# sum is one dependent chain and measures the adder's latency, not memory.
@njit(parallel=True, fastmath=True, cache=True, nogil=True)
def _stream_sum(a):
    s = np.float32(0.0)
    for i in prange(a.size):
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
