"""The case table: which arrays are reduced over which axes, and how they are made.

A large case is a shape, the axes to reduce, and optionally a view to take
(transposed, every second column).  Its inputs are views into one flat
buffer per dtype, so a run fills memory once per dtype rather than once per
case.  ``scale`` shrinks the one dimension of each case that is a batch or a
row count, so ``--quick`` (and the tests) keep every pattern while touching
less memory.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from math import prod

import numpy as np

#: Scale of ``--quick``: float32 inputs of about 16 MiB instead of 256 MiB.
QUICK_SCALE = 1 / 16

#: Dtypes of the large cases, by the name used on the command line and in reports.
DTYPE_NAMES = ("float32", "float64", "float16", "bfloat16", "int32")


def resolve_dtype(name):
    """The numpy dtype for ``name``, or ``None`` when it needs a package that is missing."""
    if name == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            return None
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


@dataclass(frozen=True)
class Case:
    """One large reduction pattern, shown as one row per dtype."""

    name: str
    shape: tuple  #: the shape of the array that is allocated
    axes: tuple | None  #: the axes reduced on the view (``None``: all)
    scaled: int  #: which dimension of ``shape`` ``scale`` shrinks
    view: str = ""  #: "" (the array itself), "T" (transposed) or "step2" (``[:, ::2]``)
    odd: bool = False  #: keep the scaled dimension odd
    label: str = ""  #: what the case stands for

    def base_shape(self, scale=1.0):
        shape = list(self.shape)
        n = max(1, round(shape[self.scaled] * scale))
        if self.odd and n % 2 == 0:
            n += 1
        shape[self.scaled] = n
        return tuple(shape)

    def elements(self, scale=1.0):
        """Elements allocated (a step-2 view reads only half of them)."""
        return prod(self.base_shape(scale))

    def make(self, buf, scale=1.0):
        """The input: a view of the first elements of the flat ``buf``."""
        shape = self.base_shape(scale)
        a = buf[: prod(shape)].reshape(shape)
        if self.view == "T":
            return a.T
        if self.view == "step2":
            return a[:, ::2]
        return a

    def shown_shape(self, scale=1.0):
        """The shape of the array reduced, with its view spelled out."""
        shape = self.base_shape(scale)
        if self.view == "T":
            return f"{shape}.T"
        if self.view == "step2":
            return f"{shape}[:, ::2]"
        return str(shape)


M = 1 << 20

#: The large cases (the benchmark issue's list), in report order.
LARGE = (
    Case("whole", (64 * M,), None, 0, label="whole array"),
    Case("rows", (4096, 16384), (1,), 0, label="rows: each row to one value"),
    Case("columns", (4096, 16384), (0,), 0, label="columns: each column to one value"),
    Case("nchw_hw", (32, 256, 56, 56), (2, 3), 0, label="NCHW spatial mean (global pooling)"),
    Case("nchw_c", (32, 256, 56, 56), (1,), 0, label="NCHW over channels"),
    Case("nchw_nhw", (32, 256, 56, 56), (0, 2, 3), 0, label="NCHW per-channel (batch norm)"),
    Case("nhwc_hw", (32, 56, 56, 256), (1, 2), 0, label="NHWC spatial mean"),
    Case("odd", (1001, 3, 4099), (0, 2), 0, odd=True, label="odd sizes"),
    Case("transposed", (8192, 8192), (1,), 0, view="T", label="transposed view"),
    Case("step2_rows", (4096, 32768), (1,), 0, view="step2", label="step-2 view over rows"),
    Case("step2_cols", (4096, 32768), (0,), 0, view="step2", label="step-2 view over columns"),
    Case("tall_skinny", (16 * M, 4), (1,), 0, label="tall-skinny"),
)

#: Small inputs: (shape, axes), each in every SMALL_DTYPES.  Per-call time
#: matters here, not bandwidth.
SMALL = (
    ((1,), None),  # the Python layer's cost: nothing to reduce
    ((8, 8), None),
    ((8, 8), (1,)),
    ((3, 4, 5), None),
    ((3, 4, 5), (0, 2)),
    ((3, 4, 5), (1,)),
    ((64, 128), (0,)),
    ((64, 128), (1,)),
    ((256, 256), None),
    ((256, 256), (0,)),
    ((256, 256), (1,)),
)
#: float64 is numpy's default; float32 is what models use.
SMALL_DTYPES = ("float32", "float64")

#: Sections of a run, selectable with ``--cases``.
SECTIONS = ("large", "small", "sweep", "coldstart", "scaling", "threshold")
DEFAULT_SECTIONS = ("large", "small", "sweep", "coldstart", "scaling")

#: The big cases thread scaling is shown for: one inner (row sums) and one outer loop.
SCALING_CASES = (("whole", "float32"), ("columns", "float32"))


def select(spec):
    """Parse ``--cases``: returns (sections, cases, dtype names).

    Items may name a section (``small``, ``threshold``, ...), a large case
    or a glob over them (``nchw*``), or a dtype (``float16``).  Naming a case
    or a dtype runs only the large section unless sections are named too.
    """
    if not spec:
        return DEFAULT_SECTIONS, LARGE, DTYPE_NAMES
    items = [s.strip() for s in spec.split(",") if s.strip()]
    sections, cases, dtypes = [], [], []
    for item in items:
        if item in SECTIONS:
            sections.append(item)
        elif item in DTYPE_NAMES:
            dtypes.append(item)
        else:
            hits = [c for c in LARGE if fnmatch.fnmatchcase(c.name, item)]
            if not hits:
                known = ", ".join(SECTIONS + DTYPE_NAMES + tuple(c.name for c in LARGE))
                raise ValueError(f"unknown case {item!r}; known: {known}")
            cases.extend(c for c in hits if c not in cases)
    if (cases or dtypes) and "large" not in sections:
        sections.append("large")
    if not cases:
        cases = list(LARGE)
    if not dtypes:
        dtypes = list(DTYPE_NAMES)
    order = {c.name: i for i, c in enumerate(LARGE)}
    cases.sort(key=lambda c: order[c.name])
    return tuple(s for s in SECTIONS if s in sections), tuple(cases), tuple(d for d in DTYPE_NAMES if d in dtypes)


def fill(n, dtype, seed=0):
    """A flat buffer of ``n`` values of ``dtype``: uniform in [0, 1), or small integers.

    Values are random so no implementation can profit from constant input;
    integers stay small so every peer's sum is exact.
    """
    rng = np.random.default_rng(seed)
    if dtype.kind in "iu":
        return rng.integers(-1000, 1000, size=n, dtype=dtype)
    if dtype == np.float64:
        return rng.random(n, dtype=np.float64)
    buf = rng.random(n, dtype=np.float32)
    return buf if dtype == np.float32 else buf.astype(dtype)


class Buffers:
    """One flat buffer per dtype, large enough for every case; the previous dtype's is freed."""

    def __init__(self, cases, scale, seed=0):
        self.need = max((c.elements(scale) for c in cases), default=0)
        self.seed = seed
        self._dtype = None
        self._buf = None

    def get(self, dtype):
        # (``np.dtype("float64") == None`` is True: numpy reads None as its
        # default dtype, so a first float64 buffer needs the ``is None``)
        if self._dtype is None or self._dtype != dtype:
            self._buf = None  # drop the old one before the new one is made
            self._buf = fill(self.need, dtype, self.seed)
            self._dtype = dtype
        return self._buf

    def clear(self):
        self._buf = self._dtype = None
