"""Against numpy.mean on every dtype and many layouts: where reducemean is not faster.

The large cases measure bandwidth on a few layouts.  This section times
small and medium inputs of each dtype the kernels take (bool, integers,
float16, bfloat16, float32, float64, complex) in a set of layouts: whole
arrays, rows and columns, narrow columns, several axes, a transposed view,
every second column.  Each cell is numpy's median time over reducemean's, as
a drop-in user would see it (reducemean with its threads, numpy.mean on
one); a cell under 1.00 is a case where numpy.mean is faster.
"""

from __future__ import annotations

import numpy as np

import reducemean

from .cases import resolve_dtype
from .report import table, vs_numpy
from .timing import compare_fast, round_ratio

DTYPES = ("bool", "int8", "int32", "int64", "uint8", "uint64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128")
#: The dtypes of a --tiny run (the tests): one of each kind of loop.
TINY_DTYPES = ("int32", "float32", "complex64")

#: (name, shape, axes, view): ``view`` is None, "T" (transposed) or "step2" ([:, ::2]).
LAYOUTS = (
    ("(100000,)", (100000,), None, None),
    ("(64, 64) all", (64, 64), None, None),
    ("(64, 64) axis 0", (64, 64), (0,), None),
    ("(64, 64) axis 1", (64, 64), (1,), None),
    ("(1000, 1000) axis 0", (1000, 1000), (0,), None),
    ("(1000, 1000) axis 1", (1000, 1000), (1,), None),
    ("(3, 4, 5) axes 0,2", (3, 4, 5), (0, 2), None),
    ("(100, 100, 10) axes 0,2", (100, 100, 10), (0, 2), None),
    ("(10,)*4 axes 1,3", (10, 10, 10, 10), (1, 3), None),
    ("(100000, 3) axis 0", (100000, 3), (0,), None),
    ("(100000, 3) axis 1", (100000, 3), (1,), None),
    ("(256, 256).T axis 1", (256, 256), (1,), "T"),
    ("(256, 512)[:, ::2] axis 1", (256, 512), (1,), "step2"),
    ("(256, 512)[:, ::2] axis 0", (256, 512), (0,), "step2"),
)
#: The layouts of a --tiny run.
TINY_LAYOUTS = tuple(lay for lay in LAYOUTS if np.prod(lay[1]) <= 1 << 16)

_SHORT = {"bool": "bool", "int8": "i8", "int32": "i32", "int64": "i64", "uint8": "u8",
          "uint64": "u64", "float16": "f16", "bfloat16": "bf16", "float32": "f32",
          "float64": "f64", "complex64": "c64", "complex128": "c128"}


def make(shape, dtype, view, seed=0):
    """Random values of ``dtype`` in ``shape``, seen through ``view``: small integers, or [0, 1)."""
    rng = np.random.default_rng(seed)
    if dtype.kind == "b":
        x = rng.random(shape) < 0.5
    elif dtype.kind in "iu":
        x = rng.integers(0, 100, shape).astype(dtype)
    elif dtype.kind == "c":
        x = (rng.random(shape) + 1j * rng.random(shape)).astype(dtype)
    else:
        x = rng.random(shape).astype(dtype)
    if view == "T":
        return x.T
    if view == "step2":
        return x[:, ::2]
    return x


def run(settings, progress, dtypes=DTYPES, layouts=LAYOUTS, notes=None):
    """Median seconds per call of reducemean.mean and numpy.mean, per (layout, dtype)."""
    rows = []
    for dt_name in dtypes:
        dtype = resolve_dtype(dt_name)
        if dtype is None:
            if notes is not None:
                notes.append(f"sweep: {dt_name} skipped, ml_dtypes is not installed")
            progress.step(f"sweep {dt_name} skipped")
            continue
        for name, shape, axes, view in layouts:
            x = make(shape, dtype, view)
            t = compare_fast({"reducemean": lambda: reducemean.mean(x, axis=axes),
                              "numpy": lambda: np.mean(x, axis=axes)},
                             repeat=settings.repeat, target=settings.small_target)
            rows.append({"layout": name, "dtype": dt_name, "reducemean_s": t["reducemean"].median,
                         "numpy_s": t["numpy"].median,
                         "vs_numpy": round_ratio(t["numpy"], t["reducemean"])})
        progress.step(f"sweep {dt_name}")
    return rows


def format_report(rows):
    """A layout x dtype table of numpy's time over reducemean's, and the cells under 1."""
    dtypes = list(dict.fromkeys(r["dtype"] for r in rows))
    layouts = list(dict.fromkeys(r["layout"] for r in rows))
    cell = {(r["layout"], r["dtype"]): vs_numpy(r) for r in rows}
    body = [[lay] + [f"{cell[lay, d]:.2f}" if (lay, d) in cell else "-" for d in dtypes]
            for lay in layouts]
    text = table(["numpy time / reducemean's"] + [_SHORT.get(d, d) for d in dtypes], body,
                  [False] + [True] * len(dtypes))
    slower = [f"{lay} {d} {v:.2f}x" for (lay, d), v in cell.items() if v < 1.0]
    text += f"\nnumpy.mean faster in {len(slower)} of {len(cell)} cells"
    return text + (": " + "; ".join(slower) if slower else "")


__all__ = ["DTYPES", "LAYOUTS", "TINY_DTYPES", "TINY_LAYOUTS", "format_report", "make", "run"]
