"""Partial sums that combine exactly: the kernels' states, for blockwise callers.

A blocked reduction (dask, or any caller that sees an array in pieces) sums
each block with :func:`partial`, merges neighbouring blocks' states with
:func:`combine` or :func:`reduce`, and turns the final state into means with
:func:`finish`.  States keep the kernels' accuracy: integer sums stay exact
(as a pair of 64-bit words), float sums of every width carry a compensation
term, as :func:`reducemean.mean` sums them for a float64 result; so the
result is that of :func:`reducemean.mean` of the whole array.  (A narrower
float's plain float64 sum, what :func:`reducemean.mean` reads first for its
own type, cannot be redone where values cancel across blocks: the blocks'
values are gone by then.)

A state array has the shape of the reduced result plus a trailing axis of 2
(the pair ``(a, b)``); complex inputs add one more axis of 2 before it (the
real and imaginary parts).  Its dtype is float64, int64 or uint64.

float64 sums can leave the float64 range where their means do not; a
caller redoes them as :func:`reducemean.mean` does, from states summed on
scaled values (:func:`scale_for`, :func:`past_range`, :func:`scaled`), as
:mod:`reducemean.dask` does.
"""

from __future__ import annotations

import numpy as np

from . import kernels, launch
from .dispatch import entry_for
from .engine import (
    complex_nonfinite_as_numpy, forwards, get_plan, native, permute_into, storage_view, summed_by,
)
from .numerics import SUM_LIMIT, scaled_token
from .plan import normalize_axis

__all__ = [
    "partial", "combine", "reduce", "finish", "state_dtype", "scale_for", "past_range", "scaled",
]


def _entry(dtype):
    entry = entry_for(np.dtype(dtype))
    if entry is None:
        raise TypeError(f"reducemean.states: dtype {np.dtype(dtype)} has no kernel")
    return entry


def state_dtype(dtype) -> np.dtype:
    """dtype of the states of an input of ``dtype``."""
    return _entry(dtype).state_dtype


def partial(a, axis=None, keepdims=True, scale=None):
    """States of ``a`` summed over ``axis``; returns ``(states, count)``.

    ``count`` is the number of values summed into each state.  Floats of
    every width are summed with compensation (see :func:`_token`), so
    the states serve any result dtype :func:`finish` is asked for.  With
    ``scale`` (:func:`scale_for`'s token) float64 values are summed times
    its power of two, for sums that would leave the float64 range.
    """
    a = native(np.asarray(a))
    entry = _entry(a.dtype)
    axes = normalize_axis(axis, a.ndim)
    a, plan = get_plan(a, axes, keepdims, entry)
    shape = plan.out_shape + ((2,) if entry.pairs else ())
    states = np.zeros(shape + (2,), entry.state_dtype)
    if plan.count and plan.nout:
        mem = states
        if plan.permute is not None:  # kept dims in their memory order (plan.make_plan)
            kept, order = plan.permute
            inner = ((2,) if entry.pairs else ()) + (2,)  # (complex parts,) the state's pair
            mem = np.zeros(kept + inner, entry.state_dtype)
        buf = storage_view(a, plan, entry)
        tok = _token(entry) if scale is None else scale
        way = summed_by(plan)  # as engine.run sums it
        if way is not None:
            mem.reshape(-1, 2)[...] = way.states(plan, buf, tok, entry)
        else:
            launch.run(plan, buf, mem.reshape(-1, 2), tok, entry.cost)
        if mem is not states:
            into = tuple(kept[k] for k in order) + inner
            permute_into(states.reshape(into), forwards(mem, plan),
                         order + tuple(range(len(order), mem.ndim)))
    return states, plan.count


_F8 = np.dtype(np.float64)


def scale_for(dtype, count):
    """``(token, 2**k)`` for scaled states of ``dtype``, or None when its sums cannot overflow.

    Only float64 storage (float64, complex128) can: every narrower type is
    summed in float64.  Its sums of ``count`` values (None: any count up to
    2**64) taken times ``2**-k`` stay in range, as the engine's second pass
    reads them (engine.redo_out_of_range), so means from scaled states
    are those of :func:`reducemean.mean`.
    """
    if _entry(dtype).storage != _F8:
        return None
    return scaled_token(2**64 if count is None else max(int(count), 1))


def past_range(states):
    """Whether any float64 sum in ``states`` is non-finite or past the kernels' limit.

    Those are the sums the engine would redo on scaled values (an Inf or NaN
    input gives one too, as it does there).
    """
    a = states[..., 0]
    # (max and min carry a NaN through, which then fails the comparison)
    return bool(a.size) and not (a.max() <= SUM_LIMIT and a.min() >= -SUM_LIMIT)


def scaled(states, factor):
    """``states`` times the power of two ``factor``: exact unless a word falls below the normals."""
    return np.asarray(states, np.float64) * factor


def _token(entry):
    """The reader token states are summed, merged and finished with.

    That of a float64 result, whatever the result: narrow floats
    (float32, complex64 parts, float16, bfloat16) carry a compensation as
    float64 does, so blocks whose values cancel across more than float64's
    53 bits still give means within an ulp.  The plain sums mean() reads
    them with first carry only a bound of their error (numerics.bounded),
    to be redone from the values, which a block's state no longer has.
    """
    return entry.token_for(_F8)


def combine(s1, s2, dtype):
    """States of the union of two disjoint blocks (same shapes)."""
    entry = _entry(dtype)
    out = np.array(s1, dtype=entry.state_dtype, copy=True, order="C")
    other = np.ascontiguousarray(s2, dtype=entry.state_dtype)
    kernels.merge_states(out.reshape(-1, 2), other.reshape(-1, 2), _token(entry))
    return out


def reduce(states, axis, dtype, keepdims=True):
    """Merge states along ``axis`` (an int or tuple, of the result's axes)."""
    entry = _entry(dtype)
    tok = _token(entry)
    lead = states.ndim - (2 if entry.pairs else 1)
    axes = normalize_axis(axis, lead)
    if not axes:
        return np.array(states, copy=True)
    moved = np.moveaxis(states, axes, range(len(axes)))
    n = int(np.prod([states.shape[d] for d in axes]))
    pieces = moved.reshape((n,) + moved.shape[len(axes):])
    if n == 0:
        acc = np.zeros(pieces.shape[1:], entry.state_dtype)
    else:
        acc = np.array(pieces[0], dtype=entry.state_dtype, copy=True, order="C")
        flat = acc.reshape(-1, 2)
        for k in range(1, n):
            other = np.ascontiguousarray(pieces[k]).reshape(-1, 2)
            kernels.merge_states(flat, other, tok)
    if keepdims:
        acc = np.expand_dims(acc, axes)
    return acc


def finish(states, count, dtype, result_dtype=None, spread=True):
    """Means from states over ``count`` values each, in ``result_dtype``.

    ``count`` is one number, or an array that broadcasts to the states'
    leading shape (a count per output).  ``result_dtype`` defaults to
    ``numpy.mean``'s result dtype for ``dtype``.  A zero count gives NaN
    (the caller warns).  A complex mean with a non-finite part has it
    spread into the other part as numpy does, unless ``spread`` is false
    (for a caller that redoes parts first, as masked.Steps does).
    """
    entry = _entry(dtype)
    rd = np.dtype(result_dtype) if result_dtype is not None else entry.mean_dtype
    lead = states.shape[: states.ndim - (2 if entry.pairs else 1)]
    # an empty slice: NaN for inexact results, 0 for integer ones (operator rule)
    nan = complex(np.nan, np.nan) if rd.kind == "c" else 0 if rd.kind in "iu" else np.nan
    per_output = np.ndim(count) != 0
    if per_output:
        count = np.asarray(count, np.int64)
        if count.shape != lead:  # (a where= mean's counts have the lead shape already)
            count = np.broadcast_to(count, lead)
    else:
        count = int(count)
        if count == 0:
            return np.full(lead, nan, rd)
    if entry.pairs:
        part = np.float32 if rd == np.complex64 else np.float64
        res = np.empty(lead, rd)
        target = res.reshape(-1).view(part)
    elif rd.kind in "iu" or rd in (np.float32, np.float64):
        res = np.empty(lead, rd)
        target = res.reshape(-1)
    else:
        res = None
        target = np.empty(int(np.prod(lead)), np.float64)
    flat = np.ascontiguousarray(states).reshape(-1, 2)
    tok = _token(entry)
    if not per_output:
        kernels.finish_states(flat, count, target, tok)
    else:
        # one count per complex value: the same for both parts
        counts = np.repeat(count.reshape(-1), 2) if entry.pairs else count
        counts = np.ascontiguousarray(counts).reshape(-1)
        kernels.finish_states_counts(flat, counts, target, tok)
    if res is None:
        res = target.reshape(lead).astype(rd)
    elif entry.pairs and spread:
        complex_nonfinite_as_numpy(res)
    if per_output and not count.all():
        res[count == 0] = nan
    return res
