"""Where parallel kernels start paying: the measurement behind ``launch.PARALLEL_MIN``.

For a sweep of sizes, each pattern is reduced twice through the engine
(``engine.reduce_into``, which every front-end calls), once forced serial and
once forced parallel by setting ``launch.PARALLEL_MIN`` to infinity or to
zero, so both sides pay the same layers and only the launch decision
differs.  Not through ``reducemean.mean``: it remembers, for a repeated small
call, the serial path it took the first time, so changing the limit between
its calls would not change the kernel.

A pattern's *crossover* is the smallest size at which parallel pays (takes at
most :data:`MARGIN` of the serial time) and from which it never loses again
(at most :data:`HOLD` times the serial time at every larger size measured),
with at least :data:`CONFIRM` paying sizes from there on: one lucky size
amid losses or ties does not count, and sizes bound by memory bandwidth,
where both take the same time, do not hide the point where the pool starts
paying for itself.  It is judged on the best time of each side, the sample
least disturbed by other work: what PARALLEL_MIN encodes is the fixed cost
of waking the pool against the work it splits, and on a busy machine the
medians mostly measure the neighbours (both are reported).  The recommended
``PARALLEL_MIN`` is the largest crossover over the patterns and dtypes, each
in work units (elements times the dtype's ``Entry.cost``: float64 counts
twice), rounded up to a power of two, so that no measured pattern runs
parallel where it would lose.

Run alone: ``python -m reducemean.bench.threshold [--threads N]``.
"""

from __future__ import annotations

import argparse
import sys

import numba
import numpy as np

from reducemean import engine, launch
from reducemean.dispatch import entry_for
from reducemean.plan import normalize_axis

from .timing import compare_fast

#: Parallel pays at a size when its time is at most this share of the serial time...
MARGIN = 0.9
#: ...and holds at a larger size while its time is at most this multiple of it.
HOLD = 1.1
#: Paying sizes needed at or above a crossover.
CONFIRM = 2

#: Work sizes (elements) swept by default, and by the tests.
SIZES = tuple(1 << k for k in range(12, 24))
TINY_SIZES = tuple(1 << k for k in range(8, 13))

PATTERNS = ("whole", "rows", "columns")
DTYPES = ("float32", "float64")


def _shape(pattern, n):
    if pattern == "whole":
        return (n,), None
    r = 1 << (n.bit_length() - 1) // 2  # near-square, so neither loop degenerates
    shape = (r, n // r)
    return shape, (1 if pattern == "rows" else 0)


def _caller(a, axis):
    """A function of the limit: one call of the engine on ``a`` with that ``PARALLEL_MIN``."""
    entry = entry_for(a.dtype)
    a, plan = engine.get_plan(a, normalize_axis(axis, a.ndim), False, entry)
    result = np.empty(plan.out_shape, entry.mean_dtype)

    def with_limit(limit):
        # Both sides set the limit on every call (one attribute store, the same
        # cost for each), so serial and parallel samples can be interleaved;
        # the engine reads it directly, so no memoised choice needs forgetting.
        def call():
            launch.PARALLEL_MIN = limit
            engine.reduce_into(a, plan, entry, result)

        return call

    return with_limit


def crossover(rows, margin=MARGIN, hold=HOLD, confirm=CONFIRM, key="best"):
    """The smallest size where parallel pays and never loses after, or ``None``.

    ``key`` is ``"best"`` (best times) or ``"median"``.
    """
    rows = sorted(rows, key=lambda r: r["size"])
    ser, par = ("serial_best_s", "parallel_best_s") if key == "best" else ("serial_s", "parallel_s")
    found = None
    paying = 0
    for r in reversed(rows):
        if r[par] > hold * r[ser]:
            break
        if r[par] <= margin * r[ser]:
            paying += 1
            if paying >= confirm:
                found = r["size"]
    return found


def measure(sizes=SIZES, patterns=PATTERNS, dtypes=DTYPES, threads=None, repeat=7,
            progress=None):
    """Serial and parallel per-call times over ``sizes``; crossovers and a recommendation."""
    prev = numba.get_num_threads()
    prev_min = launch.PARALLEL_MIN
    if threads is not None:
        numba.set_num_threads(threads)
    used = numba.get_num_threads()
    out = {"threads": used, "margin": MARGIN, "hold": HOLD, "current": launch.PARALLEL_MIN,
           "rows": [], "crossovers": {}, "crossovers_median": {}, "recommended": None}
    try:
        if used < 2:
            out["note"] = "one thread: there is no parallel kernel to compare"
            return out
        rng = np.random.default_rng(0)
        for dtype in dtypes:
            buf = rng.random(max(sizes), dtype=np.float32).astype(dtype)
            for pattern in patterns:
                rows = []
                for n in sizes:
                    shape, axis = _shape(pattern, n)
                    a = buf[:n].reshape(shape)
                    with_limit = _caller(a, axis)
                    t = compare_fast({"serial": with_limit(sys.maxsize), "parallel": with_limit(0)},
                                     repeat=repeat)
                    row = {"dtype": dtype, "pattern": pattern, "size": n, "shape": list(shape),
                           "serial_s": t["serial"].median, "parallel_s": t["parallel"].median,
                           "serial_best_s": t["serial"].best, "parallel_best_s": t["parallel"].best}
                    rows.append(row)
                    if progress:
                        progress()
                out["rows"].extend(rows)
                out["crossovers"][f"{pattern}/{dtype}"] = crossover(rows)
                out["crossovers_median"][f"{pattern}/{dtype}"] = crossover(rows, key="median")
    finally:
        numba.set_num_threads(prev)
        launch.set_parallel_min(prev_min)
    found = [c * entry_for(np.dtype(key.split("/")[1])).cost
             for key, c in out["crossovers"].items() if c is not None]
    if len(found) < len(out["crossovers"]):
        # Some pattern never paid within the sweep: the recommendation is a lower bound.
        out["note"] = "a pattern never paid within the sizes measured; the sweep may be too short"
    if found:
        out["recommended"] = 1 << (max(found) - 1).bit_length()
    return out


def format_report(res):
    lines = [f"Serial vs parallel ({res['threads']} threads; parallel pays when its time is "
             f"<= {res['margin']:.2f} x serial and holds while <= {res['hold']:.2f} x), "
             f"per-call microseconds, median and best:"]
    if not res["rows"]:
        lines.append(f"  {res.get('note', 'nothing measured')}")
        return "\n".join(lines)
    lines.append(f"  {'dtype':8} {'pattern':8} {'size':>9} {'serial':>9} {'parallel':>9} {'speedup':>8}"
                 f" {'ser best':>9} {'par best':>9} {'speedup':>8}")
    for r in res["rows"]:
        lines.append(
            f"  {r['dtype']:8} {r['pattern']:8} {r['size']:>9} {r['serial_s'] * 1e6:>9.1f} "
            f"{r['parallel_s'] * 1e6:>9.1f} {r['serial_s'] / r['parallel_s']:>7.2f}x "
            f"{r['serial_best_s'] * 1e6:>9.1f} {r['parallel_best_s'] * 1e6:>9.1f} "
            f"{r['serial_best_s'] / r['parallel_best_s']:>7.2f}x")
    for key, c in res["crossovers"].items():
        m = res["crossovers_median"].get(key)
        lines.append(f"  crossover {key}: {c if c is not None else 'not reached'} (best times); "
                     f"{m if m is not None else 'not reached'} (medians)")
    rec = res["recommended"]
    lines.append(f"  recommended PARALLEL_MIN = {rec if rec is not None else 'n/a'}"
                 f"{f' (2**{rec.bit_length() - 1})' if rec else ''}; current = {res['current']}"
                 " (work units: float64 elements count twice)")
    if res.get("note"):
        lines.append(f"  note: {res['note']}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m reducemean.bench.threshold",
                                 description="Measure where reducemean's parallel kernels start paying.")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--tiny", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    res = measure(TINY_SIZES if args.tiny else SIZES, threads=args.threads, repeat=args.repeat)
    print(format_report(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
