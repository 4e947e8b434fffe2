"""Run a plan on an array: find its memory, allocate the result, call the kernel.

Shared by every front-end.  The input is never copied, except a view whose
strides are not whole elements, or one in non-native byte order, which
numpy's own conversion makes native first.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import blocks, fold, launch
from .dispatch import entry_for, is_bfloat16
from .numerics import (
    BF16, EXACT, F16C, HALF, REDO_BF16, REDO_F16, REDO_F32, REDO_F64, scaled_token,
)
from .plan import plan_for
from .span import span_view

_F4 = np.dtype(np.float32)
_F8 = np.dtype(np.float64)
EMPTY_SLICE = "Mean of empty slice."
_IN_RANGE = 2.0**990  # below numerics' 2**995 limit, with room for rounding


def native(a):
    """``a`` itself, or a native-byte-order copy when numpy stores it swapped."""
    if a.dtype.isnative:
        return a
    return a.astype(a.dtype.newbyteorder("="))


def storage_view(a, plan, entry):
    """A 1-D view of every element ``plan`` reads, in the kernels' storage dtype."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return a.ravel("K").view(entry.storage)  # a view: memory order, first element first
    return span_view(a, plan.span, plan.base, entry.storage)


def get_plan(a, axes, keepdims, entry):
    """The plan for ``a``; ``a`` is replaced by a copy when no plan can walk it."""
    plan = plan_for(a.shape, a.strides, a.itemsize, axes, keepdims, entry.pairs, entry.lanes)
    if plan is None:  # strides that are not whole elements
        a = np.ascontiguousarray(a)
        plan = plan_for(a.shape, a.strides, a.itemsize, axes, keepdims, entry.pairs, entry.lanes)
    return a, plan


def reduce_into(a, plan, entry, result, stacklevel=3):
    """Fill ``result`` (C-contiguous, shape ``plan.out_shape``) with the means.

    Empty slices give NaN (float results) or 0 (integer results) with numpy's
    ``RuntimeWarning``.
    """
    if plan.count == 0:
        warnings.warn(EMPTY_SLICE, RuntimeWarning, stacklevel=stacklevel)
        kind = result.dtype.kind
        result.fill(0 if kind in "iu" else complex(np.nan, np.nan) if kind == "c" else np.nan)
        return result
    if plan.nout == 0:
        return result
    if plan.permute is not None:  # the kept dims in their memory order, then transposed
        shape, order = plan.permute
        mem = forwards(_in_memory_order(a, plan, entry, result.dtype), plan)
        permute_into(result.reshape(tuple(shape[k] for k in order)), mem, order)
        return result
    _reduce_flat(a, plan, entry, result.reshape(-1))
    return result


def reduce_new(a, plan, entry, rd, stacklevel=3):
    """The means in a new ``rd`` array of shape ``plan.out_shape``.

    A permuted plan's means are left in their memory order and returned
    transposed, not copied into result order: numpy's own result follows its
    input's memory order too (``np.mean(x.T, axis=1)`` is not C-contiguous),
    and the copy cost as much as the sum, (786432, 2, 16).T int32 over axis
    1 summed in 29 ms and permuted in 23 ms.
    """
    if plan.permute is None or not plan.count or not plan.nout:
        return reduce_into(a, plan, entry, np.empty(plan.out_shape, rd), stacklevel + 1)
    order = plan.permute[1]
    mem = _in_memory_order(a, plan, entry, rd)
    if plan.flipped:  # numpy's result has no negative strides: the reversal is copied
        mem = np.ascontiguousarray(forwards(mem, plan))
    return mem.transpose(order).reshape(plan.out_shape)


def forwards(mem, plan):
    """A permuted plan's means ``mem`` with the axes it wrote backwards reversed (a view)."""
    if not plan.flipped:
        return mem
    return mem[reverser(plan.flipped, mem.ndim)]


def reverser(flipped, ndim):
    """The index that reverses axes ``flipped`` of an ``ndim``-dimensional array."""
    return tuple(slice(None, None, -1) if k in flipped else slice(None) for k in range(ndim))


def _in_memory_order(a, plan, entry, rd):
    """A permuted plan's means in a new ``rd`` array, its kept dims in their memory order."""
    mem = np.empty(plan.permute[0], rd)
    _reduce_flat(a, plan, entry, mem.reshape(-1))
    return mem


#: permute_into copies pieces of about this many bytes of its source
PERMUTE_PIECE = 256 << 10


def permute_into(dst, src, order):
    """``dst[...] = src.transpose(order)``, a piece of ``src``'s first axis at a time.

    numpy walks the transposed source in the destination's order, so a
    source larger than the caches is read once for every value of its
    inner axes: (393216, 16) float64 into (16, 393216) took 40 ms.  Pieces
    of 256 KiB stay in cache while their rows are gathered: 11-15 ms, and
    (65536, 64) 43.5 -> 7.4 ms (pieces of 64 KiB to 1 MiB, 256 KiB the
    best overall; (4000, 300) the same either way).  Sources of up to four
    pieces are copied whole.
    """
    if src.nbytes <= 4 * PERMUTE_PIECE:
        dst[...] = src.transpose(order)
        return
    rows = max(1, PERMUTE_PIECE // src[0].nbytes)
    lead = (slice(None),) * order.index(0)
    for r in range(0, src.shape[0], rows):
        dst[lead + (slice(r, r + rows),)] = src[r:r + rows].transpose(order)


def _reduce_flat(a, plan, entry, result):
    """:func:`reduce_into` for a flat ``result``, in the plan's output order."""
    rd = result.dtype
    rounded = False
    if rd == _F8 or rd == _F4 or rd.kind in "iu":
        target = result
    elif writes_bits(rd, entry):
        target = result.view(np.uint16)
    elif rd.kind == "c":
        target = result.view(_F4 if rd.itemsize == 8 else _F8)
    else:  # float16 / bfloat16 results: float64 means, rounded once
        target = np.empty(plan.nout, _F8)
        rounded = True
    bad = run(plan, storage_view(a, plan, entry), target, entry.token_for(rd), entry)
    if bad:
        redo(a, plan, entry, target, marked_f64=rounded)
    if rounded:
        result[...] = target.astype(rd)
    elif rd.kind == "c" and (bad or rd.itemsize // 2 < entry.storage.itemsize):
        # Every sum finite and in range (bad == 0) gives finite means, unless
        # they are narrowed (complex128 into complex64), which can overflow.
        complex_nonfinite_as_numpy(result)


def writes_bits(rd, entry):
    """Whether the kernels write a ``rd`` result's bits themselves (as uint16).

    A float16 or bfloat16 mean kept in its input's own type: one rounding
    from the float64 mean, in the kernel's store (numerics.f64_to_f32_odd).
    Without F16C a float16 result is rounded from float64 means by numpy
    instead (see _reduce_flat), as are other inputs' 16-bit results.
    """
    return rd == entry.dtype and (entry.token is BF16 or (entry.token is HALF and F16C))


def summed_by(plan):
    """The module that sums ``plan`` in steps of its own, or None for :func:`launch.run`.

    Narrow columns are folded (:mod:`reducemean.fold`); plans whose reduced
    dims lie inside their kept dims' block sum the block's columns
    (:mod:`reducemean.blocks`).  Each has ``run`` (means), ``states`` and
    ``prepare`` (``run`` for numpy_api's memo).
    """
    if fold.applies(plan):
        return fold
    if blocks.applies(plan):
        return blocks
    return None


def run(plan, buf, out, tok, entry):
    """:func:`launch.run` for ``entry``'s dtype, or the steps of :func:`summed_by`."""
    way = summed_by(plan)
    if way is not None:
        return way.run(plan, buf, out, tok, entry)
    return launch.run(plan, buf, out, tok, entry.cost)


#: Outputs marked for a second pass (see :func:`redo`) that are redone one by
#: one in any case; with more, the whole plan is summed again unless mending
#: them one by one costs less, counted in values read: MEND_VALUES for each
#: mend's fixed cost (a plan and a kernel call from Python, 20-30 us), and
#: a column's values (an outer plan's) MEND_COLUMN each, a cache line apiece.
#: Against the whole pass always, float32 values of +-1: (4096, 4096) over
#: axis 1 (39 marked) 0.53x the time; rows of 64 to 1024 values and columns
#: the same within the noise (the whole pass, mostly).
MEND_MAX = 16
MEND_VALUES = 65536
MEND_COLUMN = 64


def redo(a, plan, entry, target, marked_f64=False):
    """The second pass, for means the kernels counted as not final.

    ``target`` is the flat result in the plan's output order (or its parts,
    or a 16-bit result's bits).  float64 storage: :func:`redo_out_of_range`.
    The plain float64 sums of narrower floats (float32, complex64 parts,
    float16, bfloat16) carry a bound of their rounding error, and an output
    whose bound does not clear its mean (numerics.bounded: values that
    cancel across more than float64's 53 bits, ``[1e20, 1, -1e20]`` in
    float32) is stored as a NaN of its own payload.  Those outputs are
    summed again with compensation, as a float64 result sums them: one by
    one from their own values in ``a``, or, past MEND_MAX of them where
    that reads fewer values (see MEND_VALUES), the whole plan again, every
    mean taken from that pass.  (Sums that cancel to exactly 0, as long
    rows of values of both signs and one magnitude often do, are marked:
    39 of 4096 rows of 4096 values of +-1.)  A float64 ``target`` holds
    compensated means, never marked, unless ``marked_f64``: the float64
    means of a 16-bit result, which carry the plain sums' marks.
    """
    flat = target.reshape(-1)
    if flat.dtype.kind == "c":
        flat = flat.view(flat.real.dtype)
    if entry.storage == _F8:
        redo_out_of_range(a, plan, entry, flat)
        return
    if flat.dtype == _F8 and not marked_f64:  # a float64 result's sums are compensated
        return
    marks = marked_for_redo(flat, entry)
    each = plan.count * (MEND_COLUMN if plan.family == "outer" else 1)
    if marks.size > MEND_MAX and marks.size * (MEND_VALUES + each) > plan.nout * plan.count:
        means = np.empty(plan.nout, _F8)
        run(plan, storage_view(a, plan, entry), means, EXACT[entry.token.dtype], entry)
        put_means(flat, slice(None), means, entry)
        return
    part = entry_for(entry.storage) if entry.pairs else entry
    for t in marks.tolist():
        sub = a[_values_of(plan, t // 2 if entry.pairs else t, a.ndim)]
        if entry.pairs:  # the part alone: a complex mean would spread a non-finite part
            sub = sub.imag if t % 2 else sub.real
        sub, whole = get_plan(sub, tuple(range(sub.ndim)), False, part)
        put_means(flat, t, reduce_new(sub, whole, part, _F8)[()], entry)


def marked_for_redo(flat, entry):
    """Where the kernels stored a mean to redo (numerics.REDO_F32 and its kin)."""
    if flat.itemsize == 2:
        mark = REDO_F16 if entry.token is HALF else REDO_BF16
        return np.flatnonzero(flat.view(np.uint16) == mark)
    if flat.dtype == _F4:
        return np.flatnonzero(flat.view(np.uint32) == REDO_F32)
    return np.flatnonzero(flat.view(np.uint64) == np.array(REDO_F64).view(np.uint64))


def put_means(flat, where, means, entry):
    """``flat[where] = means`` (float64), rounded to ``flat``'s type; 16-bit results as bits."""
    if flat.itemsize == 2:
        flat.view(np.uint16)[where] = np.asarray(means).astype(entry.dtype).view(np.uint16)
    else:
        flat[where] = means


def _values_of(plan, o, ndim):
    """The index of ``a`` that selects the values of the plan's output ``o`` (a view)."""
    if plan.permute is None:
        at = np.unravel_index(o, plan.out_shape)
    else:  # o counts the kept dims in memory order: see reduce_new
        shape, order = plan.permute
        mem = list(np.unravel_index(o, shape))
        for k in plan.flipped:
            mem[k] = shape[k] - 1 - mem[k]
        moved = tuple(mem[k] for k in order)
        at = np.unravel_index(np.ravel_multi_index(moved, tuple(shape[k] for k in order)),
                              plan.out_shape)
    at = [int(i) for i in at]
    if len(at) == ndim:  # keepdims: the reduced axes' zeros stand in the index
        return tuple(slice(None) if d in plan.axes else at[d] for d in range(ndim))
    kept = iter(at)
    return tuple(slice(None) if d in plan.axes else next(kept) for d in range(ndim))


def redo_out_of_range(a, plan, entry, target):
    """Recompute float64 means whose sums left the float64 range, on scaled values.

    A float64 sum can overflow where the mean cannot (values near the
    largest float64), and in the state an overflow looks like an Inf input;
    sums above ``2**995`` take this pass too, a margin kept below overflow.
    The kernels count such sums.  The second pass reads every value times
    ``2**-k`` (exact for all but values near the smallest normals), so every
    sum of ``plan.count`` finite values stays in range, and scales the means
    back: a true Inf or NaN input still gives Inf or NaN.  Only float64
    storage (float64, complex128) can go out of range; a float64 input with
    NaN or Inf pays for the second pass.
    """
    if entry.storage != _F8:
        return
    tok, unscale = scaled_token(plan.count)
    scaled = np.empty(target.shape, _F8)
    run(plan, storage_view(a, plan, entry), scaled, tok, entry)
    redo = out_of_range(target, plan.count)
    with np.errstate(over="ignore"):  # a mean beyond the result type is Inf
        target[redo] = scaled[redo] * unscale


def out_of_range(means, count):
    """Where a float mean over ``count`` values may come from an out-of-range sum.

    True for Inf and NaN, and where ``|mean| * count`` nears ``2**995``.
    """
    with np.errstate(over="ignore"):
        return ~(np.abs(means) * count < _IN_RANGE)


def complex_nonfinite_as_numpy(res):
    """Spread a non-finite part into the other part, as numpy's complex mean does.

    numpy divides the complex sum by ``n + 0j`` (Smith's method), which turns
    ``inf + 0j`` into ``inf + nanj``: each part picks up the other times zero.
    """
    parts = res.reshape(-1).view(res.real.dtype).reshape(-1, 2)
    bad = ~np.isfinite(parts).all(axis=1)
    if bad.any():
        r = parts[bad, 0].copy()
        i = parts[bad, 1]
        with np.errstate(invalid="ignore"):  # inf * 0 is the point
            parts[bad, 0] = r + i * 0
            parts[bad, 1] = i - r * 0


def supported_result(dtype, entry):
    """True when the kernels can write a result of ``dtype`` for this input.

    Never for a non-native byte order: the kernels write native values (a
    swapped float64 came back as float32 values, a swapped complex as
    garbage).
    """
    if not dtype.isnative:
        return False
    if entry.pairs:
        return dtype.kind == "c" and dtype.itemsize in (8, 16)
    return dtype.kind == "f" and dtype.itemsize in (2, 4, 8) or is_bfloat16(dtype)


__all__ = [
    "native", "storage_view", "get_plan", "reduce_into", "reduce_new", "run", "redo",
    "redo_out_of_range", "marked_for_redo", "out_of_range", "supported_result",
    "entry_for", "writes_bits", "summed_by", "permute_into", "forwards", "reverser",
]
