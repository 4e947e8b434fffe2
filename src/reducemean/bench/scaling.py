"""Thread scaling: one big case reduced with 1 thread up to every core.

Each thread count is set with ``numba.set_num_threads``; the read ceiling is
measured at the same count, since one core alone usually cannot saturate
memory and the fair question is how close each count comes to its own limit.
As for the large cases, the share of it comes from calls paired with the
ceiling's read (``timing.paired``).
"""

from __future__ import annotations

import numba

import reducemean

from . import ceiling
from .timing import compare, paired


def thread_counts(most):
    """1, 2, 4, ... up to ``most``, and ``most`` itself."""
    counts = []
    t = 1
    while t < most:
        counts.append(t)
        t *= 2
    counts.append(most)
    return counts


def measure(x, axes, most, repeat=5, ceiling_bytes=ceiling.CEILING_BYTES, progress=None):
    """Rows of (threads, GB/s, speedup over one thread, ceiling GB/s and share at that count)."""
    prev = numba.get_num_threads()
    read, read_bytes = ceiling.reader(ceiling_bytes)

    def call():
        return reducemean.mean(x, axis=axes)

    rows = []
    try:
        for t in thread_counts(most):
            numba.set_num_threads(t)
            timing = compare({"reducemean": call}, repeat=repeat)["reducemean"]
            ratio, ceil = paired(call, read, repeat=repeat)
            rows.append({
                "threads": t,
                "gbps": x.nbytes / timing.median / 1e9,
                "gbps_best": x.nbytes / timing.best / 1e9,
                "ceiling_gbps": read_bytes / ceil.median / 1e9,
                "ceiling_share": (x.nbytes / read_bytes) / ratio,
                **timing.as_dict(),
            })
            if progress:
                progress()
    finally:
        numba.set_num_threads(prev)
    base = rows[0]["median_s"]
    for r in rows:
        r["speedup"] = base / r["median_s"]
    return rows
