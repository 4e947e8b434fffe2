"""``reducemean.dask.mean``: a lazy mean of a dask array on reducemean's kernels.

Each chunk is summed into exact partial-sum states
(:func:`reducemean.states.partial`), neighbouring chunks' states are merged
(:func:`reducemean.states.reduce`) up dask's reduction tree, and the final
states become means (:func:`reducemean.states.finish`).  Since the states
keep the kernels' accuracy (exact integer sums, compensated float sums), the
result has the values of :func:`reducemean.mean` on the computed array,
whatever the chunking.

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
from .engine import EMPTY_SLICE, supported_result
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
    merge = functools.partial(_combine, in_dtype=in_dtype)
    finish = functools.partial(
        _aggregate,
        in_dtype=in_dtype,
        result_dtype=result_dtype,
        out_ndim=out_ndim,
        warn=not known,
    )
    return da.reduction(
        x,
        _chunk,
        finish,
        axis=axes,
        keepdims=keep,
        dtype=result_dtype,
        combine=merge,
        concatenate=False,
        name="reducemean-mean",
        meta=np.empty((0,) * out_ndim, result_dtype),
    )


def _chunk(block, axis, keepdims, computing_meta=False):
    """One chunk's states (reduced axes kept with length 1) and its count."""
    if computing_meta:
        return block
    with launch.serial_only():
        st, count = states.partial(block, axis, keepdims=True)
    return {"states": st, "count": count}


def _gather(parts, axes):
    """States of nested chunk results joined along ``axes``, and their total count.

    dask nests the results one list level per reduced axis, in axis order;
    the blocks are disjoint, so counts add.  A bare result (no reduced axis)
    stands for itself.
    """
    if not isinstance(parts, list):
        return parts["states"], parts["count"]
    pieces = [_gather(p, axes[1:]) for p in parts]
    if len(pieces) == 1:
        return pieces[0]
    joined = np.concatenate([s for s, _ in pieces], axis=axes[0])
    return joined, sum(c for _, c in pieces)


def _combine(parts, axis, keepdims, in_dtype, computing_meta=False):
    """An inner node of the reduction tree: its children's states merged."""
    if computing_meta:
        return parts
    st, count = _gather(parts, sorted(axis))
    return {"states": states.reduce(st, axis, in_dtype, keepdims=True), "count": count}


def _aggregate(parts, axis, keepdims, in_dtype, result_dtype, out_ndim, warn, computing_meta=False):
    """The root of the reduction tree: means from the merged states."""
    if computing_meta:
        return np.empty((0,) * out_ndim, result_dtype)
    st, count = _gather(parts, sorted(axis))
    st = states.reduce(st, axis, in_dtype, keepdims=keepdims)
    if count == 0:
        if warn:
            warnings.warn(EMPTY_SLICE, RuntimeWarning, stacklevel=2)
        lead = st.shape[: out_ndim]
        # numpy's empty mean is NaN in every part of a complex result.
        fill = complex(np.nan, np.nan) if result_dtype.kind == "c" else np.nan
        return np.full(lead, fill, result_dtype)
    return states.finish(st, count, in_dtype, result_dtype)
