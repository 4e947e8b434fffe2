"""Numba types of the values the kernels take, exactly as ``numba.typeof`` gives them.

``numba.typeof`` of any array first asks whether it is a
``numpy.ma.MaskedArray``, and that attribute imports numpy.ma: about 15 ms
of a fresh process's first call, for a module reducemean never uses.  Here
a plain ``numpy.ndarray`` is typed directly from what ``typeof`` reads
(dtype, ndim, layout, writeable), a tuple from its items; every other value
goes to ``numba.typeof``.

A dispatcher's first call for new argument types (the one that loads its
code from Numba's cache, or compiles it) types every argument in Python,
with its ``typeof_pyval``; :func:`type_arguments` gives a dispatcher this
module's.
"""

from __future__ import annotations

import numpy as np
from numba import typeof as numba_typeof
from numba.core import errors, types
from numba.np.numpy_support import from_dtype


def typeof(value):
    """``numba.typeof(value)``, without importing numpy.ma for an array."""
    kind = type(value)
    if kind is np.ndarray:
        flags = value.flags
        layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
        try:
            dtype = from_dtype(value.dtype)
        except Exception:  # unsupported: numba.typeof raises its own error
            return numba_typeof(value)
        return types.Array(dtype, value.ndim, layout, readonly=not flags.writeable)
    if kind is tuple:
        return types.BaseTuple.from_types([typeof(v) for v in value], tuple)
    return numba_typeof(value)


def type_arguments(dispatcher):
    """Make ``dispatcher`` (a Numba dispatcher) type arguments in Python with :func:`typeof`.

    As its own ``typeof_pyval`` does: a value Numba cannot type is a
    ``pyobject``, and the type joins those of the call in progress, which
    Numba names when no overload matches.
    """
    def typeof_pyval(value):
        try:
            ty = typeof(value)
        except (errors.NumbaValueError, ValueError):
            ty = None
        if ty is None:
            ty = types.pyobject
        dispatcher._types_active_call.add(ty)
        return ty

    dispatcher.typeof_pyval = typeof_pyval


__all__ = ["typeof", "type_arguments"]
