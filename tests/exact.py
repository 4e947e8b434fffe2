"""Exact reference means, independent of the package under test.

Every value is taken exactly (a Python int; a finite float as the integer
``n`` of its ``n / 2**k``), summed exactly in Python ints, and divided
exactly as a ``fractions.Fraction``; only the final comparison rounds.
Non-finite inputs follow IEEE rules: any NaN, or +inf together with -inf,
gives NaN; a lone infinity gives that infinity.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

try:  # optional: bfloat16 arrays
    import ml_dtypes

    BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes is a test dependency
    ml_dtypes = None
    BFLOAT16 = None


def exact_sum(values):
    """Exact sum of an iterable of scalars; float('nan')/inf for non-finite input.

    An int when every value is an integer, else a Fraction.  A finite float
    is ``n / 2**k`` exactly (``float.as_integer_ratio``), so the floats are
    summed as the integers ``n * 2**(K - k)`` over the largest ``2**K``:
    the same exact sum as adding Fractions one by one, without a gcd per value.
    """
    ints = 0
    pairs = []
    shift = 0
    pos_inf = neg_inf = nan = False
    for v in values:
        if isinstance(v, (bool, np.bool_, int, np.integer)):
            ints += int(v)
            continue
        f = float(v)
        if not math.isfinite(f):
            if math.isnan(f):
                nan = True
            elif f > 0:
                pos_inf = True
            else:
                neg_inf = True
            continue
        n, d = f.as_integer_ratio()
        k = d.bit_length() - 1
        pairs.append((n, k))
        shift = max(shift, k)
    if nan or (pos_inf and neg_inf):
        return math.nan
    if pos_inf:
        return math.inf
    if neg_inf:
        return -math.inf
    if not pairs:
        return ints
    return Fraction(sum(n << (shift - k) for n, k in pairs), 1 << shift) + ints


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
    sums = _exact_sums(flat.reshape(-1, count)) if count else None
    if sums is not None:
        total, scale = sums
        out.reshape(-1)[:] = [Fraction(s * scale.numerator, count * scale.denominator)
                              for s in total]
        return out
    for idx in np.ndindex(*kshape):
        out[idx] = exact_mean_values(flat[idx].tolist() if nd else flat.tolist())
    return out


def _exact_sums(rows):
    """Exact sums of the rows of a 2-d integer or finite float array, or None.

    Returns Python ints ``total`` and a power of two ``scale`` (an int or a
    Fraction) with each row's sum exactly ``total[i] * scale``; None when a
    value is not finite (exact_sum's IEEE rules apply then).  A float is
    ``m * 2**e`` with ``m`` a 53-bit integer, so every value is an integer
    times ``2**min(e)``, and numpy sums those Python ints as objects.
    """
    if rows.dtype.kind in "biu":
        return rows.astype(object).sum(axis=1), 1
    if not np.isfinite(rows).all():
        return None
    frac, exp = np.frexp(rows.astype(np.float64))  # every narrower float widens exactly
    mant = (frac * 2.0**53).astype(np.int64)  # exact: |frac| < 1
    exp = exp.astype(np.int64) - 53
    low = int(exp.min(initial=0))
    ints = np.left_shift(mant.astype(object), (exp - low).astype(object))
    return ints.sum(axis=1), Fraction(2) ** low


def ulp_distance(got, exact, dtype):
    """Distance, in units in the last place of ``dtype``, between ``got`` and an exact value.

    ``exact`` is a Fraction, int or float.  Non-finite values must match
    exactly (NaN with NaN, inf with the same inf), else the distance is inf.
    """
    g = float(got)
    if isinstance(exact, float) and not math.isfinite(exact):
        if math.isnan(exact):
            return 0.0 if math.isnan(g) else math.inf
        return 0.0 if g == exact else math.inf
    if not math.isfinite(g):
        return math.inf
    mant, emin = _precision(np.dtype(dtype))
    en, ed = (exact, 1) if isinstance(exact, np.integer) else exact.as_integer_ratio()
    en, ed = int(en), int(ed)  # a Fraction of numpy ints holds numpy ints, which wrap
    gn, gd = g.as_integer_ratio()
    p, q = (abs(en), ed) if en else (abs(gn), gd)
    if p == 0:
        return 0.0
    # the exact value's binade: the largest e with 2**e <= p / q, at least emin
    e = p.bit_length() - q.bit_length()
    if (p << max(-e, 0)) < (q << max(e, 0)):
        e -= 1
    e = max(e, emin)
    # |g - exact| / 2**(e - mant + 1), divided once (int / int rounds correctly)
    diff = abs(gn * ed - en * gd)
    den = gd * ed
    s = mant - 1 - e
    return (diff << s) / den if s >= 0 else diff / (den << -s)


@functools.lru_cache(maxsize=None)
def _precision(dtype):
    """``dtype``'s significand bits (with the implicit one) and least normal exponent."""
    if BFLOAT16 is not None and dtype == BFLOAT16:
        return 8, -126
    finfo = np.finfo(dtype)
    return finfo.nmant + 1, finfo.minexp


def trunc_mean(values):
    """Exact integer mean truncated toward zero (ONNX integer semantics); None when empty."""
    values = [int(v) for v in values]
    if not values:
        return None
    s = sum(values)
    q = abs(s) // len(values)
    return q if s >= 0 else -q


@functools.lru_cache(maxsize=None)
def _finite_values(dtype):
    """Every finite value of a 16-bit float type, ascending, as (Fractions, bit patterns)."""
    bits = np.arange(1 << 16, dtype=np.uint16)
    with np.errstate(invalid="ignore"):  # (the NaN patterns)
        vals = bits.view(dtype).astype(np.float64)
    keep = np.isfinite(vals) & ~((vals == 0) & np.signbit(vals))  # one zero
    order = np.argsort(vals[keep], kind="stable")
    return [Fraction(float(v)) for v in vals[keep][order]], bits[keep][order]


def round_to_16(value, dtype):
    """The exact ``value`` (a Fraction) rounded to nearest, ties to even, in a 16-bit float type.

    Found among the type's own values, with no float arithmetic: the two
    that bracket ``value``, the nearer, on a tie the one whose last bit is
    0; beyond the largest value by half its spacing or more, Inf.
    """
    import bisect

    dtype = np.dtype(dtype)
    vals, bits = _finite_values(dtype)
    top = vals[-1] + (vals[-1] - vals[-2]) / 2
    if abs(value) >= top:
        return np.array(math.copysign(math.inf, value)).astype(dtype)
    k = bisect.bisect_left(vals, value)
    if k == len(vals) or (k == 0 and value < vals[0]):  # within half a spacing past the end
        k = min(k, len(vals) - 1)
        return bits[k:k + 1].view(dtype)[0]
    if vals[k] == value:
        return bits[k:k + 1].view(dtype)[0]
    lo, hi = k - 1, k
    dlo, dhi = value - vals[lo], vals[hi] - value
    pick = lo if dlo < dhi or (dlo == dhi and bits[lo] % 2 == 0) else hi
    return bits[pick:pick + 1].view(dtype)[0]
