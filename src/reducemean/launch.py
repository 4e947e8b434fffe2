"""When and how a kernel runs in parallel: the one place that touches threads.

Numba's threading layers are not all safe to enter from several Python
threads at once (``workqueue`` aborts the process) or after ``fork`` (GNU
OpenMP hangs the child).  reducemean is safe on every layer by one rule:

* at most one parallel kernel of ours runs at a time: a launch takes a lock
  without waiting, and a caller that finds it taken runs the serial kernel
  on its own thread instead (so N threads use N + threads-1 cores at most,
  never a second thread pool);
* a process made by ``fork`` runs serial kernels only, since its parent's
  thread pool did not survive the fork;
* :func:`serial_only` makes the calling thread use serial kernels, for
  callers that already run one task per core (dask's threaded scheduler).

Inputs smaller than :data:`PARALLEL_MIN` elements (half that for float64,
whose compensated sums cost twice as much per element, and half again for
values not read one after another: plan.Plan.weight) run serially:
starting the pool costs more than it saves.
"""

from __future__ import annotations

import contextlib
import os
import threading

import numba
import numpy as np

from . import kernels, tasks
from .numerics import (
    PAIR_BLOCK, pairs_runs, run_token, short_vec_reads, small_sums_token, state_dtype,
)
from .plan import SHORT_RUN, reduced_outside
from .valuetypes import typeof

#: Work, in elements read (plan.Plan.weight) times the dispatch entry's cost
#: (2 for float64, 1 otherwise), below which a reduction runs on the calling
#: thread.  Measured
#: by ``python -m reducemean.bench.threshold`` (the crossover where two
#: threads first beat one on whole, rows and columns, float32 and float64,
#: rounded up to a power of two); change it with set_parallel_min.
PARALLEL_MIN = 1 << 18

#: Called when PARALLEL_MIN changes, to drop decisions memoised on it.
_ON_CHANGE: list = []


def set_parallel_min(elements):
    """Set :data:`PARALLEL_MIN` and forget every serial/parallel choice made so far."""
    global PARALLEL_MIN
    PARALLEL_MIN = int(elements)
    for forget in _ON_CHANGE:
        forget()


def block_width(ncols, group=1):
    """Outputs an ``outer`` kernel accumulates together (see kernels.MAX_BLOCK).

    A whole number of ``group``s (plan.Plan.group): a block starts at a group.
    """
    return min(ncols, kernels.MAX_BLOCK - kernels.MAX_BLOCK % group)


def column_units(plan, block):
    """An ``outer`` plan's units of work: blocks of ``block`` columns, at every outer kept offset."""
    ncols = plan.kept[-1][0]
    return (plan.nout // ncols) * -(-ncols // block)


_lock = threading.Lock()
_forked = False
_local = threading.local()


def _after_fork_in_child():
    global _lock, _forked
    _lock = threading.Lock()  # a lock held by a parent thread would never be released
    _forked = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@contextlib.contextmanager
def serial_only():
    """Run reducemean's kernels on the calling thread only, inside the block."""
    prev = getattr(_local, "serial", False)
    _local.serial = True
    try:
        yield
    finally:
        _local.serial = prev


def run(plan, buf, out, tok, cost=1):
    """Reduce ``buf`` into ``out`` by ``plan``, in parallel when it pays and is safe.

    Parallel when ``plan.weight * cost`` reaches :data:`PARALLEL_MIN`
    (``cost``: the dispatch entry's work per element).

    Returns the number of float outputs (or states) that are not finite.
    """
    plan, tok = resolve(plan, tok, buf.dtype)
    if plan.weight * cost >= PARALLEL_MIN:
        bad = _in_parallel(lambda threads: parallel_call(plan, buf, out, tok, threads),
                           buf, out, tok)
        if bad is not None:
            return bad
    kernel, extra = serial_kernel(plan, buf, tok)
    return kernel(buf, plan.params, out, tok, *extra)


def _in_parallel(call_for, buf, out, tok):
    """``call_for(threads)(buf, out, tok)`` when a parallel kernel may run now, else None.

    Not in a forked child, nor under :func:`serial_only`, nor with one
    thread, nor while another parallel kernel of ours holds the lock.
    """
    if _forked or getattr(_local, "serial", False):
        return None
    threads = num_threads()
    if threads < 2 or not _lock.acquire(blocking=False):
        return None
    try:
        return call_for(threads)(buf, out, tok)
    finally:
        _lock.release()


def direct(plan, serial, cost=1):
    """A kernel for repeated calls of ``plan`` with arguments of fixed types.

    ``serial`` is ``plan``'s serial kernel (or its compiled entry point),
    called as ``serial(buf, plan.params, out, tok, *extra)``; ``plan`` and
    ``tok`` as :func:`resolve` gives them.  Below :data:`PARALLEL_MIN` that
    is the kernel.  Above it, the kernel returned takes the same arguments
    and runs in parallel when :func:`run` would, with the parallel call
    prepared once per number of threads rather than looked up per call
    (:func:`parallel_call`'s key takes about 1 us to build, a fifth of a
    parallel call's own cost).  The caller's memo key must fix the types of
    ``buf``, ``out`` and ``tok``.
    """
    if plan.weight * cost < PARALLEL_MIN:
        return serial
    calls = {}  # threads -> prepared call; the arrays' types are the caller's to fix

    def kern(buf, p, out, tok, *extra):
        def call_for(threads):
            call = calls.get(threads)
            if call is None:
                call = calls[threads] = _prepare(plan, buf, out, tok, threads)
            return call

        bad = _in_parallel(call_for, buf, out, tok)
        return serial(buf, p, out, tok, *extra) if bad is None else bad

    return kern


def prepare(plan, buf, out, tok, cost=1):
    """``(kernel, params, tok, extra)`` for repeated ``kernel(buf, params, out, tok, *extra)``.

    The kernel is :func:`direct`'s, through the compiled entry point of
    the serial kernel for the types of ``buf``, ``out`` and ``tok`` (see
    :func:`compiled`), which the caller's memo key must fix; ``params`` and
    ``tok`` are the resolved plan's (:func:`resolve`).
    """
    plan, tok = resolve(plan, tok, buf.dtype)
    kernel, extra = serial_kernel(plan, buf, tok)
    kern = direct(plan, compiled(kernel, (buf, plan.params, out, tok) + extra), cost)
    return kern, plan.params, tok, extra


def compiled(kernel, args):
    """``kernel``'s compiled entry point for ``args``' exact Numba types, else ``kernel``.

    Calling the entry point skips Numba's per-call type dispatch (about a
    third of a small call).  It does no type checks of its own, so it is only
    used for calls whose types the memo key fixes: dtype, ndim, layout,
    alignment.  Whether an input is read-only does not matter to a kernel
    that only reads it.
    """
    try:
        return kernel.overloads[tuple(typeof(x) for x in args)].entry_point
    except (KeyError, AttributeError):  # not compiled for these exact types
        return kernel


def resolve(plan, tok, storage):
    """The plan and reader token the kernels run for ``plan`` read with ``tok``.

    See :func:`plan_token`.  Groups of columns (every second complex column,
    narrow crops) read exactly or scaled take ``plan.fallback``: those
    tokens have no superset loop, so the groups' two dims stay apart.
    """
    given = tok
    tok = plan_token(plan, tok, storage)
    if plan.run_step == 4 and tok.ndim != 4:
        plan = plan.fallback
        tok = plan_token(plan, given, storage)
    return plan, tok


#: The C function behind numba.get_num_threads, once the pool has started.
_native_threads = None


def num_threads():
    """``numba.get_num_threads()`` (this thread's setting), starting the pool on first use.

    After the first call, straight through Numba's C function: 0.1 us
    rather than 0.7.
    """
    global _native_threads
    if _native_threads is None:
        n = numba.get_num_threads()  # starts the pool, which sets the C function up
        from numba.np.ufunc import parallel

        _native_threads = getattr(parallel, "_get_num_threads", None) or numba.get_num_threads
        return n
    return _native_threads()


def plan_token(plan, tok, storage):
    """The reader token the kernels get for ``plan`` over ``storage`` values.

    See numerics.small_sums_token and numerics.run_token.
    """
    tok = small_sums_token(tok, storage, plan.count)
    return run_token(tok, plan.run_step) if plan.run_step else tok


#: outer_block's address per storage type and token (see block_task).
_BLOCKS: dict = {}


def block_task(buf, p, tok):
    """The address of ``kernels.outer_block`` for the column kernels' ``blk``.

    Compiled for ``buf``, ``p`` and ``tok`` (or loaded from Numba's cache) on
    first use; the states it adds into are those of ``numerics.state_arrays``.
    """
    # Looked up on every column call off the direct path (16-bit small
    # inputs), so the quickest key that fixes the types: the storage dtypes
    # are numpy's own, the tokens module-level arrays; whether ``buf`` is
    # read-only does not change code that only reads it.
    key = (buf.dtype.num, buf.flags.aligned, id(tok))
    blk = _BLOCKS.get(key)
    if blk is None:
        sa, sb = _states(buf, tok, 1)
        blk = _BLOCKS[key] = tasks.address(
            kernels.outer_block, (buf, p, tok, sa, sb, sa, sb, 0, 0, 0))
    return blk


def _paired_whole(plan, buf, tok, pieces=1):
    """Whether a whole plan's one run, cut into ``pieces``, goes as pairs of blocks.

    Contiguous (a rank-2 ``tok``), of a type the pair loop serves
    (numerics.pairs_runs), and at least two PAIR_BLOCKs a piece: a shorter
    one would be halves anyway, and a small whole call then compiles no
    pair loop.
    """
    return (tok.ndim == 2 and pairs_runs(buf, tok)
            and plan.count * buf.itemsize >= 2 * PAIR_BLOCK * pieces)


def _runs_forward(plan, tok):
    """Whether a rank-3 token's runs (every second value, step 2 or -2) read forwards.

    The pair loops (numerics.pair_sum) read them so; the plan reads reduced
    dims forwards, so this holds, checked where a pair loop is chosen.
    Other tokens: True.
    """
    return tok.ndim != 3 or plan.reduced[-1][1] == 2


def row_kernel(plan, buf, tok):
    """The row loop for a plan of one reduced dim over ``buf`` read by ``tok``.

    ``whole_serial`` when it keeps no dim, ``rows_nested`` when it keeps
    several that do not merge (whose rows are never short: the plan gives
    those the column loop).  Strided rows under SHORT_RUN values take
    ``short_strided`` (contiguous ones one after another are the short
    family).  Contiguous rows apart keep ``rows_serial``, whose vector
    lanes read them 1.2-2.8x faster, and so do int64 and uint64 rows, whose
    run sum splits the values into halves faster than one value at a time
    (0.7-0.9x in short_strided).  Rows the pair loop serves
    (numerics.pairs_runs: contiguous plain float64, float32, 16-bit floats
    and int32; every second value of those with a vector step-2 loop) take
    the paired twins, ``rows_paired`` and ``rows_nested_paired``, and a
    contiguous whole run of at least two PAIR_BLOCKs ``whole_long``.
    Rows of every second value in pairs: (4096, 32768)[:, ::2] over axis 1
    from memory in 0.75-0.87x the time of one row at a time.
    """
    if not plan.kept:
        return kernels.whole_long if _paired_whole(plan, buf, tok) else kernels.whole_serial
    paired = pairs_runs(buf, tok) and _runs_forward(plan, tok)
    if len(plan.kept) > 1:
        return kernels.rows_nested_paired if paired else kernels.rows_nested
    if plan.count < SHORT_RUN and plan.run_step != 1 and not (
            buf.dtype.kind in "iu" and buf.dtype.itemsize == 8):
        return kernels.short_strided
    return kernels.rows_paired if paired else kernels.rows_serial


#: Contiguous runs shorter than this (a vector step of numerics._sum_unit_runs)
#: under two reduced dims take kernels.inner_two_short.
SHORT_RUNS = 16


def inner_kernel(plan):
    """The output loop for an inner plan of several reduced dims.

    ``inner_two`` for two (``inner_two_short`` where the runs are contiguous
    and under SHORT_RUNS values), ``inner_serial`` for more.  Apart, a first call
    of two reduced dims compiles no walk over pieces of runs.  Cold first
    float32 calls in fresh processes, before and after, alternating:
    (101, 3, 409) over (0, 2) 3.75-4.14 s -> 2.21-2.71 s, (32, 64,
    64)[..., ::2] over (0, 2) 4.39-4.92 s -> 3.29-3.87 s, an (8, 64, 56,
    56)[..., :28] crop over (2, 3) 3.01-4.09 s -> 2.42-2.59 s.
    """
    if len(plan.reduced) != 2:
        return kernels.inner_serial
    run, step = plan.reduced[-1]
    return kernels.inner_two_short if step == 1 and run < SHORT_RUNS else kernels.inner_two


def parts_kernels(plan):
    """A parts plan's serial kernel and its pieces for a split.

    Rows of contiguous complex values, or one such run, take
    ``kernels.parts_serial`` and ``parts_run_pieces``, which compile no
    loop for strided values or several reduced dims.  Other runs of one
    reduced dim take ``parts_nested``, a loop over rows per offset of the
    outer kept dims; several reduced dims ``parts_general``.
    """
    if len(plan.reduced) == 1:
        if len(plan.kept) <= 2 and plan.reduced[0][1] == 2:
            return kernels.parts_serial, kernels.parts_run_pieces
        if len(plan.kept) >= 2:
            return kernels.parts_nested, kernels.parts_pieces
    return kernels.parts_general, kernels.parts_pieces


def _family(plan, buf, tok):
    """``plan.family``, but rows of SHORT_RUN values or more (plan.SHORT_VEC_ROWS,
    SHORT_F64_ROWS) that ``tok``'s reads would not sum four rows to a vector
    (numerics.short_sums and short_sums_f64: a float32 mean in float64,
    ``dtype=np.float64``, or a second pass) are the row loop's, as other
    rows of those lengths are."""
    if plan.family == "short" and plan.count >= SHORT_RUN and not short_vec_reads(
            buf, tok, plan.count):
        return "inner"
    return plan.family


def serial_kernel(plan, buf, tok):
    """The serial kernel for ``plan`` over ``buf`` with token ``tok``, and its arguments after
    ``(buf, p, out, tok)``.

    The last two are the range of units the kernel covers: all of them
    (``kernels.interleaved_serial`` covers every output at once, and takes
    :func:`pairs_across`).
    """
    family = _family(plan, buf, tok)
    if family == "inner":
        if len(plan.reduced) == 1:
            return row_kernel(plan, buf, tok), (0, plan.nout)
        # the size first: this runs on every call a memo does not hold
        if plan.work * buf.itemsize >= INTERLEAVE_SERIAL_BYTES and _interleaves(plan, tok):
            return kernels.interleaved_serial, (pairs_across(plan, buf, tok),)
        return inner_kernel(plan), (0, plan.nout)
    if family == "short":
        return kernels.short_kernel(plan.count, plan.nout), (0, plan.nout)
    if plan.family == "parts":
        return parts_kernels(plan)[0], (0, plan.nout // 2)
    block = block_width(plan.kept[-1][0], plan.group)
    return kernels.outer_serial, (block, block_task(buf, plan.params, tok), 0,
                                  column_units(plan, block))


def _chunks(units, threads, count):
    """How many pieces to cut each unit's reduced range into, so every thread has work.

    At most ``threads`` pieces: partial states then take no more memory than
    the output times the number of threads.  Each piece has at least eight
    values per output, since the kernels merge the pieces on one thread.
    """
    if units >= 4 * threads:
        return 1
    want = -(-4 * threads // units)
    return max(1, min(want, threads, count // 8))


#: Input bytes up to which a single wide block of columns is cut into a
#: block per thread rather than the rows into pieces.  Held in cache, that
#: measured 1.15-1.4x faster ((200, 4096) float32, (64, 2048) float64).
#: From memory it measured 5-15% slower ((4096, 16384) float32 and float64,
#: (8192, 8192).T float32; medians of five alternating runs): each thread's
#: part rows restart the prefetchers at every row, where pieces of whole
#: rows are one contiguous stream per thread.
COLUMN_SPLIT_MAX = 4 << 20
#: Rows up to which a single wide block of columns is cut into a block per
#: thread at any size: the pieces of few rows each hold states for the
#: whole block, and their states' traffic and merge were no longer small
#: against the rows.  Old and new alternating, two threads, (r, 16384) over
#: axis 0 from 64 to 512 rows, time new / old: float32 0.77-0.91, float64
#: 0.60-0.93, int32 0.64, float16 0.75, bfloat16 0.81, complex128
#: 0.96-0.99; (512, 2048) and (256, 4096) float64 0.87-0.88, float32 and
#: int32 0.99-1.04.  At 768 to 2048 rows mixed, 0.76-1.13 (int32 (1024,
#: 4096) 1.10, (768, 1536) 1.13; float32 (768, 1536) 0.76), and (4096,
#: 16384) 0.97, (8192, 8192) float64 1.12.
COLUMN_SPLIT_ROWS = 512

#: Most outputs the interleaved (memory-order) inner kernel accumulates at once.
INTERLEAVE_MAX = 1 << 14
#: Input bytes from which an inner plan that interleaves (see _interleaves)
#: runs in memory order on one thread too (kernels.interleaved_serial), not
#: output after output.  One thread, float32 (n, 3, 4099) over (0, 2), the
#: output-major kernel's time over the interleaved one's: 0.72-0.76 at 0.2
#: MiB, 0.82-0.88 at 0.8 MiB, 1.04-1.11 at 3 MiB, 1.18-1.39 at 12 MiB,
#: 1.23-1.43 at 47 MiB; (32, 256, 56, 56) over (0, 2, 3) 1.37-1.44.
INTERLEAVE_SERIAL_BYTES = 4 << 20
#: Outputs from which the interleaved kernel's states are merged in parallel.
#: Merging takes about 22 ns an output on one thread, and starting the tasks
#: about 8 us.  Measured on (n, k, 64) float32 over (0, 2): 256 outputs took
#: 11 us either way, 4096 took 92 us serially and 48 us in tasks, so the
#: break-even is near 760 outputs.
MERGE_TASKS_MIN = 1 << 10


_I8 = np.dtype(np.int64)
_empty = np.empty
_zeros = np.zeros


def in_tasks(kernel, head, total, ntasks, typed_by):
    """``call(head)``: serial ``kernel(*head, lo, hi)`` over ranges of [0, total), in parallel.

    ``ntasks`` even ranges.  See :mod:`reducemean.tasks`.  ``head`` gives
    the types: each call's head must have the same.  ``typed_by``: the
    arrays in ``head`` whose types vary from plan to plan (tasks.bind).
    Here those are the input, the result and the token: the plan's params
    are always read-only int64, the other values ints, and partial states
    follow the input's and the token's dtypes.  A call returns the tasks'
    out-of-range count.
    """
    run = tasks.bind(kernels.tasks_parallel, kernel, head, typed_by=typed_by)

    def call(head):
        return run(head, total, _empty(ntasks, _I8))  # a count per task: see kernels.tasks_parallel

    return call


def _ranges(kernel, buf, p, out, tok, total, ntasks, *args):
    """``call(buf, out, tok)``: ``kernel(buf, p, out, tok, *args, lo, hi)`` in parallel tasks.

    ``ntasks`` even ranges of [0, total), each a call of the serial ``kernel``.
    """
    call = in_tasks(kernel, (buf, p, out, tok) + args, total, ntasks, (buf, out, tok))

    def ranges(buf, out, tok):
        return call((buf, p, out, tok) + args)

    return ranges


def _states(buf, tok, n):
    """Zeroed partial states for a split, ``n`` of each kind.

    ``n`` is the outputs times the pieces per output, at most the number of
    threads.
    """
    dt = state_dtype(buf, tok)
    return np.zeros(n, dt), np.zeros(n, dt)


#: Bytes of each of the two state arrays :func:`_scratch` keeps from call to
#: call.  A column split's states, the largest, are those of fewer than four
#: blocks of kernels.MAX_BLOCK columns a thread, times the threads (see
#: _chunks): under 2 MiB a kind on two threads.  Larger ones are made for
#: their call alone.
SCRATCH_MAX = 4 << 20
#: The scratch states' storage: [a, b], float64 (every state type is 8 bytes).
_SCRATCH = [np.empty(0), np.empty(0)]


def _scratch(dt, n):
    """Two zeroed arrays of ``n`` states of type ``dt`` for a parallel call's pieces.

    Made from storage kept from call to call, up to :data:`SCRATCH_MAX`
    bytes each.  Only a parallel call uses it, and those hold the launch
    lock, one at a time (see :func:`_in_parallel`), so no two calls share
    it.  Arrays of a MiB or more made fresh at every call were returned to
    the system when freed and faulted in again, a page at a time, by the
    next call: float32 (256, 65536) over axis 0 took 924 page faults a call
    and read 7.7 GB/s on two threads, against 11.5 GB/s on one.
    """
    if n * 8 > SCRATCH_MAX:
        return _zeros(n, dt), _zeros(n, dt)
    if _SCRATCH[0].size < n:
        _SCRATCH[:] = [_empty(n), _empty(n)]
    a = _SCRATCH[0][:n]
    b = _SCRATCH[1][:n]
    a.fill(0.0)
    b.fill(0.0)
    return a.view(dt), b.view(dt)


def _split(pieces, merge, buf, p, out, tok, nstates, args, total, margs, nmerge):
    """``call(buf, out, tok)``: a split reduction, in one call of kernels.pieces_then_merge.

    ``pieces(buf, p, pa, pb, tok, *args, lo, hi)`` over [0, total) in
    parallel, one task a piece, then ``merge(pa, pb, out, p, *margs, tok,
    0, nmerge)``, on ``nstates`` zeroed states of each kind (:func:`_scratch`).
    A call returns the merge's out-of-range count.
    """
    pa, pb = _states(buf, tok, 1)  # (for their type)
    run = tasks.bind(kernels.pieces_then_merge, pieces, (buf, p, pa, pb, tok) + args, merge,
                     (pa, pb, out, p) + margs + (tok,), typed_by=(buf, out, tok))
    dt = pa.dtype

    def split(buf, out, tok):
        pa, pb = _scratch(dt, nstates)
        return run((buf, p, pa, pb, tok) + args, (pa, pb, out, p) + margs + (tok,), total,
                   _empty(total, _I8), nmerge)

    return split


def _interleaves(plan, tok):
    """Whether ``plan``'s runs are read in memory order, every output's at each outer offset.

    Inner plans of runs of SHORT_RUN values or more with an outer reduced
    dim outside a kept one (see plan.reduced_outside), read forwards (the pair
    loops of kernels._runs_at), and at most INTERLEAVE_MAX outputs to hold.
    """
    return (plan.family == "inner" and len(plan.reduced) > 1 and plan.nout <= INTERLEAVE_MAX
            and plan.reduced[-1][0] >= SHORT_RUN and reduced_outside(plan.kept, plan.reduced)
            and _runs_forward(plan, tok))


def pairs_across(plan, buf, tok):
    """How many outer offsets apart kernels.interleaved_pieces pairs each output's runs (0: not).

    Where every output's run at one offset fits in kernels.PAIR_GAP bytes,
    pairing the runs of outputs at one offset (kernels._runs_at) reads two
    streams that run into each other, about as fast as one: (1001, 3,
    4099) over (0, 2) paired each offset's adjacent runs.  Each output's
    runs at two offsets go together instead, up to PAIR_GAP apart along the
    innermost outer reduced dim.  Two threads, from memory, old and new
    alternating, times faster: (1001, 3, 4099) over (0, 2) float32
    1.09-1.24, float64 1.05-1.10, int32 1.08-1.16, float16 1.26-1.35,
    bfloat16 1.20-1.32, every second value of (1001, 3, 8198) 1.04-1.08;
    (4096, 8, 512) float32 1.21-1.27; one thread 1.13-1.23.  A cold first
    call of such a plan compiles 12% more instructions (float32 (301, 3,
    4099) over (0, 2): 7.20 G -> 8.06 G).  Only where the pair loop serves
    the runs (numerics.pairs_runs).
    """
    if tok.ndim not in (2, 3) or not pairs_runs(buf, tok):
        return 0
    run, step = plan.reduced[-1]
    if plan.nout * run * abs(step) * buf.itemsize > kernels.PAIR_GAP:
        return 0
    return max(1, kernels.PAIR_GAP // max(1, abs(plan.reduced[-2][1]) * buf.itemsize))


#: Prepared parallel calls (see parallel_call), with the plan each was made for.
_PREPARED: dict = {}
_PREPARED_MAX = 1024


def parallel_call(plan, buf, out, tok, threads):
    """``call(buf, out, tok)``: ``plan`` in parallel on ``threads`` threads, for these types.

    Memoised on the plan and the arrays' dtypes, dims and flags (the plan is
    kept with its call, so its id stays its own).  See :func:`_prepare`.
    """
    key = (id(plan), threads, *tasks.kinds((buf, out, tok)))
    hit = _PREPARED.get(key)
    if hit is None:
        if len(_PREPARED) >= _PREPARED_MAX:
            _PREPARED.clear()
        hit = _PREPARED[key] = (plan, _prepare(plan, buf, out, tok, threads))
    return hit[1]


def _prepare(plan, buf, out, tok, threads):
    """Which parallel kernels run ``plan``, bound once: a function of ``(buf, out, tok)``.

    ``buf``, ``out`` and ``tok`` give the types, and later calls must pass
    arrays of the same.  The prepared call holds no array of theirs, so
    memoising it keeps no input alive.
    """
    p = plan.params
    family = _family(plan, buf, tok)
    if family == "short":
        return _ranges(kernels.short_kernel(plan.count, plan.nout), buf, p, out, tok, plan.nout,
                       -(-plan.nout // kernels.SHORT_TASK))
    if plan.family == "parts":
        chunks = _chunks(plan.nout // 2, threads, plan.count)
        serial, pieces = parts_kernels(plan)
        if chunks == 1:
            return _ranges(serial, buf, p, out, tok, plan.nout // 2, threads)
        return _split(pieces, kernels.parts_merge, buf, p, out, tok,
                      plan.nout * chunks, (chunks,), plan.nout // 2 * chunks, (chunks,),
                      plan.nout)
    # Runs under SHORT_RUN values (plan.RUNS_AS_ROWS_COLUMNS) go by ranges
    # of outputs: interleaved, a run sum and a state update every few values
    # took (600, 10, 10, 10) over (1, 3) 0.6-1.0 ms on two threads, 0.2-0.4
    # by outputs (float32, float64, int32, uint8, float16).
    if _interleaves(plan, tok):
        outer_runs = plan.count // plan.reduced[-1][0]
        if outer_runs >= threads:
            if plan.nout < MERGE_TASKS_MIN:
                return _split(kernels.interleaved_pieces, kernels.merge_outputs, buf, p, out,
                              tok, plan.nout * threads, (threads, pairs_across(plan, buf, tok)),
                              threads, (threads,), plan.nout)
            return _interleaved_then_merged(plan, buf, out, tok, threads)
    if family == "inner":
        chunks = _chunks(plan.nout, threads, plan.count)
        if chunks == 1 and plan.kept and len(plan.reduced) == 1:
            return _ranges(row_kernel(plan, buf, tok), buf, p, out, tok, plan.nout, threads)
        if chunks == 1:
            return _ranges(inner_kernel(plan), buf, p, out, tok, plan.nout, threads)
        # under 4 x threads outputs (see _chunks): the merge is short, and serial
        whole = not plan.kept and len(plan.reduced) == 1  # one run
        pieces = kernels.inner_pieces
        if whole:
            long = _paired_whole(plan, buf, tok, chunks)
            pieces = kernels.whole_long_pieces if long else kernels.whole_pieces
        return _split(pieces, kernels.merge_outputs, buf, p, out, tok,
                      plan.nout * chunks, (chunks,), plan.nout * chunks, (chunks,), plan.nout)
    ncols = plan.kept[-1][0]
    block = block_width(ncols, plan.group)
    units = column_units(plan, block)
    blk = block_task(buf, p, tok)
    few_rows = plan.work * buf.itemsize <= COLUMN_SPLIT_MAX or plan.count <= COLUMN_SPLIT_ROWS
    if few_rows and (units < threads and ncols >= threads * kernels.NARROW
                     or threads <= units < 4 * threads and plan.nout == ncols):
        # Too few blocks for each thread to take the same whole number (which
        # _chunks would cut into pieces of the rows): the same number of
        # narrower blocks for every thread instead, so no partial states to
        # allocate and merge on one thread.  Fewer blocks than threads, one
        # a thread, at least NARROW wide; two to seven blocks of one kept
        # dim on two threads, as many a thread (three blocks: four).  Old
        # and new alternating, two threads, (r, c) over axis 0 for c from
        # 32768 to 98304 (two to six blocks): up to 512 rows 0.64-0.99x the
        # time (float32, float64, int32, float16, bfloat16, uint8,
        # complex64), under 64 rows held in cache 0.21-0.95x ((16, 32768)
        # float32 0.23x).
        per = -(-units // threads)
        block = min(block, -(-ncols // (per * threads)))
        block += -block % plan.group  # whole groups (both parts of a complex column)
        units = column_units(plan, block)
        return _ranges(kernels.outer_serial, buf, p, out, tok, units, threads, block, blk)
    chunks = _chunks(units, threads, plan.count)
    if chunks == 1:
        # A task per thread, not per unit: each task allocates its states
        # (up to 1.25 MiB with a superset), and in some processes the
        # allocator unmapped them at every free, so each unit paid a page
        # fault per 4 KiB: (786432, 2, 16) float32 over axis 1 took 150 ms
        # on two threads against 36 ms on one.  tasks.run_tasks deals the
        # tasks in even runs, one to a thread, so the threads get the same units.
        return _ranges(kernels.outer_serial, buf, p, out, tok, units, threads, block, blk)
    # serial merge: _chunks leaves at least eight rows per piece to merge
    return _split(kernels.outer_pieces, kernels.outer_merge, buf, p, out, tok, plan.nout * chunks,
                  (block, chunks, blk), units * chunks, (block, chunks), units)


def _interleaved_then_merged(plan, buf, out, tok, threads):
    """The interleaved kernel's pieces in parallel, then their states merged in parallel too.

    For :data:`MERGE_TASKS_MIN` outputs or more (two parallel calls).
    """
    p = plan.params
    nstates = plan.nout * threads
    across = pairs_across(plan, buf, tok)
    pa, pb = _states(buf, tok, 1)  # (for their type)
    pieces = in_tasks(kernels.interleaved_pieces, (buf, p, pa, pb, tok, threads, across),
                      threads, threads, (buf, tok))
    merge = in_tasks(kernels.merge_outputs, (pa, pb, out, p, threads, tok), plan.nout, threads,
                     (pa, out, tok))
    dt = pa.dtype

    def interleaved(buf, out, tok):
        pa, pb = _scratch(dt, nstates)
        pieces((buf, p, pa, pb, tok, threads, across))
        return merge((pa, pb, out, p, threads, tok))

    return interleaved
