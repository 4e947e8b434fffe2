"""The dispatch table: for each input dtype, how the kernels read it and what they produce.

An :class:`Entry` names the storage dtype the kernels load (the input viewed
without copying), the reader token that tells :mod:`reducemean.numerics` how
to widen a loaded value, whether elements are complex pairs, and the dtype
``numpy.mean`` gives for that input.  Dtypes with no entry (object,
datetime, longdouble, strings, ...) are not on the fast path.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .numerics import BF16, EXACT, F16C, FLOAT32, HALF, NATIVE

__all__ = ["Entry", "entry_for", "is_bfloat16"]


@dataclass(frozen=True)
class Entry:
    dtype: np.dtype  #: the input dtype
    storage: np.dtype  #: the dtype the kernels load
    token: np.ndarray  #: reader token (see reducemean.numerics)
    pairs: bool  #: complex: each element is two storage values
    mean_dtype: np.dtype  #: numpy.mean's result dtype for this input
    kind: str  #: "float", "int" (incl. unsigned), "bool" or "complex"
    #: Work per element read, against ``launch.PARALLEL_MIN``.  float64 parts
    #: (float64, complex128) are summed with compensation, about twice the
    #: time per element of the other types, and their parallel kernels start
    #: paying at about half the size (``python -m reducemean.bench.threshold``).
    cost: int = field(init=False)
    #: Whether plans take short contiguous runs as rows from fewer runs
    #: (plan.RUNS_KRR_ROWS_LANES): real floats (float16 only with F16C) and
    #: int32, whose runs sum in vector lanes (numerics.run_rows_short) at a
    #: cost per output that beats the column loop there.  Other integers of
    #: up to 32 bits sum in the same lanes, but their column loop stays ahead
    #: of rows of fewer runs held in cache.
    lanes: bool = field(init=False)

    def __post_init__(self):
        wide = self.kind in ("float", "complex") and self.storage.itemsize == 8
        object.__setattr__(self, "cost", 2 if wide else 1)
        lanes = self.kind == "float" and (self.dtype != np.float16 or F16C)
        object.__setattr__(self, "lanes", lanes or self.dtype == np.int32)

    def token_for(self, result_dtype) -> np.ndarray:
        """The reader token for a result of ``result_dtype``.

        A narrow float (float32/16, bfloat16) whose mean is wanted in float64
        is summed with compensation, as float64 input always is.
        """
        # (a complex result's parts are half its size: complex64 is float32 parts)
        part = result_dtype.itemsize // (2 if result_dtype.kind == "c" else 1)
        if part == 8 and result_dtype.kind in "fc" and self.kind in (
            "float", "complex"
        ) and self.storage.itemsize < 8:
            return EXACT[self.token.dtype]
        return self.token

    @property
    def state_dtype(self) -> np.dtype:
        """dtype of the kernels' partial-sum states (see reducemean.numerics)."""
        if self.kind in ("float", "complex"):
            return np.dtype(np.float64)
        if self.storage.kind == "u" or self.kind == "bool":
            return np.dtype(np.uint64)
        return np.dtype(np.int64)


def is_bfloat16(dtype) -> bool:
    """True for ml_dtypes' bfloat16 (recognised without importing ml_dtypes)."""
    return dtype.kind == "V" and dtype.itemsize == 2 and dtype.name == "bfloat16"


def _make(dtype):
    dtype = np.dtype(dtype)
    f8 = np.dtype(np.float64)
    if not dtype.isnative:
        return None
    if is_bfloat16(dtype):
        return Entry(dtype, np.dtype(np.uint16), BF16, False, dtype, "float")
    if dtype == np.float16:
        return Entry(dtype, np.dtype(np.uint16), HALF, False, dtype, "float")
    if dtype in (np.float32, np.float64):
        return Entry(dtype, dtype, FLOAT32 if dtype == np.float32 else NATIVE, False, dtype,
                     "float")
    if dtype in (np.complex64, np.complex128):
        part = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
        return Entry(dtype, part, FLOAT32 if part == np.float32 else NATIVE, True, dtype,
                     "complex")
    if dtype == np.bool_:
        return Entry(dtype, np.dtype(np.uint8), NATIVE, False, f8, "bool")
    if dtype.kind in "iu" and dtype.itemsize in (1, 2, 4, 8) and dtype.type in _INT_TYPES:
        return Entry(dtype, dtype, NATIVE, False, f8, "int")
    return None


_INT_TYPES = {
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.intc, np.uintc, np.int_, np.uint, np.longlong, np.ulonglong,
}

_TABLE: dict = {}


def entry_for(dtype):
    """The :class:`Entry` for ``dtype``, or ``None`` when it is not on the fast path."""
    try:
        return _TABLE[dtype]
    except KeyError:
        e = _TABLE[dtype] = _make(dtype)
        return e
