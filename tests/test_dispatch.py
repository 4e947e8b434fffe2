"""``reducemean.dispatch``: bfloat16 is recognised without importing ml_dtypes.

The core needs only numpy and numba (CONTRACT.md section 4): with ml_dtypes
impossible to import, every front-end still runs on the other dtypes, and
none of the optional extras is imported by using them.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

_WITHOUT_EXTRAS = """
    import sys
    for name in ("ml_dtypes", "onnx", "dask", "torch", "onnxruntime", "openvino",
                 "matplotlib", "tqdm"):
        sys.modules[name] = None  # importing any of them now raises ImportError
    import numpy as np
    import reducemean
    from reducemean.specs import onednn, onnx, openvino

    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)  # x[i, j, k] = 12 i + 4 j + k
    assert reducemean.mean(x) == np.float32(11.5)
    assert reducemean.mean(x, axis=(0, 2)).tolist() == [7.5, 11.5, 15.5]
    assert reducemean.mean(x.astype(np.float16), axis=0).tolist() == [[6, 7, 8, 9], [10, 11, 12, 13],
                                                                     [14, 15, 16, 17]]
    assert reducemean.mean(x.astype(np.int64), axis=1, keepdims=True).shape == (2, 1, 4)
    assert reducemean.mean(x > 5) == np.float64(18 / 24)
    assert reducemean.reduce_mean(np.array([-3, -4], np.int64)).tolist() == [-3]
    assert onnx.reduce_mean(x, axes=[2], keepdims=0, opset=11).tolist() == [[1.5, 5.5, 9.5],
                                                                            [13.5, 17.5, 21.5]]
    assert openvino.reduce_mean(x.astype(np.int32), np.array([0])).tolist()[0] == [6, 7, 8, 9]
    assert onednn.reduce_mean(x, axes=[0, 1, 2]).tolist() == 11.5
    try:
        onednn.reduce_mean(x.astype(np.float64), axes=[0])
    except TypeError as e:
        assert "float64" in str(e)
    else:
        raise SystemExit("float64 src accepted")
    loaded = [m for m in ("ml_dtypes", "onnx", "dask", "torch") if sys.modules.get(m) is not None]
    print("loaded", loaded)
"""


def test_core_runs_without_ml_dtypes_or_any_extra():
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(_WITHOUT_EXTRAS)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "loaded []" in r.stdout
