"""reducemean.states: means finished over a count per output."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from exact import exact_sum, ulp_distance

from reducemean import states


@pytest.mark.parametrize("dtype, rd", [(np.float32, np.float32), (np.float64, np.float64),
                                       (np.int32, np.float64), (np.float16, np.float16),
                                       (np.complex64, np.complex64)])
@pytest.mark.parametrize("count_shape", [(3, 4), (3, 1), (1, 4), (4,)])
def test_finish_divides_each_output_by_its_own_count(dtype, rd, count_shape):
    # counts that broadcast to the states' lead shape, zeros among them
    rng = np.random.default_rng(sum(count_shape) + np.dtype(dtype).itemsize)
    a = (rng.standard_normal((3, 5, 4)) * 100).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * (rng.standard_normal(a.shape) * 100).astype(dtype)
    st, _ = states.partial(a, axis=1, keepdims=False)
    counts = rng.integers(0, 9, count_shape)
    counts.reshape(-1)[0] = 0
    got = states.finish(st, counts, dtype, rd)
    full = np.broadcast_to(counts, (3, 4))
    complex_ = np.dtype(dtype).kind == "c"
    sums = np.empty((3, 4), object)
    for i, j in np.ndindex(3, 4):
        v = a[i, :, j]
        sums[i, j] = (exact_sum(v.real), exact_sum(v.imag)) if complex_ else exact_sum(v)
    assert got.dtype == np.dtype(rd) and got.shape == (3, 4)
    for idx in np.ndindex(3, 4):
        n = int(full[idx])
        if n == 0:  # an empty slice: NaN (the caller warns)
            assert np.isnan(got[idx])
            continue
        parts = sums[idx] if isinstance(sums[idx], tuple) else (sums[idx],)
        values = (got[idx].real, got[idx].imag) if len(parts) == 2 else (got[idx],)
        part = np.dtype(rd).type(0).real.dtype
        for g, s in zip(values, parts):
            # the contract's rule: within one ulp of the exact mean
            assert ulp_distance(g, Fraction(s) / n, part) <= 1, (idx, g, float(Fraction(s) / n))
