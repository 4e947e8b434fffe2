"""reducemean.masked: the zero-filled temporary and one shape's prepared steps."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from exact import exact_mean_values, ulp_distance

from reducemean import masked
from reducemean.dispatch import entry_for

_NAMES = ["bool", "int8", "uint16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


def _dtype(name):
    if name == "bfloat16":
        return np.dtype(pytest.importorskip("ml_dtypes").bfloat16)
    return np.dtype(name)


def _values(dt, shape, rng):
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    x = rng.standard_normal(shape) * 100
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape) * 100
    return x.astype(dt)


@pytest.mark.parametrize("name", _NAMES)
def test_zero_filled_keeps_the_selected_bits_and_zeros_the_rest(name):
    # left-out NaN, Inf and -0.0 become +0 bits; selected values keep their
    # bits exactly, in a new C-ordered array, whatever the input's layout
    dt = _dtype(name)
    rng = np.random.default_rng(len(name) * 7 + dt.itemsize)
    base = _values(dt, (9, 14), rng)
    if dt.kind in "fcV":
        base.reshape(-1)[::5] = np.resize(np.array([np.nan, np.inf, -0.0]).astype(dt),
                                          base.reshape(-1)[::5].shape)
    bits = np.dtype(f"V{dt.itemsize}")
    for view in (base, base.T, base[::-1, ::3]):
        mask = rng.random(view.shape) < 0.5
        got = masked.zero_filled(view, mask)
        assert got.dtype == dt and got.shape == view.shape and got.flags.c_contiguous
        assert not np.shares_memory(got, base)
        gb, vb = got.view(bits), np.ascontiguousarray(view).view(bits)
        assert (gb[mask] == vb[mask]).all()
        assert (gb[~mask] == np.zeros((), dt).view(bits)).all()


@pytest.mark.parametrize("name", _NAMES)
def test_one_shapes_steps_serve_every_layout_and_mask(name):
    # a Steps is made once per shape; any view of that shape and any mask
    # broadcasting to it get their exact means (1 ulp), NaN where a slice
    # selects nothing
    dt = _dtype(name)
    entry = entry_for(dt)
    rd = entry.mean_dtype
    rng = np.random.default_rng(len(name) * 11 + dt.itemsize)
    shape = (6, 10)
    steps = masked.Steps(shape, entry, (1,), rd, (6,))
    base = _values(dt, (12, 20), rng)
    for view in (base[:6, :10], base[::2, ::2], base[:10, :6].T, base[6:, 10:]):
        for mask in (rng.random(shape) < 0.6, rng.random((10,)) < 0.6, np.zeros(shape, bool)):
            m = np.broadcast_to(mask, shape)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                got = steps(view, mask)
            empty = [w for w in caught if "Mean of empty slice" in str(w.message)]
            assert len(empty) == (0 if m.any(1).all() else 1), caught
            assert got.dtype == rd and got.shape == (6,)
            for i in range(6):
                sel = view[i][m[i]]
                if not sel.size:
                    assert np.isnan(got[i])
                    continue
                if dt.kind == "c":
                    parts, unit = ((sel.real, got[i].real), (sel.imag, got[i].imag)), rd.type(0).real.dtype
                else:
                    parts, unit = ((sel, got[i]),), rd
                for values, g in parts:
                    want = exact_mean_values(values)
                    assert ulp_distance(g, want, unit) <= 1, (i, g, want)

