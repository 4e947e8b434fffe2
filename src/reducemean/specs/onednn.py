"""oneDNN Graph ReduceMean.

* ``src``: f32, bf16 or f16; ``dst`` has the same type.
* ``axes`` as the attribute (a list of s64) or as the second input
  ``axes_input`` (a 1-D s32 tensor): exactly one of them.  Values unique,
  each in [-r, r-1].  Empty axes is the identity.
* ``keep_dims`` (default false): keep each reduced axis with length 1.
"""

from __future__ import annotations

import numpy as np

from ..operator_api import normalize_for_spec, operator_mean, parse_for_spec, type_name

_TYPES = ("float32", "bfloat16", "float16")


def reduce_mean(src, axes=None, keep_dims=False, *, axes_input=None):
    """oneDNN Graph ReduceMean of ``src`` over ``axes`` (attribute) or ``axes_input`` (input)."""
    if (axes is None) == (axes_input is None):
        raise ValueError(
            "oneDNN ReduceMean: exactly one of attribute 'axes' and the second input tensor "
            "'axes' should be available"
        )
    src = np.asarray(src)
    if type_name(src.dtype) not in _TYPES:
        raise TypeError(
            f"oneDNN ReduceMean: src type {type_name(src.dtype)} is not supported (f32, bf16, f16)"
        )
    if not isinstance(keep_dims, (bool, np.bool_)):
        raise TypeError(f"oneDNN ReduceMean: keep_dims is a bool attribute, got {keep_dims!r}")
    if axes_input is not None:
        if not isinstance(axes_input, np.ndarray) or axes_input.dtype != np.int32:
            got = getattr(axes_input, "dtype", type(axes_input).__name__)
            raise TypeError(f"oneDNN ReduceMean: input 'axes' must be a 1-D s32 tensor, got {got}")
        if axes_input.ndim != 1:
            raise ValueError(
                f"oneDNN ReduceMean: input 'axes' must be a 1-D s32 tensor, got shape {axes_input.shape}"
            )
        ax = parse_for_spec(axes_input, "oneDNN ReduceMean", "input 'axes' is a 1-D s32 tensor")
    else:
        ax = parse_for_spec(axes, "oneDNN ReduceMean", "attribute 'axes' is a s64 list")
    if not ax:
        return src.copy()  # "If axes is empty, corresponds to the identity operation"
    norm = normalize_for_spec(ax, src.ndim, "oneDNN ReduceMean")
    return operator_mean(src, norm, bool(keep_dims))
