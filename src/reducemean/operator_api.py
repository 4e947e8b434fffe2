"""The ReduceMean operator: ONNX opset 18 rules, and the pieces the spec front-ends share.

Operator semantics differ from ``numpy.mean`` in three ways: the result has
the input's dtype (integers are the exact mean truncated toward zero), axes
are validated with ``ValueError``/``TypeError`` naming the offending value,
and an empty axis list may mean "no reduction" (identity).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .dispatch import entry_for, is_bfloat16
from .engine import get_plan, native, reduce_new

__all__ = [
    "reduce_mean", "parse_axes", "normalize_axes", "normalize_for_spec", "parse_for_spec",
    "quoted", "check_flag", "type_name", "operator_mean",
]


def type_name(dtype) -> str:
    """The spec's name for a numpy dtype (``float32``, ``bfloat16``, ...)."""
    return "bfloat16" if is_bfloat16(dtype) else np.dtype(dtype).name


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def parse_axes(axes, name="axes"):
    """``axes`` as a list of Python ints, or ``None`` when absent.

    Accepts an int, a sequence of ints (list, tuple, range, ...), or a 0-d/1-D
    integer array.
    ``TypeError`` for anything non-integer (floats, bools, strings, nesting),
    ``ValueError`` for an array of rank above 1.
    """
    if axes is None:
        return None
    if isinstance(axes, (np.ndarray, np.generic)):
        arr = np.asarray(axes)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{name} must be integers, got an array of {arr.dtype}")
        if arr.ndim > 1:
            raise ValueError(f"{name} must be a scalar or a 1-D tensor, got shape {arr.shape}")
        return [int(x) for x in arr.reshape(-1)]
    if _is_int(axes):
        return [int(axes)]
    if isinstance(axes, Sequence) and not isinstance(axes, (str, bytes)):
        for x in axes:
            if not _is_int(x):
                raise TypeError(f"{name} must be integers, got {x!r} in {axes!r}")
        return [int(x) for x in axes]
    raise TypeError(f"{name} must be an int, a sequence of ints or an integer array, got {axes!r}")


def normalize_axes(axes, ndim, name="axes", allow_negative=True):
    """Validate ``axes`` (a list of ints) against rank ``ndim``; a sorted tuple.

    ``ValueError`` names the axis and the accepted range, or the repeated axis.
    """
    lo = -ndim if allow_negative else 0
    out = []
    for ax in axes:
        if not lo <= ax < ndim:
            if ndim == 0:
                raise ValueError(f"{name} value {ax} is out of range: a rank-0 input has no axes")
            raise ValueError(
                f"{name} value {ax} is out of range [{lo}, {ndim - 1}] for a rank-{ndim} input"
            )
        out.append(ax % ndim)
    if len(set(out)) != len(out):
        dup = next(a for a in out if out.count(a) > 1)
        raise ValueError(f"{name} {list(axes)} name axis {dup} more than once")
    return tuple(sorted(out))


_UNIQUE_AXES = "axes must be unique and in [-r, r-1]"


def normalize_for_spec(axes, ndim, spec, rule=_UNIQUE_AXES, allow_negative=True):
    """:func:`normalize_axes`, with a ``ValueError`` that names ``spec`` and quotes its axes ``rule``."""
    try:
        return normalize_axes(axes, ndim, allow_negative=allow_negative)
    except ValueError as e:
        raise quoted(e, spec, rule) from None


def parse_for_spec(axes, spec, rule):
    """:func:`parse_axes`, with errors that name ``spec`` and quote its axes ``rule``."""
    try:
        return parse_axes(axes)
    except (TypeError, ValueError) as e:
        raise quoted(e, spec, rule) from None


def quoted(e, spec, rule=None):
    """``e`` again, of its own type, as ``"spec: message; rule"``.

    So that a spec front-end's errors keep the shared helpers' types while
    each says which operator's rule broke.  (A try/except at each call, not
    a context manager: that cost each front-end call about a microsecond
    a block.)
    """
    return type(e)(f"{spec}: {e}" + (f"; {rule}" if rule else ""))


def check_flag(value, name):
    """A 0/1 (or bool) attribute as a bool; ``TypeError``/``ValueError`` otherwise."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if not _is_int(value):
        raise TypeError(f"{name} must be 0 or 1 (an int or a bool), got {value!r}")
    if value not in (0, 1):
        raise ValueError(f"{name} must be 0 or 1, got {value!r}")
    return bool(value)


def operator_mean(data, axes, keepdims):
    """Mean of ``data`` over normalised ``axes`` in ``data``'s own dtype.

    Floats are rounded once from a wide accumulator; integers are the exact
    mean truncated toward zero.  Empty slices give NaN (floats) or 0
    (integers) with ``RuntimeWarning("Mean of empty slice.")``.
    """
    dtype = data.dtype
    a = native(data)
    entry = entry_for(a.dtype)
    a, plan = get_plan(a, axes, keepdims, entry)
    res = reduce_new(a, plan, entry, a.dtype, stacklevel=4)
    return res if res.dtype == dtype else res.astype(dtype)


_TYPES = frozenset(
    ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
     "uint8", "uint16", "uint32", "uint64"]
)


def reduce_mean(data, axes=None, keepdims=1, noop_with_empty_axes=0):
    """ReduceMean with ONNX opset 18 semantics.

    * ``data``: float16, bfloat16 (ml_dtypes), float32, float64, int8..int64
      or uint8..uint64; the result has the same dtype.  bool, complex and
      anything else raise ``TypeError`` naming the dtype.  A rank-0 input is
      valid.
    * ``axes``: None, an int, a sequence of ints, or a 0-d/1-D integer array,
      each in [-r, r-1].  Out of range or repeated: ``ValueError``;
      non-integer: ``TypeError``.
    * ``axes`` None or empty reduces every axis, unless
      ``noop_with_empty_axes`` is true: then the result is a copy of ``data``.
    * ``keepdims`` (default 1) keeps each reduced axis with length 1.
    * Integers: the exact mean truncated toward zero (no overflow, even for
      int64/uint64 sums beyond 64 bits).  Floats: within 1 ulp of the exact
      mean (float64 accumulation, rounded once).
    * An empty reduction gives NaN (floats) or 0 (integers) with
      ``RuntimeWarning("Mean of empty slice.")``.
    """
    data = np.asarray(data)
    if type_name(data.dtype) not in _TYPES:
        raise TypeError(
            f"ReduceMean: input type {type_name(data.dtype)} is not supported "
            "(float16, bfloat16, float32, float64, int8..int64, uint8..uint64)"
        )
    keep = check_flag(keepdims, "keepdims")
    noop = check_flag(noop_with_empty_axes, "noop_with_empty_axes")
    ax = parse_axes(axes)
    if not ax:
        if noop:
            return data.copy()
        return operator_mean(data, tuple(range(data.ndim)), keep)
    return operator_mean(data, normalize_axes(ax, data.ndim), keep)
