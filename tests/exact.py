"""Exact reference means, independent of the package under test.

Every value is lifted to a ``fractions.Fraction`` (or a Python int), summed
exactly, and divided exactly; only the final comparison rounds.  Non-finite
inputs follow IEEE rules: any NaN, or +inf together with -inf, gives NaN; a
lone infinity gives that infinity.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

try:  # optional: bfloat16 arrays
    import ml_dtypes

    BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes is a test dependency
    ml_dtypes = None
    BFLOAT16 = None


def _as_exact(x):
    """A scalar as an exact number (int or Fraction) or a non-finite float."""
    if isinstance(x, (bool, np.bool_)):
        return int(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    f = float(x)
    if not math.isfinite(f):
        return f
    return Fraction(f)


def exact_sum(values):
    """Exact sum of an iterable of scalars; float('nan')/inf for non-finite input."""
    total = 0
    pos_inf = neg_inf = nan = False
    for v in values:
        e = _as_exact(v)
        if isinstance(e, float):
            if math.isnan(e):
                nan = True
            elif e > 0:
                pos_inf = True
            else:
                neg_inf = True
        else:
            total += e
    if nan or (pos_inf and neg_inf):
        return math.nan
    if pos_inf:
        return math.inf
    if neg_inf:
        return -math.inf
    return total


def exact_mean_values(values):
    """Exact mean of a flat list (Fraction / int / non-finite float); NaN when empty."""
    values = list(values)
    if not values:
        return math.nan
    s = exact_sum(values)
    if isinstance(s, float):
        return s
    return Fraction(s) / len(values)


def _real_view(a):
    """Values of ``a`` as float64/int objects; bfloat16 and float16 widened exactly."""
    if BFLOAT16 is not None and a.dtype == BFLOAT16:
        return a.astype(np.float32)
    return a


def exact_mean(a, axis=None):
    """Exact mean of ``a`` over ``axis`` (None, int or tuple), as an object array.

    Each element is a Fraction, an int, or a non-finite float.  For complex
    input the real and imaginary parts are returned as a pair of such arrays.
    """
    a = np.asarray(a)
    if np.iscomplexobj(a):
        return exact_mean(a.real, axis), exact_mean(a.imag, axis)
    a = _real_view(a)
    nd = a.ndim
    if axis is None:
        axes = tuple(range(nd))
    elif isinstance(axis, (int, np.integer)):
        axes = (int(axis) % nd,) if nd else ()
    else:
        axes = tuple(int(x) % nd for x in axis)
    kept = [d for d in range(nd) if d not in axes]
    moved = np.moveaxis(a, kept + list(axes), range(nd)) if nd else a
    kshape = tuple(a.shape[d] for d in kept)
    count = math.prod(a.shape[d] for d in axes)
    flat = moved.reshape(kshape + (count,)) if nd else moved.reshape(1)
    out = np.empty(kshape, dtype=object)
    for idx in np.ndindex(*kshape):
        out[idx] = exact_mean_values(flat[idx].tolist() if nd else flat.tolist())
    return out


def ulp_distance(got, exact, dtype):
    """Distance, in units in the last place of ``dtype``, between ``got`` and an exact value.

    ``exact`` is a Fraction, int or float.  Non-finite values must match
    exactly (NaN with NaN, inf with the same inf), else the distance is inf.
    """
    dtype = np.dtype(dtype)
    g = float(got)
    if isinstance(exact, float) and not math.isfinite(exact):
        if math.isnan(exact):
            return 0.0 if math.isnan(g) else math.inf
        return 0.0 if g == exact else math.inf
    if not math.isfinite(g):
        return math.inf
    exact = Fraction(exact)
    if BFLOAT16 is not None and dtype == BFLOAT16:
        mant, emin = 8, -126
    else:
        finfo = np.finfo(dtype)
        mant, emin = finfo.nmant + 1, finfo.minexp
    mag = abs(exact) if exact != 0 else Fraction(abs(g)) if g != 0 else Fraction(0)
    if mag == 0:
        return 0.0
    e = max(math.floor(math.log2(mag)) if mag > 0 else emin, emin)
    # the ulp of the exact value's binade (log2 may be off by one near powers of two)
    while Fraction(2) ** e > mag and e > emin:
        e -= 1
    while Fraction(2) ** (e + 1) <= mag:
        e += 1
    ulp = Fraction(2) ** (e - mant + 1)
    return float(abs(Fraction(g) - exact) / ulp)


def trunc_mean(values):
    """Exact integer mean truncated toward zero (ONNX integer semantics); None when empty."""
    values = [int(v) for v in values]
    if not values:
        return None
    s = sum(values)
    q = abs(s) // len(values)
    return q if s >= 0 else -q
