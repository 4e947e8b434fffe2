"""Timing: warm-up, then medians and best times of repeated calls.

The machine this runs on may be shared, so one sample says little: every
figure reported is the median of several samples (and the best is kept as
the least-disturbed one).

Implementations compared on one case are timed in blocks (a pause,
warm-up, then a few timed calls), not call by call: torch, onnxruntime,
openvino and Numba keep thread pools whose workers spin for a while after
each call, and a pool still spinning would steal cores from the next
implementation's call.  The blocks go round in several rounds, and the
ratio of two implementations is the median of their per-round ratios: on a
shared machine the bandwidth can halve or double within seconds, and one
block each would give whichever ran in a quiet spell the lead.  Small calls
(:func:`compare_fast`) have no pools to speak of and are timed round-robin,
so a burst of outside load lands on all of them alike; their ratio, too,
is the median of the rounds' ratios, each round one sample of each.
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
    rounds: tuple = ()  #: per-round block medians, from compare

    def as_dict(self):
        return {"median_s": self.median, "best_s": self.best, "samples": self.samples}


def _summary(samples, rounds=()):
    return Timing(statistics.median(samples), min(samples), len(samples), rounds)


class _gc_off:
    """No garbage collection pauses inside a timed region."""

    def __enter__(self):
        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.was:
            gc.enable()


def compare(fns, repeat=5, warmup=1, budget=None, min_repeat=3, settle=0.05, rounds=1):
    """Time each zero-argument callable in ``fns`` (a dict), in ``rounds`` rounds of blocks.

    In each round every callable gets a block: a pause of ``settle`` seconds,
    long enough for the previous block's pool to stop spinning and sleep,
    then ``warmup`` untimed calls (compilation, caches, page faults, waking
    its own pool), then its share of the ``repeat`` timed calls.  With
    ``budget`` (seconds, shared evenly by the callables), a callable stops
    being timed once its share is spent and ``min_repeat`` calls are timed,
    so a slow peer cannot stretch a run without bound.

    Returns {name: Timing}, each with the median of its blocks in
    ``Timing.rounds`` (None for a round it sat out); see :func:`round_ratio`.
    """
    names = list(fns)
    share = budget / max(1, len(names)) if budget is not None else None
    rounds = max(1, min(rounds, repeat))
    samples = {name: [] for name in names}
    per_round = {name: [None] * rounds for name in names}
    spent = dict.fromkeys(names, 0.0)
    for r in range(rounds):
        want = repeat * (r + 1) // rounds - repeat * r // rounds  # this round's timed calls
        for name in names:
            fn, got = fns[name], samples[name]
            if share is not None and len(got) >= min_repeat and spent[name] > share:
                continue
            if settle:
                time.sleep(settle)
            for _ in range(warmup):
                fn()
            block = []
            with _gc_off():
                for _ in range(want):
                    t0 = clock()
                    fn()
                    block.append(clock() - t0)
                    spent[name] += block[-1]
                    if share is not None and len(got) + len(block) >= min_repeat and spent[name] > share:
                        break
            got.extend(block)
            per_round[name][r] = statistics.median(block)
    return {name: _summary(samples[name], tuple(per_round[name])) for name in names}


def round_ratio(a, b):
    """The median, over the rounds both took part in, of ``a``'s block time over ``b``'s.

    Falls back to the ratio of their medians when they share no round.
    """
    pairs = [x / y for x, y in zip(a.rounds, b.rounds) if x is not None and y is not None]
    return statistics.median(pairs) if pairs else a.median / b.median


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
    whole sample's worth.  Returns {name: Timing} in seconds per call, each
    repeat a round of one sample a callable (see :func:`round_ratio`).
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
    return {name: _summary(s, tuple(s)) for name, s in samples.items()}
