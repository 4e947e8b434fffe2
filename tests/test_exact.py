"""The exact reference (exact.py) itself, against Fractions added one by one.

Every other test trusts exact.py, which sums floats as Python integers over
a common power of two: here its sums, means and ulp distances are checked
against the plainest exact arithmetic there is (``fractions.Fraction``,
value by value), on values of mixed magnitudes, subnormals, integers and
the IEEE non-finite rules.
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from exact import exact_mean, exact_sum, ulp_distance

BF16 = np.dtype(ml_dtypes.bfloat16)


def fraction_sum(values):
    return sum((Fraction(v) if isinstance(v, float) else int(v) for v in values), 0)


def mixed_floats(rng, n, dtype=np.float64):
    """Values of both signs across the type's range, with subnormals and zeros."""
    dtype = np.dtype(dtype)
    wide = np.float32 if dtype == BF16 else dtype
    info = np.finfo(wide)
    exp = rng.integers(info.minexp - info.nmant, info.maxexp - 4, n)
    x = rng.choice([-1.0, 1.0], n) * rng.random(n) * np.exp2(exp.astype(np.float64))
    x[rng.random(n) < 0.1] = 0.0
    return x.astype(dtype)


@pytest.mark.parametrize("seed", range(5))
def test_exact_sum_is_the_fraction_sum(seed):
    rng = np.random.default_rng(seed)
    floats = mixed_floats(rng, 200).tolist()
    assert exact_sum(floats) == fraction_sum(floats)
    assert exact_sum(floats) == -exact_sum([-v for v in floats])
    ints = rng.integers(-2**63, 2**63 - 1, 50, endpoint=True).tolist() + [True, np.int64(-7)]
    assert exact_sum(ints) == fraction_sum(ints) and type(exact_sum(ints)) is int
    both = floats + ints
    assert exact_sum(both) == fraction_sum(both)
    assert exact_sum([5e-324, 5e-324, -1e308, 1e308]) == Fraction(2) ** -1073


@pytest.mark.parametrize("values, want", [
    ([1.0, math.nan, 2.0], math.nan),
    ([math.inf, 1.0], math.inf),
    ([-math.inf, 1e308], -math.inf),
    ([math.inf, -math.inf], math.nan),
    ([], 0),
])
def test_exact_sum_follows_ieee_for_non_finite_values(values, want):
    got = exact_sum(values)
    assert (math.isnan(got) and math.isnan(want)) or got == want


@pytest.mark.parametrize("name", ["float64", "float32", "float16", "bfloat16", "int64", "uint64",
                                  "int8", "bool"])
def test_exact_mean_is_each_slice_s_fraction_mean(name):
    dt = BF16 if name == "bfloat16" else np.dtype(name)
    rng = np.random.default_rng(len(name))
    if dt.kind == "b":
        x = rng.random((3, 4, 5)) < 0.5
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, (3, 4, 5), dtype=dt, endpoint=True)
    else:
        x = mixed_floats(rng, 60, dt).reshape(3, 4, 5)
    wide = x.astype(np.float32) if dt == BF16 else x
    for axis in (None, 0, 2, (0, 2), (2, 1, 0), ()):
        got = exact_mean(x, axis)
        axes = tuple(range(3)) if axis is None else (axis,) if isinstance(axis, int) else axis
        kept = [d for d in range(3) if d not in axes]
        moved = np.moveaxis(wide, kept + list(axes), range(3))
        rows = moved.reshape(got.size, -1)
        for g, row in zip(got.ravel(), rows):
            assert g == Fraction(fraction_sum(row.tolist()), len(row)), (name, axis)
            assert isinstance(g, Fraction)


def test_exact_mean_of_empty_slices_and_non_finite_values():
    assert math.isnan(exact_mean(np.zeros((0, 3)), 0)[0])
    assert exact_mean(np.zeros((0, 3)), 1).shape == (0,)
    x = np.array([[1.0, np.inf], [2.0, np.nan], [np.inf, -np.inf]])
    got = exact_mean(x, 1)
    assert got[0] == math.inf and math.isnan(got[1]) and math.isnan(got[2])
    assert exact_mean(np.float32(0.1)) == Fraction(float(np.float32(0.1)))


def fraction_ulps(got, exact, mant, emin):
    """The distance in ulps of the exact value's binade, by Fractions alone."""
    exact = Fraction(exact)
    mag = abs(exact) if exact else abs(Fraction(got))
    if mag == 0:
        return 0.0
    e = max(emin, mag.numerator.bit_length() - mag.denominator.bit_length() - 2)  # below it
    while Fraction(2) ** (e + 1) <= mag:
        e += 1
    return float(abs(Fraction(got) - exact) / Fraction(2) ** (e - mant + 1))


@pytest.mark.parametrize("dtype, mant, emin", [
    (np.float64, 53, -1022), (np.float32, 24, -126), (np.float16, 11, -14), (BF16, 8, -126),
])
def test_ulp_distance_is_the_fraction_distance(dtype, mant, emin):
    rng = np.random.default_rng(mant)
    info_dtype = np.float32 if dtype == BF16 else dtype
    for v in mixed_floats(rng, 300, info_dtype).tolist():
        exact = Fraction(v) * Fraction(int(rng.integers(1, 1000)), int(rng.integers(1, 1000)))
        got = float(np.float64(exact).astype(dtype))
        wide = np.asarray(got, info_dtype)
        for g in (got, float(np.nextafter(wide, info_dtype(np.inf))), v, 0.0):
            if not math.isfinite(g):
                continue
            want = fraction_ulps(g, exact, mant, emin)
            assert ulp_distance(g, exact, dtype) == want, (g, exact)


def test_ulp_distance_at_powers_of_two_numpy_integers_and_non_finite_values():
    # an exact power of two is the first value of its binade, not the last of the one below
    for e in (-1074, -1022, -60, 0, 1, 52, 1023):
        power = Fraction(2) ** e
        for g in (float(power), math.nextafter(float(power), math.inf),
                  math.nextafter(float(power), 0.0)):
            assert ulp_distance(g, power, np.float64) == fraction_ulps(g, power, 53, -1022), (e, g)
    assert ulp_distance(1.0 + 2.0**-52, 1, np.float64) == 1.0
    assert ulp_distance(1.0 - 2.0**-53, 1, np.float64) == 0.5
    # numpy integers as the exact value do not wrap (as a Fraction's numerator they did)
    assert ulp_distance(5e-324, np.int64(-139), np.float64) == 139 * 2**45
    assert ulp_distance(float(2**62), Fraction(np.int64(2**62), np.int64(3)), np.float64) == (
        fraction_ulps(float(2**62), Fraction(2**62, 3), 53, -1022))
    assert ulp_distance(math.nan, math.nan, np.float32) == 0.0
    assert ulp_distance(1.0, math.inf, np.float32) == math.inf
    assert ulp_distance(math.inf, 1, np.float32) == math.inf
