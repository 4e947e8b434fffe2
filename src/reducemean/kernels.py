"""The reduction kernels: four loop families, each run serially or as parallel tasks.

A family's serial kernel covers a range ``[lo, hi)`` of its units (outputs,
or blocks of columns) and is also its parallel kernel's task: the parallel
kernel hands each thread a range and calls the serial kernel's compiled
code through its address (see :mod:`reducemean.tasks`).  Plans with too
few units for every thread are cut along their reduced range instead: the
``pieces`` kernels are the tasks there, writing partial states that a merge
kernel combines into the means (see ``launch._split``).

Every kernel reads a flat storage buffer through the packed plan ``p`` (see
:func:`reducemean.plan.pack`), an int64 array::

    p[0] first value's offset     p[1] count (values per mean)
    p[2] nk kept dims             p[3] nr reduced dims       p[4] outputs
    p[5 : 5+3*nk]          kept dims, outer to inner: (extent, in stride, out stride)
    p[5+3*nk : 5+3*nk+2*nr] reduced dims, outer to inner: (extent, in stride)
    p[5+3*nk+2*nr]         the innermost kept dim's group (plan.Plan.group: 1
                           but for groups of columns, whose in stride is
                           the groups')

Strides are in storage elements and may be zero; kept strides may be
negative (the plan reads reduced dims forwards).  Indices are
64-bit throughout; loads use unsigned indices so Numba adds no wrap-around
test to the hot loops.

* ``inner`` kernels serve plans whose innermost (smallest-stride) dimension is
  reduced: each output sums runs along that dimension (whole array, rows,
  RKR).  Work is split over outputs (rows: ranges of outputs, each one row
  loop), over the flat reduced range when there are too few outputs to keep
  every thread busy, or (RKR) over the outer reduced range walked in memory
  order.
* ``outer`` kernels serve plans whose innermost dimension is kept: a block of
  up to MAX_BLOCK neighbouring outputs is accumulated row by row (columns,
  KRK), so every load is used and the states stay in cache.
* ``short`` kernels serve contiguous rows, one after another, too short to
  pay for a run loop, e.g. (16M, 4) over axis 1: each row's values are added
  one by one, so the loop over rows vectorises.
* ``parts`` kernels serve complex inputs whose innermost kept dimension is
  the part (real, imaginary) alone, e.g. complex rows or a whole complex
  array: a contiguous run is read once for both parts.  Seen as floats this
  is a column reduction two columns wide, which the outer kernels would walk
  value by value.

The per-dtype arithmetic lives in :mod:`reducemean.numerics`; these loops
never depend on the element type.  Every kernel returns how many float
sums came out of range (Inf, NaN or above ``2**995``), so the caller can
redo a float64 sum that overflowed (see :mod:`reducemean.engine`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from .cacheload import adopt
from .numerics import (
    PAIR_BLOCK, add_value, bounded, col_add, col_add8, has_pair_sum, is_16bit, least, merge,
    most, literal_rows, opaque_one, pair_sum, run_parts, run_parts_rows, run_parts_step2,
    run_parts_strided, run_rows, run_rows_short, run_sum, SHORT_VEC_STEP, magnitude_join,
    magnitude_zero, short_add, short_certified, short_clear, short_exact, short_mend,
    short_merge, short_negative, short_poisoned, short_state, short_sums, short_sums_f64,
    short_vec, short_vec_f64, short_zero, stack_f64, state_arrays, step2_columns, store,
    store_block, store_short, superset_arrays, superset_columns, superset_keep, token_step,
    wide_int_states, widen, zero_state,
)
from .tasks import borrow, call_task, keep, run_tasks

#: Most outputs an ``outer`` kernel accumulates side by side: whole rows up to
#: this width, so each thread streams contiguous rows (prefetchers restart at
#: every jump), while the states (8-16 bytes each) stay in L2.
MAX_BLOCK = 16384
#: Rows narrower than this (twice this for 16-bit types: rows under 2 KiB,
#: as float32's) are read eight a pass from eight streams (see outer_block).
NARROW = 512
#: Wide rows under this many bytes that lie end to end (one contiguous run
#: per block) are read eight streams an eighth of the block apart as well.
SPREAD_ROW = 32 << 10

#: Bytes between the two rows that the float64 row loop sums together, at
#: most (see _row_pairs).
PAIR_GAP = 1 << 20

# No C-callable wrapper, and no Python one on the helpers only kernels call
# (first-call time: see numerics._OVERLOAD_OPTS).
_JIT = {"cache": True, "nogil": True, "error_model": "numpy", "no_cfunc_wrapper": True}
_HELPER = dict(_JIT, no_cpython_wrapper=True)

#: The start of a full range.  A literal 0 would be typed ``Literal[int](0)``:
#: a second compile of a helper that a parallel kernel also calls with an
#: int64 start (about 0.2-0.5 s each on a cold first call).
_ZERO = np.int64(0)


@njit(**_JIT)
def tasks_parallel(fn, head, total, counts):
    """A serial kernel over ``len(counts)`` even ranges of units [0, total), in parallel.

    ``fn`` is the kernel's address (see :mod:`reducemean.tasks`); task ``t``
    runs ``kernel(*head, lo, hi)`` and writes its out-of-range count to
    ``counts[t]``.
    """
    run_tasks(fn, head, total, counts)
    bad = 0  # the tasks' out-of-range counts (each task writes its own)
    for t in range(counts.shape[0]):
        bad += counts[t]
    return bad


@njit(**_JIT)
def pieces_then_merge(fn, merge, head, mhead, total, counts, nmerge):
    """A split reduction in one call: pieces in parallel, then their merge on this thread.

    The pieces run as in tasks_parallel and write the partial states;
    ``merge`` is the address of a merge kernel, run as ``merge(*mhead, 0,
    nmerge)``.  One call from Python instead of two saves about 2 us.
    """
    run_tasks(fn, head, total, counts)
    return call_task(merge, mhead, _ZERO, nmerge)


@njit(**_HELPER)
def _kept_offsets(p, o, skip_inner):
    """Input and output offsets of kept flat index ``o``.

    Over every kept dim but the ``skip_inner`` innermost (True: one; 2:
    two, the rows of complex values and their part).
    """
    nk = p[2]
    last = nk - np.int64(skip_inner)
    if last == 1:
        return p[0] + o * p[6], o * p[7]
    off = p[0]
    oo = 0
    rem = o
    for d in range(last - 1, -1, -1):
        e = p[5 + 3 * d]
        i = rem % e
        rem //= e
        off += i * p[6 + 3 * d]
        oo += i * p[7 + 3 * d]
    return off, oo


@njit(**_HELPER)
def _reduced_offset(p, f, ndims):
    """Input offset of flat index ``f`` over the first ``ndims`` reduced dims.

    ``f`` is under the product of their extents, so the outermost dim's
    index needs no division: one fewer for every row of a column block
    over two reduced dims (summed short runs over (0, 2, 3) of (14, 17,
    63, 5): 1.2-1.35x faster, float16 1.6x).
    """
    rb = 5 + 3 * p[2]
    off = 0
    for d in range(ndims - 1, 0, -1):
        e = p[rb + 2 * d]
        j = f % e
        f //= e
        off += j * p[rb + 2 * d + 1]
    # f is under the count, so what is left is the outermost dim's index
    return off + f * p[rb + 1]


@njit(**_HELPER)
def _one_run(buf, off, lo, hi, step, tok):
    """State of values [lo, hi) of the run from ``off`` whose stride is ``step``."""
    if step == 1:  # a constant stride lets the contiguous run inline and unroll
        return run_sum(buf, off + lo, hi - lo, 1, tok)
    return run_sum(buf, off + lo * step, hi - lo, step, tok)


@njit(inline="always", **_HELPER)
def _inner_partial(buf, p, tok, off, lo, hi):
    """State of one output (input offset ``off``) over flat reduced indices [lo, hi).

    Whole runs that follow one another along the next reduced dim go to one
    ``run_rows`` call, the piece of a run at either end alone: a run sum and
    a merge per run cost most of the time of runs of a few dozen values.
    Inlined, as _inner_one is: Numba optimises and emits a called function
    again in each caller's library, so as functions of their own both were
    compiled three times over by inner_serial's first call (cold first
    float32 calls in fresh processes, medians: (101, 3, 409) over (0, 2)
    4.1-4.3 s before, 3.6-3.8 s after; an (8, 64, 56, 56)[..., :28] crop
    over (2, 3) 4.3 s before, 3.3 s after; the same speed once compiled).
    """
    nr = p[3]
    rb = 5 + 3 * p[2]
    run = p[rb + 2 * (nr - 1)]
    step = p[rb + 2 * (nr - 1) + 1]
    if nr == 1:
        return _one_run(buf, off, lo, hi, step, tok)
    a, b = zero_state(buf, tok)
    e2 = p[rb + 2 * (nr - 2)]  # the next reduced dim: runs that follow one another
    s2 = p[rb + 2 * (nr - 2) + 1]
    f = lo
    while f < hi:
        start, m = _segment(p, off, f, hi, run, step, nr)
        k = 1
        if m == run:  # as many whole runs as follow along the next reduced dim
            k = least(e2 - (f // run) % e2, (hi - f) // run)
        a2, b2 = run_rows(buf, start, m, step, k, s2, tok)
        a, b = merge(a, b, a2, b2, tok)
        f += k * m
    return a, b


@njit(**_HELPER)
def _segment(p, off, f, hi, run, step, nr):
    """Start and length of the piece of innermost run that flat reduced index ``f`` begins."""
    ro = f // run
    i0 = f - ro * run
    return off + _reduced_offset(p, ro, nr - 1) + i0 * step, least(run - i0, hi - f)


@njit(inline="always", **_HELPER)
def _inner_one(buf, p, out, tok, o):
    off, oo = _kept_offsets(p, o, False)
    a, b = _inner_partial(buf, p, tok, off, _ZERO, p[1])
    return store(out, oo, a, b, p[1], tok)


@njit(**_JIT)
def inner_serial(buf, p, out, tok, lo, hi):
    """Outputs [lo, hi) of any inner plan, one after another.

    Launched for three reduced dims or more: two take :func:`inner_two`,
    one the row kernels.
    """
    bad = 0
    for o in range(lo, hi):
        bad += _inner_one(buf, p, out, tok, o)
    return bad


@njit(**_JIT)
def inner_two(buf, p, out, tok, lo, hi):
    """Outputs [lo, hi) of an inner plan of two reduced dims (a crop of NCHW over (2, 3)).

    Each output is one run_rows call.  A kernel of its own, apart from
    inner_serial's walk over pieces of runs, which such a plan never takes:
    a first call compiles only the row loop (cold first float32 calls in
    fresh processes: see launch.inner_kernel).
    """
    bad = 0
    rb = 5 + 3 * p[2]
    e2 = p[rb]
    s2 = p[rb + 1]
    run = p[rb + 2]
    step = p[rb + 3]
    n = p[1]
    for o in range(lo, hi):
        off, oo = _kept_offsets(p, o, False)
        a, b = run_rows(buf, off, run, step, e2, s2, tok)
        bad += store(out, oo, a, b, n, tok)
    return bad


@njit(**_JIT)
def inner_two_short(buf, p, out, tok, lo, hi):
    """:func:`inner_two` for contiguous runs of fewer than 16 values.

    The runs' sum is emitted in this loop (numerics.run_rows_short), not
    called, and one kept dim needs no call for its offsets: the calls of
    run_rows and _kept_offsets cost more than the sum of a few short runs.
    Float32 (16384, 4, 16)[..., :3] over (1, 2), one thread: 510 us in
    inner_two, 270 us here; (16384, 8, 16)[..., :12] 1.53 ms before the
    runs were summed in windows (numerics._unit_short_codegen), 0.48 ms.
    A kernel of its own, so plans of longer runs compile none of it.
    """
    bad = 0
    rb = 5 + 3 * p[2]
    e2 = p[rb]
    s2 = p[rb + 1]
    run = p[rb + 2]
    n = p[1]
    one = p[2] == 1
    for o in range(lo, hi):
        if one:
            off = p[0] + o * p[6]
            oo = o * p[7]
        else:
            off, oo = _kept_offsets(p, o, False)
        a, b = run_rows_short(buf, off, run, e2, s2, tok)
        bad += store(out, oo, a, b, n, tok)
    return bad


@njit(**_HELPER)
def inner_pieces(buf, p, pa, pb, tok, chunks, lo, hi):
    """Partial states of pieces [lo, hi): each output's reduced range cut ``chunks`` ways.

    Piece ``u`` is part ``u % chunks`` of output ``u // chunks``.  States go
    to ``pa``/``pb`` laid out [chunk][output] (see merge_outputs).
    """
    nout = p[4]
    n = p[1]
    for u in range(lo, hi):
        o = u // chunks
        c = u - o * chunks
        src, dst = _kept_offsets(p, o, False)
        pa[c * nout + o], pb[c * nout + o] = _inner_partial(
            buf, p, tok, src, n * c // chunks, n * (c + 1) // chunks
        )
    return _ZERO


@njit(**_HELPER)
def whole_pieces(buf, p, pa, pb, tok, chunks, lo, hi):
    """:func:`inner_pieces` for a whole reduction of one run: piece ``c`` is part ``c`` of it.

    Without the offsets of kept dims and the walk over several reduced
    ones, which a whole array's one run never needs but inner_pieces
    compiled: a cold process whose first call is a mean of 2^20 float32
    values ran 8.99 G instructions with inner_pieces, 7.42 G with this.
    """
    n = p[1]
    for c in range(lo, hi):
        pa[c], pb[c] = _one_run(buf, p[0], n * c // chunks, n * (c + 1) // chunks, p[6], tok)
    return _ZERO


@njit(inline="always", **_HELPER)
def _long_run(buf, off, n, tok):
    """The state of the contiguous run ``buf[off : off + n]`` by numerics.pair_sum (which must
    serve it): pairs of adjacent PAIR_BLOCK blocks, each block's state merged into the run's.

    Two streams a core read memory faster than one: whole float64 arrays
    of 512 MiB on two threads 1.15-1.3x faster, float32 1.1-1.25x, 16-bit
    floats 1.1-1.2x.  What is left (under two blocks) goes as its two
    halves, and its middle value if its length is odd, through the same
    call of the pair loop (see _row_pairs).
    """
    a, b = zero_state(buf, tok)
    values = PAIR_BLOCK // buf.itemsize
    lo = np.int64(0)
    while lo < n:
        left = n - lo
        m = values if left >= 2 * values else left // 2
        a0, b0, a1, b1 = pair_sum(buf, off + lo, off + lo + (values if m == values else left - m),
                                  m, tok)
        a, b = merge(a, b, a0, b0, tok)
        a, b = merge(a, b, a1, b1, tok)
        if m == values:
            lo += 2 * values
        else:
            if left > 2 * m:
                a, b = add_value(a, b, buf, np.uint64(off + lo + m), tok)
            lo = n
    return a, b


@njit(**_HELPER)
def whole_long_pieces(buf, p, pa, pb, tok, chunks, lo, hi):
    """:func:`whole_pieces` of a contiguous run the pair loop serves (see _long_run)."""
    n = p[1]
    for c in range(lo, hi):
        c0 = n * c // chunks
        pa[c], pb[c] = _long_run(buf, p[0] + c0, n * (c + 1) // chunks - c0, tok)
    return _ZERO


@njit(**_HELPER)
def merge_outputs(pa, pb, out, p, chunks, tok, lo, hi):
    """Outputs [lo, hi): merge their partial states laid out [chunk][output], store the means."""
    bad = 0
    for o in range(lo, hi):
        bad += _merge_store(pa, pb, out, p, o, chunks, tok)
    return bad


def _short_fixed(buf, out, tok, base, lo, hi, run):
    """Rows [lo, hi) of ``run`` contiguous values each: the bad count.

    Called with a literal ``run``: once inlined, each row is fully unrolled
    and the loop over rows vectorises (store_short keeps it branch-free).
    The output index is unsigned, as the loads' are: a signed one carries
    Numba's negative-index wraparound, which split every vector of results
    into one scalar store each (float16 (16M, 4) rows 1.4x slower).  int64
    states get a second loop, the exact finish, for a range with a sum past
    2**53 (see store_short); the other types do not compile it.
    """


def _short_rows(buf, out, tok, base, lo, hi, run):
    bad = 0
    one = opaque_one()
    for o in range(lo, hi):
        k = base + o * run
        a, b = short_zero(buf, tok)
        for i in range(run):
            a, b = short_add(a, b, buf, np.uint64(k + i), tok, one)
        bad += store_short(out, np.uint64(o), a, b, run, buf, tok)
    if bad:  # after the loop, which stays branch-free (store_short)
        bad = short_mend(buf, out, tok, base, lo, hi, run, bad)
    return bad


_short_rows_jit = njit(**_HELPER)(_short_rows)


def _short_rows_any(buf, out, tok, base, lo, hi, run):
    # rows of 11 and 13 values (and 9 to 15 of bounded reads) of the types
    # (or reads) short_sums and short_sums_f64 do not serve, which a literal
    # length would have LLVM gather (numerics.LITERAL_ROWS_MAX), and which
    # have no parts (SHORT_PARTS): the loop of any length.  Rows of 16 to
    # 32 of those types are not short plans (plan.SHORT_VEC_ROWS), nor
    # taken as such by reads the vector sums do not serve (launch._family).
    return _short_rows_jit(buf, out, tok, base, lo, hi, np.int64(run))


def _short_rows_redo(buf, out, tok, base, lo, hi, run):
    # one compile for every row length: a literal one per length would
    # compile this loop and its fast finish five times (first-call time)
    n = np.int64(run)
    if _short_rows_jit(buf, out, tok, base, lo, hi, n):
        return short_exact(buf, out, tok, base, lo, hi, n)
    return np.int64(0)


def _short_rows_vec(buf, out, tok, base, lo, hi, run):
    # SHORT_VEC_STEP rows' sums a step, four rows to a vector (short_sums),
    # then their stores in one loop, which vectorises: float32 rows of 4
    # 1.9 -> 1.4 ns a row in cache.  The last rows are summed one by one
    # into the same buffer, so the loop of stores compiles once (a second
    # copy of the whole row loop for them cost a cold first call 30% more
    # instructions).
    sums = stack_f64(SHORT_VEC_STEP)
    bad = 0
    for o in range(lo, hi, SHORT_VEC_STEP):
        m = hi - o
        if m >= SHORT_VEC_STEP:
            m = SHORT_VEC_STEP
            t = short_sums(buf, base + o * run, run, sums, tok)
            if short_poisoned(t, buf, tok):  # joined again, Inf and NaN left out
                t = magnitude_zero(buf)
                for k in range(m * run):
                    v = buf[np.uint64(base + o * run + k)]
                    if np.isfinite(widen(v, tok)):
                        t = magnitude_join(t, v, buf, tok)
        else:
            t = magnitude_zero(buf)
            for j in range(m):
                s = 0.0
                for i in range(run):
                    v = buf[np.uint64(base + (o + j) * run + i)]
                    x = np.float64(widen(v, tok))
                    s += x
                    if np.isfinite(x):  # as short_poisoned: not finite, not joined
                        t = magnitude_join(t, v, buf, tok)
                sums[j] = s
        neg = short_negative(t, run, buf, tok)
        if short_clear(sums, m, neg, run, buf, tok):
            for j in range(m):
                a, b = short_state(sums, j, None, run, buf, tok)
                bad += store_short(out, np.uint64(o + j), a, b, run, buf, tok)
        else:
            for j in range(m):
                a, b = short_state(sums, j, neg, run, buf, tok)
                b = short_certified(a, b, buf, base + (o + j) * run, run, tok)
                bad += store_short(out, np.uint64(o + j), a, b, run, buf, tok)
    return bad


_TWO_STEPS = 2 * SHORT_VEC_STEP  # (a literal for stack_f64)


def _short_rows_vec64(buf, out, tok, base, lo, hi, run):
    # Plain float64 rows of 7 to 32 values: SHORT_VEC_STEP rows' states a
    # step, four rows to a vector with compensation (numerics.short_sums_f64,
    # SHORT_F64_RUNS), then their stores in one loop.  The last rows of a
    # range go into the same buffer one by one (add_value's states).
    sums = stack_f64(_TWO_STEPS)
    bad = 0
    one = opaque_one()
    for o in range(lo, hi, SHORT_VEC_STEP):
        m = hi - o
        if m >= SHORT_VEC_STEP:
            m = SHORT_VEC_STEP
            short_sums_f64(buf, base + o * run, run, sums, tok)
        else:
            for j in range(m):
                a, b = short_zero(buf, tok)
                for i in range(run):
                    a, b = short_add(a, b, buf, np.uint64(base + (o + j) * run + i), tok, one)
                sums[j] = a
                sums[SHORT_VEC_STEP + j] = b
        for j in range(m):
            bad += store_short(out, np.uint64(o + j), sums[j], sums[SHORT_VEC_STEP + j], run,
                               buf, tok)
    return bad


def _short_rows_parts(part):
    """The short-row loop for rows whose length (a literal) is a multiple of ``part``: each
    row as its parts of ``part`` values, their states merged.

    LLVM vectorises the loop over rows of a literal length with whole loads
    and shuffles up to 8 values (numerics.LITERAL_ROWS_MAX), but gathers
    rows of 8 eight-byte values, and of 9 or more of any type: float64
    (2**23, 8) over axis 1 read 1.7 GB/s on one thread that way, slower
    than numpy.mean, and the loop of any length left for 9 to 15 values is
    a chain of adds a row.  The parts of rows one after another are rows
    themselves, ``part`` values each, which it loads whole.  SHORT_VEC_STEP
    rows a step, their parts' states held in a buffer for the loop of
    merges and stores.  See :data:`SHORT_PARTS`.
    """

    def impl(buf, out, tok, base, lo, hi, run):
        q = run // part
        pa, pb = state_arrays(q * SHORT_VEC_STEP, buf, tok)
        bad = 0
        one = opaque_one()
        for o0 in range(lo, hi, SHORT_VEC_STEP):
            m = least(SHORT_VEC_STEP, hi - o0)
            k0 = base + o0 * run
            for h in range(q * m):
                k = k0 + h * part
                a, b = short_zero(buf, tok)
                for i in range(part):
                    a, b = short_add(a, b, buf, np.uint64(k + i), tok, one)
                pa[h] = a
                pb[h] = b
            for j in range(m):
                # the first two parts merged, not a zero state and then each:
                # that chain cost float64 rows of 8 1.5x the time
                a, b = short_merge(pa[q * j], pb[q * j], pa[q * j + 1], pb[q * j + 1], buf, tok)
                for r in range(2, q):
                    a, b = short_merge(a, b, pa[q * j + r], pb[q * j + r], buf, tok)
                bad += store_short(out, np.uint64(o0 + j), a, b, run, buf, tok)
        return bad

    return impl


#: The part length (see _short_rows_parts) of each row length summed in parts:
#: rows of 8 eight-byte values, and of 9 to 15 values (11 and 13 have none) of
#: the types and reads numerics.short_sums and short_sums_f64 do not serve
#: (uint64, the integers narrower than int32, uint32, bool, float64 and float32
#: read scaled or exactly).  Rows of 8 in halves, two threads, old and new
#: alternating: float64 (2**23, 8) 3.4 -> 21 GB/s (6.3x; numpy.mean 3.8),
#: uint64 3.3x, float64 (8192, 8) in cache 1.38x. Rows of 9 to 15, old and new
#: in alternating processes, held in cache, one thread, ns a row, the loop of
#: any length -> parts: float64 (2**18 / n, n) rows of 9 to 15 8.5-13.5 ->
#: 3.2-4.8 (2.3-2.9x), int16 1.4-2.6 -> 0.7-1.1, uint8 1.2-1.7 -> 0.7-1.5,
#: uint32 1.5-2.6 -> 1.1-1.9, bool 1.3-1.9 -> 1.0-1.5; from memory, two threads
#: (2**26 / n, n), float64 4.8-7.9 -> 3.0-5.6 ns (1.4-1.7x), the narrower
#: integers, bound by their float64 results' writes, 0.9-1.2x.  Other part
#: lengths measured no faster (float64 rows of 12 as 3 parts of 4 the same, 4
#: of 3 1.15x the time; rows of 15 as 5 parts of 3 1.2x).  float64 rows of 16
#: to 32 in parts measured no faster than the row loop's pairs (0.7-2.3x the
#: time); plain float64 rows of 7 to 32 are short_sums_f64's since.
SHORT_PARTS = {8: 4, 9: 3, 10: 5, 12: 6, 14: 7, 15: 5}
_PARTS = {part: _short_rows_parts(part) for part in set(SHORT_PARTS.values())}


@overload(_short_fixed, prefer_literal=True, jit_options={"cache": True, "no_cfunc_wrapper": True})
def _short_fixed_impl(buf, out, tok, base, lo, hi, run):
    if wide_int_states(buf, tok):
        return _short_rows_redo
    if short_vec(buf, tok, run):
        return _short_rows_vec
    if short_vec_f64(buf, tok, run):
        return _short_rows_vec64
    if (isinstance(run, types.IntegerLiteral) and run.literal_value in SHORT_PARTS
            and (buf.dtype.bitwidth == 64 or not literal_rows(run)) and not bounded(tok)):
        # (bounded sums' marked rows are short_mend's, in _short_rows: float16
        # without F16C, the only bounded reads short_sums does not serve)
        return _PARTS[SHORT_PARTS[run.literal_value]]
    if not literal_rows(run):
        return _short_rows_any  # rows LLVM would gather, and lengths short_sums' alone
    return _short_rows


@njit(inline="always", **_HELPER)
def _rows(buf, out, tok, base, sk, obase, ok, run, step, lo, hi):
    """Rows [lo, hi) of ``run`` values ``step`` apart: row ``o`` from ``base + o * sk``, its mean
    stored at ``obase + o * ok``.  Returns the bad count.

    The loop body is one run sum and one store.  Contiguous rows of the
    types numerics.pair_sum serves go two at a time instead (_row_pairs).
    """
    bad = 0
    for o in range(lo, hi):
        a, b = run_sum(buf, base + o * sk, run, step, tok)
        bad += store(out, obase + o * ok, a, b, run, tok)
    return bad


@njit(inline="always", **_HELPER)
def _row_pairs(buf, out, tok, base, sk, obase, ok, run, lo, hi):
    """:func:`_rows` of contiguous rows, or rows of every second value (a rank-3 ``tok``), two
    at a time (numerics.pair_sum, which must serve them).

    Two rows in one loop overlap one row's lane merges and division with
    the other's instead of ending every row in a chain of dependent steps,
    and each thread reads two streams, which memory serves faster than one:
    float32 (4096, 16384) from memory in 0.81-0.93x the time of one row at
    a time, rows held in cache 0.85-1.07x (mostly under 0.96x).
    The two rows are up to PAIR_GAP bytes apart, not adjacent: with
    adjacent rows each stream's prefetches run into rows the other has
    already read, and reading from memory measured 2-4x slower than one
    row at a time (32 KiB apart still 1.5x slower; 256 KiB and 1 MiB apart
    both faster than one at a time).  Rows o and o + h (h up to PAIR_GAP
    bytes' worth) go together, in blocks of 2h rows; an odd last row is
    paired with itself (the second load of each value hits the line the
    first brought in).  It went as its two halves and its middle value
    before, through the same call, and that loop body, with its merge and
    extra value, cost every row: float32 rows of 16, 24 and 64 held in
    cache on one thread 2.3-2.8x faster without it, 1.1-1.6x on two
    (float64, 16-bit floats, int32 rows of 16 to 64 too).  One call of the
    pair loop serves every case: each call site is a copy of the loop to
    compile, and a loop for one row another (first-call time).
    """
    bad = 0
    d = _pair_gap(buf, run, tok)
    b0, i, h = _pairs_start(lo, hi, d)
    while b0 < hi:
        lone = hi - b0 == 1
        off0 = base + (b0 + i) * sk
        a, b, a1, b1 = pair_sum(buf, off0, off0 + (not lone) * h * sk, run, tok)
        if lone:
            bad += store(out, obase + b0 * ok, a, b, run, tok)
        else:
            bad += store(out, obase + (b0 + i) * ok, a, b, run, tok)
            bad += store(out, obase + (b0 + i + h) * ok, a1, b1, run, tok)
        b0, i, h = _pairs_next(b0, i, h, hi, d)
    return bad


@njit(inline="always", **_HELPER)
def _pair_gap(buf, run, tok):
    """How many runs apart the two runs of a pair are, at most: PAIR_GAP bytes' worth."""
    return most(1, PAIR_GAP // most(1, run * token_step(tok) * buf.itemsize))


@njit(inline="always", **_HELPER)
def _pairs_start(lo, hi, d):
    """The first step ``(b0, i, h)`` of a walk over items [lo, hi) in pairs (see _row_pairs).

    Items ``b0 + i`` and ``b0 + i + h`` go together, ``h`` up to ``d``, in
    blocks of ``2h`` from ``b0``; the last item alone when ``hi - b0`` is 1.
    """
    return lo, np.int64(0), least(d, (hi - lo) // 2)


@njit(inline="always", **_HELPER)
def _pairs_next(b0, i, h, hi, d):
    """The step after ``(b0, i, h)`` of a walk over items up to ``hi`` in pairs (_pairs_start)."""
    if hi - b0 == 1:  # the last item, alone
        return hi, i, h
    i += 1
    if i == h:
        b0 += 2 * h
        i = 0
        h = least(d, (hi - b0) // 2)
    return b0, i, h


@njit(**_JIT)
def rows_serial(buf, p, out, tok, lo, hi):
    """Outputs [lo, hi) of a plan with one reduced dimension and one kept (see _rows).

    The general inner kernel calls helpers per output, and Numba leaves
    reference-count updates of its array arguments in place (atomic, about
    40 ns a call): more than summing a row of a few hundred values.
    """
    return _rows(buf, out, tok, p[0], p[6], 0, p[7], p[8], p[9], lo, hi)


@njit(**_JIT)
def rows_paired(buf, p, out, tok, lo, hi):
    """:func:`rows_serial` of rows two at a time (see _row_pairs).

    A kernel of its own (launch.row_kernel picks it when numerics.pairs_runs
    says the pair loop serves the rows), so neither kernel compiles the
    other's loop.
    """
    return _row_pairs(buf, out, tok, p[0], p[6], 0, p[7], p[8], lo, hi)


@njit(**_JIT)
def rows_nested(buf, p, out, tok, lo, hi):
    """Outputs [lo, hi) of a plan with one reduced dimension and several kept ones.

    Rows along the innermost kept dim go to one _rows call per offset of
    the outer kept dims, not a helper call and a division per kept dim for
    every row as in inner_serial: float32 (40, 30, 50)[:, :20] over axis 2
    took 2.1x numpy's time there.
    """
    kb = 2 + 3 * p[2]  # the innermost kept dim; the reduced one follows it
    bad = 0
    o = np.int64(lo)  # see _kept_offsets
    while o < hi:
        off, oo, i, m = _nested_rows(p, o, hi)
        bad += _rows(buf, out, tok, off, p[kb + 1], oo, p[kb + 2], p[kb + 3], p[kb + 4], i, i + m)
        o += m
    return bad


@njit(**_JIT)
def rows_nested_paired(buf, p, out, tok, lo, hi):
    """:func:`rows_nested` of rows two at a time (see _row_pairs, rows_paired)."""
    kb = 2 + 3 * p[2]
    bad = 0
    o = np.int64(lo)
    while o < hi:
        off, oo, i, m = _nested_rows(p, o, hi)
        bad += _row_pairs(buf, out, tok, off, p[kb + 1], oo, p[kb + 2], p[kb + 3], i, i + m)
        o += m
    return bad


@njit(inline="always", **_HELPER)
def _nested_rows(p, o, hi):
    """Offsets (input, output) of the rows along the innermost kept dim from output ``o``, the
    first row's index along it, and how many rows of [o, hi) lie there."""
    e = p[2 + 3 * p[2]]
    q = o // e
    i = o - q * e
    off, oo = _kept_offsets(p, q, True)
    return off, oo, i, least(e - i, hi - o)


@njit(**_JIT)
def whole_serial(buf, p, out, tok, lo, hi):
    """:func:`rows_serial` for a whole reduction: one output, one run (the plan keeps no dim).

    Without rows_serial's float64 row pairs, a loop a single run never
    enters that a first call still compiled: a cold first float64 (8, 8)
    mean over every axis took 1.04-1.30 s with it, 0.72 s without.
    ``lo``, ``hi``: 0 and 1, or an empty range.
    """
    if lo >= hi:
        return _ZERO
    run = p[5]
    a, b = run_sum(buf, p[0], run, p[6], tok)
    return store(out, 0, a, b, run, tok)


@njit(**_JIT)
def whole_long(buf, p, out, tok, lo, hi):
    """:func:`whole_serial` of a contiguous run the pair loop serves (see _long_run).

    A kernel of its own (launch.row_kernel picks it for runs of at least
    two PAIR_BLOCKs), so neither compiles the other's loops: a small whole
    reduction's first call no pairs, this one no strided runs.
    """
    if lo >= hi:
        return _ZERO
    run = p[5]
    a, b = _long_run(buf, p[0], run, tok)
    return store(out, 0, a, b, run, tok)


def _short_store(out, i, a, b, n, buf, tok):
    """:func:`store_short`, or for int64 states (which it would ask to redo) :func:`store`."""


@overload(_short_store, jit_options={"cache": True, "no_cfunc_wrapper": True})
def _short_store_impl(out, i, a, b, n, buf, tok):
    if wide_int_states(buf, tok):
        return lambda out, i, a, b, n, buf, tok: store(out, i, a, b, n, tok)
    return lambda out, i, a, b, n, buf, tok: store_short(out, i, a, b, n, buf, tok)


@njit(**_JIT)
def short_strided(buf, p, out, tok, lo, hi):
    """Outputs [lo, hi) of strided rows under SHORT_RUN values (one kept dim, one reduced).

    Each row's values are added one by one, as the short kernels do, with
    no run sum, lane merges or division of their own per row, which
    rows_serial spent: float64 (11, 6, 24, 6)[..., ::3] over the last axis
    took 2.1x numpy's time there.  launch.row_kernel leaves contiguous rows
    apart, and int64 and uint64 rows, to rows_serial.
    """
    base = p[0]
    sk = p[6]
    ok = p[7]
    run = p[8]
    step = p[9]
    bad = 0
    one = opaque_one()
    for o in range(lo, hi):
        k = base + o * sk
        a, b = short_zero(buf, tok)
        for i in range(run):
            a, b = short_add(a, b, buf, np.uint64(k + i * step), tok, one)
        bad += _short_store(out, np.uint64(o * ok), a, b, run, buf, tok)
    return bad


@njit(**_JIT)
def short_serial(buf, p, out, tok, lo, hi):
    """Outputs [lo, hi) of contiguous rows under SHORT_RUN values (the "short" plans; see
    plan.SHORT_VEC_ROWS for rows of 16 to 32).

    Rows of any length, fewer than a vector step of them (see
    :func:`short_kernel`; more take their length's literal kernel).
    Kept apart from ``rows_serial``, which strided short rows get, so
    neither compiles the other's loops (first-call time).
    """
    return _short_fixed(buf, out, tok, p[0], lo, hi, p[8])


def _short_serial_for(run):
    """:func:`short_serial` for rows of ``run`` values, the length a literal.

    The length is the closure's constant, which Numba types as a literal
    (as a literal in the source), and which its cache keys each compiled
    kernel by.  One kernel a length, each compiling its one loop: a kernel
    that chose among lengths at run time compiled them all on a first call
    (a cold (8, 8) float32 call over axis 1 took 1.4 s with five).
    """

    def kernel(buf, p, out, tok, lo, hi):
        return _short_fixed(buf, out, tok, p[0], lo, hi, run)

    kernel.__name__ = kernel.__qualname__ = f"short_serial_{run}"
    kernel.__doc__ = f":func:`short_serial` for rows of {run} values."
    return njit(**_JIT)(kernel)


#: The short-row kernel's name per row length (looked up by name, so a
#: caller sees a module attribute replaced, as the tests' spy does): every
#: length from 2 to 15, and 16 to 32 for the types whose rows of those
#: lengths are short plans (plan.SHORT_VEC_ROWS).  Rows of a literal
#: length are unrolled and LLVM vectorises the loop across rows, each
#: row's values still added in order (the same sums), up to 8 values
#: (numerics.LITERAL_ROWS_MAX); from 9 the types of numerics.short_sums
#: take it (and plain float64 rows from 7 numerics.short_sums_f64), the
#: others their parts (SHORT_PARTS) or, for rows of 11 and 13, the loop of
#: any length.  Held in cache,
#: one thread, (32768, n) ns a row, run-time length -> literal: float32
#: n = 5 3.5 -> 0.71, 7 5.5 -> 0.94; float64 5 to 7 5.7-7.3 -> 1.2-1.7;
#: int32 5 and 7 1.8 and 2.6 -> 0.39 and 0.53; uint8 1.45 and 1.8 -> 0.22
#: and 0.42; float16 and bfloat16 rows of 5 to 7 4.0-5.5 -> 0.68-1.1.
SHORT_KERNELS = {run: f"short_serial_{run}" for run in range(2, 33)}
_SHORT_RUNS = {name: run for run, name in SHORT_KERNELS.items()}


def _kernel_named(name):
    """The module's kernel ``name``; a short-row kernel is made on first use.

    Made at import, the 31 short-row dispatchers cost 6% of the package's
    own import, after numpy's and Numba's (0.258 G -> 0.242 G
    instructions, callgrind); a process uses a few of them at most.
    """
    kernel = globals().get(name)
    if kernel is None and name in _SHORT_RUNS:
        kernel = globals()[name] = _short_serial_for(_SHORT_RUNS[name])
        adopt({name: kernel})
    return kernel


def __getattr__(name):  # asked only for names the module does not hold yet
    kernel = _kernel_named(name)
    if kernel is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return kernel


def short_kernel(run, rows):
    """The short-row kernel for ``rows`` rows of ``run`` values.

    Fewer rows than a vector step (numerics.SHORT_VEC_STEP) of any length
    but 2 and 3 take ``short_serial``: its loop is what their literal
    kernel would run, and their first call does not compile the vector
    steps (numerics.short_sums, or LLVM's across rows), which they never
    reach.  Cold first
    (8, 8) calls over axis 1 in fresh processes, before and after,
    alternating: float32 1.97-2.31 s -> 0.99-1.05 s, float16 1.66-1.70 s
    -> 1.01-1.09 s, int32 1.66-1.68 s -> 0.82-0.98 s.  Warm, float16 rows
    of 4 or 8 under 64 rows run about 0.5 us (1.12x) slower a call than in
    the literal kernel's scalar tail; float32 and int32 run as fast.
    """
    few = rows < SHORT_VEC_STEP and run not in (2, 3)
    return _kernel_named("short_serial" if few else SHORT_KERNELS.get(run, "short_serial"))


#: Most outputs per parallel task of the short-row kernel.
SHORT_TASK = 1 << 14


def _parts_partial(buf, p, tok, o, lo, hi):
    """Both parts' states of complex output ``o`` over flat reduced indices [lo, hi): ``(oo, ar, br, ai, bi)``.

    Runs of contiguous values are read once for both parts, every second
    value in one pass too; strided values are summed part by part.  The
    token says which of these the plan needs (plan.Plan.run_step, see
    numerics.run_token), so each first call compiles only its own loops:
    a cold first complex128 (64, 64)[:, ::3] mean over axis 1 took 3.4 s
    when every plan compiled all three, 2.9 s with the strided loops alone
    (and [:, ::2] 3.5 s, 1.0 s with the pair loop alone).
    Exact and scaled reads (their tokens keep rank 1 for any plan) take
    all three.
    """


def _parts_pairs(buf, p, tok, o, lo, hi):
    # every second complex value, one run: still one pass
    off, oo = _kept_offsets(p, o, True)  # the innermost kept dim is the part
    ar, br, ai, bi = run_parts_step2(buf, off + 4 * lo, hi - lo, tok)
    return oo, ar, br, ai, bi


def _parts_strided(buf, p, tok, o, lo, hi):
    if p[3] > 1:  # several reduced dims: pieces of runs, as contiguous ones
        return _parts_runs_jit(buf, p, tok, o, lo, hi)
    off, oo = _kept_offsets(p, o, True)
    step = p[5 + 3 * p[2] + 1]  # one run: both parts in one pass
    ar, br, ai, bi = run_parts_strided(buf, off + lo * step, hi - lo, step, tok)
    return oo, ar, br, ai, bi


def _parts_runs(buf, p, tok, o, lo, hi):
    # one run of contiguous values, or pieces of runs over several reduced
    # dims, each piece's runs read once for both parts (run_parts_rows)
    off, oo = _kept_offsets(p, o, True)
    nr = p[3]
    if nr == 1:  # one run: no pieces to merge
        ar, br, ai, bi = run_parts(buf, off + 2 * lo, hi - lo, tok)
        return oo, ar, br, ai, bi
    rb = 5 + 3 * p[2]
    run = p[rb + 2 * (nr - 1)]
    step = p[rb + 2 * (nr - 1) + 1]
    e2 = p[rb + 2 * (nr - 2)]  # as in _inner_partial
    s2 = p[rb + 2 * (nr - 2) + 1]
    ar, br = zero_state(buf, tok)
    ai, bi = zero_state(buf, tok)
    f = lo
    while f < hi:
        start, m = _segment(p, off, f, hi, run, step, nr)
        k = 1
        if m == run:
            k = least(e2 - (f // run) % e2, (hi - f) // run)
        a2, b2, a3, b3 = run_parts_rows(buf, start, m, step, k, s2, tok)
        ar, br = merge(ar, br, a2, b2, tok)
        ai, bi = merge(ai, bi, a3, b3, tok)
        f += k * m
    return oo, ar, br, ai, bi


_parts_pairs_jit = njit(**_HELPER)(_parts_pairs)
_parts_strided_jit = njit(**_HELPER)(_parts_strided)
_parts_runs_jit = njit(**_HELPER)(_parts_runs)


def _parts_any(buf, p, tok, o, lo, hi):
    nr = p[3]
    step = p[5 + 3 * p[2] + 2 * (nr - 1) + 1]
    if step == 4 and nr == 1:
        return _parts_pairs_jit(buf, p, tok, o, lo, hi)
    if step != 2:
        return _parts_strided_jit(buf, p, tok, o, lo, hi)
    return _parts_runs_jit(buf, p, tok, o, lo, hi)


@overload(_parts_partial, jit_options={"cache": True, "no_cfunc_wrapper": True})
def _parts_partial_impl(buf, p, tok, o, lo, hi):
    if tok.ndim == 2:  # contiguous values (run_step 1)
        return _parts_runs
    if tok.ndim == 3:  # every second value, one run (run_step 2)
        return _parts_pairs
    if isinstance(tok.dtype, types.Integer) and tok.dtype.signed:  # a plain read: strided
        return _parts_strided
    return _parts_any


@njit(**_JIT)
def parts_serial(buf, p, out, tok, lo, hi):
    """Complex outputs [lo, hi) of rows of contiguous values, or of one such run.

    The loop body is the run sum and the stores, with no helper call per
    output (see rows_serial).  Other complex plans of the parts family
    (strided values, several reduced dims) take :func:`parts_general`,
    so these, the common ones, do not compile its loops: a cold first mean
    of a complex128 (8, 8) array took 4.1-4.5 s when one kernel held both,
    0.7 s since.
    See launch.parts_kernels.
    """
    bad = 0
    sk, ok = (p[6], p[7]) if p[2] == 2 else (np.int64(0), np.int64(0))
    for o in range(lo, hi):
        ar, br, ai, bi = run_parts(buf, p[0] + o * sk, p[1], tok)
        bad += store(out, o * ok, ar, br, p[1], tok)
        bad += store(out, o * ok + 1, ai, bi, p[1], tok)
    return bad


@njit(**_JIT)
def parts_general(buf, p, out, tok, lo, hi):
    """Complex outputs [lo, hi) of any parts plan: both parts of each in turn."""
    bad = 0
    for o in range(lo, hi):
        oo, ar, br, ai, bi = _parts_partial(buf, p, tok, o, _ZERO, p[1])
        bad += store(out, oo, ar, br, p[1], tok)
        bad += store(out, oo + 1, ai, bi, p[1], tok)
    return bad


def _parts_run(buf, off, n, step, tok):
    """Both parts' states of the run of ``n`` complex values from ``off``, ``step`` floats apart.

    The token's loop only (see _parts_partial), but for exact and scaled
    reads, whose tokens keep rank 1 for any plan: all three.
    """


@overload(_parts_run, jit_options={"cache": True, "no_cfunc_wrapper": True})
def _parts_run_impl(buf, off, n, step, tok):
    if tok.ndim == 2:  # contiguous values (run_step 1)
        return lambda buf, off, n, step, tok: run_parts(buf, off, n, tok)
    if tok.ndim == 3:  # every second value, one run (run_step 2)
        return lambda buf, off, n, step, tok: run_parts_step2(buf, off, n, tok)
    if isinstance(tok.dtype, types.Integer) and tok.dtype.signed:  # a plain read: strided
        return lambda buf, off, n, step, tok: run_parts_strided(buf, off, n, step, tok)

    def any_step(buf, off, n, step, tok):
        if step == 2:
            return run_parts(buf, off, n, tok)
        if step == 4:
            return run_parts_step2(buf, off, n, tok)
        return run_parts_strided(buf, off, n, step, tok)

    return any_step


@njit(**_JIT)
def parts_nested(buf, p, out, tok, lo, hi):
    """Complex outputs [lo, hi) of a parts plan of one reduced dim and kept dims besides the part.

    As rows_nested: the runs along the innermost kept dim other than the
    part in one loop per offset of the outer ones, not parts_general's
    helpers for every output, which cost about 40 ns an output: complex64
    (54, 11, 11, 4) of every third value over the last axis took 1.9x
    numpy's time there.  Contiguous rows of one kept dim keep parts_serial.
    """
    kb = 5 + 3 * (p[2] - 2)  # the innermost kept dim but the part
    e = p[kb]
    sk = p[kb + 1]
    ok = p[kb + 2]
    n = p[kb + 6]
    step = p[kb + 7]
    bad = 0
    o = np.int64(lo)  # see _kept_offsets
    while o < hi:
        q = o // e
        i = o - q * e
        m = least(e - i, hi - o)
        off, oo = _kept_offsets(p, q, 2)
        for j in range(i, i + m):
            ar, br, ai, bi = _parts_run(buf, off + j * sk, n, step, tok)
            bad += store(out, oo + j * ok, ar, br, n, tok)
            bad += store(out, oo + j * ok + 1, ai, bi, n, tok)
        o += m
    return bad


@njit(**_HELPER)
def parts_pieces(buf, p, pa, pb, tok, chunks, lo, hi):
    """Partial states of pieces [lo, hi) of complex outputs, as inner_pieces: both parts.

    States go to ``pa``/``pb`` laid out [chunk][output][part] (see parts_merge).
    """
    nout = p[4] // 2
    n = p[1]
    for u in range(lo, hi):
        o = u // chunks
        c = u - o * chunks
        i = 2 * (c * nout + o)
        oo, pa[i], pb[i], pa[i + 1], pb[i + 1] = _parts_partial(
            buf, p, tok, o, n * c // chunks, n * (c + 1) // chunks)
    return _ZERO


@njit(**_HELPER)
def parts_run_pieces(buf, p, pa, pb, tok, chunks, lo, hi):
    """:func:`parts_pieces` for the plans of :func:`parts_serial`: pieces of contiguous runs.

    Without _parts_partial's strided and multi-dim loops (see parts_serial).
    """
    nout = p[4] // 2
    n = p[1]
    sk = p[6] if p[2] == 2 else np.int64(0)
    for u in range(lo, hi):
        o = u // chunks
        c = u - o * chunks
        c0 = n * c // chunks
        i = 2 * (c * nout + o)
        pa[i], pb[i], pa[i + 1], pb[i + 1] = run_parts(
            buf, p[0] + o * sk + 2 * c0, n * (c + 1) // chunks - c0, tok)
    return _ZERO


@njit(**_HELPER)
def parts_merge(pa, pb, out, p, chunks, tok, lo, hi):
    """Parts [lo, hi) of complex outputs: merge their partial states (see parts_pieces), store."""
    n = p[1]
    bad = 0
    for i in range(lo, hi):
        a = pa[i]
        b = pb[i]
        for c in range(1, chunks):
            a, b = merge(a, b, pa[c * p[4] + i], pb[c * p[4] + i], tok)
        src, dst = _kept_offsets(p, i // 2, True)
        bad += store(out, dst + i % 2, a, b, n, tok)
    return bad


def _runs_at(buf, p, pa, pb, tok, base, roff0, roff1, across, run, step, nout):
    """interleaved_pieces' runs at outer reduced offset ``roff0``, every output's in turn,
    and with ``across`` every output's at ``roff1`` too.

    Each run's state is merged into its output's piece state, from ``base``.
    Contiguous runs (a rank-2 token), or runs of every second value read
    forwards (rank 3), of the types numerics.pair_sum serves go two at a
    time, as rows do in _row_pairs: at one offset, output ``o``'s with
    output ``o + h``'s (an odd last one with itself); at two (see
    launch.pairs_across), each output's two runs together.  Every second
    value in pairs, on two threads: (16, 256, 56, 112)[..., ::2] over (0,
    2, 3) from memory in 0.80-0.93x the time of one run at a time, (1001,
    3, 8198)[..., ::2] over (0, 2) 0.84-0.97x (bfloat16 1.01-1.05x), held
    in cache 0.75-0.96x.  One call site of the pair loop serves both ways:
    a second one cost a cold first call 0.2-0.5 s more.
    """


@overload(_runs_at, jit_options={"cache": True, "no_cfunc_wrapper": True})
def _runs_at_impl(buf, p, pa, pb, tok, base, roff0, roff1, across, run, step, nout):
    if not (tok.ndim in (2, 3) and has_pair_sum(buf, tok)):
        def each(buf, p, pa, pb, tok, base, roff0, roff1, across, run, step, nout):
            for o in range(nout):
                src, dst = _kept_offsets(p, o, False)
                roff = roff0
                for _ in range(2 if across else 1):
                    a2, b2 = run_sum(buf, src + roff, run, step, tok)
                    pa[base + o], pb[base + o] = merge(pa[base + o], pb[base + o], a2, b2, tok)
                    roff = roff1
            return _ZERO

        return each

    def pairs(buf, p, pa, pb, tok, base, roff0, roff1, across, run, step, nout):
        # The runs are items: output k's at roff0 for k < nout, and with
        # across output k - nout's at roff1 for k >= nout, walked in pairs
        # h items apart (h is nout across, when it fits in PAIR_GAP): one
        # walk, no branch on ``across`` for LLVM to unswitch the loop on,
        # which doubled the pair loop's code.
        d = _pair_gap(buf, run, tok)
        total = nout + nout * across
        b0, i, h = _pairs_start(_ZERO, total, d)
        jump = roff1 - roff0
        while b0 < total:
            lone = total - b0 == 1
            k0 = b0 + i
            k1 = k0 + h
            at0 = k0 >= nout  # (arithmetic, not branches: less for Numba to compile)
            at1 = k1 >= nout
            o0 = k0 - nout * at0
            o1 = k1 - nout * at1
            off0, _ = _kept_offsets(p, o0, False)
            off1, _ = _kept_offsets(p, o1, False)
            x0 = off0 + roff0 + jump * at0
            a0, c0, a1, c1 = pair_sum(buf, x0, x0 if lone else off1 + roff0 + jump * at1, run,
                                      tok)
            if not lone:
                k = base + o1
                pa[k], pb[k] = merge(pa[k], pb[k], a1, c1, tok)
            k = base + o0
            pa[k], pb[k] = merge(pa[k], pb[k], a0, c0, tok)
            b0, i, h = _pairs_next(b0, i, h, total, d)
        return _ZERO

    return pairs


@njit(**_HELPER)
def interleaved_pieces(buf, p, pa, pb, tok, chunks, d, lo, hi):
    """Partial states of pieces [lo, hi) of an inner plan with outer reduced dims (RKR).

    Piece ``c`` of ``chunks`` takes its share of the outer reduced range and,
    for each index, every output's run in turn, so a thread streams through
    memory instead of striding between outputs.  With ``d`` (not 0) each
    output's runs at two indices up to ``d`` apart go together instead
    (launch.pairs_across).  States go to ``pa``/``pb`` laid out
    [chunk][output] (see merge_outputs).
    """
    nout = p[4]
    nr = p[3]
    rb = 5 + 3 * p[2]
    run = p[rb + 2 * (nr - 1)]
    step = p[rb + 2 * (nr - 1) + 1]
    nro = p[1] // run
    for c in range(lo, hi):
        base = c * nout
        r0 = nro * c // chunks
        r1 = nro * (c + 1) // chunks
        # the walk of _pairs_start and _pairs_next, written out: inlined
        # helpers are compiled again at each call site (d 0: h 0, each
        # index alone)
        b0 = r0
        i = _ZERO
        h = least(d, (r1 - r0) // 2)
        while b0 < r1:
            ro = b0 + i
            _runs_at(buf, p, pa, pb, tok, base, _reduced_offset(p, ro, nr - 1),
                     _reduced_offset(p, ro + h, nr - 1), h != 0, run, step, nout)
            i += 1
            if h == 0:
                b0 += 1
                i = _ZERO
            elif i == h:
                b0 += 2 * h
                i = _ZERO
                h = least(d, (r1 - b0) // 2)
    return _ZERO


@njit(**_JIT)
def interleaved_serial(buf, p, out, tok, d):
    """Every output of an inner plan with outer reduced dims (RKR), in memory order, on one thread.

    :func:`interleaved_pieces` as a single piece, then each output's state
    stored (launch.serial_kernel, from launch.INTERLEAVE_SERIAL_BYTES).
    inner_two and inner_serial sum one output's runs after another's, so
    they cross the whole input once per output, a run at a time.
    """
    nout = p[4]
    pa, pb = state_arrays(nout, buf, tok)
    interleaved_pieces(buf, p, pa, pb, tok, 1, d, _ZERO, 1)
    return merge_outputs(pa, pb, out, p, 1, tok, _ZERO, nout)


@njit(**_HELPER)
def _merge_store(pa, pb, out, p, o, chunks, tok):
    """Merge output ``o``'s partial states laid out [chunk][output] and store the mean."""
    o = np.int64(o)
    nout = p[4]
    a = pa[o]
    b = pb[o]
    for c in range(1, chunks):
        a, b = merge(a, b, pa[c * nout + o], pb[c * nout + o], tok)
    src, dst = _kept_offsets(p, o, False)
    return store(out, dst, a, b, p[1], tok)


@njit(**_HELPER)
def outer_block(buf, p, tok, sa, sb, ta, tb, off, width, step, lo, hi):
    """Add reduced rows [lo, hi) of ``width`` columns starting at ``off`` into ``sa``/``sb``.

    ``ta``/``tb`` are room for the states of a superset of the columns (see
    below, and numerics.superset_arrays).

    The column kernels call it through its address (see
    :func:`reducemean.tasks.call_task`), so its loops are optimised and
    emitted once, in its own library, rather than again in each caller's:
    a cold process whose first call reduces (1024, 1024) float32 over axis
    0 ran 7% fewer instructions (callgrind).  Returns 0.

    Wide rows are taken eight at a time, so each state is loaded and stored
    once per eight values: a block's states fill L2, and their traffic, not
    memory, bounded the 16-bit, int32 and float64 loops at four.  One loop
    serves every stride (LLVM versions it for unit stride): each vectorised
    loop variant adds about 0.4 s to the first cold call's compile, and a
    separate four-row loop for strided rows measured no faster.  The last
    few rows go one at a time.
    Narrow rows (under NARROW columns, 2 * NARROW for 16-bit types) are
    read eight a pass too, an eighth of the block apart, each the next row
    of its own eighth: eight adjacent narrow rows read 1.5-1.9x slower than
    one at a time from memory (short interleaved streams defeat the
    hardware prefetcher), eight separate streams no slower.  One row at a
    time, which blocks past L2 of many units (NHWC's) took before, costs
    every value a load and a store of its column's state, and of its bound
    for the narrow floats (numerics.col_add): since the bound, eight
    streams measured 1.25-1.8x faster from memory on two threads (NHWC
    over (1, 2), (32, 56, 56, 256) and (16, 112, 112, 128): float32,
    float16, bfloat16; int32 0.82-1.1x), 16-bit blocks held in cache
    1.15-1.85x, float32, float64 and uint8 the same, int32 blocks of 1-4
    MiB in cache 1.04-1.09x slower (old and new alternating).  Tall inputs
    of narrow rows (a few units) read eight streams already: one row at a
    time there ran at 8-30 GB/s, bound by each row's own loop overhead,
    and past 16 MiB a piece 2.5-23 GB/s.
    Wide rows that lie end to end, each under SPREAD_ROW bytes (a block of
    whole rows: NCHW over axis 1, tall 2-D inputs), take the eight streams
    too: eight adjacent rows restart the prefetchers at every pass, after
    a few KiB each.  (32, 256, 56, 56) over axis 1 from memory: float16
    1.09-1.12x, bfloat16 1.08x, float32 1.03-1.06x, int32 1.00-1.17x;
    smaller NCHW inputs (float32, int32) 1.18-1.45x; tall 2-D inputs of
    2-16 KiB rows 0.94-1.51x, mostly faster; held in cache 0.91-1.06x.  Not
    for 8-byte types: float64's compensated loop, bound more by its adders,
    measured 0.88-1.07x, and 0.91x twice on (65536, 1024).
    Columns of every second value (a ``[..., ::2]`` view) of types other
    than 16-bit are summed as the 2 * width - 1 contiguous columns they
    span (all within the view's span), into states of this call's own
    (numerics.superset_columns), and every second state copied to
    ``sa``/``sb`` (the callers' are zero): memory delivers the whole lines
    anyway, and the unit-stride loop beat the strided one by more than the
    doubled adds cost.  (256, 512)[:, ::2] over axis 0, held in cache:
    float32 1.77x, float64 1.31x, int32 2.52x, int64 1.85x, uint8 2.49x;
    (4096, 32768)[:, ::2] from memory: float32 1.06x, float64 1.30x, int32
    1.78x, uint8 3.07x.  The 16-bit types keep their constant-stride loop
    (numerics.step2_columns), which read 1.1-1.25x faster than the
    superset from memory.  The first cold column call of any plan compiles
    3% more instructions for this.
    Groups of columns (plan run_step 4, plan.Plan.group) are summed the
    same way, as the columns from the first group's first to the last
    group's last, each group's states kept (numerics.superset_columns):
    both parts of every second complex column (storage columns 0, 1, 4,
    5, ...) and narrow crops of the last axis.  Before, each part was a
    block of its own, read with a stride of four: complex128 (256, 512)[:,
    ::2] over axis 0 2.6x faster, complex64 1.9x; from memory 1.8-2.2x.
    Each group was a block of its own too: nothing to vectorise across,
    (18, 144, 22)[..., :7] over axis 0 2.1-2.7x faster held in cache.
    """
    keep_a, keep_b, keep_width, keep_step = sa, sb, width, step
    one = opaque_one()  # for col_add8's fused adds
    group = p[5 + 3 * p[2] + 2 * p[3]]  # plan.Plan.group
    sa, sb, width, step = superset_columns(sa, sb, ta, tb, width, step, group, buf, tok)
    nr = p[3]
    rs = p[6 + 3 * p[2]] if nr == 1 else 0  # the row stride of one reduced dim
    q = adv = 1
    passes = (hi - lo) // 8
    if width < (2 * NARROW if is_16bit(buf) else NARROW) or (
            buf.itemsize <= 4 and step == 1 and rs == width and width * buf.itemsize < SPREAD_ROW):
        q = passes  # eight streams, an eighth of the rows apart
    else:
        adv = 8  # eight adjacent wide rows
    for i in range(passes):
        f = lo + i * adv
        if nr == 1:  # a pass's eight row offsets without eight calls (see below)
            r0 = off + f * rs
            d = q * rs
            r1 = r0 + d
            r2 = r1 + d
            r3 = r2 + d
            r4 = r3 + d
            r5 = r4 + d
            r6 = r5 + d
            r7 = r6 + d
        else:
            r0 = off + _reduced_offset(p, f, nr)
            r1 = off + _reduced_offset(p, f + q, nr)
            r2 = off + _reduced_offset(p, f + 2 * q, nr)
            r3 = off + _reduced_offset(p, f + 3 * q, nr)
            r4 = off + _reduced_offset(p, f + 4 * q, nr)
            r5 = off + _reduced_offset(p, f + 5 * q, nr)
            r6 = off + _reduced_offset(p, f + 6 * q, nr)
            r7 = off + _reduced_offset(p, f + 7 * q, nr)
        if step == 2 and step2_columns(buf, tok):
            # a [..., ::2] view of 16-bit values: with a constant stride
            # LLVM loads whole vectors instead of gathering (about 6x faster
            # from memory); other types sum the columns their view spans
            # instead (see above)
            for j in range(width):
                js = 2 * j
                col_add8(sa, sb, j, buf, np.uint64(r0 + js), np.uint64(r1 + js),
                         np.uint64(r2 + js), np.uint64(r3 + js), np.uint64(r4 + js),
                         np.uint64(r5 + js), np.uint64(r6 + js), np.uint64(r7 + js), tok, one)
        else:
            for j in range(width):
                js = j * step
                col_add8(sa, sb, j, buf, np.uint64(r0 + js), np.uint64(r1 + js),
                         np.uint64(r2 + js), np.uint64(r3 + js), np.uint64(r4 + js),
                         np.uint64(r5 + js), np.uint64(r6 + js), np.uint64(r7 + js), tok, one)
    f = lo + 8 * passes
    # One reduced dim (as NHWC's, merged): its stride, not a call for every
    # row.  The call, and the vzeroupper before it, cost NHWC over (1, 2)
    # 1.0-1.2x at 256 channels and 1.2-2x at 64.  The passes above do the
    # same for one reduced dim: their eight calls were most of the time of
    # narrow blocks of few rows at many outer offsets (float32 (18, 144,
    # 22)[..., :7] over axis 0: 1.5x faster without them, int32 and int64
    # 1.5-2.5x, float64 1.2-1.5x).  Several reduced dims keep the calls:
    # inlined, the first cold column call compiled 3.3% more instructions
    # (this loop's, 1.0%).  So does any walk of two dims' rows without
    # them, each tried on its own (kept across passes, worked out per pass
    # in line, by one helper, or in a second kernel chosen by the type of
    # ``p``): 2-3.4x faster for summed short runs over two reduced dims,
    # but 7-12% more instructions for every cold column call.
    while f < hi:
        row = off + (f * rs if nr == 1 else _reduced_offset(p, f, nr))
        if step == 2 and step2_columns(buf, tok):
            for j in range(width):
                col_add(sa, sb, j, buf, np.uint64(row + 2 * j), tok)
        else:
            for j in range(width):
                col_add(sa, sb, j, buf, np.uint64(row + j * step), tok)
        f += 1
    # The superset's unit step, not its width, marks it: a last block of
    # one column spans one column.
    if step != keep_step:  # the view's states to the callers' (which are zero)
        superset_keep(keep_a, keep_b, sa, sb, keep_width, keep_step, group, buf, tok)
    return _ZERO


@njit(**_HELPER)
def _outer_geometry(p, block):
    """An outer plan's columns, their stride, output stride, blocks, outer offsets and group.

    For groups of columns (plan.Plan.group > 1) the stride is the groups':
    a block's first column ``j0`` starts a group (launch.block_width), at
    ``j0 // group * stride``.
    """
    nk = p[2]
    inner = 5 + 3 * (nk - 1)
    ncols = p[inner]
    nblocks = (ncols + block - 1) // block
    return ncols, p[inner + 1], p[inner + 2], nblocks, p[4] // ncols, p[5 + 3 * nk + 2 * p[3]]


@njit(**_JIT)
def outer_serial(buf, p, out, tok, block, blk, u0, u1):
    """Units [u0, u1): each a block of ``block`` columns at one outer kept offset.

    ``blk`` is the address of :func:`outer_block` compiled for these types
    (``launch.block_task``).
    """
    ncols, step, ostep, nblocks, nko, group = _outer_geometry(p, block)
    bad = 0
    # one pair of state arrays for every unit, zeroed again after each: an
    # allocation per unit cost most of the time of narrow blocks of few rows
    fa0, fb0 = state_arrays(least(block, ncols), buf, tok)
    ta0, tb0 = superset_arrays(fa0, fb0, least(block, ncols), step, group, buf, tok)
    # the task's arrays borrowed: no reference counts per unit (tasks.borrow)
    bufv, pv, tokv, outv = borrow(buf), borrow(p), borrow(tok), borrow(out)
    fa, fb, ta, tb = borrow(fa0), borrow(fb0), borrow(ta0), borrow(tb0)
    for u in range(u0, u1):
        ko = u // nblocks
        j0 = (u - ko * nblocks) * block
        width = least(block, ncols - j0)
        off, oo = _kept_offsets(p, ko, True)
        sa = fa[:width]
        sb = fb[:width]
        if group > 1:
            off += j0 // group * step
        else:
            off += j0 * step
        call_task(blk, (bufv, pv, tokv, sa, sb, ta, tb, off, width, step), _ZERO, p[1])
        bad += store_block(outv, oo + j0 * ostep, ostep, sa, sb, p[1], tokv)
        if u + 1 < u1:
            for j in range(width):
                sa[j] = 0
                sb[j] = 0
    keep((fa0, fb0, ta0, tb0))
    return bad


@njit(**_HELPER)
def outer_pieces(buf, p, pa, pb, tok, block, chunks, blk, lo, hi):
    """Partial states of pieces [lo, hi): each unit's reduced rows cut ``chunks`` ways.

    Piece ``v`` is part ``v // units`` of unit ``v % units`` (see
    outer_serial, and it for ``blk``).  States go to ``pa``/``pb`` laid out
    [chunk][output] (see outer_merge).
    """
    ncols, step, ostep, nblocks, nko, group = _outer_geometry(p, block)
    n = p[1]
    units = nko * nblocks
    nout = p[4]
    ta, tb = superset_arrays(pa, pb, least(block, ncols), step, group, buf, tok)
    for v in range(lo, hi):
        c = v // units
        u = v - c * units
        ko = u // nblocks
        j0 = (u - ko * nblocks) * block
        width = least(block, ncols - j0)
        src, dst = _kept_offsets(p, ko, True)
        base = c * nout + ko * ncols + j0
        call_task(blk, (buf, p, tok, pa[base:base + width], pb[base:base + width], ta, tb,
                        src + (j0 // group * step if group > 1 else j0 * step), width, step),
                  n * c // chunks, n * (c + 1) // chunks)
    return _ZERO


@njit(**_HELPER)
def outer_merge(pa, pb, out, p, block, chunks, tok, lo, hi):
    """Units [lo, hi): merge their columns' partial states (see outer_pieces), store the means.

    One function, not a helper per unit: a helper is a library of its own
    that Numba optimises and emits again here (a cold process whose first
    call is a float64 column split ran 2.5% fewer instructions).
    """
    ncols, step, ostep, nblocks, nko, group = _outer_geometry(p, block)
    nout = p[4]
    bad = 0
    for u in range(lo, hi):
        ko = u // nblocks
        j0 = (u - ko * nblocks) * block
        width = least(block, ncols - j0)
        src, oo = _kept_offsets(p, ko, True)
        i0 = ko * ncols + j0
        for i in range(i0, i0 + width):  # into the first piece's states
            a = pa[i]
            b = pb[i]
            for c in range(1, chunks):
                a, b = merge(a, b, pa[c * nout + i], pb[c * nout + i], tok)
            pa[i] = a
            pb[i] = b
        bad += store_block(out, oo + j0 * ostep, ostep, pa[i0:i0 + width], pb[i0:i0 + width],
                           p[1], tok)
    return bad


@njit(**_JIT)
def merge_states(acc, other, tok):
    """``acc[i] = merge(acc[i], other[i])`` for (n, 2) state arrays."""
    for i in range(acc.shape[0]):
        acc[i, 0], acc[i, 1] = merge(acc[i, 0], acc[i, 1], other[i, 0], other[i, 1], tok)


@njit(**_JIT)
def merge_columns(acc, states, pairs, tok):
    """``acc[i] = merge(acc[i], states[j])`` for each ``(j, i)`` of ``pairs`` (2, n) in turn."""
    for q in range(pairs.shape[1]):
        j = pairs[0, q]
        i = pairs[1, q]
        acc[i, 0], acc[i, 1] = merge(acc[i, 0], acc[i, 1], states[j, 0], states[j, 1], tok)


@njit(**_JIT)
def finish_states(states, n, out, tok):
    """Means of (m, 2) states over ``n`` values each, into ``out`` (m,)."""
    bad = 0
    for i in range(states.shape[0]):
        bad += store(out, i, states[i, 0], states[i, 1], n, tok)
    return bad


@njit(**_JIT)
def finish_states_counts(states, counts, out, tok):
    """Means of (m, 2) states over ``counts[i]`` values each (0 gives NaN via 0/0)."""
    bad = 0
    for i in range(states.shape[0]):
        bad += store(out, i, states[i, 0], states[i, 1], counts[i], tok)
    return bad


adopt(globals())  # load cached kernels without readying Numba's compiler
