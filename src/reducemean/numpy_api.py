"""``reducemean.mean``: numpy's ``mean``, computed by the kernels."""

from __future__ import annotations

import numpy as np

from . import launch, masked
from .dispatch import entry_for
from .engine import (
    complex_nonfinite_as_numpy, get_plan, native, redo, reduce_into, reduce_new, reverser,
    summed_by, supported_result, writes_bits,
)
from .plan import normalize_axis
from .span import span_inputs, span_of

_AXES: dict = {}

# Repeated calls without dtype/out/where skip every decision after the
# first: the key maps straight to (kernel, its packed plan, the number of
# outputs, token, result dtype, result shape (see _remember), how to get the
# flat buffer (True: the input is; False: ravel it; else a function),
# plan, dispatch entry).  The kernel is the serial one, or for inputs big
# enough to run in parallel launch.direct's, which decides per call; for a
# plan summed in steps of its own (engine.summed_by) it is those steps'
# ``prepare``.  A permuted plan's means are transposed on the way out.  Only
# None, plain ints and tuples of plain ints are axis keys (1.0 == 1 and
# True == 1 as dict keys, and numpy refuses float axes), and only inputs
# with float32/float64 results, float16/bfloat16 inputs whose kernels write
# their results' bits (engine.writes_bits), or complex inputs with their own
# complex results.  C-contiguous inputs that are not their own storage dtype
# (bool, float16, bfloat16, complex) reach the kernel through a wrapper that
# views them as their storage (_storage_kernel, _parts_kernel); a 16-bit
# result is viewed as its bits.  The key holds the array's flag bits rather
# than its strides: C-contiguity fixes the strides that matter, and the
# ALIGNED bit keeps an unaligned array off a kernel compiled for aligned
# ones, since the kernel is called through its compiled entry point, past
# Numba's type dispatch.  Other views are keyed by their strides too, and
# their flat span (in the storage dtype) is made per call (reducemean.span),
# since it starts at the view's own address.
_DIRECT: dict = {}
# Repeated calls with dtype= or out= (and where=True) have a memo of their
# own, keyed as _DIRECT's and by the dtype argument and out's dtype, shape
# and flags (_cast_key): the same entries, for a result of the type asked
# for, which a hit writes into ``out`` itself.  Not for a permuted plan's
# ``out``, whose means are written in memory order and then transposed,
# nor for an ``out`` that shares memory with the input (the full path reads
# every value first).
_CAST: dict = {}
# Repeated where= calls with an ndarray mask reuse their prepared steps
# (masked.Steps), keyed by the input's shape and dtype (not its strides: the
# temporary is C-ordered whatever they are), the axis, keepdims, the mask's
# shape and dtype, and the dtype argument and out's dtype, shape and flags
# (_cast_tail).  Only native byte orders: a swapped input is made native
# first, and the steps read the bits of the dtype they were made for.
_MASKED: dict = {}
#: dtype arguments that key _CAST as they are: types (np.float64, float,
#: ml_dtypes.bfloat16), their names, and numpy dtypes (isinstance).  Equal
#: keys name one dtype, since a numpy dtype equals what it converts from.
_DTYPE_KEYS = frozenset([type, str])
_C_CONTIGUOUS = 1  # numpy's NPY_ARRAY_C_CONTIGUOUS flag bit
_DIRECT_MAX = 4096
_DIRECT_DTYPES = frozenset([np.dtype(np.float32), np.dtype(np.float64)])
_U16 = np.dtype(np.uint16)
# module globals: one lookup each on the memoised path
_ndarray = np.ndarray
_empty = np.empty
_may_share = np.may_share_memory


def _cast_tail(dtype, out):
    """The part of a memo key that ``dtype=`` and ``out=`` make; None when they cannot key it."""
    if dtype is not None and type(dtype) not in _DTYPE_KEYS and not isinstance(dtype, np.dtype):
        return None
    if out is None:
        return (dtype, None)
    if type(out) is _ndarray:
        return (dtype, out.dtype, out.shape, out.flags.num)
    return None


def _cast_key(a, axis, dtype, out, keepdims):
    """The :data:`_CAST` key of a call with ``dtype=`` or ``out=``; None when they cannot key it."""
    tail = _cast_tail(dtype, out)
    if tail is None:
        return None
    num = a.flags.num
    if num & _C_CONTIGUOUS:
        return (a.shape, num, a.dtype, axis, keepdims, *tail)
    return (a.shape, a.strides, num, a.dtype, axis, keepdims, *tail)


def _memoised_cast(a, hit, out):
    """A :data:`_CAST` hit's call: the mean in a new result, or written into ``out``.

    The result's shaping is :func:`mean`'s memoised path's, which keeps its
    own inline: one function call fewer on the most common call.
    """
    kern, params, extra, nout, tok, rd, shape, flat, plan, entry = hit
    buf = a if flat is True else a.ravel() if flat is False else flat(a)
    res = _empty(nout, rd) if out is None else out.reshape(-1)  # (C-contiguous: a view)
    if kern(buf, params, res, tok, *extra):
        _again(a, plan, entry, res)
    if out is not None:
        return out
    if type(shape) is list:  # a scalar, from a buffer of its own (no pool: a rarer call)
        return res[0]
    if shape is True:
        return res
    if type(shape) is tuple:
        return res.reshape(shape)
    return shape(res)


def _ints(axes):
    """Whether every item of the tuple ``axes`` is a plain int (a memo key)."""
    for i in axes:
        if type(i) is not int:
            return False
    return True


def _numpy(a, axis, dtype, out, keepdims, where):
    # keepdims and where only when given, as numpy.mean does: it hands an
    # object that is not a plain ndarray to the object's own mean, and
    # np.matrix.mean and MaskedArray.mean take neither.
    kwargs = {}
    if keepdims is not False:
        kwargs["keepdims"] = keepdims
    if where is not True:
        kwargs["where"] = where
    return np.mean(a, axis=axis, dtype=dtype, out=out, **kwargs)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """Arithmetic mean over ``axis``: a drop-in for :func:`numpy.mean`, more exact.

    Same arguments, result dtype, shape and kind as ``numpy.mean``: a numpy
    scalar for a full reduction without ``keepdims`` or ``out``, else an
    array; ``out`` is filled and returned.

    Rules:

    * bool, int8..int64, uint8..uint64, float16, float32, float64, complex64,
      complex128 and ml_dtypes' bfloat16 run on the kernels.  Integers and
      bool give float64 within 1 ulp of the exact mean (64-bit sums are kept
      exact); float16, bfloat16 and float32 are accumulated in float64 and
      rounded once (within 1 ulp); float64 uses compensated summation;
      complex parts follow their float type.
    * ``dtype=`` a float or complex type gives the exact mean rounded to it;
      ``out=`` of any float or complex type is filled the same way.  A real
      input's complex mean has the means in its real part and, as numpy's
      complex division by the count makes it, NaN in the imaginary part of
      a non-finite or empty slice's.  An ``out`` that shares memory with
      ``a`` is filled once every value has been read, as numpy fills it.
      (A real input's complex ``dtype=`` with a real ``out=`` goes to
      ``numpy.mean``, which warns as it casts.)
    * Any other dtype, an ndarray subclass (``np.matrix``, a masked array),
      an object with ``__array_function__`` or a ``mean`` method of its own
      (numpy.mean calls that), an integer or bool ``dtype=``, or an ``out``
      of the wrong shape, of an integer type or read-only, is handed to
      ``numpy.mean`` unchanged, so nothing works worse than in numpy.
    * ``where=`` (a boolean mask) is summed exactly by the kernels over the
      selected values, each output divided by its own count; this is the
      one path that copies the input (a zero-filled temporary).
    * NaN and Inf propagate as in numpy; an empty slice gives NaN with
      ``RuntimeWarning("Mean of empty slice.")``.
    * Errors are numpy's: ``AxisError`` for an axis out of range,
      ``ValueError`` for a duplicate axis, ``TypeError`` for a non-integer
      axis.
    """
    if type(a) is not _ndarray:
        # numpy.mean calls the mean of anything that has one (a pandas
        # Series skips NaN); a numpy scalar's is the 0-d array's, below
        if (isinstance(a, np.ndarray) or hasattr(type(a), "__array_function__")
                or (hasattr(a, "mean") and not isinstance(a, np.generic))):
            return _numpy(a, axis, dtype, out, keepdims, where)
        if out is not None and isinstance(a, np.generic):
            # numpy's scalar mean fills ``out`` and returns its value as a scalar
            return mean(np.asarray(a), axis, dtype, out, keepdims, where=where)[()]
        a = np.asarray(a)
    plain = axis is None or type(axis) is int or (type(axis) is tuple and _ints(axis))
    # keepdims a bool: np.True_ == True as a key, but numpy refuses it
    if out is None and where is True and dtype is None and plain and type(keepdims) is bool:
        num = a.flags.num
        hit = _DIRECT.get((a.shape, num, a.dtype, axis, keepdims))
        if hit is None and not num & _C_CONTIGUOUS:  # a miss goes on to the full path
            hit = _DIRECT.get((a.shape, a.strides, num, a.dtype, axis, keepdims))
        if hit is not None:
            kern, params, extra, nout, tok, rd, shape, flat, plan, entry = hit
            buf = a if flat is True else a.ravel() if flat is False else flat(a)
            if type(shape) is list:
                # A full reduction returns a scalar copy, so its one-element
                # buffer is reused.  pop/append are atomic under the GIL: each
                # thread has a buffer of its own while its kernel runs.
                res = shape.pop() if shape else _empty(1, rd)
                if kern(buf, params, res, tok, *extra):
                    _again(a, plan, entry, res)
                val = res[0]
                shape.append(res)
                return val
            res = _empty(nout, rd)
            if kern(buf, params, res, tok, *extra):
                _again(a, plan, entry, res)
            if shape is True:
                return res
            if type(shape) is tuple:
                return res.reshape(shape)
            return shape(res)  # a permuted plan's means, transposed
    elif where is True and plain and type(keepdims) is bool:
        cast = _cast_key(a, axis, dtype, out, keepdims)
        hit = _CAST.get(cast) if cast is not None else None
        # (an out that shares memory with the input takes the full path)
        if hit is not None and (out is None or not _may_share(a, out)):
            return _memoised_cast(a, hit, out)
    elif plain and type(keepdims) is bool and type(where) is _ndarray:
        mkey = _masked_key(a, axis, dtype, out, keepdims, where)
        steps = _MASKED.get(mkey) if mkey is not None else None
        if steps is not None:
            res = steps(a, where)
            if out is not None:
                _fill(out, res)
                return out
            return res[()] if res.ndim == 0 else res
    entry = entry_for(a.dtype)
    if entry is None:
        if a.dtype.isnative or a.dtype.kind not in "biufc":
            return _numpy(a, axis, dtype, out, keepdims, where)
        a = native(a)
        entry = entry_for(a.dtype)
    if keepdims is not False and keepdims is not True:
        return _numpy(a, axis, dtype, out, keepdims, where)

    # Memoised only for plain ints, since 1.0 == 1 and True == 1 as dict keys.
    key = (axis, a.ndim) if plain else None
    axes = _AXES.get(key) if key is not None else None
    if axes is None:
        try:
            axes = normalize_axis(axis, a.ndim)
        except (TypeError, ValueError, IndexError):
            return _numpy(a, axis, dtype, out, keepdims, where)  # numpy's own error
        if key is not None:
            _AXES[key] = axes

    into = None  # a complex type whose real part takes the means of a real input
    if dtype is None:
        rd = entry.mean_dtype
    else:
        try:
            rd = np.dtype(dtype)
        except TypeError:
            return _numpy(a, axis, dtype, out, keepdims, where)
        if not supported_result(rd, entry):
            part = _real_part(rd, entry)
            # (into a real ``out``, numpy's complex means warn as they are cast)
            if part is None or (out is not None and getattr(out, "dtype", rd).kind != "c"):
                return _numpy(a, axis, dtype, out, keepdims, where)
            if out is None:
                into, rd = rd, part  # else out's type decides, below

    a, plan = get_plan(a, axes, keepdims, entry)
    if out is not None:
        # numpy casts the mean into ``out``; computing straight in out's dtype
        # is the same cast made once, from the exact mean.
        if type(out) is not np.ndarray or out.shape != plan.out_shape or not out.flags.writeable:
            return _numpy(a, axis, dtype, out, keepdims, where)
        od = out.dtype
        if not od.isnative:  # the means are made native, then cast into ``out`` as numpy's are
            od = od.newbyteorder("=")
        if supported_result(od, entry):
            rd = od
        else:
            rd = _real_part(od, entry)  # real means into a complex out
            if rd is None:
                return _numpy(a, axis, dtype, out, keepdims, where)
    if where is not True:
        steps, mask = _masked(a, entry, plan, axes, rd, where)
        if steps is None:
            return _numpy(a, axis, dtype, out, keepdims, where)
        res = steps(a, mask)
        if (plain and type(where) is _ndarray and a.ndim and plan.count and plan.nout
                and a.dtype.isnative and into is None):
            _remember_masked(a, axis, dtype, out, keepdims, where, steps)
        if out is not None:
            _fill(out, res)
            return out
        if into is not None:
            res = _as_complex(res, into)
        return res[()] if res.ndim == 0 else res
    if out is not None:
        # An ``out`` that shares memory with the input gets the means once
        # every value is read, as numpy's does: written in place, the means
        # overwrote values still to be read (a square array's row means into
        # its own first row, on one thread or two).
        if out.flags.c_contiguous and out.dtype == rd and not _may_share(a, out):
            reduce_into(a, plan, entry, out)
            if (key is not None and plan.count and plan.nout and plan.permute is None
                    and out.flags.aligned and _memoisable(rd, entry)):
                _remember(a, axis, keepdims, plan, entry, rd, (dtype, out))
            return out
        _fill(out, reduce_new(a, plan, entry, rd))
        return out
    res = reduce_new(a, plan, entry, rd)
    if into is not None:
        res = _as_complex(res, into)
    elif key is not None and plan.count and plan.nout and _memoisable(rd, entry):
        _remember(a, axis, keepdims, plan, entry, rd, None if dtype is None else (dtype, None))
    if res.ndim == 0:
        return res[()]
    return res


def _real_part(rd, entry):
    """The real type whose means a real input's complex ``rd`` result holds, or None."""
    if rd.kind == "c" and rd.isnative and rd.itemsize in (8, 16) and not entry.pairs:
        return np.dtype(np.float32 if rd.itemsize == 8 else np.float64)
    return None


def _as_complex(means, rd):
    """Real ``means`` as a complex ``rd`` array, as numpy's complex mean of real input has them.

    numpy sums the values as complex and divides by the count as complex
    (``n + 0j``), which turns a non-finite mean's zero imaginary part into
    NaN (``inf + 0j`` over ``n + 0j`` is ``inf + nanj``, an empty slice's
    ``0 / 0`` is ``nan + nanj``).
    """
    res = np.asarray(means).astype(rd)
    bad = ~np.isfinite(means)
    if bad.any():
        res.imag[bad] = np.nan
    return res


def _fill(out, res):
    """``out[...] = res``; a complex ``out`` of real means as :func:`_as_complex` makes them."""
    if out.dtype.kind == "c" and res.dtype.kind != "c":
        res = _as_complex(res, out.dtype.newbyteorder("="))
    out[...] = res


def kernel_call(a, axis=None, keepdims=False):
    """The compiled kernel call a repeated ``mean(a, axis, keepdims=keepdims)`` makes, alone.

    A zero-argument callable, for the bench: what :func:`mean` spends in the
    kernel's compiled entry point (its arguments' unboxing included) on a
    memoised call, so that a mean's time less this one's is the Python
    layer's (the memo lookup, the result's buffer, the scalar).  None until
    a mean of ``a`` is memoised, or for a view whose flat span is made per
    call.
    """
    hit = _DIRECT.get((a.shape, a.flags.num, a.dtype, axis, keepdims))
    if hit is None or hit[7] is not True:
        return None
    kern, params, extra, nout, tok, rd = hit[:6]
    res = _empty(nout, rd)
    return lambda: kern(a, params, res, tok, *extra)


def _masked(a, entry, plan, axes, rd, where):
    """``where=``'s prepared steps (masked.Steps) and its mask, broadcast to ``a``.

    ``(None, None)`` when numpy must decide (a non-boolean or
    unbroadcastable mask).
    """
    mask = np.asarray(where)
    if mask.dtype != np.bool_:
        return None, None
    if mask.shape != a.shape:
        try:
            mask = np.broadcast_to(mask, a.shape)
        except ValueError:
            return None, None
    return masked.Steps(a.shape, entry, axes, rd, plan.out_shape), mask


def _masked_key(a, axis, dtype, out, keepdims, where):
    """The :data:`_MASKED` key of a ``where=`` call; None when its arguments cannot key it."""
    tail = _cast_tail(dtype, out)
    if tail is None:
        return None
    return (a.shape, a.dtype, axis, keepdims, where.shape, where.dtype, *tail)


def _remember_masked(a, axis, dtype, out, keepdims, where, steps):
    key = _masked_key(a, axis, dtype, out, keepdims, where)
    if key is not None:
        steps.ready()
        if len(_MASKED) >= _DIRECT_MAX:
            _MASKED.clear()
        _MASKED[key] = steps


def _memoisable(rd, entry):
    """Whether a memoised call can write ``rd`` results of ``entry``'s inputs itself.

    float32 and float64 results, a 16-bit float's own (as its bits), and a
    complex input's own complex type (as its parts).
    """
    if entry.pairs:
        return rd == entry.mean_dtype
    return rd in _DIRECT_DTYPES or writes_bits(rd, entry)


def _remember(a, axis, keepdims, plan, entry, rd, cast=None):
    """Memoise the call: in :data:`_DIRECT`, or with ``cast`` (its ``(dtype, out)``) in :data:`_CAST`."""
    if cast is not None:
        memo, key = _CAST, _cast_key(a, axis, *cast, keepdims)
        if key is None:  # a dtype argument that cannot key it
            return
    elif a.flags.c_contiguous:
        memo, key = _DIRECT, (a.shape, a.flags.num, a.dtype, axis, keepdims)
    else:  # a view: its strides join the key
        memo, key = _DIRECT, (a.shape, a.strides, a.flags.num, a.dtype, axis, keepdims)
    if len(memo) >= _DIRECT_MAX:
        memo.clear()
    # a list: a full reduction, its pool of one-element buffers; True: the
    # flat result already has the result's shape; a tuple: the shape to give
    # it; else a function that makes it the result (a permuted plan's means
    # are in their memory order: see engine.reduce_new)
    nout = plan.nout // 2 if entry.pairs else plan.nout  # results, not their parts
    shape = plan.out_shape if plan.out_shape else []
    if plan.permute is not None:
        shape = _transposer(plan)
    elif shape == (nout,):
        shape = True
    bits = rd.itemsize == 2  # a float16/bfloat16 result, written as its bits
    part = entry.storage if entry.pairs or bits else rd
    viewed = entry.storage != a.dtype  # bool as uint8, complex as float pairs
    if a.flags.c_contiguous:
        buf = a.reshape(-1).view(entry.storage)
        flat = a.ndim == 1 or viewed  # (the wrappers below flatten)
    else:  # a view: its span is made per call
        flat = _span_maker(a, plan, entry)
        buf = flat(a)
        viewed = False  # the span is in the storage dtype already
    way = summed_by(plan)
    sample = np.empty(plan.nout, part)  # the flat result the kernel writes
    if way is None:
        kern, params, tok, extra = launch.prepare(plan, buf, sample, entry.token_for(rd),
                                                  entry.cost)
    else:  # folded columns, or a block's columns: their own steps
        tok, extra, params = entry.token_for(rd), (), plan.params
        kern = way.prepare(plan, buf, sample, tok, entry)
    if entry.pairs:
        kern = _parts_kernel(kern, plan, entry)
    elif bits:
        kern = _bits_kernel(kern, entry.storage if viewed else None)
    elif viewed:
        kern = _storage_kernel(kern, entry.storage)
    memo[key] = (kern, params, extra, nout, tok, rd, shape, flat, plan, entry)


def _transposer(plan):
    """``res -> the result`` for a permuted plan's flat means, in their memory order."""
    mem, order = plan.permute
    out_shape = plan.out_shape
    if plan.flipped:  # as engine.reduce_new: the reversal copied
        if len(mem) == 1:  # one kept axis, read backwards: fewer steps
            return lambda res: res[::-1].copy().reshape(out_shape)
        index = reverser(plan.flipped, len(mem))
        copy = np.ascontiguousarray
        return lambda res: copy(res.reshape(mem)[index]).transpose(order).reshape(out_shape)
    return lambda res: res.reshape(mem).transpose(order).reshape(out_shape)


def _span_maker(a, plan, entry):
    """``x -> span_view(x, plan.span, plan.base, entry.storage)`` through its compiled entry point."""
    storage = entry.storage
    src, like = span_inputs(a, storage)
    n, lead = plan.span, plan.base
    make = launch.compiled(span_of, (src, like, n, lead))
    if src is a:  # (complex too: the span reads its parts)
        return lambda x: make(x, like, n, lead)
    return lambda x: make(x.view(storage), like, n, lead)  # bool, float16, bfloat16


def _storage_kernel(kern, storage):
    """``kern`` called on the input viewed as its storage dtype (bool as uint8)."""

    def viewed(buf, p, out, tok, *extra):
        return kern(buf.reshape(-1).view(storage), p, out, tok, *extra)

    return viewed


def _bits_kernel(kern, storage):
    """``kern`` writing a 16-bit result through its bits, reading ``storage`` (None: as given)."""
    if storage is None:  # a view's span is in the storage dtype already

        def bits(buf, p, out, tok, *extra):
            return kern(buf, p, out.view(_U16), tok, *extra)

        return bits

    def viewed_bits(buf, p, out, tok, *extra):
        return kern(buf.reshape(-1).view(storage), p, out.view(_U16), tok, *extra)

    return viewed_bits


def _parts_kernel(kern, plan, entry):
    """``kern`` called on a complex input and result, through views of their float parts.

    Returns the kernel's count: the caller redoes (:func:`_again`).
    """
    storage = entry.storage

    def parts(buf, p, out, tok, *extra):
        return kern(buf.reshape(-1).view(storage), p, out.view(storage), tok, *extra)

    return parts


def _again(a, plan, entry, res):
    """What reduce_into does after a count: the second pass, and a complex
    non-finite part spread as in numpy (every sum finite and in range gives
    finite means, so only then)."""
    redo(a, plan, entry, res)
    if entry.pairs:
        complex_nonfinite_as_numpy(res)


launch._ON_CHANGE.append(_DIRECT.clear)
launch._ON_CHANGE.append(_CAST.clear)
