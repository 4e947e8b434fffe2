"""OpenVINO ReduceMean-1.

* ``data``: any numeric type T (float16, bfloat16, float32, float64, signed
  and unsigned integers); bool and complex are not numeric types here.
* ``axes`` (required): a scalar or 1-D tensor of integers (T_IND), unique,
  each in [-r, r-1].  An empty ``axes`` is the identity.
* ``keep_dims`` (default false): keep each reduced axis with length 1.
* Integer results are the exact mean truncated toward zero.
"""

from __future__ import annotations

import numpy as np

from ..operator_api import normalize_for_spec, operator_mean, parse_for_spec, type_name

_RULE_T = "T: any supported numeric type"
_RULE_AXES = "'axes' is a scalar or 1D tensor of unique elements and type T_IND"


def reduce_mean(data, axes, keep_dims=False):
    """ReduceMean-1: the mean of ``data`` over ``axes`` in ``data``'s type."""
    data = np.asarray(data)
    if data.dtype.kind not in "iuf" and type_name(data.dtype) != "bfloat16" or data.dtype.itemsize > 8:
        raise TypeError(f"ReduceMean-1: data type {type_name(data.dtype)} breaks '{_RULE_T}'")
    if not isinstance(keep_dims, (bool, np.bool_)):
        raise TypeError(f"ReduceMean-1: keep_dims is a boolean attribute, got {keep_dims!r}")
    if axes is None:
        raise ValueError("ReduceMean-1: input 2 'axes' is required")
    if isinstance(axes, (list, tuple)) and len(axes) == 0:
        ax = []
    else:
        arr = np.asarray(axes)
        if arr.ndim > 1:
            raise ValueError(
                f"ReduceMean-1: 'axes' must be a scalar or 1D tensor, got shape {arr.shape}"
            )
        ax = parse_for_spec(arr if arr.size or arr.dtype.kind in "iu" else [], "ReduceMean-1",
                            _RULE_AXES)
    if not ax:
        return data.copy()  # "If axes is an empty list, ReduceMean corresponds to the identity"
    norm = normalize_for_spec(ax, data.ndim, "ReduceMean-1")
    return operator_mean(data, norm, bool(keep_dims))
