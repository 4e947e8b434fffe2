"""``reducemean.mean``: numpy's ``mean``, computed by the kernels."""

from __future__ import annotations

import numpy as np

from . import kernels, launch
from .dispatch import entry_for
from .engine import get_plan, native, reduce_into, supported_result
from .plan import normalize_axis

_AXES: dict = {}

# Small C-contiguous calls skip every decision after the first: the key maps
# straight to (serial kernel, packed plan, storage dtype, token, result dtype,
# outputs, result shape).  Only plain int/None axes are keys (1.0 == 1).
_DIRECT: dict = {}
_DIRECT_MAX = 4096
_DIRECT_DTYPES = frozenset([np.dtype(np.float32), np.dtype(np.float64)])


def _numpy(a, axis, dtype, out, keepdims, where):
    return np.mean(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """Arithmetic mean over ``axis``: a drop-in for :func:`numpy.mean`, more exact.

    Same arguments, result dtype, shape and kind as ``numpy.mean``: a numpy
    scalar for a full reduction without ``keepdims`` or ``out``, else an
    array; ``out`` is filled and returned.

    Rules:

    * bool, int8..int64, uint8..uint64, float16, float32, float64, complex64,
      complex128 and ml_dtypes' bfloat16 run on the kernels.  Integers and
      bool give float64 within 1 ulp of the exact mean (64-bit sums are kept
      exact); float16, bfloat16 and float32 are accumulated in float64 and
      rounded once (within 1 ulp); float64 uses compensated summation;
      complex parts follow their float type.
    * Any other dtype, an ndarray subclass, an object with
      ``__array_function__``, an integer or bool ``dtype=``, or an ``out``
      whose dtype or shape differs from the result's is handed to
      ``numpy.mean`` unchanged, so nothing works worse than in numpy.
    * ``where=`` other than ``True`` is computed by numpy with a float64
      (complex128) accumulator.
    * NaN and Inf propagate as in numpy; an empty slice gives NaN with
      ``RuntimeWarning("Mean of empty slice.")``.
    * Errors are numpy's: ``AxisError`` for an axis out of range,
      ``ValueError`` for a duplicate axis, ``TypeError`` for a non-integer
      axis.
    """
    if type(a) is not np.ndarray:
        if isinstance(a, np.ndarray) or hasattr(type(a), "__array_function__"):
            return _numpy(a, axis, dtype, out, keepdims, where)
        a = np.asarray(a)
    if out is None and where is True and (axis is None or type(axis) is int):
        hit = _DIRECT.get((a.shape, a.strides, a.dtype, axis, keepdims, dtype))
        if hit is not None:
            kern, params, storage, tok, rd, nout, shape = hit
            res = np.empty(nout, rd)
            kern(a.reshape(-1).view(storage), params, res, tok)
            return res[0] if shape is None else res.reshape(shape)
    entry = entry_for(a.dtype)
    if entry is None:
        if a.dtype.isnative or a.dtype.kind not in "biufc":
            return _numpy(a, axis, dtype, out, keepdims, where)
        a = native(a)
        entry = entry_for(a.dtype)
    if where is not True or (keepdims is not False and keepdims is not True):
        return _masked(a, entry, axis, dtype, out, keepdims, where)

    # Memoised only for plain ints, since 1.0 == 1 and True == 1 as dict keys.
    key = (axis, a.ndim) if axis is None or type(axis) is int else None
    axes = _AXES.get(key) if key is not None else None
    if axes is None:
        try:
            axes = normalize_axis(axis, a.ndim)
        except (TypeError, ValueError, IndexError):
            return _numpy(a, axis, dtype, out, keepdims, where)  # numpy's own error
        if key is not None:
            _AXES[key] = axes

    if dtype is None:
        rd = entry.mean_dtype
    else:
        try:
            rd = np.dtype(dtype)
        except TypeError:
            return _numpy(a, axis, dtype, out, keepdims, where)
        if not supported_result(rd, entry):
            return _numpy(a, axis, dtype, out, keepdims, where)

    a, plan = get_plan(a, axes, keepdims, entry)
    if out is not None:
        if type(out) is not np.ndarray or out.shape != plan.out_shape or out.dtype != rd:
            return _numpy(a, axis, dtype, out, keepdims, where)
        if out.flags.c_contiguous:
            return reduce_into(a, plan, entry, out)
        out[...] = reduce_into(a, plan, entry, np.empty(plan.out_shape, rd))
        return out
    res = reduce_into(a, plan, entry, np.empty(plan.out_shape, rd))
    if (
        key is not None
        and plan.work < launch.PARALLEL_MIN
        and plan.count
        and plan.nout
        and rd in _DIRECT_DTYPES
        and a.flags.c_contiguous
        and (type(axis) is int or axis is None)
    ):
        _remember(a, axis, keepdims, dtype, plan, entry, rd)
    if res.ndim == 0:
        return res[()]
    return res


def _remember(a, axis, keepdims, dtype, plan, entry, rd):
    if len(_DIRECT) >= _DIRECT_MAX:
        _DIRECT.clear()
    kern = kernels.inner_serial if plan.family == "inner" else kernels.outer_serial
    shape = plan.out_shape if plan.out_shape else None
    _DIRECT[(a.shape, a.strides, a.dtype, axis, keepdims, dtype)] = (
        kern, plan.params, entry.storage, entry.token, rd, plan.nout, shape,
    )


def _masked(a, entry, axis, dtype, out, keepdims, where):
    """``where=`` masks: numpy's reduction with a wide accumulator, then the result dtype."""
    if dtype is not None or out is not None or entry.kind in ("int", "bool"):
        wide = dtype
    else:
        wide = np.complex128 if entry.pairs else np.float64
    res = np.mean(a, axis=axis, dtype=wide, out=out, keepdims=keepdims, where=where)
    if wide is dtype:
        return res
    rd = entry.mean_dtype
    if isinstance(res, np.ndarray):
        return res.astype(rd)
    return rd.type(res)
