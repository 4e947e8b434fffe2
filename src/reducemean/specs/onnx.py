"""ONNX ReduceMean, opsets 1, 11, 13 and 18.

A model's opset selects the newest operator version not above it (opset 12
runs ReduceMean-11, opset 17 runs ReduceMean-13).  What changes between
versions:

=======  =====================  ================  ===========================
version  axes                   negative axes     types (T)
=======  =====================  ================  ===========================
1        attribute (ints)       refused           double, float, float16,
                                                  int32, int64, uint32, uint64
11       attribute (ints)       [-r, r-1]         as 1
13       attribute (ints)       [-r, r-1]         as 1, plus bfloat16
18       input (int64 tensor)   [-r, r-1]         as 13; adds
                                                  ``noop_with_empty_axes``
=======  =====================  ================  ===========================
"""

from __future__ import annotations

import numpy as np

from ..operator_api import (
    check_flag, normalize_for_spec, operator_mean, parse_for_spec, quoted, type_name,
)

_BASE = ("float64", "float32", "float16", "int32", "int64", "uint32", "uint64")
_TYPES = {1: _BASE, 11: _BASE, 13: _BASE + ("bfloat16",), 18: _BASE + ("bfloat16",)}
_ONNX_NAMES = {"float64": "double", "float32": "float"}
# the rules an error quotes: axes an attribute (ints) before 18, an input
# from 18; negative axes from 11
_AXES_ATTRIBUTE = "axes: a list of integers"
_AXES_INPUT = "axes: an input tensor(int64)"
_AXES_RANGE_1 = "axes must be unique and in [0, r-1] (negative axes from opset 11)"
_AXES_RANGE = "axes must be unique; accepted range is [-r, r-1] where r = rank(data)"


def version_for(opset):
    """The ReduceMean version an opset runs: the newest of 1, 11, 13, 18 not above it."""
    if isinstance(opset, (bool, np.bool_)) or not isinstance(opset, (int, np.integer)):
        raise TypeError(f"opset must be an int, got {opset!r}")
    if opset < 1:
        raise ValueError(f"opset must be 1 or more, got {opset}")
    return max(v for v in _TYPES if v <= opset)


def reduce_mean(data, axes=None, keepdims=1, noop_with_empty_axes=0, *, opset=18):
    """ReduceMean as ONNX ``opset`` defines it (see the module docstring for the table).

    ``TypeError`` for a type outside the version's T, with the list quoted,
    and for non-integer axes or flags; ``ValueError`` for negative axes
    below opset 11, for a true ``noop_with_empty_axes`` below opset 18, and
    for axes out of range or repeated.  Each message starts with the
    version and the opset (``ReduceMean-11 (opset 12): ...``) and quotes the
    rule broken.  Results as :func:`reducemean.reduce_mean`.
    """
    version = version_for(opset)
    spec = f"ReduceMean-{version} (opset {opset})"  # every error names the version and the opset
    data = np.asarray(data)
    allowed = _TYPES[version]
    name = type_name(data.dtype)
    if name not in allowed:
        spelled = ", ".join(f"tensor({_ONNX_NAMES.get(t, t)})" for t in allowed)
        raise TypeError(f"{spec}: input type {name} is not in T = ({spelled})")
    try:
        keep = check_flag(keepdims, "keepdims")
        noop = check_flag(noop_with_empty_axes, "noop_with_empty_axes")
    except (TypeError, ValueError) as e:
        raise quoted(e, spec) from None
    if noop and version < 18:
        raise ValueError(f"{spec}: no attribute noop_with_empty_axes; it exists from opset 18")
    ax = parse_for_spec(axes, spec, _AXES_INPUT if version >= 18 else _AXES_ATTRIBUTE)
    if not ax:
        if noop:
            return data.copy()
        return operator_mean(data, tuple(range(data.ndim)), keep)
    if version < 11 and any(a < 0 for a in ax):
        raise ValueError(
            f"{spec}: negative axes {ax} are accepted only from opset 11; "
            f"axes must be in [0, {data.ndim - 1}]"
        )
    signed = version >= 11
    norm = normalize_for_spec(ax, data.ndim, spec, _AXES_RANGE if signed else _AXES_RANGE_1,
                              allow_negative=signed)
    return operator_mean(data, norm, keep)
