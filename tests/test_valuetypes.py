"""valuetypes.typeof against numba.typeof, the reference it stands in for."""

import numpy as np
import pytest
from numba import typeof as numba_typeof

from reducemean.valuetypes import typeof


def _read_only(a):
    a = a.view()
    a.flags.writeable = False
    return a


_BASE = np.arange(4 * 6 * 8, dtype=np.float64).reshape(4, 6, 8)

ARRAYS = {
    "C 3-D": _BASE,
    "F (transposed)": _BASE.T,
    "A (step 2)": _BASE[:, ::2],
    "A (transposed pair)": _BASE.transpose(1, 0, 2),
    "0-d": np.array(1.5),
    "empty": np.empty((0, 3)),
    "one element, both C and F": np.ones((1, 1)),
    "single column, both C and F": np.ones((5, 1)),
    "read-only": _read_only(_BASE),
    "read-only F": _read_only(_BASE.T),
    "unaligned": np.frombuffer(b"\0" * 17, np.float64, 2, 1),
    "negative stride": _BASE[::-1],
    "int8": np.zeros(3, np.int8),
    "uint16": np.zeros((2, 2), np.uint16),
    "int64": np.zeros(3, np.int64),
    "float16": np.zeros(3, np.float16),
    "complex64": np.zeros(3, np.complex64),
    "bool": np.zeros(3, bool),
    "strings": np.zeros(3, "U3"),
}


@pytest.mark.parametrize("name", list(ARRAYS))
def test_arrays_type_as_numba_types_them(name):
    a = ARRAYS[name]
    assert typeof(a) == numba_typeof(a)
    assert hash(typeof(a)) == hash(numba_typeof(a))


@pytest.mark.parametrize("value", [
    (), (1, 2), (np.int64(3), np.uint64(4)), (1, 2.5),
    (_BASE, 1, np.empty(2, np.int64)), (_BASE, _BASE), ((_BASE, 3), (np.float32(1),)),
    5, 2 ** 63, -1.5, np.float32(2), np.uint64(7), True, None,
])
def test_other_values_type_as_numba_types_them(value):
    assert typeof(value) == numba_typeof(value)


def test_an_unsupported_dtype_raises_numbas_own_error():
    a = np.zeros(2, ">f8")  # big-endian
    with pytest.raises(Exception) as ours:
        typeof(a)
    with pytest.raises(Exception) as theirs:
        numba_typeof(a)
    assert type(ours.value) is type(theirs.value)


def test_adopted_kernels_type_their_arguments_in_python_as_numba_does():
    from numba.core import types

    from reducemean import kernels

    kernel = kernels.outer_serial  # adopted (cacheload.adopt), so typed here
    for a in (_read_only(_BASE), _read_only(_BASE.T), ARRAYS["unaligned"], _BASE[:, ::2]):
        assert kernel.typeof_pyval(a) == numba_typeof(a)
    assert kernel.typeof_pyval(object()) == types.pyobject
    assert kernel.typeof_pyval(np.zeros(2, ">f8")) == types.pyobject
