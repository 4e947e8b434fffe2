"""The memory a strided array spans, as one flat array: how the kernels see a view.

The kernels read a 1-D storage buffer through the plan's strides (see
:mod:`reducemean.kernels`).  For a contiguous array that buffer is
``ravel``; for any other view it is every element from the lowest address
the view reads to the highest, made here without a copy.  numpy's
``as_strided`` makes the same array through an ``__array_interface__``
dict, about 2.6 us a call; this compiled call takes a few hundred
nanoseconds.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic

from .cacheload import adopt


@intrinsic
def _span(typingctx, a, like, n, lead):
    """``n`` elements of ``like``'s dtype from ``lead`` of them before ``a``'s first element.

    The result shares ``a``'s memory and holds a reference to it.
    """
    if not (isinstance(a, types.Array) and isinstance(like, types.Array)
            and isinstance(n, types.Integer) and isinstance(lead, types.Integer)):
        return None
    ret = types.Array(like.dtype, 1, "C", aligned=a.aligned)  # an unaligned input stays so

    def codegen(context, builder, sig, args):
        src = context.make_array(sig.args[0])(context, builder, args[0])
        dst = context.make_array(ret)(context, builder)
        item = context.get_data_type(like.dtype)
        size = context.get_constant(types.intp, context.get_abi_sizeof(item))
        data = builder.gep(builder.bitcast(src.data, item.as_pointer()), [builder.neg(args[3])])
        context.populate_array(
            dst, data=data, shape=cgutils.pack_array(builder, [args[2]]),
            strides=cgutils.pack_array(builder, [size]), itemsize=size,
            meminfo=src.meminfo, parent=src.parent,
        )
        return impl_ret_borrowed(context, builder, ret, dst._getvalue())

    return ret(a, like, types.intp, types.intp), codegen


@njit(cache=True, nogil=True)
def span_of(a, like, n, lead):
    return _span(a, like, n, lead)


_LIKE: dict = {}


def span_inputs(a, storage):
    """:func:`span_of`'s first two arguments for ``a`` and the numpy dtype ``storage``.

    ``a`` itself, or ``a`` viewed as ``storage`` when their item sizes match
    and the dtypes differ (bool, float16, bfloat16: Numba cannot read
    bfloat16); and the empty array of ``storage`` that types the result.
    """
    like = _LIKE.get(storage)
    if like is None:
        like = _LIKE[storage] = np.empty(0, storage)
    if a.dtype.itemsize == storage.itemsize and a.dtype != storage:
        return a.view(storage), like
    return a, like


def span_view(a, n, lead, storage):
    """The ``n`` storage elements from ``lead`` before ``a``'s first one, as a 1-D array.

    ``n`` and ``lead`` count elements of the numpy dtype ``storage`` (the
    plan's ``span`` and ``base``); ``a`` must lie within them.
    """
    src, like = span_inputs(a, storage)
    return span_of(src, like, n, lead)


adopt(globals())  # load cached kernels without readying Numba's compiler

__all__ = ["span_inputs", "span_of", "span_view"]
