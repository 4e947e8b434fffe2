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


_LIGHT_SCRIPT = """
import sys
import numpy as np, reducemean
from reducemean import cacheload
if len(sys.argv) > 1:  # the kernels' registries refused: each compile must fall back
    def refuse(context):
        raise RuntimeError("light registries refused")
    cacheload._kernel_registries = refuse
rng = np.random.default_rng(0)
ok = True
dtypes = (np.float32, np.float64, np.float16, np.int32, np.uint8, np.complex64, np.bool_)
for dt in dtypes[:2] if len(sys.argv) > 1 else dtypes:
    x = (rng.random((40, 6, 10)) * 10).astype(dt)
    for v, ax in ((x, 1), (x, (0, 2)), (x[..., ::2], 0), (x.T, None), (x[:, 0], 0)):
        ok &= np.allclose(reducemean.mean(v, axis=ax), np.mean(v, axis=ax, dtype=np.float64),
                          rtol=1e-3 if dt == np.float16 else 1e-6)
    w = (rng.random((30, 20)) * 10).astype(dt)
    ok &= np.allclose(reducemean.mean(w, axis=1, where=w > 2),
                      np.mean(w, axis=1, where=w > 2, dtype=np.float64),
                      rtol=1e-3 if dt == np.float16 else 1e-6, equal_nan=True)
print("results", ok)
print("retried", len(cacheload.RETRIED), sorted({e for _, e in cacheload.RETRIED})[:3])
print("random", "numba.np.random.generator_methods" in sys.modules)
"""


def test_kernels_compile_with_their_own_lowering_and_fall_back_on_numbas_full_set(tmp_path):
    runs = [subprocess.run([sys.executable, "-c", _LIGHT_SCRIPT, *extra], capture_output=True,
                           text=True, timeout=900,
                           env=dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / str(len(extra)))))
            for extra in ((), ("refuse",))]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
        assert "results True" in r.stdout
    light, refused = runs
    # Every kernel of these first calls compiled with the kernels' lowering
    # alone, so none of Numba's other modules (random numbers here) came in.
    assert "retried 0 []" in light.stdout
    assert "random False" in light.stdout
    # With the light set refused, every compile went again after Numba's
    # full refresh, and was right.
    assert "retried 0" not in refused.stdout
    assert "light registries refused" in refused.stdout
    assert "random True" in refused.stdout


def test_a_dispatcher_without_numbas_compiler_internals_is_left_as_it_is():
    import types

    from reducemean import cacheload

    for stranger in (types.SimpleNamespace(), types.SimpleNamespace(_compiler=object())):
        before = dict(vars(stranger))
        cacheload._compiles_light(stranger)
        assert vars(stranger) == before


_STALE_SCRIPT = """
import numpy as np, reducemean
print("mean", float(reducemean.mean(np.arange(1000, dtype=np.float32))))
print("short", reducemean.mean(np.arange(192, dtype=np.float32).reshape(64, 3), axis=1)[-1])
print("from", reducemean.__file__)
"""


def test_an_edit_to_any_module_of_the_package_makes_the_cached_kernels_stale(tmp_path):
    # Numba stamps a cached function with its own file (kernels.py); the
    # code of numerics.py is compiled into it, so an edit there alone must
    # make the next process compile again rather than load the old code:
    # the kernels, and the helpers and overloads cached by themselves that
    # they link (the short rows' loop: kernels._short_rows, whose code the
    # call below loaded stale before every function of the package was
    # stamped).
    import shutil

    import reducemean

    src = tmp_path / "src"
    shutil.copytree(os.path.dirname(reducemean.__file__), src / "reducemean",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), NUMBA_DEBUG_CACHE="1",
               PYTHONPATH=str(src))

    def run():
        r = subprocess.run([sys.executable, "-c", _STALE_SCRIPT], env=env, capture_output=True,
                           text=True, timeout=600, cwd=tmp_path)
        assert r.returncode == 0, r.stderr[-2000:]
        assert "mean 499.5" in r.stdout
        assert "short 190.0" in r.stdout
        assert f"from {src}" in r.stdout  # the copy, not the package under test
        return [line for line in r.stdout.splitlines() if line.startswith("[cache]")]

    first, again = run(), run()
    assert any("data saved" in line for line in first)
    assert any("data loaded" in line for line in again)
    assert not any("data saved" in line for line in again)
    with open(src / "reducemean" / "numerics.py", "a") as f:
        f.write("# an edit\n")
    edited = run()
    assert any("data saved" in line for line in edited)
    assert not any("data loaded" in line for line in edited)
