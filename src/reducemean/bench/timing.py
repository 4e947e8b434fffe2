"""Timing: warm-up, then medians and best times of repeated calls.

The machine this runs on may be shared, so one sample says little: every
figure reported is the median of several samples (and the best is kept as
the least-disturbed one).

Implementations compared on one case are timed one block each (warm-up,
then all its rounds), not round-robin: torch, onnxruntime, openvino and
Numba keep thread pools whose workers spin for a while after each call, and
a pool still spinning would steal cores from the next implementation's call.
Small calls (:func:`compare_fast`) have no pools to speak of and are timed
round-robin, so a burst of outside load lands on all of them alike.
"""

from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass

clock = time.perf_counter


@dataclass(frozen=True)
class Timing:
    """Seconds per call."""

    median: float
    best: float
    samples: int

    def as_dict(self):
        return {"median_s": self.median, "best_s": self.best, "samples": self.samples}


def _summary(samples):
    return Timing(statistics.median(samples), min(samples), len(samples))


class _gc_off:
    """No garbage collection pauses inside a timed region."""

    def __enter__(self):
        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.was:
            gc.enable()


def compare(fns, repeat=5, warmup=1, budget=None, min_repeat=3, settle=0.05):
    """Time each zero-argument callable in ``fns`` (a dict), one block each.

    Each block starts with a pause of ``settle`` seconds, long enough for the
    previous block's pool to stop spinning and sleep, then makes ``warmup``
    untimed calls (compilation, caches, page faults, waking its own pool),
    then up to ``repeat`` timed ones.  With
    ``budget`` (seconds, shared evenly by the callables), a block stops once
    its share is spent and ``min_repeat`` calls are timed, so a slow peer
    cannot stretch a run without bound.  Returns {name: Timing}.
    """
    share = budget / max(1, len(fns)) if budget is not None else None
    out = {}
    for name, fn in fns.items():
        if settle:
            time.sleep(settle)
        for _ in range(warmup):
            fn()
        samples = []
        start = clock()
        with _gc_off():
            for r in range(repeat):
                t0 = clock()
                fn()
                samples.append(clock() - t0)
                if share is not None and r + 1 >= min_repeat and clock() - start > share:
                    break
        out[name] = _summary(samples)
    return out


def paired(fn, ref, repeat=7, warmup=1):
    """``fn``'s time over ``ref``'s, each call of ``fn`` just after one of ``ref``.

    For a share of a shared machine's bandwidth, which comes and goes on a
    scale of seconds: a ``ref`` timed in a block of its own minutes earlier
    (or even just before ``fn``'s block) can have run at twice or half the
    rate ``fn`` met.  Returns ``(median of fn_time / ref_time per pair, Timing of ref)``.
    """
    for _ in range(warmup):
        ref()
        fn()
    ratios, refs = [], []
    with _gc_off():
        for _ in range(repeat):
            t0 = clock()
            ref()
            t1 = clock()
            fn()
            t2 = clock()
            refs.append(t1 - t0)
            ratios.append((t2 - t1) / (t1 - t0))
    return statistics.median(ratios), _summary(refs)


def calls_per_sample(fn, target=0.01, cap=1 << 20):
    """How many calls of a fast ``fn`` take about ``target`` seconds (timer noise vanishes)."""
    n = 1
    while n < cap:
        t0 = clock()
        for _ in range(n):
            fn()
        if clock() - t0 >= target / 4:
            break
        n *= 4
    return max(1, min(cap, int(n * target / max(clock() - t0, 1e-9))))


def compare_fast(fns, repeat=7, target=0.01, warmup=3):
    """Like :func:`compare` for calls of microseconds: each sample is a loop of calls.

    ``warmup`` calls come before the loop length is chosen: a first call that
    compiles or loads a kernel would otherwise make one call look like a
    whole sample's worth.  Returns {name: Timing} in seconds per call.
    """
    names = list(fns)
    for name in names:
        for _ in range(warmup):
            fns[name]()
    counts = {name: calls_per_sample(fns[name], target) for name in names}
    samples = {name: [] for name in names}
    with _gc_off():
        for r in range(repeat):
            k = r % len(names) if names else 0
            for name in names[k:] + names[:k]:
                fn, n = fns[name], counts[name]
                t0 = clock()
                for _ in range(n):
                    fn()
                samples[name].append((clock() - t0) / n)
    return {name: _summary(s) for name, s in samples.items()}
