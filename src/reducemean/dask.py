"""``reducemean.dask.mean``: a lazy mean of a dask array on reducemean's kernels.

Each chunk is summed into exact partial-sum states
(:func:`reducemean.states.partial`), neighbouring chunks' states are merged
(:func:`reducemean.states.reduce`) up dask's reduction tree, and the final
states become means (:func:`reducemean.states.finish`).  Since the states
keep the kernels' accuracy (exact integer sums, compensated float sums), the
result has the values of :func:`reducemean.mean` on the computed array,
whatever the chunking.  float64 sums that leave the float64 range are
redone on scaled values, as :func:`reducemean.mean` redoes them: a chunk
whose states pass the range carries scaled states too, and every node
above it (see :func:`_merged`).

Importing this module imports ``dask.array`` (the ``dask`` extra); importing
:mod:`reducemean` does not.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np

try:
    import dask.array as da
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "reducemean.dask needs dask.array: install the 'dask' extra "
        "(pip install 'reducemean[dask]')"
    ) from exc

from . import launch, states
from .dispatch import entry_for
from .engine import EMPTY_SLICE, complex_nonfinite_as_numpy, out_of_range, supported_result
from .plan import normalize_axis

__all__ = ["mean"]


def mean(x, axis=None, dtype=None, keepdims=False):
    """Arithmetic mean of ``x`` over ``axis``, as a lazy ``dask.array.Array``.

    Rules (those of :func:`numpy.mean` and :func:`reducemean.mean`):

    * ``x``: a dask array, or anything :func:`dask.array.asarray` accepts.
    * ``axis``: None (every axis), an int or a tuple of ints in
      [-ndim, ndim-1].  ``numpy.exceptions.AxisError`` out of range,
      ``ValueError`` for a repeated axis, ``TypeError`` for a non-integer,
      raised at once (not at compute time).
    * Result dtype: ``dtype`` if given, else float64 for bool and integer
      input and the input's own dtype for float and complex input.  Result
      shape: ``x.shape`` without the reduced axes, or with them as length 1
      when ``keepdims`` is true.
    * Values: those of ``reducemean.mean(x.compute(), axis, dtype=dtype,
      keepdims=keepdims)``, for any chunking.  Chunks are summed with serial
      kernels
      (:func:`reducemean.launch.serial_only`), since dask already runs one
      task per core.
    * An empty slice (a reduced axis of length 0) gives NaN with
      ``RuntimeWarning("Mean of empty slice.")``, raised when ``mean`` is
      called if the shape is known, else when the result is computed.
    * Inputs and ``dtype`` values that :func:`reducemean.mean` hands to
      numpy (object, datetime, an integer ``dtype``, ...) are handed to
      :func:`dask.array.mean` instead.
    """
    x = da.asarray(x)
    axes = normalize_axis(axis, x.ndim)
    keep = bool(keepdims)
    in_dtype = x.dtype if x.dtype.isnative else x.dtype.newbyteorder("=")
    entry = entry_for(in_dtype)
    if entry is None:
        return da.mean(x, axis=axis, dtype=dtype, keepdims=keepdims)
    result_dtype = entry.mean_dtype if dtype is None else np.dtype(dtype)
    if not supported_result(result_dtype, entry):
        return da.mean(x, axis=axis, dtype=dtype, keepdims=keepdims)

    sizes = [x.shape[d] for d in axes]
    known = not any(math.isnan(s) for s in sizes)
    if known and math.prod(sizes) == 0:
        warnings.warn(EMPTY_SLICE, RuntimeWarning, stacklevel=2)
    out_ndim = x.ndim if keep else x.ndim - len(axes)
    # float64 sums that leave the range are redone on scaled values, as
    # reducemean.mean redoes them; the count fixes the scale (any count up
    # to 2**64 when the chunks' sizes are not known)
    scale = states.scale_for(in_dtype, math.prod(sizes) if known else None)
    merge = functools.partial(_combine, in_dtype=in_dtype, scale=scale)
    finish = functools.partial(
        _aggregate,
        in_dtype=in_dtype,
        result_dtype=result_dtype,
        out_ndim=out_ndim,
        warn=not known,
        scale=scale,
    )
    return da.reduction(
        x,
        functools.partial(_chunk, scale=scale),
        finish,
        axis=axes,
        keepdims=keep,
        dtype=result_dtype,
        combine=merge,
        concatenate=False,
        name="reducemean-mean",
        meta=np.empty((0,) * out_ndim, result_dtype),
    )


def _chunk(block, axis, keepdims, scale, computing_meta=False):
    """One chunk's states (reduced axes kept with length 1), its count, and
    its scaled states where a float64 sum left the range (else None)."""
    if computing_meta:
        return block
    with launch.serial_only():
        st, count = states.partial(block, axis, keepdims=True)
        wide = None
        if scale is not None and states.past_range(st):
            wide = states.partial(block, axis, keepdims=True, scale=scale[0])[0]
    return {"states": st, "count": count, "scaled": wide}


def _gather(parts, axes, scale):
    """States and scaled states of nested chunk results joined along ``axes``, and their count.

    dask nests the results one list level per reduced axis, in axis order;
    the blocks are disjoint, so counts add.  A bare result (no reduced axis)
    stands for itself.  Where one piece has scaled states, the others' are
    their states scaled (see :func:`_scaled`).
    """
    if not isinstance(parts, list):
        return parts["states"], parts["scaled"], parts["count"]
    pieces = [_gather(p, axes[1:], scale) for p in parts]
    if len(pieces) == 1:
        return pieces[0]
    joined = np.concatenate([s for s, _, _ in pieces], axis=axes[0])
    wide = None
    if any(w is not None for _, w, _ in pieces):
        wide = np.concatenate([_scaled(s, w, scale) for s, w, _ in pieces], axis=axes[0])
    return joined, wide, sum(c for _, _, c in pieces)


def _scaled(st, wide, scale):
    """A node's scaled states: its own, or its states times the scale.

    Its states are finite then (a chunk with a sum out of range has its own
    scaled states, and so does every node above it), and scaling a sum by
    a power of two gives the sum of the scaled values, as the engine's
    second pass reads them, but for words below the normals.
    """
    return wide if wide is not None else states.scaled(st, scale[0][0])


def _merged(parts, axis, keepdims, in_dtype, scale):
    """A node's children's states merged, scaled states too where any sum leaves the range."""
    st, wide, count = _gather(parts, sorted(axis), scale)
    merged = states.reduce(st, axis, in_dtype, keepdims=keepdims)
    if wide is None and scale is not None and states.past_range(merged):
        wide = _scaled(st, None, scale)  # a merge passed the range: the children's sums did not
    if wide is not None:
        wide = states.reduce(wide, axis, in_dtype, keepdims=keepdims)
    return merged, wide, count


def _combine(parts, axis, keepdims, in_dtype, scale, computing_meta=False):
    """An inner node of the reduction tree: its children's states merged."""
    if computing_meta:
        return parts
    st, wide, count = _merged(parts, axis, True, in_dtype, scale)
    return {"states": st, "count": count, "scaled": wide}


def _aggregate(parts, axis, keepdims, in_dtype, result_dtype, out_ndim, warn, scale,
               computing_meta=False):
    """The root of the reduction tree: means from the merged states."""
    if computing_meta:
        return np.empty((0,) * out_ndim, result_dtype)
    st, wide, count = _merged(parts, axis, keepdims, in_dtype, scale)
    if count == 0:
        if warn:
            warnings.warn(EMPTY_SLICE, RuntimeWarning, stacklevel=2)
        lead = st.shape[: out_ndim]
        # numpy's empty mean is NaN in every part of a complex result.
        fill = complex(np.nan, np.nan) if result_dtype.kind == "c" else np.nan
        return np.full(lead, fill, result_dtype)
    if wide is None:
        return states.finish(st, count, in_dtype, result_dtype)
    res = states.finish(st, count, in_dtype, result_dtype, spread=False)
    # the means of sums past the range, from the scaled states, part by part
    # (engine.redo_out_of_range), before a non-finite part spreads
    parts_of = res.reshape(-1).view(res.real.dtype) if res.dtype.kind == "c" else res.reshape(-1)
    again = states.finish(wide, count, in_dtype, np.complex128 if res.dtype.kind == "c"
                          else np.float64, spread=False).reshape(-1).view(np.float64)
    redo = out_of_range(parts_of, count)
    with np.errstate(over="ignore"):  # a mean beyond the result type is Inf
        parts_of[redo] = again[redo] * scale[1]
    if res.dtype.kind == "c":
        complex_nonfinite_as_numpy(res)
    return res
