"""Huge inputs and memory: more than 2**31 elements, and no copy of a 1 GiB view."""

import os
import subprocess
import sys
import textwrap
from fractions import Fraction

import numpy as np
import pytest

import reducemean
from exact import ulp_distance

pytestmark = pytest.mark.slow


@pytest.mark.timeout(300)
def test_more_than_2_31_elements_whole_and_rows():
    n = 2**31 + 4099
    a = np.ones(n, dtype=np.int8)
    a[::1000003] = 7  # exact sum known from Python ints
    k = len(range(0, n, 1000003))
    got = reducemean.mean(a)
    assert ulp_distance(got, Fraction(n + 6 * k, n), np.float64) <= 1
    assert reducemean.reduce_mean(a, keepdims=0) == 1  # (n + 6k) // n
    rows = a[: 2**31].reshape(2, 2**30)
    k0 = len(range(0, 2**30, 1000003))
    k1 = len(range(0, 2**31, 1000003)) - k0
    got_rows = reducemean.mean(rows, axis=1)
    for g, sevens in zip(got_rows, (k0, k1)):
        assert ulp_distance(g, Fraction(2**30 + 6 * sevens, 2**30), np.float64) <= 1
    del a, rows


_RSS = """
    import resource, numpy as np, reducemean
    a = np.ones((1 << 14, 1 << 14), dtype=np.float32)   # 1 GiB
    views = {"transposed": (a.T, 1), "step": (a[:, ::2], 0), "reversed": (a[::-1, ::-1], None),
             "fortran-like": (a.T, (0, 1))}
    reducemean.mean(a[:64, :64].T, axis=1)                    # compile outside the measurement
    reducemean.mean(a[:64, :64][:, ::2], axis=0)
    reducemean.mean(a[:64, :64][::-1, ::-1])
    reducemean.mean(a[:64, :64].T, axis=(0, 1))
    for name, (v, ax) in views.items():
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        r = reducemean.mean(v, axis=ax)
        grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        out_kib = np.asarray(r).nbytes // 1024
        ok = np.allclose(r, 1.0)
        print(name, grown_kib, out_kib, ok)
"""


@pytest.mark.timeout(300)
def test_peak_memory_of_a_1_gib_view_grows_by_the_output_only():
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(_RSS)], capture_output=True,
                       text=True, timeout=280, env=dict(os.environ))
    assert r.returncode == 0, r.stderr[-2000:]
    lines = [line.split() for line in r.stdout.strip().splitlines()]
    assert len(lines) == 4
    for name, grown, out, ok in lines:
        assert ok == "True", name
        # output plus a few MiB (thread stacks, partial states); a copy would be 1 GiB
        assert int(grown) <= int(out) + 8 * 1024, (name, grown, out)
