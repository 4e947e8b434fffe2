"""Kernels loaded from Numba's cache in a new process, without readying the compiler."""

import os
import subprocess
import sys

_SCRIPT = """
import sys
import numpy as np, reducemean
from numba.core.base import BaseContext

refreshes = []  # Numba readies its compiler by refreshing the target context
_refresh = BaseContext.refresh
BaseContext.refresh = lambda self: (refreshes.append(1), _refresh(self))[1]
a = np.arange(1 << 16, dtype=np.float32).reshape(256, 256)
print("float32", float(reducemean.mean(a)), reducemean.mean(a, axis=0)[:2].tolist(),
      reducemean.mean(a[:, ::2], axis=1)[:2].tolist())
print("refreshed", len(refreshes) > 0)
print("arrayobj", "numba.np.arrayobj" in sys.modules)
print("numpy.ma", "numpy.ma" in sys.modules)
if len(sys.argv) > 1:  # then a dtype no earlier process compiled: the compiler must still work
    b = np.arange(-600, 600, dtype=np.int16).reshape(40, 30)
    print("int16", reducemean.mean(b, axis=1).tolist() == b.mean(axis=1).tolist(),
          reducemean.reduce_mean(b, axes=[0], keepdims=0).tolist()
          == np.trunc(b.mean(axis=0)).tolist(), len(refreshes) > 0)
"""

# numpy's float64 means of these small integers are exact
_FLOAT32 = "float32 32767.5 [32640.0, 32641.0] [127.0, 383.0]"


def test_a_warm_process_loads_its_kernels_without_readying_numbas_compiler(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NUMBA_DEBUG_CACHE="1")
    runs = [subprocess.run([sys.executable, "-c", _SCRIPT, *extra], env=env, capture_output=True,
                           text=True, timeout=600) for extra in ((), ("compile",))]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
        assert _FLOAT32 in r.stdout
    cold, warm = runs
    assert "data saved" in cold.stdout
    # The first process compiled, so its compiler was readied; the second
    # loaded every kernel of those calls and never readied it, until a
    # dtype no process had compiled came along.
    assert "refreshed True" in cold.stdout
    loaded = [line for line in warm.stdout.splitlines() if "data loaded" in line]
    assert any("kernels.outer_serial-" in line for line in loaded)
    assert "refreshed False" in warm.stdout
    # The column kernel's states are allocated in place (numerics._zeroed),
    # so loading it rebuilds no environment of Numba's array module, whose
    # import a load would otherwise pay.
    assert "arrayobj True" in cold.stdout
    assert "arrayobj False" in warm.stdout
    # Nor does typing their arguments import numpy.ma (valuetypes).
    assert "numpy.ma False" in warm.stdout
    assert "int16 True True True" in warm.stdout
