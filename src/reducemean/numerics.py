"""Per-dtype arithmetic for the kernels: how to read, accumulate and finish.

The kernels in :mod:`reducemean.kernels` are written once.  Every operation
that depends on the element type goes through one of the functions below,
which Numba specialises at compile time from two argument types:

* the *storage* array: the input viewed as the type Numba can load (float16
  and bfloat16 are viewed as ``uint16``, complex as pairs of floats, bool as
  ``uint8``);
* a *reader token*: an empty array whose dtype says how to widen a loaded
  value (:data:`NATIVE`, :data:`FLOAT32` for float32 into bounded sums,
  :data:`HALF` for IEEE binary16 bits, :data:`BF16`
  for bfloat16 bits), or a one-element float64 array, the scale of the
  second pass for float64 sums beyond range (:func:`scaled_token`).  A
  token of rank 2 or 3 reads the same way and marks a plan whose runs are
  contiguous or every second value (:func:`run_token`); a read-only one
  marks integer sums that cannot pass 2**53 (:func:`small_sums_token`).

From those, each value is widened into one of six accumulator *families*:

=========  =====================================  ===============================
family     storage                                per-run accumulation
=========  =====================================  ===============================
``F``      float32, float16 bits, bfloat16 bits   float64 sum and an error bound
``D``      float64                                float64 sum and TwoSum error
``I``      int8, int16, int32                     int64 sum
``U``      bool, uint8, uint16, uint32            uint64 sum
``L``      int64                                  sums of the 32-bit halves
``UL``     uint64                                 as ``L``, unsigned
=========  =====================================  ===============================

A *state* is a pair ``(a, b)``.  For ``D`` its value is ``a + b`` (``b`` is
the error term); for ``F`` it is ``a``, and ``b`` bounds its rounding error
(:func:`bounded`).  For integers its value is
``a * 2**32 + b`` in exact integer arithmetic, so ``merge``, ``to_float`` and
``to_int`` depend only on the state's type, and no sum of 64-bit inputs can
overflow.  Floats are rounded once at the end.
No function here uses the ``nnan`` or ``ninf`` fast-math flags, so NaN and
Inf propagate as IEEE says.  The plain ``F`` sums' loops (``_block_f`` and
its kin) ask for ``reassoc`` and ``contract``, which let LLVM vectorise them:
their float64 sums of narrower values carry a bound of the rounding error
whatever the order (:func:`bounded`).  Compensated and integer sums use no
fast-math at all.

Most of the functions are overloads.  The smallest and the most called
(the widening, the constants of a type, ``min`` and ``max``, the column
loop's adds and the stores) are intrinsics instead, emitted in their
callers or compiled as internal functions (:func:`emitted`): each
overload is a function Numba compiles on its own, which a cold first call
pays for.
"""

from __future__ import annotations

import functools
import operator

import numpy as np
from llvmlite import ir
from numba import carray, njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload, register_jitable
from numba.np.numpy_support import from_dtype

from . import cacheload  # noqa: F401  (before the cached helpers below: see its locator)
from .valuetypes import typeof

# Reader tokens: empty arrays whose dtype tells the kernels how to widen a
# value (signed: fast float64 sums for narrow floats) and, for the unsigned
# twins, to sum narrow floats with compensation (a float64 result must be at
# least as exact as numpy's).
NATIVE = np.empty(0, np.int8)
HALF = np.empty(0, np.int16)
BF16 = np.empty(0, np.int32)
#: float32 values read as they are into plain float64 sums: a token of its
#: own, since those states carry a bound (see :func:`bounded`) where float64
#: storage read by NATIVE carries a compensation.
FLOAT32 = np.empty(0, np.int64)
NATIVE_EXACT = np.empty(0, np.uint8)
HALF_EXACT = np.empty(0, np.uint16)
BF16_EXACT = np.empty(0, np.uint32)
#: the compensated twin of each token
EXACT = {NATIVE.dtype: NATIVE_EXACT, HALF.dtype: HALF_EXACT, BF16.dtype: BF16_EXACT,
         FLOAT32.dtype: NATIVE_EXACT}


def _read_only(t):
    t.flags.writeable = False
    return t


#: NATIVE for integers whose sums stay exact in float64 (see small_sums_token):
#: read-only, so a distinct Numba type (``tok.mutable`` is False).
NATIVE_SMALL = _read_only(np.empty(0, np.int8))


def small_sums_token(tok, storage, count):
    """``tok``, or NATIVE_SMALL when no sum of ``count`` values of ``storage`` can pass 2**53.

    Integers of 32 bits or fewer (and bools) summed over at most
    ``2**(53 - bits)`` values give sums that float64 holds exactly, so each
    mean is one division, correctly rounded.  Larger sums need the exact
    finish (:func:`to_float`); with this token the kernels do not compile
    it, which took 0.45-0.55 s off a cold first int32 row call and 0.6 s or
    more off a column call.
    """
    if tok is NATIVE and storage.kind in "iu" and storage.itemsize <= 4 and (
            count <= 1 << (53 - 8 * storage.itemsize)):
        return NATIVE_SMALL
    return tok


def scaled_token(count):
    """A token that reads float64 values times ``2**-k``; returns ``(token, 2**k)``.

    ``k`` is chosen so that no sum of ``count`` finite float64 values
    reaches ``2**995``, the limit above which a sum takes this second pass
    (for sums beyond the float64 range).  Scaling by a power of
    two is exact for every value above ``2**(k - 1022)``.
    """
    k = int(count).bit_length() + 30  # sums stay below 2**995 (see store)
    return np.array([2.0**-k]), 2.0**k

_U64 = np.uint64
_M32 = np.uint64(0xFFFFFFFF)
_M16 = np.uint64(0xFFFF)
_S32 = np.uint64(32)
_S16 = np.uint64(16)
_I32 = np.int64(32)
_I16 = np.int64(16)
_IM32 = np.int64(0xFFFFFFFF)
_IM16 = np.int64(0xFFFF)
_H_EXPMANT = np.uint64(0x7FFF)
_H_EXP = np.uint64(0x7C00)
_H_MANT = np.uint64(0x3FF)
_H_SIGN = np.uint64(0x8000)
_H_SHIFT = np.uint64(42)
_F64_INF_BITS = np.uint64(0x7FF0000000000000)
_TWO_1008 = 2.0**1008
_H_FITS = np.int64(1 << 30)  # |high word| below this: the value fits in int64
_UH_FITS = np.uint64(1 << 31)

# Helpers only ever called from other compiled code: no C-callable wrapper
# (overloads already have no Python wrapper).  Each wrapper is compiled, then
# optimised again in every caller's module: about 0.3 s of a cold first call.
_OVERLOAD_OPTS = {"cache": True, "no_cfunc_wrapper": True}
_HELPER = dict(_OVERLOAD_OPTS, no_cpython_wrapper=True)


def _bit_intrinsic(src, dst, convert, doc):
    """An intrinsic from Numba type ``src`` to ``dst`` whose body is ``convert(builder, value)``."""

    def typer(typingctx, x):
        if x != src:
            return None

        def codegen(context, builder, signature, args):
            return convert(builder, args[0])

        return dst(src), codegen

    typer.__doc__ = doc
    return intrinsic(typer)


_f64_from_bits = _bit_intrinsic(
    types.uint64, types.float64, lambda b, v: b.bitcast(v, ir.DoubleType()),
    "Reinterpret the 64 bits of a uint64 as a float64.",
)
_f64_bits = _bit_intrinsic(
    types.float64, types.uint64, lambda b, v: b.bitcast(v, ir.IntType(64)),
    "The 64 bits of a float64 as a uint64.",
)
_f32_from_bits = _bit_intrinsic(
    types.uint32, types.float32, lambda b, v: b.bitcast(v, ir.FloatType()),
    "Reinterpret the 32 bits of a uint32 as a float32.",
)
_f32_bits = _bit_intrinsic(
    types.float32, types.uint32, lambda b, v: b.bitcast(v, ir.IntType(32)),
    "The 32 bits of a float32 as a uint32.",
)
# binary16 through LLVM's ``half`` type: one F16C instruction each way (RNE)
_f16c_to_f32 = _bit_intrinsic(
    types.uint16, types.float32,
    lambda b, v: b.fpext(b.bitcast(v, ir.HalfType()), ir.FloatType()),
    "binary16 bits to float32 (F16C).",
)
_f32_to_f16c = _bit_intrinsic(
    types.float32, types.uint16,
    lambda b, v: b.bitcast(b.fptrunc(v, ir.HalfType()), ir.IntType(16)),
    "float32 to binary16 bits, rounded to nearest even (F16C).",
)


def _pick(pred, doc):
    """An intrinsic choosing one of two integers by ``pred`` (``x pred y``: x, else y).

    Numba's own ``min`` and ``max`` are overloads, each compiled through the
    whole pipeline for every pair of argument types met (a literal is a
    type of its own): tens of ms apiece on a cold first call.  Here the
    compare and select are emitted in the caller.
    """

    def typer(typingctx, x, y):
        if not (isinstance(x, types.Integer) and isinstance(y, types.Integer)):
            return None
        t = typingctx.unify_types(x, y)
        if not isinstance(t, types.Integer):  # int64 with uint64 unifies to float64
            return None

        def codegen(context, builder, sig, args):
            a = context.cast(builder, args[0], x, t)
            b = context.cast(builder, args[1], y, t)
            compare = builder.icmp_signed if t.signed else builder.icmp_unsigned
            return builder.select(compare(pred, a, b), a, b)

        return t(x, y), codegen

    typer.__doc__ = doc
    return intrinsic(typer)


least = _pick("<=", "The smaller of two integers (``min``; see :func:`_pick`).")
most = _pick(">=", "The larger of two integers (``max``; see :func:`_pick`).")


def _host_has(feature, x86_only=False):
    # Only when Numba compiles for this host: a portable target (NUMBA_CPU_NAME)
    # may lack the instruction, and LLVM would then call a runtime helper
    # Numba does not link.
    from numba.core import config

    if config.CPU_NAME is not None:
        return False
    if x86_only:
        import platform

        if platform.machine().lower() not in ("x86_64", "amd64"):
            return False
    import llvmlite.binding as llvm

    return bool(llvm.get_host_cpu_features().get(feature, False))


#: float16 widening by the F16C instruction (vectorises) instead of bit arithmetic
F16C = _host_has("f16c")
#: the column loop's float64 adds issued as fused multiply-adds by 1.0 (see
#: fused_add); x86 only, whose register constraint opaque_one's asm names
FUSED = _host_has("fma", x86_only=True)


@intrinsic
def opaque_one(typingctx):
    """1.0, hidden from LLVM by an empty asm where :data:`FUSED` (else the constant).

    LLVM folds ``fma(x, 1.0, y)`` back to ``x + y``; a 1.0 it cannot see
    keeps the fused form.  Take it once, outside a loop: the asm is not
    vectorised.
    """

    def codegen(context, builder, sig, args):
        return _hidden_one(builder) if FUSED else ir.Constant(ir.DoubleType(), 1.0)

    return types.float64(), codegen


def _hidden_one(builder):
    """The float64 1.0 behind an empty asm (see :func:`opaque_one`)."""
    fnty = ir.FunctionType(ir.DoubleType(), [ir.DoubleType()])
    return builder.asm(fnty, "", "=x,0", [ir.Constant(ir.DoubleType(), 1.0)], False)


@intrinsic
def fused_add(typingctx, x, y, one):
    """``x + y`` (``one`` is :func:`opaque_one`'s 1.0), rounded once either way.

    Where the CPU has FMA a float64 add is issued as ``fma(x, one, y)``,
    which is exactly ``x + y`` (NaN, Inf and signed zeros alike), on the
    multiply pipes: on Zen 4 float64 adds share two pipes with the
    conversions to float64 of float32 and 16-bit values, and the FMA pipes
    sit idle.  Other types are added as ``x + y`` is.  An intrinsic: see
    :func:`widen`.
    """
    if FUSED and x == types.float64 and y == types.float64 and one == types.float64:

        def fused(context, builder, sig, args):
            return _fma_ir(builder, args[0], args[2], args[1])

        return types.float64(x, y, one), fused
    add = typingctx.resolve_function_type(operator.add, (x, y), {})
    if add is None:
        return None

    def plain(context, builder, sig, args):
        vals = [context.cast(builder, v, t, at) for v, t, at in zip(args, (x, y), add.args)]
        return context.get_function(operator.add, add)(builder, vals)

    return add.return_type(x, y, one), plain


_F32_DROPPED = np.uint64((1 << 29) - 1)  # the float64 fraction bits float32 has no room for


@register_jitable
def f64_to_f32_odd(x):
    """``x`` rounded to float32 to odd: truncated, its last bit set when inexact.

    float32 keeps 13 or more bits beyond float16's and bfloat16's, so
    rounding this to either (to nearest even) rounds ``x`` itself: once,
    where a float32 rounded to nearest first could land on a midpoint of
    the narrow type and round the wrong way.  Done on ``x``'s bits: the
    bits float32 drops are cleared and, when any was set, float32's last
    bit is set, so the conversion is exact (in 64-bit lanes, which
    vectorise with the division).  NaN stays NaN, a value past float32's
    range still converts to Inf (or to its largest value, odd), and below
    float32's normals (2**-126) the conversion rounds again: a bfloat16
    mean there is within 1 ulp, a float16 one is 0 regardless.
    """
    t = _f64_bits(x)
    # the dropped bits plus all ones carry into float32's last bit unless all are 0
    odd = (t | ((t & _F32_DROPPED) + _F32_DROPPED)) & ~_F32_DROPPED
    return np.float32(_f64_from_bits(odd))


@register_jitable
def f32_to_bf16_bits(x):
    """float32 to bfloat16 bits, rounded to nearest even; NaN stays a (quiet) NaN."""
    u = np.uint64(_f32_bits(x))
    if (u & np.uint64(0x7FFFFFFF)) > np.uint64(0x7F800000):
        return np.uint16((u >> _S16) | np.uint64(0x40))
    return np.uint16((u + np.uint64(0x7FFF) + ((u >> _S16) & np.uint64(1))) >> _S16)


@register_jitable
def half_to_f64(h):
    """IEEE binary16 bits to float64, exactly (normals, subnormals, Inf, NaN)."""
    if F16C:
        return np.float64(_f16c_to_f32(np.uint16(h)))
    h = _U64(h)
    # Placing the 15 exponent+mantissa bits at the top of a float64 and scaling
    # by 2**(1023-15) is exact for normal and subnormal halves alike.
    v = _f64_from_bits((h & _H_EXPMANT) << _H_SHIFT) * _TWO_1008
    if (h & _H_EXP) == _H_EXP:  # Inf or NaN: keep the payload
        v = _f64_from_bits(_F64_INF_BITS | ((h & _H_MANT) << _H_SHIFT))
    if h & _H_SIGN:
        v = -v
    return v


@register_jitable
def bf16_to_f64(h):
    """bfloat16 bits to float64, exactly: they are the top half of a float32."""
    return np.float64(_f32_from_bits(np.uint32(np.uint64(h) << _S16)))


# --- family selection (runs at typing time, in plain Python) ---------------


def _family(buf, tok):
    dt = buf.dtype
    if isinstance(tok.dtype, types.Float):  # float64 read scaled (see scaled_token)
        return "D"
    exact = not tok.dtype.signed
    if tok.dtype.bitwidth > 8:  # float16 or bfloat16 bits
        return "D" if exact else "F"
    if dt == types.float32:
        return "D" if exact else "F"
    if dt == types.float64:
        return "D"
    if dt == types.int64:
        return "L"
    if dt == types.uint64:
        return "UL"
    if isinstance(dt, types.Boolean):
        return "U"
    if isinstance(dt, types.Integer):
        return "I" if dt.signed else "U"
    raise TypeError(f"reducemean: no accumulator for storage dtype {dt}")


def bounded(tok):
    """At typing time: float states read by ``tok`` carry a bound, not a compensation.

    The plain float64 sums of narrower floats (the ``F`` family: tokens
    FLOAT32, HALF, BF16) keep in ``b`` a bound ``B`` of their rounding
    error: ``|sum - a| <= 2**-53 * B`` (to first order).  Every add of a
    sum whose result is ``t`` adds ``|t|`` to it, and a block of values
    summed in vector lanes (or in any order) adds the most adds a value
    passes through times the block's sum of magnitudes
    (:func:`magnitude_bound`).  :func:`store` checks it against the result
    (:data:`BOUND_RATIO`).  A loop that adds nothing to ``b`` claims an
    exact sum.
    """
    return (isinstance(tok.dtype, types.Integer) and tok.dtype.signed
            and tok.dtype.bitwidth > 8)


#: A bounded state's mean is final when ``B <= BOUND_RATIO * |a|``: the sum's
#: error is then at most 2**-27 of it, a quarter of a float32 ulp, so the
#: float32 (or narrower) mean is within one ulp of the exact one.  Other
#: outputs get a NaN of their own payload (REDO_F32, REDO_F16, REDO_BF16
#: as stored), counted, for the engine to redo with compensation
#: (engine.redo); a NaN input that happens to carry it is only redone.
BOUND_RATIO = 2.0**26
_REDO = np.uint64(0x7FFA5A5A00000000)  # a quiet float64 NaN; its payload survives float32
REDO_F64 = float(np.array(_REDO).view(np.float64))
REDO_F32 = int(np.array(REDO_F64).astype(np.float32).view(np.uint32))
REDO_F16 = 0x7E5A
REDO_BF16 = 0x7FDA
_REDO_F16 = np.uint16(REDO_F16)
_REDO_BF16 = np.uint16(REDO_BF16)


def _widen_scaled(x, tok):
    return np.float64(x) * tok[0]


def _widen_half(x, tok):
    return half_to_f64(x)


def _widen_bf16(x, tok):
    return bf16_to_f64(x)


@intrinsic
def widen(typingctx, x, tok):
    """A loaded storage value in the accumulator's element type.

    An intrinsic rather than an overload: an overload's implementation is a
    function of its own, which Numba takes through its whole pipeline
    (tens of ms on a cold first call) for a conversion of one instruction;
    here the conversion is emitted in the caller.  The scaled, float16 and
    bfloat16 readers still compile their few lines as one internal function.
    """
    body = None
    if isinstance(tok.dtype, types.Float):  # float64 read scaled (see scaled_token)
        res, body = types.float64, _widen_scaled
    elif tok.dtype in (types.int16, types.uint16):
        res, body = types.float64, _widen_half
    elif tok.dtype in (types.int32, types.uint32):
        res, body = types.float64, _widen_bf16
    elif isinstance(x, types.Float):
        res = types.float64
    elif isinstance(x, types.Boolean) or (isinstance(x, types.Integer) and not x.signed):
        res = types.uint64
    else:
        res = types.int64
    sig = res(x, tok)
    if body is not None:
        return sig, _internal(body)
    return sig, lambda context, builder, sig, args: context.cast(builder, args[0], x, res)


def _zeros(ty, *args):
    """An intrinsic's signature and codegen for the tuple ``ty`` of zeros, emitted in the caller."""

    def codegen(context, builder, sig, a):
        return context.make_tuple(builder, ty, [context.get_constant(t, 0) for t in ty])

    return ty(*args), codegen


def _zero_state_type(buf, tok):
    return types.UniTuple(_state_word(buf, tok), 2)


@intrinsic
def zero_state(typingctx, buf, tok):
    """The empty sum, as an ``(a, b)`` state (an intrinsic: see :func:`widen`)."""
    return _zeros(_zero_state_type(buf, tok), buf, tok)


def _state_dtype(buf, tok):
    """The element type of the states of ``buf`` (a Numba array type) read by ``tok``."""
    fam = _family(buf, tok)
    return {"F": np.float64, "D": np.float64, "U": np.uint64, "UL": np.uint64}.get(fam, np.int64)


def _state_word(buf, tok):
    """:func:`_state_dtype` as a Numba type."""
    return from_dtype(np.dtype(_state_dtype(buf, tok)))


_STATE_DTYPES: dict = {}


def state_dtype(buf, tok):
    """The numpy dtype of :func:`state_arrays` for the array ``buf`` and token ``tok``.

    For callers outside Numba that allocate states for a kernel.
    """
    key = (buf.dtype, tok.dtype)
    dt = _STATE_DTYPES.get(key)
    if dt is None:
        dt = _STATE_DTYPES[key] = np.dtype(_state_dtype(typeof(buf), typeof(tok)))
    return dt


@intrinsic
def state_arrays(typingctx, n, buf, tok):
    """Two zeroed arrays of ``n`` states (one column of ``a``, one of ``b``).

    Emitted in the caller as two :func:`_zeroed` (an intrinsic: see :func:`widen`).
    """
    if not isinstance(n, types.Integer):
        return None
    arrty = types.Array(_state_word(buf, tok), 1, "C")
    pair = types.UniTuple(arrty, 2)

    def codegen(context, builder, sig, args):
        a = _zeroed_ir(context, builder, arrty, args[0], n)
        b = _zeroed_ir(context, builder, arrty, args[0], n)
        return context.make_tuple(builder, pair, [a, b])

    return pair(n, buf, tok), codegen


@intrinsic
def _zeroed(typingctx, n, kind):
    """A new zeroed C array of ``n`` values of the scalar class ``kind``, lowered in place.

    ``np.zeros`` compiles a chain of functions of Numba's own (np.empty,
    the allocator, the fill), each with an environment named after
    ``numba.np.arrayobj``: a process that loads a column kernel from the
    disk cache then imports that module (and its string and hashing
    modules, about 30 ms) only to rebuild those environments, and a cold
    process compiles the chain.  Here the NRT allocation and the memset
    are emitted in the caller.  A failed allocation raises MemoryError.
    """
    if not isinstance(kind, types.NumberClass) or not isinstance(n, types.Integer):
        return None
    arrty = types.Array(kind.instance_type, 1, "C")

    def codegen(context, builder, sig, args):
        return _zeroed_ir(context, builder, arrty, args[0], sig.args[0])

    return arrty(n, kind), codegen


def _zeroed_ir(context, builder, arrty, n, nty):
    """A new reference to a zeroed C array of type ``arrty``, ``n`` (of type ``nty``) long."""
    from numba.core.imputils import impl_ret_new_ref
    from numba.np.arrayobj import make_array, populate_array

    intp = context.get_value_type(types.intp)
    count = context.cast(builder, n, nty, types.intp)
    itemsize = context.get_abi_sizeof(context.get_data_type(arrty.dtype))
    size = builder.mul(count, ir.Constant(intp, itemsize))
    align = context.get_preferred_array_alignment(arrty.dtype)
    meminfo = context.nrt.meminfo_alloc_aligned(builder, size, align)
    with builder.if_then(cgutils.is_null(builder, meminfo), likely=False):
        context.call_conv.return_user_exc(
            builder, MemoryError, ("cannot allocate the column states",))
    data = context.nrt.meminfo_data(builder, meminfo)
    cgutils.memset(builder, data, size, 0)
    ary = make_array(arrty)(context, builder)
    populate_array(ary,
                   data=builder.bitcast(data, context.get_data_type(arrty.dtype).as_pointer()),
                   shape=cgutils.pack_array(builder, [count], ty=intp),
                   strides=cgutils.pack_array(builder, [ir.Constant(intp, itemsize)], ty=intp),
                   itemsize=ir.Constant(intp, itemsize), meminfo=meminfo)
    return impl_ret_new_ref(context, builder, arrty, ary._getvalue())


@register_jitable
def _two_sum_err(s, x, t):
    """The exact rounding error of ``t = s + x`` (Knuth's TwoSum).

    Branch-free, unlike Neumaier's magnitude test, so the lanes of a run
    vectorise; six flops per value still leave float64 memory-bound.
    """
    z = t - s
    return (s - (t - z)) + (x - z)


@register_jitable
def _fast_two_sum_err(s, x, t):
    """:func:`_two_sum_err` by Fast2Sum, the operands ordered by magnitude.

    Three additions instead of six (the compare and selects run on other
    ports), and just as exact; the selects vectorise like the rest.
    """
    first = abs(s) >= abs(x)
    big = s if first else x
    small = x if first else s
    return (big - t) + small


@register_jitable
def _fused_two_sum(a, b, x, one):
    """The state ``(a, b)`` with the float64 ``x`` added: TwoSum on the multiply pipes too.

    ``one`` is :func:`opaque_one`'s 1.0: three of TwoSum's seven additions
    go as ``fma(u, +-one, v)``, exactly the additions they stand for, so the
    error is exact and the state the same to the bit as
    :func:`_fast_two_sum_err`'s, in seven operations for its nine.
    """
    t = a + x
    z = t - a
    tz = _fma(z, -one, t)  # t - z
    return t, b + _fma(a - tz, one, _fma(z, -one, x))


def merge(a1, b1, a2, b2, tok):
    """The state of the union of two disjoint sets of values."""


@overload(merge, jit_options=_OVERLOAD_OPTS)
def _merge(a1, b1, a2, b2, tok):
    if isinstance(a1, types.Float) and bounded(tok):

        def impl_bound(a1, b1, a2, b2, tok):
            t = a1 + a2
            return t, (b1 + b2) + abs(t)

        return impl_bound
    if isinstance(a1, types.Float):

        def impl_d(a1, b1, a2, b2, tok):
            t = a1 + a2
            return t, (b1 + b2) + _two_sum_err(a1, a2, t)

        return impl_d
    if isinstance(a1, types.Integer) and a1.signed:

        def impl_l(a1, b1, a2, b2, tok):
            lo = b1 + b2
            return a1 + a2 + (lo >> _I32), lo & _IM32

        return impl_l

    def impl_u(a1, b1, a2, b2, tok):
        lo = b1 + b2
        return a1 + a2 + (lo >> _S32), lo & _M32

    return impl_u


def run_sum(buf, off, n, stride, tok):
    """The state of ``buf[off + i*stride]`` for ``i`` in ``range(n)``."""


#: Lanes of the compensated sum of a run that is not plain float64 (scaled,
#: or a narrow float read exactly): a loop this long is vectorised, not
#: unrolled.  Sixteen lanes measured slower than four
#: scalar ones (LLVM unrolled the lane loop instead of vectorising it).
#: Runs from 1024 values had 64 lanes of their own: no faster (0.96-1.04x
#: on strided and exact float64 runs of 1-5k values and whole arrays), and
#: one more loop for every strided float64 kernel to compile (without it a
#: cold first complex128 (64, 64)[:, ::3] mean over axis 1 took 3.0 s, not
#: 3.3 s).
LANES = 32
#: Such runs shorter than this use four scalar lanes: zeroing and merging
#: 32 lanes costs more than it saves below about 128 values.
_LANED_RUN = 128


@intrinsic
def stack_f64(typingctx, n):
    """A pointer to ``n`` (a literal) float64s on the stack: lanes with no heap allocation.

    The slot is made once, in the function's entry block, so a run sum inlined
    into a loop reuses it instead of growing the stack.
    """
    if not isinstance(n, types.IntegerLiteral):
        return None
    size = n.literal_value

    def codegen(context, builder, sig, args):
        return cgutils.alloca_once(builder, ir.DoubleType(), size=size)

    return types.CPointer(types.float64)(n), codegen


#: Values in one block of a bounded plain sum (see :func:`bounded`).  A block
#: is summed in vector lanes (or in any order, where LLVM reassociates the
#: loop) and adds its depth times its sum of magnitudes to the bound
#: (magnitude_bound); the blocks' sums are then added in turn.  Smaller
#: blocks bound tighter (the depth grows with them), larger ones cost more
#: in cache, each a block's horizontal adds.
BOUND_BLOCK = 512


def magnitude_zero(buf):
    """The start of a block's :func:`magnitude_join`: no value yet."""


@overload(magnitude_zero, jit_options=_OVERLOAD_OPTS)
def _magnitude_zero(buf):
    z = np.uint32(0) if buf.dtype == types.float32 else np.uint16(0)
    return lambda buf: z


def magnitude_join(t, v, buf, tok):
    """``t`` joined with the storage value ``v``: the larger of their bits, unsigned.

    A set sign bit makes a value's bits larger than any positive value's,
    so the join of a block is the bits of its largest negative magnitude,
    or, with no negative value, of its largest positive one: one integer
    maximum a value, which vectorises, where a sum of magnitudes took a
    float add and an and.  That is enough for the bound
    (:func:`magnitude_bound`): the magnitudes of a block sum to its sum
    less twice the sum of its negative values.
    """


_ABS32 = np.uint32(0x7FFFFFFF)
_ABS16 = np.uint16(0x7FFF)


@overload(magnitude_join, jit_options=_OVERLOAD_OPTS)
def _magnitude_join(t, v, buf, tok):
    if buf.dtype == types.float32:
        return lambda t, v, buf, tok: _join(t, _f32_bits(v))
    return lambda t, v, buf, tok: _join(t, v)


@register_jitable
def _join(t, bits):
    # a select, not the builtin max: its overload took 0.1 s of a cold call
    return t if t >= bits else bits


def magnitude_bound(t, m, s, buf, tok, depth=None):
    """What a block of ``m`` values summing to ``s``, joined into ``t``, adds to the bound.

    A sum of ``m`` values errs by at most ``depth`` ulps of float64
    (2**-53) times the sum of their magnitudes, ``depth`` the most adds a
    value passes through: ``m - 1`` in any order (the default), fewer in
    vector lanes.  The sum of magnitudes is ``|s|`` plus at most twice
    ``m`` times the largest negative magnitude.  Values of one sign never
    leave the first term; NaN and Inf make the bound NaN or Inf, but then
    the sum is not finite either.
    """


@overload(magnitude_bound, jit_options=_OVERLOAD_OPTS)
def _magnitude_bound(t, m, s, buf, tok, depth=None):
    if depth is None or isinstance(depth, (types.NoneType, types.Omitted)):

        def any_order(t, m, s, buf, tok, depth=None):
            return (abs(s) + 2.0 * m * negative_magnitude(t, buf, tok)) * (m - 1)

        return any_order

    def lanes(t, m, s, buf, tok, depth=None):
        return (abs(s) + 2.0 * m * negative_magnitude(t, buf, tok)) * depth

    return lanes


def negative_magnitude(t, buf, tok):
    """The largest negative magnitude of the values joined into ``t`` (0.0 if none is negative)."""


@overload(negative_magnitude, jit_options=_OVERLOAD_OPTS)
def _negative_magnitude(t, buf, tok):
    if buf.dtype == types.float32:
        return lambda t, buf, tok: (
            np.float64(_f32_from_bits(np.uint32(t & _ABS32))) if t > _ABS32 else 0.0)
    return lambda t, buf, tok: widen(np.uint16(t & _ABS16), tok) if t > _ABS16 else 0.0


# F: a plain float64 sum. Reassociation (the most fast-math the kernels allow:
# never nnan/ninf, so NaN and Inf propagate) lets LLVM vectorise the reduction;
# float64 has 29 more bits than the inputs, so the order seldom matters, and
# the sum of magnitudes bounds the error where it does.
@njit(fastmath={"reassoc", "contract"}, **_HELPER)
def _block_f(buf, off, n, tok):
    s = 0.0
    t = magnitude_zero(buf)
    for i in range(n):
        v = buf[np.uint64(off + i)]
        s += widen(v, tok)
        t = magnitude_join(t, v, buf, tok)
    return s, t


# Every second float16 value where F16C is not used (see _sum_step2 for the
# rest): a constant stride of 2 lets LLVM load whole vectors and keep the
# even lanes instead of converting one value at a time.
@njit(fastmath={"reassoc", "contract"}, **_HELPER)
def _block_f2(buf, off, n, tok):
    s = 0.0
    t = magnitude_zero(buf)
    for i in range(n):
        v = buf[np.uint64(off + 2 * i)]
        s += widen(v, tok)
        t = magnitude_join(t, v, buf, tok)
    return s, t


# Every third value (an RGB channel, a [::3] view): with the stride a constant
# LLVM vectorises the loop, each vector put together from the kept values'
# own loads, then widened and added four at a time; the eight scalar lanes
# below widen and add one value at a time.
@njit(fastmath={"reassoc", "contract"}, **_HELPER)
def _block_f3(buf, off, n, tok):
    s = 0.0
    t = magnitude_zero(buf)
    for i in range(n):
        v = buf[np.uint64(off + 3 * i)]
        s += widen(v, tok)
        t = magnitude_join(t, v, buf, tok)
    return s, t


def _blocked(block, step):
    """A bounded run sum over ``block`` (values ``step`` apart), BOUND_BLOCK values at a time."""

    @register_jitable
    def run(buf, off, n, stride, tok):
        a = 0.0
        b = 0.0
        for lo in range(0, n, BOUND_BLOCK):
            m = n - lo if n - lo < BOUND_BLOCK else BOUND_BLOCK
            s, t = block(buf, off + lo * step, m, tok)
            a, b = merge(a, b, s, magnitude_bound(t, m, s, buf, tok), tok)
        return a, b

    return run


_run_f_loop = _blocked(_block_f, 1)
_run_f2 = _blocked(_block_f2, 2)
_run_f3 = _blocked(_block_f3, 3)


def _run_f(buf, off, n, stride, tok):
    """The bounded state of the contiguous run ``buf[off : off + n]`` (``stride`` unread)."""


@overload(_run_f, jit_options=_OVERLOAD_OPTS)
def _run_f_impl(buf, off, n, stride, tok):
    if _unit_kind(buf, tok) is None:  # float16 without F16C
        return _run_f_loop
    return lambda buf, off, n, stride, tok: _sum_unit(buf, off, n, tok)


# Other strided runs stay scalar: vectorised, they become gathers, which measured
# four times slower than eight independent scalar lanes on the AMD cores here.
# No fast-math, so LLVM keeps the lanes as written, and each lane's bound is
# the sum of its partial sums' magnitudes.  ``rows`` runs, ``rstride``
# apart, go through the same lanes (run_rows).
@njit(**_HELPER)
def _rows_f_strided(buf, off, n, stride, rows, rstride, tok):
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    c0 = c1 = c2 = c3 = c4 = c5 = c6 = c7 = 0.0
    for r in range(rows):
        base = off + r * rstride
        i = 0
        while i + 8 <= n:
            k = base + i * stride
            s0 += widen(buf[np.uint64(k)], tok)
            s1 += widen(buf[np.uint64(k + stride)], tok)
            s2 += widen(buf[np.uint64(k + 2 * stride)], tok)
            s3 += widen(buf[np.uint64(k + 3 * stride)], tok)
            s4 += widen(buf[np.uint64(k + 4 * stride)], tok)
            s5 += widen(buf[np.uint64(k + 5 * stride)], tok)
            s6 += widen(buf[np.uint64(k + 6 * stride)], tok)
            s7 += widen(buf[np.uint64(k + 7 * stride)], tok)
            c0 += abs(s0)
            c1 += abs(s1)
            c2 += abs(s2)
            c3 += abs(s3)
            c4 += abs(s4)
            c5 += abs(s5)
            c6 += abs(s6)
            c7 += abs(s7)
            i += 8
        while i < n:
            s0 += widen(buf[np.uint64(base + i * stride)], tok)
            c0 += abs(s0)
            i += 1
    lo = merge(*merge(s0, c0, s1, c1, tok), *merge(s2, c2, s3, c3, tok), tok)
    hi = merge(*merge(s4, c4, s5, c5, tok), *merge(s6, c6, s7, c7, tok), tok)
    return merge(*lo, *hi, tok)


@register_jitable
def _run_d4(buf, off, n, stride, tok):
    """float64, a short run: four scalar TwoSum lanes."""
    s0 = s1 = s2 = s3 = 0.0
    c0 = c1 = c2 = c3 = 0.0
    i = 0
    while i + 4 <= n:
        k = off + i * stride
        x = widen(buf[np.uint64(k)], tok)
        t = s0 + x
        c0 += _two_sum_err(s0, x, t)
        s0 = t
        x = widen(buf[np.uint64(k + stride)], tok)
        t = s1 + x
        c1 += _two_sum_err(s1, x, t)
        s1 = t
        x = widen(buf[np.uint64(k + 2 * stride)], tok)
        t = s2 + x
        c2 += _two_sum_err(s2, x, t)
        s2 = t
        x = widen(buf[np.uint64(k + 3 * stride)], tok)
        t = s3 + x
        c3 += _two_sum_err(s3, x, t)
        s3 = t
        i += 4
    while i < n:
        x = widen(buf[np.uint64(off + i * stride)], tok)
        t = s0 + x
        c0 += _two_sum_err(s0, x, t)
        s0 = t
        i += 1
    a, b = merge(s0, c0, s1, c1, tok)
    a2, b2 = merge(s2, c2, s3, c3, tok)
    return merge(a, b, a2, b2, tok)


def _laned(lanes, parts=1):
    """float64 TwoSum in ``lanes`` independent lanes kept in memory (on the stack).

    Numba leaves LLVM's SLP vectoriser off, so lanes held in scalars would
    stay scalar; lanes in an array make the inner loop element-wise, which
    the loop vectoriser handles without reassociation (that would cancel the
    compensation).  With ``parts`` 2 the ``n`` values are interleaved
    complex parts (``off`` even, ``stride`` 1): a lane's parity is its part,
    the lanes merge down to one a part, and ``(a_re, b_re, a_im, b_im)`` is
    returned.
    """

    @register_jitable
    def run(buf, off, n, stride, tok):
        sa = carray(stack_f64(lanes), lanes)
        sc = carray(stack_f64(lanes), lanes)
        for k in range(lanes):
            sa[k] = 0.0
            sc[k] = 0.0
        rows = n // lanes
        for r in range(rows):
            base = off + r * lanes * stride
            if stride == 1:
                for k in range(lanes):
                    x = widen(buf[np.uint64(base + k)], tok)
                    s = sa[k]
                    t = s + x
                    sc[k] += _two_sum_err(s, x, t)
                    sa[k] = t
            else:
                for k in range(lanes):
                    x = widen(buf[np.uint64(base + k * stride)], tok)
                    s = sa[k]
                    t = s + x
                    sc[k] += _two_sum_err(s, x, t)
                    sa[k] = t
        # merge the lanes by halving: each level is element-wise, so it
        # vectorises; lanes h apart (h even) hold the same part
        h = lanes // 2
        while h >= parts:
            for k in range(h):
                sa[k], sc[k] = merge(sa[k], sc[k], sa[k + h], sc[k + h], tok)
            h //= 2
        for i in range(rows * lanes, n):
            p = i % parts
            x = widen(buf[np.uint64(off + i * stride)], tok)
            t = sa[p] + x
            sc[p] += _two_sum_err(sa[p], x, t)
            sa[p] = t
        return sa[0], sc[0], sa[parts - 1], sc[parts - 1]

    return run


_laned_one = _laned(LANES)
_laned_parts = _laned(LANES, parts=2)


_V4 = ir.VectorType(ir.DoubleType(), 4)
#: Eight float64 lanes: one register with 512-bit vectors, two without.
_V8 = ir.VectorType(ir.DoubleType(), 8)
_EIGHT = ir.Constant(ir.VectorType(ir.IntType(32), 8), list(range(8)))


def _vec_two_sum(builder, s, c, x):
    """TwoSum in IR: ``s + x``, and ``c`` plus its exact rounding error (no fast-math flags)."""
    t = builder.fadd(s, x)
    z = builder.fsub(t, s)
    err = builder.fadd(builder.fsub(s, builder.fsub(t, z)), builder.fsub(x, z))
    return t, builder.fadd(c, err)


def _vec_compensated(builder, s, c, x, one=None):
    """:func:`_vec_two_sum`'s step: by Fast2Sum, the operands ordered by magnitude.

    Exact as TwoSum is, with four additions instead of seven (the compare
    and selects run on other ports): 1.3x faster on runs held in cache,
    where the adders, not memory, bound the loop.  NaN and Inf still
    propagate: they make the sum, and the error term, non-finite.

    Given ``one`` (:func:`_vec_one`'s), TwoSum instead, three of its seven
    additions issued as ``fma(a, +-one, b)`` on the multiply pipes, which
    Fast2Sum leaves idle: seven operations for its nine, and the same exact
    error, so the same state to the bit.  The running sum and the error
    word stay on the adders (fused, their latency bound the loop).
    """
    if one is not None:
        t = builder.fadd(s, x)
        z = builder.fsub(t, s)
        mone = builder.fneg(one)
        fma = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(s.type, [s.type] * 3), f"llvm.fma.v{s.type.count}f64")
        tz = builder.call(fma, [z, mone, t])  # t - z
        err = builder.call(fma, [builder.fsub(s, tz), one, builder.call(fma, [z, mone, x])])
        return t, builder.fadd(c, err)
    fabs = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(s.type, [s.type]), f"llvm.fabs.v{s.type.count}f64")
    first = builder.fcmp_ordered(">=", builder.call(fabs, [s]), builder.call(fabs, [x]))
    big = builder.select(first, s, x)
    small = builder.select(first, x, s)
    t = builder.fadd(s, x)
    return t, builder.fadd(c, builder.fadd(builder.fsub(big, t), small))


def _vec_one(builder):
    """1.0 in eight lanes, hidden from LLVM (see :func:`opaque_one`); None without FMA."""
    if not FUSED:
        return None
    v = builder.insert_element(ir.Constant(_V8, None), _hidden_one(builder),
                               ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(ir.IntType(32), 8), [0] * 8))


def _loop(builder, name):
    """A counted loop's blocks: ``(i, entry, head, body, done)``, the builder at the head.

    ``i`` is the head's int64 counter phi, 0 from the block before; the
    caller adds its other phis, branches to ``body`` or ``done``, and in
    the body adds ``i``'s next value and branches back to the head.
    """
    entry = builder.basic_block
    head = builder.append_basic_block(f"{name}.head")
    body = builder.append_basic_block(f"{name}.body")
    done = builder.append_basic_block(f"{name}.done")
    builder.branch(head)
    builder.position_at_end(head)
    i = builder.phi(ir.IntType(64))
    i.add_incoming(ir.Constant(ir.IntType(64), 0), entry)
    return i, entry, head, body, done


def _phi2(builder, v1, b1, v2, b2):
    phi = builder.phi(v1.type)
    phi.add_incoming(v1, b1)
    phi.add_incoming(v2, b2)
    return phi


def _lanes(builder, v, idx):
    return builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(ir.IntType(32), len(idx)), idx))


def _joined(builder, lo, hi):
    """Two vectors of four lanes as one of eight, ``lo``'s lanes first."""
    return builder.shuffle_vector(lo, hi, _EIGHT)


def _halves(builder, v):
    """An eight-lane vector as its lanes 0-3 and 4-7, two vectors of four (one
    register each without 512-bit vectors, as LLVM splits the eight lanes)."""
    return _lanes(builder, v, [0, 1, 2, 3]), _lanes(builder, v, [4, 5, 6, 7])


def _splat(builder, x, count):
    """The int64 ``x`` as int32 in each of ``count`` lanes (lane numbers to compare against)."""
    t = ir.VectorType(_I32_T, count)
    x = builder.insert_element(ir.Constant(t, None), builder.trunc(x, _I32_T),
                               ir.Constant(_I32_T, 0))
    return builder.shuffle_vector(x, ir.Constant(t, None), ir.Constant(t, [0] * count))


def _acc_halves(builder, acc, add):
    """Vector accumulators added (``add``: IR fadd or add) down to two scalars:
    the sums of their even lanes and of their odd ones.

    A tree over the accumulators, then over halves of the lanes (which keeps
    each lane's parity): four accumulators of four lanes, or two of eight,
    take three levels of adds either way.
    """
    while len(acc) > 1:
        acc = [add(acc[k], acc[k + 1]) if k + 1 < len(acc) else acc[k]
               for k in range(0, len(acc), 2)]
    v = acc[0]
    while v.type.count > 2:
        half = v.type.count // 2
        v = add(_lanes(builder, v, list(range(half))),
                _lanes(builder, v, list(range(half, 2 * half))))
    return [builder.extract_element(v, ir.Constant(ir.IntType(32), k)) for k in (0, 1)]


def _lanes8_codegen(rows, parts=1, step=1, strided=False):
    """Code for :func:`_f64_lanes8` over ``rows`` runs of the same length, in one loop.

    One vector of eight lanes per run (:func:`_vec_compensated`; contiguous
    runs prefetch :data:`PREFETCH_AHEAD` bytes on), a last block of four
    into its first four lanes, then each run's lanes merged (TwoSum).  With
    512-bit vectors the eight lanes are one register, and a step half the
    instructions of two vectors of four, which LLVM makes of them
    elsewhere: held in cache, one thread, float64 (131072,) 1.4-1.5x and
    (256, 2048) over axis 1 1.4-1.8x faster, complex128 (65536,) 1.3x;
    from memory the same speed (0.91-1.05x, old and new alternating).
    Compiled for an AVX2 target (NUMBA_CPU_NAME=znver3), held in cache,
    float64 (131072,) and (256, 512) over axis 1 1.44-1.58x faster too.
    Returns ``(a, b)`` per run, flattened.  With ``parts=2`` the last
    merge is left out: even and odd lanes stay apart, the two parts of
    interleaved complex values, and each run gives ``(a_real, b_real,
    a_imag, b_imag)``.  With ``step=2``
    the run is every second value (every second complex value with
    ``parts=2``): each block loads sixteen and keeps half (``n``, the values
    kept, must then be a multiple of eight).  With ``strided`` (one run) the
    arguments are ``(buf, off, stride, n)`` and each vector is built from
    scalar loads ``stride`` apart (with ``parts=2``, from pairs: ``stride``
    is then the distance between complex values, in float64s).
    """

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        n = args[-1]
        align = 8 if sig.args[0].aligned else 1
        i64 = ir.IntType(64)
        bases = [builder.gep(ary.data, [off]) for off in args[1:1 + rows]]
        vptr = _V4.as_pointer()

        def load(base, i, k):
            """Vector ``k`` (of two) of block ``i``: values ``8i + 4k`` to ``8i + 4k + 3``."""
            if not strided:
                ptr = builder.gep(base, [builder.add(builder.mul(i, ir.Constant(i64, 8)),
                                                     ir.Constant(i64, 4 * k))])
                return builder.load(builder.bitcast(ptr, vptr), align=align)
            stride = args[2]
            if parts == 2:
                first = builder.add(builder.mul(i, ir.Constant(i64, 4)), ir.Constant(i64, 2 * k))
                return _pair_vector(builder, base, first, stride, align)
            first = builder.add(builder.mul(i, ir.Constant(i64, 8)), ir.Constant(i64, 4 * k))
            return _strided_vector(builder, base, first, stride, align)
        zero = ir.Constant(_V8, None)
        one = _vec_one(builder)
        one4 = None if one is None else _halves(builder, one)[0]  # for the last four
        i, entry, head, body, done = _loop(builder, "lanes8")
        acc = [builder.phi(_V8) for _ in range(2 * rows)]  # s, c per run: eight lanes each
        for phi in acc:
            phi.add_incoming(zero, entry)
        blocks = builder.ashr(n, ir.Constant(i64, 3))
        builder.cbranch(builder.icmp_signed("<", i, blocks), body, done)
        builder.position_at_end(body)
        nxt_acc = []
        for r, base in enumerate(bases):
            if step == 1 and not strided:
                ptr = builder.gep(base, [builder.mul(i, ir.Constant(i64, 8))])
                _prefetch(builder, ptr)
                vec = [builder.load(builder.bitcast(ptr, _V8.as_pointer()), align=align)]
            elif step == 1:
                vec = [load(base, i, 0), load(base, i, 1)]
            else:
                ptr = builder.gep(base, [builder.mul(i, ir.Constant(i64, 8 * step))])
                vec = [builder.load(builder.bitcast(builder.gep(ptr, [ir.Constant(i64, 4 * k)]),
                                                    vptr), align=align) for k in range(2 * step)]
            if step == 2:
                # the even lanes of each two vectors (complex parts: the even
                # pairs), in the order one in-lane unpack gives (the lanes are
                # merged at the end, in any order, keeping only their parity);
                # a lane-crossing permute measured twice as slow
                even = ir.Constant(ir.VectorType(ir.IntType(32), 4),
                                   [0, 1, 4, 5] if parts == 2 else [0, 4, 2, 6])
                x = _joined(builder, builder.shuffle_vector(vec[0], vec[1], even),
                            builder.shuffle_vector(vec[2], vec[3], even))
            elif len(vec) == 2:
                x = _joined(builder, *vec)
            else:
                x = vec[0]
            nxt_acc += _vec_compensated(builder, *acc[2 * r:2 * r + 2], x, one)
        i.add_incoming(builder.add(i, ir.Constant(i64, 1)), builder.basic_block)
        for phi, val in zip(acc, nxt_acc):
            phi.add_incoming(val, builder.basic_block)
        builder.branch(head)
        builder.position_at_end(done)
        split = [half for v in acc for half in _halves(builder, v)]  # s0, s1, c0, c1 per run
        # four values left: one more step of each run's first vector
        four = builder.icmp_signed("!=", builder.and_(n, ir.Constant(i64, 4)),
                                   ir.Constant(i64, 0))
        with builder.if_then(four):
            last = []
            for r, base in enumerate(bases):
                last += _vec_compensated(builder, split[4 * r], split[4 * r + 2],
                                         load(base, blocks, 0), one4)
            tail = builder.basic_block
        # (every phi at the top of the block, before any merge)
        firsts = [_phi2(builder, split[4 * r + 2 * k], done, last[2 * r + k], tail)
                  for r in range(rows) for k in (0, 1)]
        out = []
        for r in range(rows):
            out += _merge_lanes(builder, *firsts[2 * r:2 * r + 2], split[4 * r + 1],
                                split[4 * r + 3], parts)
        return context.make_tuple(builder, sig.return_type, out)

    return codegen


def _strided_vector(builder, base, first, stride, align):
    """Values ``first`` to ``first + 3`` of the run ``base[j*stride]``: four loads, one vector."""
    i64 = ir.IntType(64)
    v = ir.Constant(_V4, None)
    for m in range(4):
        idx = builder.mul(builder.add(first, ir.Constant(i64, m)), stride)
        x = builder.load(builder.gep(base, [idx]), align=align)
        v = builder.insert_element(v, x, ir.Constant(ir.IntType(32), m))
    return v


def _pair_vector(builder, base, first, stride, align):
    """Complex values ``first`` and ``first + 1`` of the run ``base[j*stride]``: two pair loads."""
    i64 = ir.IntType(64)
    p2 = ir.VectorType(ir.DoubleType(), 2).as_pointer()
    pair = [builder.load(builder.bitcast(builder.gep(
        base, [builder.mul(builder.add(first, ir.Constant(i64, m)), stride)]), p2),
        align=align) for m in range(2)]
    return builder.shuffle_vector(pair[0], pair[1], ir.Constant(
        ir.VectorType(ir.IntType(32), 4), [0, 1, 2, 3]))


def _merge_lanes(builder, s0, c0, s1, c1, parts=1):
    """The state ``[a, b]`` of two vectors of four lanes (``[a_re, b_re, a_im, b_im]``: parts=2)."""
    # merge the two vectors, then their halves, then the last two lanes
    s, c = _vec_two_sum(builder, s0, builder.fadd(c0, c1), s1)
    lo, hi = [0, 1], [2, 3]
    s, c = _vec_two_sum(builder, _lanes(builder, s, lo),
                        builder.fadd(_lanes(builder, c, lo), _lanes(builder, c, hi)),
                        _lanes(builder, s, hi))
    k0, k1 = ir.Constant(ir.IntType(32), 0), ir.Constant(ir.IntType(32), 1)
    if parts == 2:  # lane 0 holds the even values, lane 1 the odd ones
        return [builder.extract_element(s, k0), builder.extract_element(c, k0),
                builder.extract_element(s, k1), builder.extract_element(c, k1)]
    c = builder.fadd(builder.extract_element(c, k0), builder.extract_element(c, k1))
    return list(_vec_two_sum(builder, builder.extract_element(s, k0), c,
                             builder.extract_element(s, k1)))


def _runs_lanes8_codegen(unit, parts=1):
    """Code for :func:`_f64_lanes8_runs`: ``rows`` runs of ``n`` values in one set of lanes.

    Arguments ``(buf, off, stride, n, rows, rstride)``: value ``j`` of run
    ``r`` is ``buf[off + r*rstride + j*stride]`` (``unit``: ``stride`` is 1
    and the blocks are vector loads).  Each run adds its blocks of eight to
    the same vector of eight lanes (:func:`_vec_compensated`; see
    :func:`_lanes8_codegen`), then its last
    ``n % 8`` values as one more block whose missing lanes are -0.0
    (``x + -0.0`` is ``x`` for every ``x``, -0.0 included); the lanes are
    merged once, at the end.  A run sum
    per run ended in a chain of lane merges and a merge into the output's
    state: most of the time of runs of a few dozen values.  With ``parts=2``
    the runs are of complex values (``n`` float64s, even; ``stride``, when
    not ``unit``, the float64s from one complex value to the next, each
    read as a pair) and the lanes' parity is the part, as in
    :func:`_lanes8_codegen`.
    """

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        off, stride, n, rows, rstride = args[1:]
        align = 8 if sig.args[0].aligned else 1
        i64 = ir.IntType(64)
        i32 = ir.IntType(32)
        vptr = _V4.as_pointer()
        zero = ir.Constant(_V4, None)
        blocks = builder.ashr(n, ir.Constant(i64, 3))
        rem = builder.and_(n, ir.Constant(i64, 7))
        one = _vec_one(builder)
        entry = builder.basic_block

        def eight(base, j):
            """Values ``j`` to ``j + 7`` of a run, one vector."""
            if unit:
                return builder.load(builder.bitcast(builder.gep(base, [j]), _V8.as_pointer()),
                                    align=align)
            return _joined(builder, load(base, j), load(base, builder.add(j, ir.Constant(i64, 4))))

        def load(base, j):
            """Values ``j`` to ``j + 3`` of a run."""
            if unit:
                return builder.load(builder.bitcast(builder.gep(base, [j]), vptr), align=align)
            if parts == 2:
                return _pair_vector(builder, base, builder.ashr(j, ir.Constant(i64, 1)),
                                    stride, align)
            return _strided_vector(builder, base, j, stride, align)

        def place(m, inside):
            """Where lane ``m`` of the tail reads: a value of the run (the last for lanes past rem)."""
            if unit or parts == 1:
                j = builder.add(builder.shl(blocks, ir.Constant(i64, 3)), builder.select(
                    inside, ir.Constant(i64, m), builder.sub(rem, ir.Constant(i64, 1))))
                return builder.mul(j, stride)
            # complex values stride apart: the value's index, then its part
            c = builder.add(builder.shl(blocks, ir.Constant(i64, 2)), builder.select(
                inside, ir.Constant(i64, m // 2),
                builder.sub(builder.ashr(rem, ir.Constant(i64, 1)), ir.Constant(i64, 1))))
            return builder.add(builder.mul(c, stride), ir.Constant(i64, m % 2))

        def tail(base, k):
            """Vector ``k`` of the last ``rem`` values, -0.0 past them."""
            v = zero
            for m in range(4 * k, 4 * k + 4):
                inside = builder.icmp_signed("<", ir.Constant(i64, m), rem)
                x = builder.load(builder.gep(base, [place(m, inside)]), align=align)
                x = builder.select(inside, x, ir.Constant(ir.DoubleType(), -0.0))
                v = builder.insert_element(v, x, ir.Constant(i32, m - 4 * k))
            return v

        outer = builder.append_basic_block("runs.outer")
        start = builder.append_basic_block("runs.start")
        head = builder.append_basic_block("runs.head")
        body = builder.append_basic_block("runs.body")
        after = builder.append_basic_block("runs.after")
        last = builder.append_basic_block("runs.last")
        nxt = builder.append_basic_block("runs.next")
        done = builder.append_basic_block("runs.done")
        builder.branch(outer)

        builder.position_at_end(outer)
        r = builder.phi(i64)
        r.add_incoming(ir.Constant(i64, 0), entry)
        acc = [builder.phi(_V8) for _ in range(2)]  # s, c: eight lanes (see _lanes8_codegen)
        for phi in acc:
            phi.add_incoming(ir.Constant(_V8, None), entry)
        builder.cbranch(builder.icmp_signed("<", r, rows), start, done)

        builder.position_at_end(start)
        base = builder.gep(ary.data, [builder.add(off, builder.mul(r, rstride))])
        builder.branch(head)

        builder.position_at_end(head)
        i = builder.phi(i64)
        i.add_incoming(ir.Constant(i64, 0), start)
        inner = [builder.phi(_V8) for _ in range(2)]
        for phi, a in zip(inner, acc):
            phi.add_incoming(a, start)
        builder.cbranch(builder.icmp_signed("<", i, blocks), body, after)

        builder.position_at_end(body)
        upd = _vec_compensated(builder, *inner, eight(base, builder.shl(i, ir.Constant(i64, 3))),
                               one)
        i.add_incoming(builder.add(i, ir.Constant(i64, 1)), body)
        for phi, val in zip(inner, upd):
            phi.add_incoming(val, body)
        builder.branch(head)

        builder.position_at_end(after)
        builder.cbranch(builder.icmp_signed("!=", rem, ir.Constant(i64, 0)), last, nxt)

        builder.position_at_end(last)
        tails = _vec_compensated(builder, *inner, _joined(builder, tail(base, 0), tail(base, 1)),
                                 one)
        builder.branch(nxt)

        builder.position_at_end(nxt)
        ends = [_phi2(builder, a, after, t, last) for a, t in zip(inner, tails)]
        r.add_incoming(builder.add(r, ir.Constant(i64, 1)), nxt)
        for phi, val in zip(acc, ends):
            phi.add_incoming(val, nxt)
        builder.branch(outer)

        builder.position_at_end(done)
        (s0, s1), (c0, c1) = [_halves(builder, v) for v in acc]
        return context.make_tuple(builder, sig.return_type,
                                  _merge_lanes(builder, s0, c0, s1, c1, parts))

    return codegen


def _plain_f64_array(buf):
    return (isinstance(buf, types.Array) and buf.ndim == 1 and buf.layout == "C"
            and buf.dtype == types.float64)


def _one_run_lanes8(doc, parts=1, step=1):
    """An intrinsic ``(buf, off, n)``: :func:`_lanes8_codegen` on one run of plain float64."""

    def typer(typingctx, buf, off, n):
        if not (_plain_f64_array(buf) and isinstance(off, types.Integer)
                and isinstance(n, types.Integer)):
            return None
        sig = types.UniTuple(types.float64, 2 * parts)(buf, types.int64, types.int64)
        return sig, _lanes8_codegen(1, parts=parts, step=step)

    typer.__doc__ = doc
    return intrinsic(typer)


_f64_lanes8 = _one_run_lanes8(
    """The TwoSum state of ``buf[off : off + n - n % 4]`` (contiguous float64): eight lanes.

    Written as LLVM vector code (:func:`_lanes8_codegen`).  Numba leaves
    LLVM's SLP vectoriser off, and LLVM fully unrolls a loop over 8 or 16
    lanes before its loop vectoriser sees it, so lanes written in Python
    stay scalar (four times slower on short runs), and the 32-lane loop of
    :func:`_laned` measured half this speed on runs of 128 to 1000 values.
    """)


def _two_run_lanes8(doc, step=1):
    """An intrinsic ``(buf, off0, off1, n)``: :func:`_lanes8_codegen` on two runs of plain float64."""

    def typer(typingctx, buf, off0, off1, n):
        if not (_plain_f64_array(buf)
                and all(isinstance(t, types.Integer) for t in (off0, off1, n))):
            return None
        sig = types.UniTuple(types.float64, 4)(buf, types.int64, types.int64, types.int64)
        return sig, _lanes8_codegen(2, step=step)

    typer.__doc__ = doc
    return intrinsic(typer)


_f64_lanes8_pair = _two_run_lanes8(
    """:func:`_f64_lanes8` of two runs of ``n`` values at once: ``(a0, b0, a1, b1)``.

    A run's lanes end in a chain of dependent merges and its mean in a
    division; with two runs in one loop those chains overlap.
    """)


_f64_lanes8_step2 = _one_run_lanes8(
    """:func:`_f64_lanes8` of ``buf[off : off + 2*n : 2]``, ``n`` a multiple of eight.

    Whole vectors are loaded and their even lanes kept: the strided TwoSum
    lanes measured 2.4-3.6x slower on runs held in cache, 1.8x from memory.
    Each block's loads reach the odd value after its last even one, so the
    caller ends the blocks before the run's last value: memory past it may
    not be readable.
    """, step=2)


_f64_lanes8_step2_pair = _two_run_lanes8(
    """:func:`_f64_lanes8_step2` of two runs at once (see :func:`_f64_lanes8_pair`).""",
    step=2)


_f64_lanes8_parts_step2 = _one_run_lanes8(
    """:func:`_f64_lanes8_parts` of every second complex value (``n``: float64 kept, 8k).""",
    parts=2, step=2)


_f64_lanes8_parts = _one_run_lanes8(
    """:func:`_f64_lanes8` of interleaved complex parts: ``(a_re, b_re, a_im, b_im)``.

    ``n`` counts float64 values (twice the complex values) from an even
    ``off``, so a value's lane parity is its part.
    """, parts=2)


def _strided_lanes8(doc, parts=1):
    """An intrinsic ``(buf, off, stride, n)``: :func:`_lanes8_codegen` on one strided run."""

    def typer(typingctx, buf, off, stride, n):
        if not (_plain_f64_array(buf)
                and all(isinstance(t, types.Integer) for t in (off, stride, n))):
            return None
        sig = types.UniTuple(types.float64, 2 * parts)(buf, types.int64, types.int64, types.int64)
        return sig, _lanes8_codegen(1, parts=parts, strided=True)

    typer.__doc__ = doc
    return intrinsic(typer)


_f64_lanes8_strided = _strided_lanes8(
    """:func:`_f64_lanes8` of ``buf[off + i*stride]`` for ``i < n - n % 4``: eight lanes.

    Each vector is put together from four scalar loads (a gather measured
    four times slower on these AMD cores).  The 32 TwoSum lanes of
    :func:`_laned`, which LLVM vectorised into gathers, took 2.2x numpy's
    time on float64 rows of every third value held in cache.
    """)


_f64_lanes8_parts_strided = _strided_lanes8(
    """:func:`_f64_lanes8_parts` of complex values ``stride`` float64s apart (``n`` float64s, 4k).

    Each complex value is one load of its pair, two pairs a vector.
    """, parts=2)


def _runs_lanes8(unit, doc, parts=1):
    def typer(typingctx, buf, off, stride, n, rows, rstride):
        if not (_plain_f64_array(buf) and all(
                isinstance(t, types.Integer) for t in (off, stride, n, rows, rstride))):
            return None
        sig = types.UniTuple(types.float64, 2 * parts)(buf, *(types.int64,) * 5)
        return sig, _runs_lanes8_codegen(unit, parts)

    typer.__doc__ = doc
    return intrinsic(typer)


_f64_lanes8_runs = _runs_lanes8(
    False, """The state of ``rows`` strided runs of plain float64 (:func:`_runs_lanes8_codegen`).""")
_f64_lanes8_unit_runs = _runs_lanes8(
    True, """:func:`_f64_lanes8_runs` of contiguous runs (``stride`` 1).""")
_f64_lanes8_parts_runs = _runs_lanes8(
    True, """:func:`_f64_lanes8_unit_runs` of complex values: ``(a_re, b_re, a_im, b_im)``.""",
    parts=2)
_f64_lanes8_parts_strided_runs = _runs_lanes8(
    False, """:func:`_f64_lanes8_parts_runs` of complex values ``stride`` float64s apart.""",
    parts=2)


def plain_f64(buf, tok):
    """At typing time, from Numba types: ``buf`` is flat float64 storage read as it is."""
    return _plain_f64_array(buf) and not isinstance(tok.dtype, types.Float)


@register_jitable
def _run_plain_f64(buf, off, n, tok):
    m = n - n % 4
    if m:
        a, b = _f64_lanes8(buf, off, n)
    else:
        a = b = 0.0
    for i in range(m, n):
        a, b = add_value(a, b, buf, np.uint64(off + i), tok)
    return a, b


def run_rows(buf, off, n, stride, rows, rstride, tok):
    """The state of ``rows`` runs of ``n`` values: ``buf[off + r*rstride + i*stride]``.

    Plain float64 sums them all in one set of vector lanes
    (:func:`_runs_lanes8_codegen`), and so do contiguous float32 and 16-bit
    runs (:func:`_unit_runs_codegen` from 16 values,
    :func:`_unit_short_codegen` below); strided ones of those types go in
    one float64 sum.  Other reads (integers, exact and scaled reads, every
    second value) sum each run and merge.
    """


@register_jitable
def _rows_plain_f64(buf, off, n, stride, rows, rstride, tok):
    if stride == 1:
        return _f64_lanes8_unit_runs(buf, off, 1, n, rows, rstride)
    return _f64_lanes8_runs(buf, off, stride, n, rows, rstride)


@register_jitable
def _rows_plain_f64_unit(buf, off, n, stride, rows, rstride, tok):
    return _f64_lanes8_unit_runs(buf, off, 1, n, rows, rstride)


@register_jitable
def _rows_each(buf, off, n, stride, rows, rstride, tok):
    a, b = zero_state(buf, tok)
    for r in range(rows):
        a2, b2 = run_sum(buf, off + r * rstride, n, stride, tok)
        a, b = merge(a, b, a2, b2, tok)
    return a, b


# F (plain float64 sums of narrower floats): one sum across the runs, as
# _block_f sums one run (strided runs: _rows_f_strided above)
@njit(fastmath={"reassoc", "contract"}, **_HELPER)
def _rows_block_f(buf, off, n, rows, rstride, tok):
    s = 0.0
    t = magnitude_zero(buf)
    for r in range(rows):
        base = off + r * rstride
        for i in range(n):
            v = buf[np.uint64(base + i)]
            s += widen(v, tok)
            t = magnitude_join(t, v, buf, tok)
    return s, t


# Inlined (and _rows_f_lanes): as functions called, a first float32 call of
# (101, 3, 409) over (0, 2) ran 7.30 G instructions (callgrind, one
# thread), inlined 6.81 G.
@njit(inline="always", **_HELPER)
def _rows_f(buf, off, n, stride, rows, rstride, tok):
    return _rows_f_lanes(buf, off, n, rows, rstride, tok)


def _rows_f_lanes(buf, off, n, rows, rstride, tok):
    """The bounded state of ``rows`` contiguous runs of ``n`` values.

    Runs of 16 values or more in steps of 16 across the runs
    (:func:`_unit_runs_codegen`), shorter ones in windows of four
    (:func:`_unit_short_codegen`).
    """


@overload(_rows_f_lanes, jit_options=_OVERLOAD_OPTS, inline="always")
def _rows_f_lanes_impl(buf, off, n, rows, rstride, tok):
    if _unit_kind(buf, tok) is None:  # float16 without F16C
        return _rows_f_scalar

    def lanes(buf, off, n, rows, rstride, tok):
        if n >= 16:
            return _sum_unit_runs(buf, off, n, rows, rstride, tok)
        return _sum_unit_short(buf, off, n, rows, rstride, tok)

    return lanes


@register_jitable
def _rows_f_scalar(buf, off, n, rows, rstride, tok):
    if n >= 16:
        return _rows_f_each(buf, off, n, rows, rstride, tok)
    return _rows_f_blocks(buf, off, n, rows, rstride, tok)


@register_jitable
def _rows_f_blocks(buf, off, n, rows, rstride, tok):
    # blocks of whole runs, BOUND_BLOCK values or fewer, as _blocked
    a = 0.0
    b = 0.0
    group = BOUND_BLOCK // n if n > 1 else BOUND_BLOCK
    for r in range(0, rows, group):
        k = rows - r if rows - r < group else group
        s, t = _rows_block_f(buf, off + r * rstride, n, k, rstride, tok)
        a, b = merge(a, b, s, magnitude_bound(t, k * n, s, buf, tok), tok)
    return a, b


@register_jitable
def _rows_f_each(buf, off, n, rows, rstride, tok):
    a = 0.0
    b = 0.0
    for r in range(rows):
        s, t = _run_f(buf, off + r * rstride, n, 1, tok)
        a, b = merge(a, b, s, t, tok)
    return a, b


@register_jitable
def _rows_f_call(buf, off, n, stride, rows, rstride, tok):
    # (the branch outside the fast-math loop, as in _run_f_call)
    if stride == 1:
        return _rows_f(buf, off, n, stride, rows, rstride, tok)
    return _rows_f_strided(buf, off, n, stride, rows, rstride, tok)


@register_jitable
def _rows_f_unit(buf, off, n, stride, rows, rstride, tok):
    return _rows_f(buf, off, n, stride, rows, rstride, tok)


@register_jitable
def _rows_f_step2(buf, off, n, stride, rows, rstride, tok):
    # Runs of every second value too short for _sum_step2's steps (at most
    # 16 values) in one sum across them, through the strided lanes: a run
    # sum, added value by value, and a merge each cost float32 (32, 98, 29,
    # 8) of every third value, over all axes, 2.8x numpy's time.
    if n <= 16:
        return _rows_f_strided(buf, off, n, stride, rows, rstride, tok)
    return _rows_each(buf, off, n, stride, rows, rstride, tok)


@overload(run_rows, jit_options=_OVERLOAD_OPTS)
def _run_rows(buf, off, n, stride, rows, rstride, tok):
    if plain_f64(buf, tok):
        return _rows_plain_f64_unit if tok.ndim == 2 else _rows_plain_f64
    if _family(buf, tok) == "F" and tok.ndim <= 2:
        return _rows_f_unit if tok.ndim == 2 else _rows_f_call
    if _family(buf, tok) == "F" and tok.ndim == 3:
        return _rows_f_step2
    return _rows_each


def run_rows_short(buf, off, n, rows, rstride, tok):
    """:func:`run_rows` of contiguous runs of fewer than 16 values, emitted in the caller.

    Plain float64 (:func:`_runs_lanes8_codegen`) and plain float32, 16-bit
    float and integer sums (:func:`_unit_short_codegen`) are vector code of
    their own, inlined; other reads (exact and scaled float reads, float16
    without F16C) call :func:`run_rows`.
    """


@overload(run_rows_short, jit_options=_OVERLOAD_OPTS, inline="always")
def _run_rows_short(buf, off, n, rows, rstride, tok):
    if plain_f64(buf, tok):
        return lambda buf, off, n, rows, rstride, tok: _f64_lanes8_unit_runs(
            buf, off, 1, n, rows, rstride)
    if _short_kind(buf, tok) is not None:  # plain float32, 16-bit floats, integers
        return lambda buf, off, n, rows, rstride, tok: _sum_unit_short(
            buf, off, n, rows, rstride, tok)
    return lambda buf, off, n, rows, rstride, tok: run_rows(buf, off, n, 1, rows, rstride, tok)


def run_parts(buf, off, n, tok):
    """The states of the real and imaginary parts of ``n`` complex values.

    The values are contiguous pairs ``buf[off + 2*i]``, ``buf[off + 2*i + 1]``
    (``off`` even).  Returns ``(a_re, b_re, a_im, b_im)``.  One pass reads
    both parts: two strided runs would read every cache line twice.
    """


def _parts_f_call(buf, off, n, tok):
    """The bounded states of both parts of ``n`` contiguous complex64 values."""


@overload(_parts_f_call, jit_options=_OVERLOAD_OPTS)
def _parts_f_call_impl(buf, off, n, tok):
    if _unit_kind(buf, tok) == "f32":  # in _sum_unit_parts's vector lanes
        return lambda buf, off, n, tok: _sum_unit_parts(buf, off, 2 * n, tok)
    return _parts_f_blocks


@register_jitable
def _parts_f_blocks(buf, off, n, tok):
    # (an overload returns a plain function, not the fast-math dispatcher)
    # BOUND_BLOCK values at a time, as _blocked
    ar = br = ai = bi = 0.0
    for lo in range(0, n, BOUND_BLOCK):
        m = n - lo if n - lo < BOUND_BLOCK else BOUND_BLOCK
        s0, t0, s1, t1 = _parts_rows_f(buf, off + 2 * lo, m, 1, 0, tok)
        ar, br = merge(ar, br, s0, magnitude_bound(t0, m, s0, buf, tok), tok)
        ai, bi = merge(ai, bi, s1, magnitude_bound(t1, m, s1, buf, tok), tok)
    return ar, br, ai, bi


def run_parts_rows(buf, off, n, stride, rows, rstride, tok):
    """Both parts' states of ``rows`` runs of ``n`` complex values, ``rstride`` apart.

    Value ``i`` of run ``r`` is the pair at ``buf[off + r*rstride +
    i*stride]`` (``stride`` 2: contiguous values, as a rank-2 token says;
    it then goes unread).  As :func:`run_rows`, each value's pair is read
    once for both parts: plain complex128 in one set of vector lanes across
    the runs (:func:`_runs_lanes8_codegen`), complex64 in float64 sums per
    part that run on across the runs.  Other reads (exact, scaled) sum each
    run and merge, strided ones part by part.  Strided runs summed part by
    part read each cache line twice: complex128 (82, 70, 10) of every third
    value, summed whole, took 1.2x numpy's time.
    """


@register_jitable
def _parts_rows_vec(buf, off, n, stride, rows, rstride, tok):
    return _f64_lanes8_parts_runs(buf, off, 1, 2 * n, rows, rstride)


@register_jitable
def _parts_rows_strided_vec(buf, off, n, stride, rows, rstride, tok):
    return _f64_lanes8_parts_strided_runs(buf, off, stride, 2 * n, rows, rstride)


# complex64: both parts in one loop; LLVM loads whole vectors and splits the
# even and odd lanes (interleaved access), so the loop still vectorises.
@njit(fastmath={"reassoc", "contract"}, **_HELPER)
def _parts_rows_f(buf, off, n, rows, rstride, tok):
    s0 = 0.0
    s1 = 0.0
    t0 = magnitude_zero(buf)
    t1 = magnitude_zero(buf)
    for r in range(rows):
        base = off + r * rstride
        for i in range(n):
            k = base + 2 * i
            x = buf[np.uint64(k)]
            y = buf[np.uint64(k + 1)]
            s0 += widen(x, tok)
            s1 += widen(y, tok)
            t0 = magnitude_join(t0, x, buf, tok)
            t1 = magnitude_join(t1, y, buf, tok)
    return s0, t0, s1, t1


@register_jitable
def _parts_rows_f_call(buf, off, n, stride, rows, rstride, tok):
    # blocks of whole runs, as _rows_f
    ar = br = ai = bi = 0.0
    if n > BOUND_BLOCK:
        for r in range(rows):
            s0, t0, s1, t1 = _parts_f_call(buf, off + r * rstride, n, tok)
            ar, br = merge(ar, br, s0, t0, tok)
            ai, bi = merge(ai, bi, s1, t1, tok)
        return ar, br, ai, bi
    group = BOUND_BLOCK // n if n > 1 else BOUND_BLOCK
    for r in range(0, rows, group):
        k = rows - r if rows - r < group else group
        s0, t0, s1, t1 = _parts_rows_f(buf, off + r * rstride, n, k, rstride, tok)
        ar, br = merge(ar, br, s0, magnitude_bound(t0, k * n, s0, buf, tok), tok)
        ai, bi = merge(ai, bi, s1, magnitude_bound(t1, k * n, s1, buf, tok), tok)
    return ar, br, ai, bi


@register_jitable
def _parts_rows_each(buf, off, n, stride, rows, rstride, tok):
    if stride != 2:  # strided: part by part
        ar, br = run_rows(buf, off, n, stride, rows, rstride, tok)
        ai, bi = run_rows(buf, off + 1, n, stride, rows, rstride, tok)
        return ar, br, ai, bi
    ar, br = zero_state(buf, tok)
    ai, bi = zero_state(buf, tok)
    for r in range(rows):
        a2, b2, a3, b3 = run_parts(buf, off + r * rstride, n, tok)
        ar, br = merge(ar, br, a2, b2, tok)
        ai, bi = merge(ai, bi, a3, b3, tok)
    return ar, br, ai, bi


def run_parts_step2(buf, off, n, tok):
    """:func:`run_parts` of every second complex value: ``buf[off + 4*i]``, ``buf[off + 4*i + 1]``."""


@register_jitable
def _parts_strided_apart(buf, off, n, stride, tok):
    # each part a strided run of its own (the reads with no pair loop)
    ar, br = run_sum(buf, off, n, stride, tok)
    ai, bi = run_sum(buf, off + 1, n, stride, tok)
    return ar, br, ai, bi


def _parts_impls(step):
    """Implementations of run_parts (``step`` 1) and run_parts_step2 (``step`` 2).

    ``vec``: plain float64 (complex128) in the vector lanes, then one value
    at a time.  With ``step`` 2 the blocks end before the run's last value
    (see _run_plain_f64_step2).  ``strided``: the other reads (complex64
    with a complex128 result or in blockwise states, the scaled second
    pass): contiguous pairs from _LANED_RUN values in one pass of
    interleaved TwoSum lanes, shorter runs and every second value part by
    part (there one loop of two sums every fourth float measured 1.5-3x
    slower than two strided runs).
    """
    lanes = _f64_lanes8_parts if step == 1 else _f64_lanes8_parts_step2
    stride = 2 * step

    @register_jitable
    def vec(buf, off, n, tok):
        m = 2 * (n // 2) if step == 1 else 4 * ((n - 1) // 4)
        if m:
            ar, br, ai, bi = lanes(buf, off, 2 * m)
        else:
            ar = br = ai = bi = 0.0
        for i in range(m, n):
            k = off + stride * i
            ar, br = add_value(ar, br, buf, np.uint64(k), tok)
            ai, bi = add_value(ai, bi, buf, np.uint64(k + 1), tok)
        return ar, br, ai, bi

    if step == 1:

        @register_jitable
        def strided(buf, off, n, tok):
            # contiguous pairs: one pass of interleaved lanes (part by part,
            # two strided runs, read every cache line twice: 3.5x slower)
            if n < _LANED_RUN:
                return _parts_strided_apart(buf, off, n, stride, tok)
            return _laned_parts(buf, off, 2 * n, 1, tok)
    else:

        @register_jitable
        def strided(buf, off, n, tok):
            return _parts_strided_apart(buf, off, n, stride, tok)

    return vec, strided


_PARTS = {1: _parts_impls(1), 2: _parts_impls(2)}


def run_parts_strided(buf, off, n, stride, tok):
    """:func:`run_parts` of ``n`` complex values ``stride`` float64s apart.

    Value ``i`` is ``buf[off + stride*i]`` and the float64 after it.  Plain
    complex128 reads each value's pair once, in one pass (summed part
    by part, each cache line was read twice); other reads go part by part.
    """


@register_jitable
def _parts_strided_vec(buf, off, n, stride, tok):
    m = 2 * (n // 2)
    if m:
        ar, br, ai, bi = _f64_lanes8_parts_strided(buf, off, stride, 2 * m)
    else:
        ar = br = ai = bi = 0.0
    for i in range(m, n):
        k = off + stride * i
        ar, br = add_value(ar, br, buf, np.uint64(k), tok)
        ai, bi = add_value(ai, bi, buf, np.uint64(k + 1), tok)
    return ar, br, ai, bi


#: Complex64 strided runs shorter than this are summed in one pass of both
#: parts, two sums a part (_parts_f_strided_call); longer ones in one pass
#: of four sums a part.  Measured on rows of every third value against
#: part by part: one pass of two sums 1.2-2.1x faster for 8 to 256 values
#: a row, but 1.05x at 512 and a 143-row input of 398 values 0.90x; of
#: four sums, against part by part (old and new alternating), 1.05-1.48x
#: from 256 values ((143, 398), (143, 1194), (300, 300) every fifth value,
#: (5, 100000)), and no faster than two sums below (0.55x at 8 values).
PARTS_F_ONE_PASS = 256


@register_jitable
def _parts_rows_f_strided(buf, off, n, stride, rows, rstride, tok):
    # four sums a part: each sum's chain of dependent adds, not the loads,
    # bounded the loop of two; the sums run on across the runs, as the
    # eight lanes of _rows_f_strided do
    # (each sum's bound: its partial sums' magnitudes, as there)
    r0 = r1 = r2 = r3 = i0 = i1 = i2 = i3 = 0.0
    cr = ci = 0.0
    for r in range(rows):
        k = off + r * rstride
        for _ in range(n // 4):
            r0 += widen(buf[np.uint64(k)], tok)
            i0 += widen(buf[np.uint64(k + 1)], tok)
            r1 += widen(buf[np.uint64(k + stride)], tok)
            i1 += widen(buf[np.uint64(k + stride + 1)], tok)
            r2 += widen(buf[np.uint64(k + 2 * stride)], tok)
            i2 += widen(buf[np.uint64(k + 2 * stride + 1)], tok)
            r3 += widen(buf[np.uint64(k + 3 * stride)], tok)
            i3 += widen(buf[np.uint64(k + 3 * stride + 1)], tok)
            cr += (abs(r0) + abs(r1)) + (abs(r2) + abs(r3))
            ci += (abs(i0) + abs(i1)) + (abs(i2) + abs(i3))
            k += 4 * stride
        for _ in range(n & 3):
            r0 += widen(buf[np.uint64(k)], tok)
            i0 += widen(buf[np.uint64(k + 1)], tok)
            cr += abs(r0)
            ci += abs(i0)
            k += stride
    ar, br = merge(*merge(r0, cr, r1, 0.0, tok), *merge(r2, 0.0, r3, 0.0, tok), tok)
    ai, bi = merge(*merge(i0, ci, i1, 0.0, tok), *merge(i2, 0.0, i3, 0.0, tok), tok)
    return ar, br, ai, bi


# complex64 strided: both parts in one pass, two float64 sums each.
# Summed part by part, as two strided float32 runs, each run paid its lanes'
# setup and tail: complex64 (54, 11, 11, 12)[..., ::3] over the last axis
# took 4x numpy's time.  Inlined, not a fast-math function of its own: the
# call cost more than these short runs' adds (its own sums chain no more
# than two values deep a part per step).
@register_jitable
def _parts_f_strided_call(buf, off, n, stride, tok):
    if n >= PARTS_F_ONE_PASS:
        return _parts_rows_f_strided(buf, off, n, stride, 1, 0, tok)
    r0 = r1 = i0 = i1 = 0.0
    cr = ci = 0.0
    k = off
    for _ in range(n // 2):
        r0 += widen(buf[np.uint64(k)], tok)
        i0 += widen(buf[np.uint64(k + 1)], tok)
        r1 += widen(buf[np.uint64(k + stride)], tok)
        i1 += widen(buf[np.uint64(k + stride + 1)], tok)
        cr += abs(r0) + abs(r1)
        ci += abs(i0) + abs(i1)
        k += 2 * stride
    if n & 1:
        r0 += widen(buf[np.uint64(k)], tok)
        i0 += widen(buf[np.uint64(k + 1)], tok)
        cr += abs(r0)
        ci += abs(i0)
    return merge(r0, cr, r1, 0.0, tok) + merge(i0, ci, i1, 0.0, tok)


@overload(run_parts_strided, jit_options=_OVERLOAD_OPTS)
def _run_parts_strided(buf, off, n, stride, tok):
    if plain_f64(buf, tok):
        return _parts_strided_vec
    if _family(buf, tok) == "F":
        return _parts_f_strided_call
    return _parts_strided_apart


@overload(run_parts, jit_options=_OVERLOAD_OPTS)
def _run_parts(buf, off, n, tok):
    vec, strided = _PARTS[1]
    if plain_f64(buf, tok):
        return vec
    if _family(buf, tok) == "F":
        return lambda buf, off, n, tok: _parts_f_call(buf, off, n, tok)
    return strided


@overload(run_parts_rows, jit_options=_OVERLOAD_OPTS)
def _run_parts_rows(buf, off, n, stride, rows, rstride, tok):
    if plain_f64(buf, tok):
        return _parts_rows_vec if tok.ndim == 2 else _parts_rows_strided_vec
    if _family(buf, tok) == "F":
        return _parts_rows_f_call if tok.ndim == 2 else _parts_rows_f_strided
    return _parts_rows_each


@overload(run_parts_step2, jit_options=_OVERLOAD_OPTS)
def _run_parts_step2(buf, off, n, tok):
    vec, strided = _PARTS[2]
    if plain_f64(buf, tok):
        return vec
    if _step2_kind(buf, tok) == "f32":
        return _parts_f_step2
    return strided


@register_jitable
def _parts_f_step2(buf, off, n, tok):
    # complex64: the vector steps of _sum_parts_step2 (eight values each,
    # ending before the run's last value), BOUND_BLOCK floats a block (see
    # _blocked; each part's joined bits its own), then one value at a time
    m = (most(n, 1) - 1) // 8 * 8
    ar = br = ai = bi = 0.0
    for lo in range(0, 2 * m, BOUND_BLOCK):
        k = 2 * m - lo if 2 * m - lo < BOUND_BLOCK else BOUND_BLOCK
        sr, si, tr, ti = _sum_parts_step2(buf, off + 2 * lo, k, tok)
        depth = k // 16 + 4
        ar, br = merge(ar, br, sr, magnitude_bound(np.uint32(tr), k // 2, sr, buf, tok, depth), tok)
        ai, bi = merge(ai, bi, si, magnitude_bound(np.uint32(ti), k // 2, si, buf, tok, depth), tok)
    for i in range(m, n):
        k = off + 4 * i
        ar, br = add_value(ar, br, buf, np.uint64(k), tok)
        ai, bi = add_value(ai, bi, buf, np.uint64(k + 1), tok)
    return ar, br, ai, bi


@register_jitable
def _run_plain_f64_step2(buf, off, n, tok):
    # blocks whose loads end within the run: the last one reads up to the
    # value before the run's last, never past it
    m = 8 * ((n - 1) // 8)
    if m:
        a, b = _f64_lanes8_step2(buf, off, m)
    else:
        a = b = 0.0
    for i in range(m, n):
        a, b = add_value(a, b, buf, np.uint64(off + 2 * i), tok)
    return a, b


@register_jitable
def _run_plain_f64_strided(buf, off, n, stride, tok):
    m = n - n % 4
    if m:
        a, b = _f64_lanes8_strided(buf, off, stride, n)
    else:
        a = b = 0.0
    for i in range(m, n):
        a, b = add_value(a, b, buf, np.uint64(off + i * stride), tok)
    return a, b


@register_jitable
def _run_d_plain(buf, off, n, stride, tok):
    """Plain float64: the vector lanes, for contiguous runs and strided ones."""
    if stride == 1:
        return _run_plain_f64(buf, off, n, tok)
    return _run_plain_f64_strided(buf, off, n, stride, tok)


@register_jitable
def _run_d_plain_step2(buf, off, n, stride, tok):
    """:func:`_run_d_plain` for runs of every second value (a rank-3 token): their vector
    lanes, and the strided lanes, which serve any stride, below _LANED_RUN values."""
    if (stride == 2 or stride == -2) and n >= _LANED_RUN:
        if stride < 0:  # the same values read forwards
            off -= 2 * (n - 1)
        return _run_plain_f64_step2(buf, off, n, tok)
    return _run_plain_f64_strided(buf, off, n, stride, tok)


@register_jitable
def _run_d(buf, off, n, stride, tok):
    """float64 scaled, or a narrow float read exactly: four lanes, or LANES from _LANED_RUN."""
    if n < _LANED_RUN:
        return _run_d4(buf, off, n, stride, tok)
    a, b, _, _ = _laned_one(buf, off, n, stride, tok)
    return a, b


#: What the every-second-value loop of :func:`_step2_codegen` reads, by kind:
#: (element type and bytes, elements per vector load, even-element mask for two loads).
#: The masks keep the order an in-lane unpack gives (the lanes are summed in
#: any order at the end; a complex value's parity is its part).
_I32_T = ir.IntType(32)
_STEP2_READ = {
    "f32": (ir.FloatType(), 4, 8, [0, 2, 8, 10, 4, 6, 12, 14]),
    "c64": (ir.FloatType(), 4, 8, [0, 1, 8, 9, 4, 5, 12, 13]),  # every second pair
    "i32": (_I32_T, 4, 8, [0, 2, 8, 10, 4, 6, 12, 14]),
    "f16": (ir.IntType(16), 2, 16, [0, 2, 4, 6, 16, 18, 20, 22, 8, 10, 12, 14, 24, 26, 28, 30]),
    "bf16": (ir.IntType(16), 2, 16, [0, 2, 4, 6, 16, 18, 20, 22, 8, 10, 12, 14, 24, 26, 28, 30]),
}


def _step2_widen(builder, kind, v):
    """Kept elements (a vector of them), widened to the accumulator: float64 (int64 for
    integer kinds)."""
    count = v.type.count
    if kind == "i32" or kind in _SHORT_INTS:
        extend = builder.zext if kind.startswith("u") else builder.sext
        return extend(v, ir.VectorType(ir.IntType(64), count))
    return builder.fpext(_as_f32(builder, kind, v), ir.VectorType(ir.DoubleType(), count))


def _as_f32(builder, kind, v):
    """Float elements of ``kind`` (a vector of them) as float32, exactly."""
    count = v.type.count
    if kind == "f16":
        return builder.fpext(builder.bitcast(v, ir.VectorType(ir.HalfType(), count)),
                             ir.VectorType(ir.FloatType(), count))
    if kind == "bf16":  # the top half of a float32
        v = builder.shl(builder.zext(v, ir.VectorType(_I32_T, count)),
                        ir.Constant(ir.VectorType(_I32_T, count), [16] * count))
        return builder.bitcast(v, ir.VectorType(ir.FloatType(), count))
    return v


def _step2_codegen(kind, rows=1):
    """Code for :func:`_sum_step2`: ``n`` (a multiple of 16) kept elements of a ``[::2]`` run.

    Each step loads 32 elements in whole vectors, keeps the even ones with
    one shuffle per two loads, widens them and adds them to two vector
    accumulators of eight lanes (as :func:`_unit_step`'s): plain adds, as
    the scalar loops of these types do (float64 has 29 bits more than a
    float32, and int64 sums of int32 cannot overflow below 2**31 values).
    Floats' kept values are joined into a lane-wise maximum of bits (see
    magnitude_join), returned with the sum for the caller's bound.  ``c64``
    keeps every second complex pair instead, its parts in alternate lanes,
    and a maximum for each part: one shared maximum made an all-zero part's
    bound that of the other part's magnitudes, and marked its zero sum (a
    real array held as complex64).  With ``rows`` 2 (not for ``c64``) the
    arguments are ``(buf, off0, off1, n, tok)``: two such runs in one loop,
    each with accumulators and joined bits of its own, and the results one
    run's after the other's (see :func:`_sum_step2_pair`).
    """
    elem, size, width, mask = _STEP2_READ[kind]
    integer = kind == "i32"
    acc_t = ir.VectorType(ir.IntType(64) if integer else ir.DoubleType(), UNIT_LANES)
    bits = ir.VectorType(ir.IntType(8 * size), width)

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        n = args[1 + rows]
        i64 = ir.IntType(64)
        vptr = ir.VectorType(elem, width).as_pointer()
        align = size if sig.args[0].aligned else 1
        bases = [builder.bitcast(builder.gep(ary.data, [off]), elem.as_pointer())
                 for off in args[1:1 + rows]]
        add = builder.add if integer else builder.fadd
        i, entry, head, body, done = _loop(builder, "step2")
        accs, tops = [], []
        for _ in range(rows):
            acc = [builder.phi(acc_t) for _ in range(_UNIT_ACCS)]
            for phi in acc:
                phi.add_incoming(ir.Constant(acc_t, None), entry)
            top = builder.phi(bits)
            top.add_incoming(ir.Constant(bits, None), entry)
            accs.append(acc)
            tops.append(top)
        steps = builder.ashr(n, ir.Constant(i64, 4))
        builder.cbranch(builder.icmp_signed("<", i, steps), body, done)
        builder.position_at_end(body)
        keep = ir.Constant(ir.VectorType(_I32_T, width), mask)
        updates = []
        for base, acc, top in zip(bases, accs, tops):
            ptr = builder.gep(base, [builder.mul(i, ir.Constant(i64, 32))])
            loads = [builder.load(builder.bitcast(builder.gep(ptr, [ir.Constant(i64, width * k)]),
                                                  vptr), align=align) for k in range(32 // width)]
            pieces = []
            kepts = []
            for k in range(0, len(loads), 2):
                kept = builder.shuffle_vector(loads[k], loads[k + 1], keep)
                kepts.append(builder.bitcast(kept, bits))
                pieces += _unit_pieces(builder, kind, kept)
            nxt = [add(a, x) for a, x in zip(acc, pieces)]
            updates.append((nxt, top if integer else _umax(builder, top, _umax_tree(builder, kepts))))
        i.add_incoming(builder.add(i, ir.Constant(i64, 1)), builder.basic_block)
        for acc, top, (nxt, joined) in zip(accs, tops, updates):
            for phi, val in zip(acc, nxt):
                phi.add_incoming(val, builder.basic_block)
            top.add_incoming(joined, builder.basic_block)
        back = builder.branch(head)
        if rows > 1:  # (as _unit_codegen's: the same speed, less to compile)
            _no_unroll(builder, back)
        builder.position_at_end(done)
        out = []
        for acc, top in zip(accs, tops):
            lane0, lane1 = _acc_halves(builder, acc, add)  # even lanes, odd lanes
            if integer:  # an I-family state: (high word, low word)
                out += [ir.Constant(i64, 0), add(lane0, lane1)]
            elif kind == "c64":  # lane 0 holds the real parts, lane 1 the imaginary ones
                out += [lane0, lane1] + [builder.zext(t, i64) for t in _umax_reduce(builder, top, 2)]
            else:
                out += [add(lane0, lane1), builder.zext(_umax_reduce(builder, top)[0], i64)]
        return context.make_tuple(builder, sig.return_type, out)

    return codegen


#: The integer kinds of :func:`_unit_short_codegen` besides ``i32``, by storage
#: bytes: values of at most 32 bits, whose sums of a block fit int64 lanes.
_SHORT_INTS = {"i8": 1, "u8": 1, "i16": 2, "u16": 2, "u32": 4}
#: 64-bit integers, summed exactly as their high and low 32-bit halves (as
#: _run_int does; see _unit_short_codegen).
_SPLIT_INTS = {"i64": 8, "u64": 8}
_SHORT_INT_TYPES = {types.int8: "i8", types.uint8: "u8", types.int16: "i16",
                    types.uint16: "u16", types.uint32: "u32", types.int64: "i64",
                    types.uint64: "u64"}


_INT_FAMILIES = ("I", "U", "L", "UL")


def _short_kind(buf, tok):
    """Which :func:`_unit_short_codegen` serves ``buf`` read by ``tok``, or None."""
    kind = _step2_kind(buf, tok)
    if kind is None and _family(buf, tok) in _INT_FAMILIES and isinstance(buf, types.Array) and (
            buf.ndim == 1 and buf.layout == "C"):
        kind = _SHORT_INT_TYPES.get(buf.dtype)
    return kind


def _step2_kind(buf, tok):
    """Which :data:`_STEP2_READ` loop serves ``buf`` read by ``tok``, or None."""
    if not (isinstance(buf, types.Array) and buf.ndim == 1 and buf.layout == "C"):
        return None
    dt, td = buf.dtype, tok.dtype
    if isinstance(td, types.Float) or not td.signed:  # scaled or exact reads: not plain sums
        return None
    if dt == types.float32:
        return "f32"
    if dt == types.int32:
        return "i32"
    if dt == types.uint16 and td == types.int32:
        return "bf16"
    if dt == types.uint16 and td == types.int16 and F16C:
        return "f16"
    return None


def _umax(builder, a, b):
    """Lane-wise unsigned maximum (LLVM's ``umax``)."""
    ty = a.type
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ty, [ty, ty]),
        f"llvm.umax.v{ty.count}i{ty.element.width}")
    return builder.call(fn, [a, b])


def _umax_tree(builder, vecs):
    """The lane-wise maximum of ``vecs``, as a tree."""
    while len(vecs) > 1:
        vecs = [_umax(builder, *vecs[k:k + 2]) if k + 1 < len(vecs) else vecs[k]
                for k in range(0, len(vecs), 2)]
    return vecs[0]


def _umax_reduce(builder, v, parts=1):
    """The largest lane of ``v``, unsigned; with ``parts`` 2 one for the even lanes and
    one for the odd ones (a complex value's real and imaginary parts)."""
    count, elem = v.type.count, v.type.element
    if parts == 2:
        vs = [_lanes(builder, v, list(range(p, count, 2))) for p in (0, 1)]
    else:
        vs = [v]
    out = []
    for x in vs:
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(elem, [x.type]),
            f"llvm.vector.reduce.umax.v{x.type.count}i{elem.width}")
        out.append(builder.call(fn, [x]))
    return out


def _scalar_f64(builder, kind, x):
    """One float32 or 16-bit float element (its bits for 16-bit kinds) as float64."""
    if kind == "f32":
        return builder.fpext(x, ir.DoubleType())
    if kind == "f16":
        return builder.fpext(builder.bitcast(x, ir.HalfType()), ir.DoubleType())
    x = builder.shl(builder.zext(x, _I32_T), ir.Constant(_I32_T, 16))  # bfloat16
    return builder.fpext(builder.bitcast(x, ir.FloatType()), ir.DoubleType())


def _no_unroll(builder, branch):
    """Mark the loop whose back edge is ``branch`` not to be unrolled (its own metadata)."""
    mod = builder.module
    unroll = mod.add_metadata([ir.MetaDataString(mod, "llvm.loop.unroll.disable")])
    loop = mod.add_metadata([unroll, unroll])
    loop.operands = (loop, unroll)  # a loop's id refers to itself
    branch.set_metadata("llvm.loop", loop)


#: Bytes ahead of its loads that a contiguous run's vector loop asks the CPU
#: to fetch (:func:`_prefetch`).  The widening and the bound give each cache
#: line several times the instructions of a plain sum, so the out-of-order
#: window covers fewer lines ahead, and the hardware prefetchers alone left
#: memory slower: from memory on two threads, old and new alternating (nine
#: rounds), 4 KiB ahead read whole float32 arrays 1.23x faster, float64
#: 1.16x, float32 and float64 rows 1.11x and 1.22x, bfloat16 1.12x and
#: NCHW over (2, 3) 1.16x; 1 KiB ahead was no faster.
PREFETCH_AHEAD = 4096


def _prefetch(builder, ptr, ahead=PREFETCH_AHEAD):
    """A hint to bring the cache line ``ahead`` bytes past ``ptr`` in (a prefetch never faults,
    so past a run's end it reads nothing)."""
    i8p = ir.IntType(8).as_pointer()
    i32 = ir.IntType(32)
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), _PREFETCH_NAME)
    at = builder.gep(builder.bitcast(ptr, i8p), [ir.Constant(ir.IntType(64), ahead)])
    # a read, kept in every cache level, of data
    builder.call(fn, [at, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])


def _prefetch_name():
    # the pointer argument's mangling: typed pointers before LLVM 15
    import llvmlite.binding as llvm

    return "llvm.prefetch.p0" if llvm.llvm_version_info >= (15,) else "llvm.prefetch.p0i8"


_PREFETCH_NAME = _prefetch_name()


def _unit_layout(kind):
    """The storage of :func:`_unit_codegen`'s ``kind`` (and the integer
    kinds of :func:`_unit_short_codegen`): element type and bytes, elements
    a 32-byte vector holds, and the integer types of an element's and of a
    vector's bits."""
    if kind == "f32":
        elem, size = ir.FloatType(), 4
    else:
        size = 4 if kind == "i32" else _SHORT_INTS.get(kind) or _SPLIT_INTS.get(kind, 2)
        elem = ir.IntType(8 * size)
    width = 32 // size
    word = ir.IntType(8 * size)
    return elem, size, width, word, ir.VectorType(word, width)


def _add_block(builder, kind, a, b, s, top, m, depth):
    """A bounded state ``(a, b)`` with a block added: its sum ``s`` and its bound's share.

    IR of :func:`magnitude_bound` and :func:`merge`: ``top`` is the
    block's values joined (:func:`magnitude_join`, one element's bits),
    ``m`` its number of values and ``depth`` the adds a value passed
    through, both float64.
    """
    elem, size, _, word, _ = _unit_layout(kind)
    f64 = ir.DoubleType()
    fabs = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(f64, [f64]), "llvm.fabs.f64")
    sign = ir.Constant(word, (1 << (8 * size - 1)) - 1)  # the bits below the sign
    mag = builder.and_(top, sign)
    magf = _scalar_f64(builder, kind, builder.bitcast(mag, elem) if kind == "f32" else mag)
    neg = builder.select(builder.icmp_unsigned(">", top, sign), magf, ir.Constant(f64, 0.0))
    spread = builder.fmul(builder.fmul(ir.Constant(f64, 2.0), m), neg)
    share = builder.fmul(builder.fadd(builder.call(fabs, [s]), spread), depth)
    a2 = builder.fadd(a, s)
    return a2, builder.fadd(b, builder.fadd(share, builder.call(fabs, [a2])))


#: float64 lanes of each accumulator of the unit loops (:func:`_unit_step`):
#: their 16 values a step go to two accumulators of eight lanes.  Where the
#: CPU has 512-bit vectors each is one register, and a step half the
#: conversions and adds of four accumulators of four lanes; elsewhere LLVM
#: splits each into two, the four of before.  Old and new alternating, one
#: thread: float16 (2**20,) 1.85x and (256, 4096) over axis 1 1.64x faster
#: held in cache, float32 (2**20,) 1.13x; from memory on two threads
#: float16 1.33-1.60x and bfloat16 1.11-1.18x (whole, rows, NCHW over (2,
#: 3)), float32 the same (0.95-1.02x: memory bounds it).  Compiled for an
#: AVX2 target (NUMBA_CPU_NAME=znver3), held in cache: float32 1.4x,
#: bfloat16 1.18x, float16 (no F16C there: its own scalar loop) 1.0x.
UNIT_LANES = 8
_V_UNIT = ir.VectorType(ir.DoubleType(), UNIT_LANES)
_UNIT_ACCS = 16 // UNIT_LANES


def _unit_step(builder, kind, ptr, align, acc, top, cut=None):
    """One vector step: the accumulators (:data:`_UNIT_ACCS` of :data:`_V_UNIT`) and the
    joined bits ``top`` with the 16 values from ``ptr`` added.

    With ``cut`` (a vector of lane numbers) the values in lanes under it
    are added as -0.0 (``x + -0.0`` is ``x``); all 16 are joined, since a
    value joined twice changes no maximum.
    """
    elem, size, width, _, bits = _unit_layout(kind)
    vty = ir.VectorType(elem, width)
    loads = [builder.load(builder.bitcast(
        builder.gep(ptr, [ir.Constant(ir.IntType(64), width * k)]), vty.as_pointer()), align=align)
        for k in range(16 // width)]
    raw = [builder.bitcast(v, bits) for v in loads]
    joined = _umax(builder, top, _umax_tree(builder, raw))
    if cut is not None:
        negzero = ir.Constant(bits, [1 << (8 * size - 1)] * width)
        lanes_t = ir.VectorType(_I32_T, width)
        loads = [builder.bitcast(builder.select(builder.icmp_signed(
            ">=", ir.Constant(lanes_t, list(range(width * k, width * (k + 1)))), cut),
            v, negzero), vty) for k, v in enumerate(raw)]
    pieces = [x for v in loads for x in _unit_pieces(builder, kind, v)]
    return [builder.fadd(x, y) for x, y in zip(acc, pieces)], joined


def _unit_pieces(builder, kind, v):
    """The vector ``v`` of elements widened to the accumulators, :data:`UNIT_LANES` a piece."""
    width = v.type.count
    return [_step2_widen(builder, kind, v if width == UNIT_LANES else
                         _lanes(builder, v, list(range(q, q + UNIT_LANES))))
            for q in range(0, width, UNIT_LANES)]


#: Fewest last values of a block that _unit_codegen sums as one more vector
#: step (fewer go one at a time).  Two threads from memory, (2**26 / n, n)
#: float32 over axis 1, old and new alternating, times faster: rows of 20
#: 1.02-1.03, 22 1.08-1.16, 24 1.22-1.27, 28 1.52, 31 1.63, 40 1.26, 100
#: 1.02; float16 rows of 24 and 40 1.26, bfloat16 of 24 1.26; held in cache
#: (4096, 22) 1.06, (4096, 24) 1.10.  Rows of 17 to 19 values, which keep
#: their one to three values one at a time, lost 3-13% to the branch.
UNIT_CUT_MIN = 4


def _unit_codegen(kind, parts=False, rows=1):
    """Code for :func:`_sum_unit`: the bounded state of ``n`` contiguous float32 or 16-bit floats.

    Blocks of BOUND_BLOCK values (see :func:`_blocked`).  Each step of a
    block loads 16 values in whole vectors, joins their bits into a
    lane-wise unsigned maximum (see :func:`magnitude_join`), widens them and
    adds them to two vector accumulators of eight lanes
    (:data:`UNIT_LANES`), asking for the line :data:`PREFETCH_AHEAD` bytes
    on; the block's last values are one more step, of the 16 that end it
    (one at a time if fewer than UNIT_CUT_MIN, or in runs under 16
    values).  Its sum and joined bits
    then make its share of the bound, as :func:`magnitude_bound` does.  The
    maximum takes one integer operation per vector of 8 (16) raw values:
    joined to each value after widening it took one per 4, and a block of
    float32 in cache 1.35x the time of the plain sum.  All of it one
    intrinsic, emitted in the caller: as nested functions, they cost a cold
    first call 0.5-0.8 s of compiling, and a row 20-40 ns of calls and
    reference counts.
    With ``parts`` the values are complex64 pairs (``n`` floats, even):
    the accumulators' even lanes sum the real parts, the odd ones the
    imaginary parts, and so do the joined bits' (a part's bound is of its
    own magnitudes: shared, an all-zero part's zero sum was marked); the
    state is ``(a_re, b_re, a_im, b_im)``.
    With ``rows`` 2 (not with ``parts``) the arguments are ``(buf, off0,
    off1, n, tok)``: two runs of ``n`` values in one loop, each with
    accumulators, joined bits and state of its own, ``(a0, b0, a1, b1)``
    (see :func:`pair_sum`).
    """
    elem, size, width, word, bits = _unit_layout(kind)
    f64 = ir.DoubleType()

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        n = args[1 + rows]
        i64 = ir.IntType(64)
        align = size if sig.args[0].aligned else 1
        firsts = [builder.bitcast(builder.gep(ary.data, [off]), elem.as_pointer())
                  for off in args[1:1 + rows]]
        zero = ir.Constant(f64, 0.0)
        head, block, vhead, vbody, vdone = [builder.append_basic_block(f"unit.{name}") for name in (
            "head", "block", "vhead", "vbody", "vdone")]
        tails = [[builder.append_basic_block(f"unit.{name}{r}") for name in (
            "thead", "tbody", "tdone")] for r in range(rows)]
        done = builder.append_basic_block("unit.exit")
        entry = builder.basic_block
        builder.branch(head)

        np_ = 2 if parts else 1  # sums kept a run: one, or one a part
        builder.position_at_end(head)  # lo, a, b over the blocks
        lo = builder.phi(i64)
        lo.add_incoming(ir.Constant(i64, 0), entry)
        a = [builder.phi(f64) for _ in range(np_ * rows)]
        b = [builder.phi(f64) for _ in range(np_ * rows)]
        for phi in a + b:
            phi.add_incoming(zero, entry)
        builder.cbranch(builder.icmp_signed("<", lo, n), block, done)

        builder.position_at_end(block)
        left = builder.sub(n, lo)
        m = builder.select(builder.icmp_signed("<", left, ir.Constant(i64, BOUND_BLOCK)),
                           left, ir.Constant(i64, BOUND_BLOCK))
        vsteps = builder.ashr(m, ir.Constant(i64, 4))
        bases = [builder.gep(first, [lo]) for first in firsts]
        builder.branch(vhead)

        builder.position_at_end(vhead)  # whole vectors
        i = builder.phi(i64)
        i.add_incoming(ir.Constant(i64, 0), block)
        acc = [builder.phi(_V_UNIT) for _ in range(_UNIT_ACCS * rows)]
        for phi in acc:
            phi.add_incoming(ir.Constant(_V_UNIT, None), block)
        tops = [builder.phi(bits) for _ in range(rows)]
        for top in tops:
            top.add_incoming(ir.Constant(bits, None), block)
        builder.cbranch(builder.icmp_signed("<", i, vsteps), vbody, vdone)

        def stepped(at, cut=None, prefetch=False):
            """Each run's accumulators and joined bits with its 16 values from ``at`` added."""
            out = []
            for r, (base, top) in enumerate(zip(bases, tops)):
                ptr = builder.gep(base, [at])
                if prefetch:
                    _prefetch(builder, ptr)
                out.append(_unit_step(builder, kind, ptr, align,
                                      acc[_UNIT_ACCS * r:_UNIT_ACCS * (r + 1)], top, cut))
            return out

        builder.position_at_end(vbody)
        for r, (sums, joined) in enumerate(stepped(builder.mul(i, ir.Constant(i64, 16)),
                                                   prefetch=True)):
            for phi, x in zip(acc[_UNIT_ACCS * r:_UNIT_ACCS * (r + 1)], sums):
                phi.add_incoming(x, vbody)
            tops[r].add_incoming(joined, vbody)
        i.add_incoming(builder.add(i, ir.Constant(i64, 1)), vbody)
        back = builder.branch(vhead)
        if rows > 1:  # (a cold first call of float32 rows compiled 0.1-0.15 s less)
            _no_unroll(builder, back)

        builder.position_at_end(vdone)
        c16 = ir.Constant(i64, 16)
        vend = builder.shl(vsteps, ir.Constant(i64, 4))
        rem = builder.sub(m, vend)
        # In a run of 16 values or more, the block's last ones are one more
        # step, of the 16 values that end the block, those summed already
        # made -0.0, as in _unit_runs_codegen: every load stays inside the
        # run (from before the block where it is shorter than 16), and its
        # bits are joined unmasked (a larger maximum: a looser bound).
        cutting = builder.and_(builder.icmp_signed(">=", n, c16),
                               builder.icmp_signed(">=", rem, ir.Constant(i64, UNIT_CUT_MIN)))
        vcut = builder.append_basic_block("unit.vcut")
        vjoin = builder.append_basic_block("unit.vjoin")
        builder.cbranch(cutting, vcut, vjoin)
        builder.position_at_end(vcut)
        last = stepped(builder.sub(m, c16), _splat(builder, builder.sub(c16, rem), width))
        cacc = [x for sums, _ in last for x in sums]
        ctops = [joined for _, joined in last]
        builder.branch(vjoin)
        builder.position_at_end(vjoin)
        acc = [_phi2(builder, x, vdone, y, vcut) for x, y in zip(acc, cacc)]
        tops = [_phi2(builder, x, vdone, y, vcut) for x, y in zip(tops, ctops)]
        tstart = _phi2(builder, vend, vdone, m, vcut)
        vsums, vtops = [], []
        for r in range(rows):
            ac = acc[_UNIT_ACCS * r:_UNIT_ACCS * (r + 1)]
            lanes = _acc_halves(builder, ac, builder.fadd)
            vsums.append(lanes if parts else [builder.fadd(*lanes)])
            vtops.append(_umax_reduce(builder, tops[r], np_))
        mf = builder.sitofp(m, f64)
        if parts:
            mf = builder.fmul(mf, ir.Constant(f64, 0.5))
        # The adds a value passes through: its lane's (a step each, the last
        # one's too), the four levels that join the lanes, and the last
        # values' one at a time; each rounds by at most an ulp of the
        # block's magnitudes.  (m - 1), the bound of any order, was 14x looser.
        steps = builder.add(vsteps, builder.zext(cutting, i64))
        depth = builder.sitofp(builder.add(builder.add(steps, ir.Constant(i64, 4)),
                                           builder.sub(m, tstart)), f64)
        builder.branch(tails[0][0])

        for r, (thead, tbody, tdone) in enumerate(tails):
            builder.position_at_end(thead)  # the block's last values, one at a time (pairs)
            pred = vjoin if r == 0 else tails[r - 1][2]
            j = builder.phi(i64)
            j.add_incoming(tstart, pred)
            ts = [builder.phi(f64) for _ in range(np_)]
            for phi, val in zip(ts, vsums[r]):
                phi.add_incoming(val, pred)
            tt = [builder.phi(word) for _ in range(np_)]
            for phi, val in zip(tt, vtops[r]):
                phi.add_incoming(val, pred)
            builder.cbranch(builder.icmp_signed("<", j, m), tbody, tdone)

            builder.position_at_end(tbody)
            for k, phi in enumerate(ts):
                x = builder.load(builder.gep(bases[r], [builder.add(j, ir.Constant(i64, k))]),
                                 align=align)
                xbits = builder.bitcast(x, word)
                phi.add_incoming(builder.fadd(phi, _scalar_f64(builder, kind, x)), tbody)
                tt[k].add_incoming(builder.select(builder.icmp_unsigned(">=", tt[k], xbits),
                                                  tt[k], xbits), tbody)
            j.add_incoming(builder.add(j, ir.Constant(i64, np_)), tbody)
            builder.branch(thead)

            builder.position_at_end(tdone)  # the block's share of the bound, a part's
            for k in range(np_):
                q = r * np_ + k
                a2, b2 = _add_block(builder, kind, a[q], b[q], ts[k], tt[k], mf, depth)
                a[q].add_incoming(a2, tails[-1][2])
                b[q].add_incoming(b2, tails[-1][2])
            if r + 1 < rows:
                builder.branch(tails[r + 1][0])
        lo.add_incoming(builder.add(lo, m), tails[-1][2])
        builder.branch(head)

        builder.position_at_end(done)
        if parts:
            out = [a[0], b[0], a[1], b[1]]
        else:
            out = [x for r in range(rows) for x in (a[r], b[r])]
        return context.make_tuple(builder, sig.return_type, out)

    return codegen


def _unit_runs_codegen(kind):
    """Code for :func:`_sum_unit_runs`: ``rows`` runs of ``n`` contiguous values in one set of lanes.

    Arguments ``(buf, off, n, rows, rstride, tok)``, ``n`` >= 16: run ``r``
    is ``buf[off + r*rstride : ... + n]``.  Blocks of BOUND_BLOCK values or
    fewer, as in :func:`_unit_codegen`: of as many whole runs as fit, or of
    one run cut into blocks where the run is longer.  A block's runs add
    :func:`_unit_codegen`'s vector steps of 16 values to the same lanes; a
    run's last ``n % 16`` values are one more step, of the 16 values that
    end it, those summed already made -0.0 (``x + -0.0`` is ``x``), so
    every load stays inside the run and no value goes one at a time.
    Their bits are joined unmasked: a value joined twice changes no
    maximum.  Summed run by run, each run's last values one at a time (a
    chain of dependent adds) and each run a block of its own, float32
    (2048, 3, 40)[..., :30] over (1, 2) took 1.2x numpy's time, now 0.6x
    (185-273 us -> 91-99 us; fresh processes alternating, 2 threads); an
    (8, 16, 64, 128)[..., :24] bfloat16 crop over (2, 3) 151-689 us ->
    56-86 us.  Runs of 520 and 4096 values took the same time.
    """
    elem, size, width, _, bits = _unit_layout(kind)
    f64 = ir.DoubleType()
    i64 = ir.IntType(64)

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        off, n, rows, rstride = args[1:5]
        align = size if sig.args[0].aligned else 1
        first = builder.bitcast(builder.gep(ary.data, [off]), elem.as_pointer())
        limit = ir.Constant(i64, BOUND_BLOCK)
        c0, c1, c4, c15, c16 = (ir.Constant(i64, c) for c in (0, 1, 4, 15, 16))
        long = builder.icmp_signed(">", n, limit)  # runs cut into blocks
        entry = builder.basic_block
        names = ("ghead", "gbody", "rhead", "rmore", "rbody", "vhead", "vbody", "vdone", "tail",
                 "rnext", "gdone", "exit")
        (ghead, gbody, rhead, rmore, rbody, vhead, vbody, vdone, tail, rnext, gdone,
         exit_) = [builder.append_basic_block(f"runs.{name}") for name in names]

        def step(base, at, acc, top, cut=None):
            return _unit_step(builder, kind, builder.gep(base, [at]), align, acc, top, cut)

        builder.branch(ghead)
        builder.position_at_end(ghead)  # run g from value lo; the state so far
        g = builder.phi(i64)
        lo = builder.phi(i64)
        a = builder.phi(f64)
        b = builder.phi(f64)
        for phi, x in ((g, c0), (lo, c0), (a, ir.Constant(f64, 0.0)), (b, ir.Constant(f64, 0.0))):
            phi.add_incoming(x, entry)
        builder.cbranch(builder.icmp_signed("<", g, rows), gbody, exit_)

        builder.position_at_end(gbody)  # a block: m values of each run
        left = builder.sub(n, lo)
        m = builder.select(builder.icmp_signed("<", left, limit), left, limit)
        steps = builder.ashr(m, c4)
        rem = builder.and_(m, c15)
        # the last step's lane j holds value m - 16 + j, summed already for j < 16 - rem
        cut = _splat(builder, builder.sub(c16, rem), width)
        more = builder.sub(rows, g)
        builder.branch(rhead)

        builder.position_at_end(rhead)  # the block's runs
        r = builder.phi(i64)
        r.add_incoming(c0, gbody)
        used = builder.phi(i64)  # r * m
        used.add_incoming(c0, gbody)
        acc = [builder.phi(_V_UNIT) for _ in range(_UNIT_ACCS)]
        for phi in acc:
            phi.add_incoming(ir.Constant(_V_UNIT, None), gbody)
        top = builder.phi(bits)
        top.add_incoming(ir.Constant(bits, None), gbody)
        builder.cbranch(builder.icmp_signed("==", r, c0), rbody, rmore)

        builder.position_at_end(rmore)  # another whole run, if it fits
        fits = builder.and_(builder.icmp_signed("<", r, more), builder.icmp_signed(
            "<=", builder.add(used, m), limit))
        builder.cbranch(builder.and_(fits, builder.not_(long)), rbody, gdone)

        builder.position_at_end(rbody)
        base = builder.gep(first, [builder.add(builder.mul(builder.add(g, r), rstride), lo)])
        builder.branch(vhead)

        builder.position_at_end(vhead)  # a run's whole steps
        i = builder.phi(i64)
        i.add_incoming(c0, rbody)
        vacc = [builder.phi(_V_UNIT) for _ in range(_UNIT_ACCS)]
        for phi, x in zip(vacc, acc):
            phi.add_incoming(x, rbody)
        vtop = builder.phi(bits)
        vtop.add_incoming(top, rbody)
        builder.cbranch(builder.icmp_signed("<", i, steps), vbody, vdone)

        builder.position_at_end(vbody)
        nacc, ntop = step(base, builder.shl(i, c4), vacc, vtop)
        i.add_incoming(builder.add(i, c1), vbody)
        for phi, x in zip(vacc, nacc):
            phi.add_incoming(x, vbody)
        vtop.add_incoming(ntop, vbody)
        builder.branch(vhead)

        builder.position_at_end(vdone)
        builder.cbranch(builder.icmp_signed("!=", rem, c0), tail, rnext)

        builder.position_at_end(tail)  # the last values (within the run: m >= 16 or lo > 0)
        tacc, ttop = step(base, builder.sub(m, c16), vacc, vtop, cut)
        builder.branch(rnext)

        builder.position_at_end(rnext)
        ends = [_phi2(builder, x, vdone, y, tail) for x, y in zip(vacc, tacc)]
        etop = _phi2(builder, vtop, vdone, ttop, tail)
        for phi, x in ((r, builder.add(r, c1)), (used, builder.add(used, m)), (top, etop)):
            phi.add_incoming(x, rnext)
        for phi, x in zip(acc, ends):
            phi.add_incoming(x, rnext)
        builder.branch(rhead)

        builder.position_at_end(gdone)  # the block into the state
        s = builder.fadd(*_acc_halves(builder, acc, builder.fadd))
        # a lane's adds: one a step of each run, then the four levels that join the lanes
        per_run = builder.add(steps, builder.zext(builder.icmp_signed("!=", rem, c0), i64))
        depth = builder.sitofp(builder.add(builder.mul(r, per_run), c4), f64)
        a2, b2 = _add_block(builder, kind, a, b, s, _umax_reduce(builder, top)[0],
                            builder.sitofp(used, f64), depth)
        end = builder.add(lo, m)  # a long run's next block, or the next runs
        whole = builder.icmp_signed(">=", end, n)
        g.add_incoming(builder.select(long, builder.add(g, builder.zext(whole, i64)),
                                      builder.add(g, r)), gdone)
        lo.add_incoming(builder.select(builder.and_(long, builder.not_(whole)), end, c0), gdone)
        a.add_incoming(a2, gdone)
        b.add_incoming(b2, gdone)
        builder.branch(ghead)

        builder.position_at_end(exit_)
        return context.make_tuple(builder, sig.return_type, [a, b])

    return codegen


def _unit_kind(buf, tok):
    """Which :func:`_unit_codegen` loop serves ``buf`` read by ``tok``, or None."""
    kind = _step2_kind(buf, tok)
    return kind if kind in ("f32", "bf16", "f16") else None


def _unit_intrinsic(parts):
    """The typer of :func:`_sum_unit` (``parts``: :func:`_sum_unit_parts`)."""

    def typer(typingctx, buf, off, n, tok):
        kind = _unit_kind(buf, tok)
        if kind is None or (parts and kind != "f32") or not (
                isinstance(off, types.Integer) and isinstance(n, types.Integer)):
            return None
        sig = types.UniTuple(types.float64, 4 if parts else 2)(
            buf, types.int64, types.int64, tok)
        inner = _unit_codegen(kind, parts)

        def codegen(context, builder, sig_, args):
            args = [args[0], context.cast(builder, args[1], sig_.args[1], types.int64),
                    context.cast(builder, args[2], sig_.args[2], types.int64), args[3]]
            return inner(context, builder, sig_, args)

        return sig, codegen

    return typer


#: ``_sum_unit(buf, off, n, tok)``: the bounded ``(a, b)`` state of
#: ``buf[off : off + n]``, in vector lanes (see bounded and _unit_codegen)
_sum_unit = intrinsic(_unit_intrinsic(False))
#: ``_sum_unit_parts(buf, off, n, tok)``: the bounded states of both parts
#: of the ``n // 2`` complex64 values from ``buf[off]``
_sum_unit_parts = intrinsic(_unit_intrinsic(True))


@intrinsic
def _sum_unit_runs(typingctx, buf, off, n, rows, rstride, tok):
    """The bounded ``(a, b)`` state of ``rows`` runs ``buf[off + r*rstride : ... + n]``.

    ``n`` >= 16; in one set of vector lanes (see :func:`_unit_runs_codegen`).
    """
    kind = _unit_kind(buf, tok)
    if kind is None or not all(isinstance(t, types.Integer) for t in (off, n, rows, rstride)):
        return None
    sig = types.UniTuple(types.float64, 2)(buf, *(types.int64,) * 4, tok)
    return sig, _unit_runs_codegen(kind)


def _unit_short_codegen(kind):
    """Code for :func:`_sum_unit_short`: ``rows`` runs of ``n`` contiguous values, ``n`` < 16.

    Arguments as :func:`_unit_runs_codegen`'s.  Blocks of as many whole
    runs as fit in BOUND_BLOCK values.  A run is up to four windows of
    four values, each added to an accumulator of its own: window ``k``
    starts at value ``min(4k, n - 4)``, so it stays inside the run, and
    its lanes under ``4k`` (summed by the window before) are made -0.0.  A
    run of fewer than four values fills one window, value ``min(j, n -
    1)`` in lane ``j``, lanes from ``n`` made -0.0.  Bits are joined
    unmasked, as in :func:`_unit_step`.  ``i32`` (plain int32 reads), and
    the other integers of at most 32 bits (:data:`_SHORT_INTS`), add the
    windows, zeros for the lanes masked, in int64 lanes, and give the
    integer state ``(0, sum)``, as the scalar integer run sum does; their
    blocks have no bound.  64-bit integers (:data:`_SPLIT_INTS`) add each
    window's values (wrapping) in four lanes and their high halves in four
    more; a block's low halves then sum to its values' sum less its high
    halves' times 2**32, exact modulo 2**64 and under 2**41, and go into
    the state as :func:`merge` does.  The windows a run needs are known
    from ``n`` alone, so their branches are taken the same way each run.
    Before, each block was a call of a loop that added a value at a time
    (a chain of dependent adds): float32 (16384, 4, 16)[..., :3] over (1,
    2) as rows of runs, one thread, took 650 us in kernels.inner_two, 510
    us so (270 us in kernels.inner_two_short, which emits this in its loop).
    """
    split = kind in _SPLIT_INTS
    integer = kind == "i32" or kind in _SHORT_INTS or split
    elem, size, _, word, _ = _unit_layout(kind)
    f64 = ir.DoubleType()
    i64 = ir.IntType(64)
    w4 = ir.VectorType(word, 4)
    acc_t = ir.VectorType(i64, 8 if split else 4) if integer else _V4
    state_t = i64 if integer else f64
    # what a masked lane adds: 0, or -0.0 (x + -0.0 is x, and keeps -0.0)
    negzero = ir.Constant(w4, [0 if integer else 1 << (8 * size - 1)] * 4)
    lanes = ir.Constant(ir.VectorType(_I32_T, 4), [0, 1, 2, 3])

    half = ir.Constant(w4, [32] * 4)
    shift = "lshr" if kind == "u64" else "ashr"

    def widen(builder, raw, keep):
        # lanes not kept made -0.0 (or 0), then widened
        kept = builder.select(keep, raw, negzero)
        if split:  # the values, then their high halves
            hi = getattr(builder, shift)(kept, half)
            return builder.shuffle_vector(kept, hi, ir.Constant(ir.VectorType(_I32_T, 8),
                                                                list(range(8))))
        return _step2_widen(builder, kind, builder.bitcast(kept, ir.VectorType(elem, 4)))

    def join(builder, top, raw):  # (integers have no bound)
        return top if integer else _umax(builder, top, raw)

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        off, n, rows, rstride = args[1:5]
        align = size if sig.args[0].aligned else 1
        first = builder.bitcast(builder.gep(ary.data, [off]), word.as_pointer())
        c0, c1, c4 = (ir.Constant(i64, c) for c in (0, 1, 4))
        empty = builder.icmp_signed("<", n, c1)  # no run read
        rows = builder.select(empty, c0, rows)
        # whole runs a block: all of them, mostly (a division costs more than a short run)
        one = builder.icmp_signed("<=", builder.mul(rows, n), ir.Constant(i64, BOUND_BLOCK))
        with builder.if_else(one) as (then, otherwise):
            with then:
                all_ = builder.basic_block
            with otherwise:
                part = builder.sdiv(ir.Constant(i64, BOUND_BLOCK), builder.select(empty, c1, n))
                some = builder.basic_block
        group = _phi2(builder, rows, all_, part, some)
        # loop invariants: each window's start and cut, and the short runs' lanes
        last = builder.sub(n, c4)
        starts = [builder.select(builder.icmp_signed("<", ir.Constant(i64, 4 * k), last),
                                 ir.Constant(i64, 4 * k), last) for k in range(4)]
        keeps = [builder.icmp_signed(">=", lanes, _splat(builder, builder.sub(ir.Constant(
            i64, 4 * k), s), 4)) for k, s in enumerate(starts)]
        picks = [builder.select(builder.icmp_signed("<", ir.Constant(i64, j), n),
                                ir.Constant(i64, j), builder.sub(n, c1)) for j in range(4)]
        few_keep = builder.icmp_signed("<", lanes, _splat(builder, n, 4))  # lane j: value min(j, n - 1)
        entry = builder.basic_block
        names = ("ghead", "gbody", "rhead", "rbody", "few", "w0", "w1", "w2", "w3", "rnext",
                 "gdone", "exit")
        (ghead, gbody, rhead, rbody, few, w0, w1, w2, w3, rnext, gdone, exit_) = [
            builder.append_basic_block(f"short.{name}") for name in names]

        builder.branch(ghead)
        builder.position_at_end(ghead)  # run g; the state so far
        g = builder.phi(i64)
        a = builder.phi(state_t)
        b = builder.phi(state_t)
        for phi, x in ((g, c0), (a, ir.Constant(state_t, 0)), (b, ir.Constant(state_t, 0))):
            phi.add_incoming(x, entry)
        builder.cbranch(builder.icmp_signed("<", g, rows), gbody, exit_)

        builder.position_at_end(gbody)
        left = builder.sub(rows, g)
        k = builder.select(builder.icmp_signed("<", left, group), left, group)
        builder.branch(rhead)

        builder.position_at_end(rhead)  # the block's runs
        r = builder.phi(i64)
        r.add_incoming(c0, gbody)
        acc = [builder.phi(acc_t) for _ in range(4)]
        for phi in acc:
            phi.add_incoming(ir.Constant(acc_t, None), gbody)
        top = builder.phi(w4)
        top.add_incoming(ir.Constant(w4, None), gbody)
        builder.cbranch(builder.icmp_signed("<", r, k), rbody, gdone)

        builder.position_at_end(rbody)
        base = builder.gep(first, [builder.mul(builder.add(g, r), rstride)])
        builder.cbranch(builder.icmp_signed("<", n, c4), few, w0)

        builder.position_at_end(few)
        raw = ir.Constant(w4, None)
        for j, p in enumerate(picks):
            raw = builder.insert_element(raw, builder.load(builder.gep(base, [p]), align=align),
                                         ir.Constant(_I32_T, j))
        add = builder.add if integer else builder.fadd
        few_acc = add(acc[0], widen(builder, raw, few_keep))
        few_top = join(builder, top, raw)
        builder.branch(rnext)

        ends = []  # (block, accumulators, top) where a run's windows end
        cur, ctop = list(acc), top
        for kk, blk in enumerate((w0, w1, w2, w3)):
            builder.position_at_end(blk)
            raw = builder.load(builder.bitcast(builder.gep(base, [starts[kk]]), w4.as_pointer()),
                               align=align)
            cur = list(cur)
            cur[kk] = add(cur[kk], widen(builder, raw, keeps[kk]))
            ctop = join(builder, ctop, raw)
            if kk < 3:
                builder.cbranch(builder.icmp_signed(">", n, ir.Constant(i64, 4 * (kk + 1))),
                                (w1, w2, w3)[kk], rnext)
            else:
                builder.branch(rnext)
            ends.append((blk, cur, ctop))

        builder.position_at_end(rnext)
        for q in range(4):
            phi = builder.phi(acc_t)
            phi.add_incoming(few_acc if q == 0 else acc[q], few)
            for blk, vals, _ in ends:
                phi.add_incoming(vals[q], blk)
            acc[q].add_incoming(phi, rnext)
        tphi = builder.phi(w4)
        tphi.add_incoming(few_top, few)
        for blk, _, t in ends:
            tphi.add_incoming(t, blk)
        top.add_incoming(tphi, rnext)
        r.add_incoming(builder.add(r, c1), rnext)
        builder.branch(rhead)

        builder.position_at_end(gdone)  # the block into the state
        if split:  # the halves' sums into the state, as merge does
            v = add(add(acc[0], acc[1]), add(acc[2], acc[3]))  # values' lanes, then highs'
            v = add(_lanes(builder, v, [0, 1, 4, 5]), _lanes(builder, v, [2, 3, 6, 7]))
            v = add(_lanes(builder, v, [0, 2]), _lanes(builder, v, [1, 3]))
            x, h = (builder.extract_element(v, ir.Constant(_I32_T, q)) for q in (0, 1))
            low = builder.add(b, builder.sub(x, builder.shl(h, ir.Constant(i64, 32))))
            a2 = builder.add(builder.add(a, h), getattr(builder, shift)(low, ir.Constant(i64, 32)))
            b2 = builder.and_(low, ir.Constant(i64, 0xFFFFFFFF))
        else:
            s = add(*_acc_halves(builder, acc, add))
            if integer:  # the sum is the low word (to_int and merge carry it)
                a2, b2 = a, builder.add(b, s)
            else:
                # a lane's adds: one a run, then the four levels that join the lanes
                depth = builder.sitofp(builder.add(k, c4), f64)
                a2, b2 = _add_block(builder, kind, a, b, s, _umax_reduce(builder, top)[0],
                                    builder.sitofp(builder.mul(k, n), f64), depth)
        g.add_incoming(builder.add(g, k), gdone)
        a.add_incoming(a2, gdone)
        b.add_incoming(b2, gdone)
        builder.branch(ghead)

        builder.position_at_end(exit_)
        return context.make_tuple(builder, sig.return_type, [a, b])

    return codegen


@intrinsic
def _sum_unit_short(typingctx, buf, off, n, rows, rstride, tok):
    """The bounded ``(a, b)`` state of ``rows`` runs ``buf[off + r*rstride : ... + n]``.

    ``0 < n < 16``; in one set of vector lanes (see :func:`_unit_short_codegen`).
    Plain integer reads give the integer state ``(0, sum)``.
    """
    kind = _short_kind(buf, tok)
    if kind is None or not all(isinstance(t, types.Integer) for t in (off, n, rows, rstride)):
        return None
    fam = _family(buf, tok)
    state = (types.float64 if fam == "F" else types.uint64 if fam in ("U", "UL")
             else types.int64)
    sig = types.UniTuple(state, 2)(buf, *(types.int64,) * 4, tok)
    return sig, _unit_short_codegen(kind)


@intrinsic
def _sum_step2(typingctx, buf, off, n, tok):
    """The state of ``buf[off : off + 2*n : 2]`` (``n`` a multiple of 16) in vector lanes.

    For plain float32, int32, float16 (F16C) and bfloat16 reads.  The
    strided scalar lanes measured 1.5-2.4x slower on float32 runs in cache,
    and 3-7x for the 16-bit types.  Each step's loads reach the odd element
    after its last even one, so the caller ends the steps before the run's
    last value: memory past it may not be readable.
    """
    kind = _step2_kind(buf, tok)
    if kind is None or not (isinstance(off, types.Integer) and isinstance(n, types.Integer)):
        return None
    if kind == "i32":
        sig = types.UniTuple(types.int64, 2)(buf, types.int64, types.int64, tok)
    else:  # the sum and the kept values joined (see _step2_codegen)
        sig = types.Tuple((types.float64, types.int64))(buf, types.int64, types.int64, tok)
    return sig, _step2_codegen(kind)


@intrinsic
def _sum_step2_pair(typingctx, buf, off0, off1, n, tok):
    """:func:`_sum_step2` of two runs in one loop: both results, one run's after the other's."""
    kind = _step2_kind(buf, tok)
    if kind is None or not all(isinstance(t, types.Integer) for t in (off0, off1, n)):
        return None
    if kind == "i32":
        ret = types.UniTuple(types.int64, 4)
    else:
        ret = types.Tuple((types.float64, types.int64) * 2)
    sig = ret(buf, types.int64, types.int64, types.int64, tok)
    return sig, _step2_codegen(kind, rows=2)


@intrinsic
def _sum_parts_step2(typingctx, buf, off, n, tok):
    """:func:`_sum_step2` of every second complex64 value: ``(re, im, joined re, joined im)``.

    ``n`` counts the floats kept.
    """
    if _step2_kind(buf, tok) != "f32":
        return None
    sig = types.Tuple((types.float64, types.float64, types.int64, types.int64))(
        buf, types.int64, types.int64, tok)
    return sig, _step2_codegen("c64")


#: Short rows whose sums :func:`short_sums` finds as vectors: their lengths.
#: Rows of 2 measured slower that way (float32 1.1x, bfloat16 1.4x the time
#: of the loop across rows), and 3 does not fill a vector.  Rows of 5 to 7,
#: which LLVM vectorises across rows with shuffles (LITERAL_ROWS_MAX),
#: measured mixed: two threads, old and new alternating, from memory
#: 1.05-1.2x faster as vectors in float32 and 1.3-1.5x in 16-bit floats,
#: in cache 0.7-0.87x in float32 and float16 (bfloat16 1.26x).  From 9 LLVM
#: gathers: as vectors, rows of 2**22, float32 rows of 9 to 15 3.1-4.1x
#: faster (12 -> 36-50 GB/s), float16 and bfloat16 1.9-2.7x, int32 1.3x;
#: held in cache (32768, n) float32 4.2-4.7x, int32 2.5x.  Rows of 16 to
#: 32 are not short plans' in general (plan.SHORT_RUN), only these types'
#: (see plan.SHORT_VEC_ROWS).
SHORT_VEC_RUNS = (4, *range(8, 33))
#: Rows per step of the short kernels' vector sums: their sums wait in a
#: stack buffer of this many float64s (stack_f64) for one vectorised loop of stores.
SHORT_VEC_STEP = 64


def _row_lanes(builder, vecs, k, lo, hi):
    """Vector ``k`` of :func:`_row_sums_codegen`'s loads (values ``4k`` to ``4k + 3``) with the
    lanes outside the row's values ``[lo, hi)`` as -0.0, which adds nothing (even to -0.0)."""
    first, last = max(lo - 4 * k, 0), min(hi - 4 * k, 4)
    if (first, last) == (0, 4):
        return vecs[k]
    keep = ir.Constant(ir.VectorType(ir.IntType(1), 4), [first <= m < last for m in range(4)])
    return builder.select(keep, vecs[k], ir.Constant(_V4, [-0.0] * 4))


def _shuffled(builder, x, y, order):
    """Lanes ``order`` of the vectors ``x`` and ``y`` side by side (``y``'s numbered after ``x``'s)."""
    return builder.shuffle_vector(x, y, ir.Constant(ir.VectorType(_I32_T, len(order)), order))


def _row_step_loads(builder, first, g, run, vty, align):
    """The ``run`` vector loads (``vty``, four values each) of step ``g`` of four rows of
    ``run`` values from the pointer ``first``: four rows' values, one after another."""
    i64 = ir.IntType(64)
    base = builder.gep(first, [builder.mul(g, ir.Constant(i64, 4 * run))])
    return [builder.load(builder.bitcast(builder.gep(base, [ir.Constant(i64, 4 * k)]),
                                         vty.as_pointer()), align=align) for k in range(run)]


def _row_vectors(builder, vecs, run, r):
    """Row ``r``'s vectors of :func:`_row_step_loads`' (widened), each with the lanes of the
    rows beside it as -0.0 (:func:`_row_lanes`)."""
    return [_row_lanes(builder, vecs, k, r * run, (r + 1) * run)
            for k in range(r * run // 4, -(-(r + 1) * run // 4))]


def _row_sums_codegen(kind, run):
    """Code for :func:`short_sums`: SHORT_VEC_STEP rows of ``run`` (4, 8 to 32) values, their sums.

    Four rows a loop step: their ``4 * run`` values are ``run`` vector
    loads, widened to float64 (int32 exactly too: sitofp); from ``run`` 8
    each row's two to eight vectors are added first, a vector it shares
    with the next row taken with the other row's lanes as -0.0.  Pairs of
    rows are then summed across lanes by two shuffles and an add, twice,
    so one vector holds one sum a row, stored to ``dst``.  Rows of 4 go
    eight a step, two rows to an eight-lane vector, so each level of
    shuffles serves twice the rows (the same adds in the same order).  Old
    and new in alternating processes, rows of 4 held in cache, one thread,
    (65536, 4), ns a row: float32 0.79-0.94 -> 0.53-0.78, float16
    0.76-0.87 -> 0.41-0.52, bfloat16 0.86-1.08 -> 0.78-1.08, int32
    0.45-0.60 -> 0.31-0.41; from memory, two threads, (2**24, 4), six
    pairs: float16 0.92-1.67x faster (five of six 1.24x or more), float32
    0.76-1.23x, bfloat16 0.72-1.54x, int32 0.86-1.25x.  float32 and
    bfloat16 rows' loads are joined into a lane-wise maximum of bits (see
    magnitude_join), returned as one
    value: a maximum kept in the loop, not in memory between calls, whose
    every step waited on the last one's store (rows of 4 values 1.8x the
    time of the plain sums).
    """
    elem, size = _STEP2_READ[kind][:2]
    v4 = ir.VectorType(elem, 4)
    lanes = ir.VectorType(ir.IntType(8 * size), 4)
    joined = kind not in _EXACT_ROWS

    def shuffle_add(builder, x, y, first, second):
        return builder.fadd(_shuffled(builder, x, y, first), _shuffled(builder, x, y, second))

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        i64 = ir.IntType(64)
        align = size if sig.args[0].aligned else 1
        first = builder.bitcast(builder.gep(ary.data, [args[1]]), elem.as_pointer())
        g, entry, head, body, done = _loop(builder, "rows")
        top = builder.phi(lanes)
        top.add_incoming(ir.Constant(lanes, None), entry)
        per = 8 if run == 4 else 4  # rows a step
        vty = ir.VectorType(ir.DoubleType(), per)  # one sum a row
        builder.cbranch(builder.icmp_signed("<", g, ir.Constant(i64, SHORT_VEC_STEP // per)),
                        body, done)
        builder.position_at_end(body)
        # (eight rows of 4 values are four rows of 8, one after another)
        loads = _row_step_loads(builder, first, g, per * run // 4, v4, align)
        vecs = [builder.sitofp(v, _V4) if kind == "i32" else _step2_widen(builder, kind, v)
                for v in loads]
        if run == 4:
            # rows (0 1), (2 3), ...: each level adds lanes 2k and 2k + 1, so
            # row r's sum is (x0 + x1) + (x2 + x3) in lane r, as below
            vecs = [_joined(builder, vecs[r], vecs[r + 1]) for r in range(0, 8, 2)]
            evens, odds = list(range(0, 16, 2)), list(range(1, 16, 2))
            pair = [shuffle_add(builder, vecs[r], vecs[r + 1], evens, odds) for r in (0, 2)]
            sums = shuffle_add(builder, pair[0], pair[1], evens, odds)
        else:
            vecs = [functools.reduce(builder.fadd, _row_vectors(builder, vecs, run, r))
                    for r in range(4)]  # each row's vectors added in turn
            pair = [shuffle_add(builder, vecs[r], vecs[r + 1], [0, 4, 2, 6], [1, 5, 3, 7])
                    for r in (0, 2)]  # (a01 b01 a23 b23), (c01 d01 c23 d23)
            sums = shuffle_add(builder, pair[0], pair[1], [0, 1, 4, 5], [2, 3, 6, 7])
        # a sum that starts at +0.0, as numpy's does: a row of -0.0 means +0.0
        sums = builder.fadd(sums, ir.Constant(vty, [0.0] * per))
        dst = builder.gep(args[3], [builder.mul(g, ir.Constant(i64, per))])
        builder.store(sums, builder.bitcast(dst, vty.as_pointer()), align=8)
        nxt = top
        if joined:  # a tree: one maximum a step on the loop's chain
            nxt = _umax(builder, top, _umax_tree(builder, [builder.bitcast(v, lanes)
                                                           for v in loads]))
        g.add_incoming(builder.add(g, ir.Constant(i64, 1)), builder.basic_block)
        top.add_incoming(nxt, builder.basic_block)
        builder.branch(head)
        builder.position_at_end(done)
        red = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(lanes.element, [lanes]),
            f"llvm.vector.reduce.umax.v4i{8 * size}")
        return builder.zext(builder.call(red, [top]), i64)

    return codegen


#: Row kinds of short_sums whose rows of 4 to 32 values sum exactly in
#: float64, so their steps need no bounds: int32, and float16 (multiples of
#: 2**-24 under 2**16: any 8192 of them sum exactly).
_EXACT_ROWS = ("i32", "f16")
#: The others: float32 and bfloat16 rows, whose steps carry bounds.
_BOUNDED_ROWS = ("f32", "bf16")


def short_vec(buf, tok, run):
    """Whether rows of ``run`` values of ``buf`` read by ``tok`` (Numba types) take :func:`short_sums`.

    For overloads that choose a loop at typing time: a literal row length
    in SHORT_VEC_RUNS, and plain float32, float16 (F16C), bfloat16 or int32
    reads.  Their short rows otherwise vectorise across rows, each vector
    of a value gathered from four rows by shuffles (float32 (32768, 4)
    rows: 1.8 ns a row in cache).
    """
    return (isinstance(run, types.IntegerLiteral) and run.literal_value in SHORT_VEC_RUNS
            and _step2_kind(buf, tok) is not None)


#: Row lengths to which LLVM vectorises a loop across rows of a literal
#: length with loads and shuffles; from 9 values it gathers each vector of
#: a value (vpgather), one load a row a lane (the 16-bit floats' F16C
#: widening excepted, but those rows are short_sums' there).  Gathers read
#: fast in cache but slowly from memory: two threads, old and new
#: alternating, float32 rows of 10, 13 and 15 (2**22 rows) at 0.54-0.67x
#: the run-time length's loop, float64 rows of 11 0.28x, though (32768,
#: 13) float32 in cache ran 1.95x.
LITERAL_ROWS_MAX = 8


def literal_rows(run):
    """Whether rows of the literal length ``run`` (a Numba type) are unrolled for LLVM to
    vectorise across rows (see :data:`LITERAL_ROWS_MAX`)."""
    return isinstance(run, types.IntegerLiteral) and run.literal_value <= LITERAL_ROWS_MAX


def short_vec_reads(buf, tok, run):
    """:func:`short_vec` or :func:`short_vec_f64` for the arrays ``buf`` and ``tok`` and the
    row length ``run``, as the kernels will type them (for the launcher)."""
    buf, tok, run = typeof(buf), typeof(tok), types.literal(run)
    return short_vec(buf, tok, run) or short_vec_f64(buf, tok, run)


@intrinsic
def short_sums(typingctx, buf, off, run, dst, tok):
    """The sums of SHORT_VEC_STEP rows of ``run`` values from ``buf[off]``, into ``dst``.

    ``dst`` is a pointer to SHORT_VEC_STEP float64s (:func:`stack_f64`).
    Returns the rows' values joined (see magnitude_join) as an int64, for
    :func:`short_negative` (0 for rows of _EXACT_ROWS).  The rows' states
    are then :func:`short_state`.  See :func:`short_vec`.
    """
    if not (short_vec(buf, tok, run) and isinstance(off, types.Integer)):
        return None
    sig = types.int64(buf, off, run, dst, tok)
    inner = _row_sums_codegen(_step2_kind(buf, tok), run.literal_value)

    def codegen(context, builder, sig, args):
        args = list(args)
        args[1] = context.cast(builder, args[1], sig.args[1], types.int64)  # never negative
        return inner(context, builder, sig, args)

    return sig, codegen


#: Row lengths whose plain float64 rows :func:`short_sums_f64` sums four
#: rows to a vector, compensated.  Before, rows of 7 were LLVM's loop
#: across rows, of 8 to 15 (but 11 and 13) parts of 3 to 7 values, of 11
#: and 13 one chain of adds a row, and of 16 to 32 the row loop, two rows
#: a call.  Old and new in alternating processes, ns a row: held in cache,
#: one thread, (2**18 / n, n): rows of 7 4.3-6.0 -> 2.5-3.0, 8 3.1-4.1 ->
#: 2.2-2.9, 9 to 15 in parts 3.7-5.4 -> 3.3-5.0, 11 and 13 10.4-15.0 ->
#: 3.3-4.5, 16 to 32 12.5-16.7 -> 4.0-9.8; from memory, two threads,
#: (2**26 / n, n), against the code before the parts: 7 and 8 1.2-1.3x
#: faster, 9 to 13 (one chain of adds a row then) 1.9-2.3x, 16 and 20
#: 1.1-2.0x, 24 to 32 0.79-1.43x (24-40 GB/s either way: memory bounds
#: both).  Rows of 4 to 6 keep LLVM's loop (5 and 6 took 1.06-1.3x its
#: time in cache).
SHORT_F64_RUNS = tuple(range(7, 33))


def short_vec_f64(buf, tok, run):
    """Whether rows of ``run`` values of ``buf`` read by ``tok`` (Numba types) take
    :func:`short_sums_f64`: plain float64 reads and a literal length in SHORT_F64_RUNS."""
    return (isinstance(run, types.IntegerLiteral) and run.literal_value in SHORT_F64_RUNS
            and plain_f64(buf, tok))


def _row_sums_f64_codegen(run):
    """Code for :func:`short_sums_f64`: SHORT_VEC_STEP rows of ``run`` float64 values.

    As :func:`_row_sums_codegen`, four rows a loop step (``run`` vector
    loads of four values, each row's vectors taken with the lanes outside
    it as -0.0), but every add is TwoSum's (:func:`_vec_compensated`), its
    exact error added to an error vector: each row's vectors into a sum and
    an error vector, then pairs of rows across lanes, twice.  The sums go
    to ``dst[0:SHORT_VEC_STEP]``, the errors after them.
    """

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        i64 = ir.IntType(64)
        align = 8 if sig.args[0].aligned else 1
        one = _vec_one(builder)
        one = None if one is None else _halves(builder, one)[0]
        zero = ir.Constant(_V4, None)
        first = builder.gep(ary.data, [args[1]])
        g, entry, head, body, done = _loop(builder, "rows64")
        builder.cbranch(builder.icmp_signed("<", g, ir.Constant(i64, SHORT_VEC_STEP // 4)),
                        body, done)
        builder.position_at_end(body)
        vecs = _row_step_loads(builder, first, g, run, _V4, align)
        rows = []
        for r in range(4):
            parts = _row_vectors(builder, vecs, run, r)
            sv, cv = parts[0], zero
            for v in parts[1:]:
                sv, cv = _vec_compensated(builder, sv, cv, v, one)
            rows.append((sv, cv))

        def across(x, y, lo, hi):
            """The pairs of lanes ``lo`` and ``hi`` of the states ``x`` and ``y`` added."""
            (sx, cx), (sy, cy) = x, y
            t, c = _vec_compensated(builder, _shuffled(builder, sx, sy, lo), zero,
                                    _shuffled(builder, sx, sy, hi), one)
            return t, builder.fadd(c, builder.fadd(_shuffled(builder, cx, cy, lo),
                                                   _shuffled(builder, cx, cy, hi)))

        pair = [across(rows[r], rows[r + 1], [0, 4, 2, 6], [1, 5, 3, 7]) for r in (0, 2)]
        sums, errs = across(pair[0], pair[1], [0, 1, 4, 5], [2, 3, 6, 7])
        # a sum that starts at +0.0, as numpy's does: a row of -0.0 means +0.0
        sums = builder.fadd(sums, ir.Constant(_V4, [0.0] * 4))
        dst = builder.gep(args[3], [builder.mul(g, ir.Constant(i64, 4))])
        builder.store(sums, builder.bitcast(dst, _V4.as_pointer()), align=8)
        dst = builder.gep(dst, [ir.Constant(i64, SHORT_VEC_STEP)])
        builder.store(errs, builder.bitcast(dst, _V4.as_pointer()), align=8)
        g.add_incoming(builder.add(g, ir.Constant(i64, 1)), builder.basic_block)
        builder.branch(head)
        builder.position_at_end(done)
        return ir.Constant(i64, 0)

    return codegen


@intrinsic
def short_sums_f64(typingctx, buf, off, run, dst, tok):
    """The states of SHORT_VEC_STEP rows of ``run`` plain float64 values from ``buf[off]``.

    ``dst`` is a pointer to 2 * SHORT_VEC_STEP float64s (:func:`stack_f64`):
    row ``j``'s state is ``(dst[j], dst[SHORT_VEC_STEP + j])``, a sum and
    its compensation.  Returns 0.  See :func:`short_vec_f64`.
    """
    if not (short_vec_f64(buf, tok, run) and isinstance(off, types.Integer)):
        return None
    sig = types.int64(buf, off, run, dst, tok)
    inner = _row_sums_f64_codegen(run.literal_value)

    def codegen(context, builder, sig, args):
        args = list(args)
        args[1] = context.cast(builder, args[1], sig.args[1], types.int64)  # never negative
        return inner(context, builder, sig, args)

    return sig, codegen


def short_negative(t, run, buf, tok):
    """The share of rows of ``run`` values joined into ``t`` in their bounds, a constant.

    A row's bound (see bounded) is ``run - 1`` times its sum of
    magnitudes, at most ``|sum|`` plus twice ``run`` times the largest
    negative magnitude of the rows' step (magnitude_bound): this is
    ``run - 1`` times that second term, and :func:`short_state` adds the
    first.  A row's own sum of magnitudes, summed across lanes as its sum
    is, cost rows of 4 values 1.7x the time; this costs an integer maximum
    a vector, and only rows whose values cancel to less than about 2**-21
    (rows of 4) or 2**-19 (rows of 8) of the step's largest negative
    magnitude go to the second pass.  Integer and float16 rows (exact
    sums, _EXACT_ROWS): 0.
    """


@overload(short_negative, jit_options=_OVERLOAD_OPTS)
def _short_negative(t, run, buf, tok):
    if _step2_kind(buf, tok) not in _BOUNDED_ROWS:
        return lambda t, run, buf, tok: 0.0
    narrow = np.uint32 if buf.dtype == types.float32 else np.uint16
    return lambda t, run, buf, tok: (
        (run - 1) * 2.0 * run * negative_magnitude(narrow(t), buf, tok))


def short_poisoned(t, buf, tok):
    """Whether the joined bits ``t`` of a step of rows are a negative Inf or NaN.

    Their rows are not finite anyway, but the step's other rows share the
    maximum (short_negative), which such a value would make Inf or NaN:
    hiding their cancellations (a NaN bound never compares larger) or
    sending them all to the second pass.  x86's default NaN is negative.
    The caller then joins the step again without them (rare, so the vector
    loop keeps its one maximum a vector: leaving them out there cost rows
    of 4 values 1.15-1.4x the time).  Integer and float16 rows: never.
    """


@overload(short_poisoned, jit_options=_OVERLOAD_OPTS)
def _short_poisoned(t, buf, tok):
    kind = _step2_kind(buf, tok)
    if kind not in _BOUNDED_ROWS:
        return lambda t, buf, tok: False
    limit = {"f32": 0xFF800000, "bf16": 0xFF80}[kind]
    return lambda t, buf, tok: t >= limit


def short_clear(dst, m, neg, run, buf, tok):
    """Whether every one of the ``m`` rows whose sums are in ``dst`` has a bound that clears it.

    Then their states need no bound (:func:`short_state`), and their stores
    no test: one comparison a row here, counted, where each row's own test
    in the store (its bound, compared, the mean or the mark selected)
    cost rows of 4 values 1.2-1.4x the time.  ``neg``:
    :func:`short_negative` of the rows' step.  Integer and float16 rows
    (_EXACT_ROWS): always.
    """


@overload(short_clear, jit_options=_OVERLOAD_OPTS)
def _short_clear(dst, m, neg, run, buf, tok):
    if _step2_kind(buf, tok) in _EXACT_ROWS:
        return lambda dst, m, neg, run, buf, tok: True

    def impl(dst, m, neg, run, buf, tok):
        # A row is marked when neg > (BOUND_RATIO - run + 1) * |sum|.  The
        # marks counted, an integer sum, which vectorises: a float minimum
        # does not without fast-math, and its chain cost more than the tests.
        scale = BOUND_RATIO - run + 1
        hits = 0
        for j in range(m):
            hits += neg > scale * abs(dst[j])
        return hits == 0

    return impl


def short_state(dst, j, neg, run, buf, tok):
    """The ``(a, b)`` state of the row whose sum :func:`short_sums` left in ``dst[j]``.

    ``neg``: :func:`short_negative` of the rows' step, or None for rows
    whose bounds :func:`short_clear` cleared: a state with no bound.
    """


@overload(short_state, jit_options=_OVERLOAD_OPTS)
def _short_state(dst, j, neg, run, buf, tok):
    if _step2_kind(buf, tok) == "i32":  # short_add's state: the sum in the low word
        return lambda dst, j, neg, run, buf, tok: (np.int64(0), dst[j])
    if neg is None or isinstance(neg, types.NoneType):
        return lambda dst, j, neg, run, buf, tok: (dst[j], 0.0)
    return lambda dst, j, neg, run, buf, tok: (dst[j], (run - 1) * abs(dst[j]) + neg)


def short_certified(a, b, buf, off, run, tok):
    """The bound ``b`` of a short row's state ``(a, b)``, or 0 where its sum is exact.

    For rows :func:`short_clear` did not clear, one by one, only those
    whose bound would mark them: zero-mean rows of float32 or bfloat16
    often sum to exactly 0 (bfloat16 rows of 4 standard normal values in
    about 3 of 10000), which no first-order bound clears.  A row whose
    nonzero values' exponents span at most ``53 - p - 3`` binades (``p``
    their precision, 24 for float32 and 8 for bfloat16: 26 and 42), or
    ``53 - p - 4`` for rows of 9 to 16 and ``53 - p - 5`` for rows of 17
    to 32, sums exactly in float64 whatever its values: at most 8 (16, 32)
    multiples of the smallest one's last bit, each under 2**(span + p) of
    it.  Before, those zero sums took the second pass (past 16 a call, the
    whole reduction: 3x the time).
    """


@overload(short_certified, jit_options=_OVERLOAD_OPTS)
def _short_certified(a, b, buf, off, run, tok):
    kind = _step2_kind(buf, tok)
    if kind not in _BOUNDED_ROWS:
        return lambda a, b, buf, off, run, tok: b
    bits = _f32_bits if kind == "f32" else _raw_bits
    shift, mask, span = (23, 0x7FFFFFFF, 26) if kind == "f32" else (7, 0x7FFF, 42)

    def impl(a, b, buf, off, run, tok):
        if not b > BOUND_RATIO * abs(a):
            return b
        lo = 255
        hi = 0
        for i in range(run):
            x = np.int64(bits(buf[np.uint64(off + i)])) & mask
            if x != 0:  # (a zero adds nothing)
                e = most((x >> shift) & 0xFF, 1)  # subnormals: as the smallest normals
                lo = least(lo, e)
                hi = most(hi, e)
        return 0.0 if hi - lo <= span - (run > 8) - (run > 16) else b

    return impl


def short_mend(buf, out, tok, base, lo, hi, run, bad):
    """Rows [lo, hi) of ``run`` contiguous values whose means were stored marked, certified.

    ``bad`` is the rows' count of means not final (their store's).  For
    float32 and bfloat16 reads, each marked row is summed again and its
    state given to :func:`short_certified`, whose exact sums are stored
    unmarked: zero-mean rows of few values often sum to exactly 0, and
    past a few marks a call the engine sums every row again, compensated
    (engine.redo): bfloat16 (2**22, n) rows of standard normal values, two
    threads, n = 5 to 7, read 0.7-1.0 GB/s with 519-880 such rows marked,
    and 9.5-10.3 GB/s with this, none marked.  Returns the rows still marked (those
    whose values do span the binades, or a NaN of the mark's payload);
    other reads return ``bad``.
    """


@overload(short_mend, jit_options=_OVERLOAD_OPTS)
def _short_mend(buf, out, tok, base, lo, hi, run, bad):
    kind = _step2_kind(buf, tok)
    if kind not in _BOUNDED_ROWS or out.ndim != 1:
        return lambda buf, out, tok, base, lo, hi, run, bad: bad
    if out.dtype == types.float64:  # a 16-bit result's float64 means (engine._reduce_flat)
        mark = np.uint64(np.array(REDO_F64).view(np.uint64))
        marked = _f64_bits
    elif out.dtype == types.float32:
        mark = np.uint32(REDO_F32)
        marked = _f32_bits
    else:
        mark = _REDO_BF16
        marked = _raw_bits

    def impl(buf, out, tok, base, lo, hi, run, bad):
        left = 0
        one = opaque_one()
        for o in range(lo, hi):
            if marked(out[o]) == mark:
                k = base + o * run
                a, b = short_zero(buf, tok)
                for i in range(run):
                    a, b = short_add(a, b, buf, np.uint64(k + i), tok, one)
                b = short_certified(a, b, buf, k, run, tok)
                left += store_short(out, np.uint64(o), a, b, run, buf, tok)
        return np.int64(left)

    return impl


@register_jitable
def _raw_bits(v):
    return v


def _with_step2(run):
    """``run`` (a run_sum implementation), its ``[::2]`` runs in :func:`_sum_step2`'s steps.

    One function, not a call to another: each call level with array
    arguments adds reference counting, 20 ns a row.
    """

    @register_jitable
    def impl(buf, off, n, stride, tok):
        if stride == -2:  # the same values read forwards
            off -= 2 * (n - 1)
            stride = 2
        if stride != 2:
            return run(buf, off, n, stride, tok)
        # steps whose loads end within the run: the last one reads up to the
        # element before the run's last value, never past it
        m = (most(n, 1) - 1) // 16 * 16
        a, b = _step2_blocks(buf, off, m, tok)
        for i in range(m, n):
            a, b = add_value(a, b, buf, np.uint64(off + 2 * i), tok)
        return a, b

    return impl


def _step2_blocks(buf, off, m, tok):
    """The state of ``m`` (a multiple of 16) kept values from ``off`` by :func:`_sum_step2`."""


@overload(_step2_blocks, jit_options=_OVERLOAD_OPTS, inline="always")
def _step2_blocks_impl(buf, off, m, tok):
    if _step2_kind(buf, tok) == "i32":
        return lambda buf, off, m, tok: _sum_step2(buf, off, m, tok)
    narrow = np.uint32 if buf.dtype == types.float32 else np.uint16

    def blocks(buf, off, m, tok):  # BOUND_BLOCK values a block, as _blocked
        a = 0.0
        b = 0.0
        for lo in range(0, m, BOUND_BLOCK):
            k = m - lo if m - lo < BOUND_BLOCK else BOUND_BLOCK
            s, t = _sum_step2(buf, off + 2 * lo, k, tok)
            a, b = merge(a, b, s, magnitude_bound(narrow(t), k, s, buf, tok, k // 16 + 4), tok)
        return a, b

    return blocks


def _step2_pair_blocks(buf, off0, off1, m, tok):
    """:func:`_step2_blocks` of the runs from ``off0`` and ``off1``, in one loop: ``(a0, b0, a1, b1)``."""


@overload(_step2_pair_blocks, jit_options=_OVERLOAD_OPTS, inline="always")
def _step2_pair_blocks_impl(buf, off0, off1, m, tok):
    if _step2_kind(buf, tok) == "i32":
        return lambda buf, off0, off1, m, tok: _sum_step2_pair(buf, off0, off1, m, tok)
    narrow = np.uint32 if buf.dtype == types.float32 else np.uint16

    def blocks(buf, off0, off1, m, tok):
        a0 = b0 = a1 = b1 = 0.0
        for lo in range(0, m, BOUND_BLOCK):
            k = m - lo if m - lo < BOUND_BLOCK else BOUND_BLOCK
            s0, t0, s1, t1 = _sum_step2_pair(buf, off0 + 2 * lo, off1 + 2 * lo, k, tok)
            depth = k // 16 + 4
            a0, b0 = merge(a0, b0, s0, magnitude_bound(narrow(t0), k, s0, buf, tok, depth), tok)
            a1, b1 = merge(a1, b1, s1, magnitude_bound(narrow(t1), k, s1, buf, tok, depth), tok)
        return a0, b0, a1, b1

    return blocks


def _run_int(zero, split, shift, mask, unit=False):
    """An exact integer run sum; 64-bit values are split into 32-bit halves.

    ``unit``: the run is contiguous whatever ``stride`` says (see run_token).
    """

    if split:

        @register_jitable
        def impl(buf, off, n, stride, tok):
            h = zero
            l = zero
            step = 1 if unit else stride
            for i in range(n):
                x = widen(buf[np.uint64(off + i * step)], tok)
                h += x >> shift
                l += x & mask
            # l < n * 2**32 cannot overflow for runs below 2**31 elements
            return merge(h, zero, zero, l, tok)

    else:

        @register_jitable
        def impl(buf, off, n, stride, tok):
            s = zero
            step = 1 if unit else stride
            for i in range(n):
                s += widen(buf[np.uint64(off + i * step)], tok)
            return zero, s  # a plain sum is the low word; merge/to_float carry it

    return impl


@register_jitable
def _run_f_call(buf, off, n, stride, tok):
    # The branch lives outside the fast-math function: inlined into it, the
    # strided loop measured five times slower.
    if stride == 1:
        return _run_f(buf, off, n, stride, tok)
    if stride == 3:
        return _run_f3(buf, off, n, stride, tok)
    return _rows_f_strided(buf, off, n, stride, 1, 0, tok)  # one run


_INT_RUNS = {
    "I": (np.int64(0), False, _I32, _IM32),
    "U": (np.uint64(0), False, _S32, _M32),
    "L": (np.int64(0), True, _I32, _IM32),
    "UL": (np.uint64(0), True, _S32, _M32),
}
_RUN_SUM = {"F": _run_f_call, "D": _run_d, **{f: _run_int(*a) for f, a in _INT_RUNS.items()}}


@register_jitable
def _run_f_unit(buf, off, n, stride, tok):
    return _run_f(buf, off, n, 1, tok)


@register_jitable
def _run_plain_f64_unit(buf, off, n, stride, tok):
    return _run_plain_f64(buf, off, n, tok)


# contiguous runs: no strided loop to compile
_UNIT_RUNS = {"F": _run_f_unit, "D": _run_plain_f64_unit,
              **{f: _run_int(*a, unit=True) for f, a in _INT_RUNS.items()}}


@overload(run_sum, jit_options=_OVERLOAD_OPTS)
def _run_sum(buf, off, n, stride, tok):
    return _run_impl(buf, tok)


#: Contiguous runs of at least twice this many bytes are summed as pairs
#: of adjacent blocks of this size (kernels._long_run, see pair_sum).
PAIR_BLOCK = 128 << 10


def has_pair_sum(buf, tok):
    """At typing time: :func:`pair_sum` has a loop for ``buf`` read by ``tok``.

    Contiguous runs (a rank-2 ``tok``): plain float64, float32, 16-bit
    floats and int32.  Runs of every second value (rank 3): plain float64
    and the types of :func:`_sum_step2`.
    """
    if tok.ndim == 2:
        return (plain_f64(buf, tok) or _unit_kind(buf, tok) is not None
                or _step2_kind(buf, tok) == "i32")
    if tok.ndim == 3:
        return plain_f64(buf, tok) or _step2_kind(buf, tok) is not None
    return False


_PAIR_READS: dict = {}


def pairs_runs(buf, tok):
    """Whether a plan whose runs are contiguous or every second value (a rank-2 or rank-3
    ``tok``, see run_token) is summed two runs at a time.

    :func:`has_pair_sum` for the arrays ``buf`` and ``tok``, looked up once
    per pair of dtypes and rank.
    """
    key = (buf.dtype, tok.dtype, tok.ndim)
    hit = _PAIR_READS.get(key)
    if hit is None:
        hit = _PAIR_READS[key] = has_pair_sum(
            types.Array(from_dtype(buf.dtype), 1, "C"), typeof(tok))
    return hit


def _pair_f64(buf, off0, off1, n, tok):
    m = n - n % 4
    if m:
        a0, b0, a1, b1 = _f64_lanes8_pair(buf, off0, off1, n)
    else:
        a0 = b0 = a1 = b1 = 0.0
    for i in range(m, n):
        a0, b0 = add_value(a0, b0, buf, np.uint64(off0 + i), tok)
        a1, b1 = add_value(a1, b1, buf, np.uint64(off1 + i), tok)
    return a0, b0, a1, b1


def _pair_i32(buf, off0, off1, n, tok):
    # plain int64 sums, which LLVM vectorises as it does one run's (exact:
    # no overflow below 2**31 values); two streams a core read memory faster
    s0 = np.int64(0)
    s1 = np.int64(0)
    for i in range(n):
        s0 += np.int64(buf[np.uint64(off0 + i)])
        s1 += np.int64(buf[np.uint64(off1 + i)])
    return np.int64(0), s0, np.int64(0), s1


def _pair_f64_step2(buf, off0, off1, n, tok):
    # blocks whose loads end within the runs (see _run_plain_f64_step2)
    m = 8 * ((most(n, 1) - 1) // 8)
    if m:
        a0, b0, a1, b1 = _f64_lanes8_step2_pair(buf, off0, off1, m)
    else:
        a0 = b0 = a1 = b1 = 0.0
    for i in range(m, n):
        a0, b0 = add_value(a0, b0, buf, np.uint64(off0 + 2 * i), tok)
        a1, b1 = add_value(a1, b1, buf, np.uint64(off1 + 2 * i), tok)
    return a0, b0, a1, b1


def _pair_step2(buf, off0, off1, n, tok):
    # steps whose loads end within the runs (see _with_step2)
    m = (most(n, 1) - 1) // 16 * 16
    a0, b0, a1, b1 = _step2_pair_blocks(buf, off0, off1, m, tok)
    for i in range(m, n):
        a0, b0 = add_value(a0, b0, buf, np.uint64(off0 + 2 * i), tok)
        a1, b1 = add_value(a1, b1, buf, np.uint64(off1 + 2 * i), tok)
    return a0, b0, a1, b1


@intrinsic
def pair_sum(typingctx, buf, off0, off1, n, tok):
    """The states of the runs of ``n`` values from ``off0`` and from ``off1``, in one loop.

    ``(a0, b0, a1, b1)``.  With a rank-2 ``tok`` the runs are contiguous
    (``buf[off0 : off0 + n]``): plain float64 in TwoSum vector lanes
    (:func:`_f64_lanes8_pair`, then the last values one at a time),
    float32 and 16-bit floats in bounded float64 lanes
    (:func:`_unit_codegen` with two rows), int32 in int64 sums.  With a
    rank-3 ``tok`` they are every second value (``buf[off0 : off0 + 2*n :
    2]``), in the vector steps of :func:`_f64_lanes8_step2_pair` or
    :func:`_sum_step2_pair`.
    Two runs side by side overlap one run's lane merges with the other's,
    and two streams a core read memory faster than one.  See
    :func:`has_pair_sum`.
    """
    if not (has_pair_sum(buf, tok)
            and all(isinstance(t, types.Integer) for t in (off0, off1, n))):
        return None
    inner = pair = None
    state = types.float64
    if tok.ndim == 3:
        pair = _pair_f64_step2 if plain_f64(buf, tok) else _pair_step2
        if _step2_kind(buf, tok) == "i32":
            state = types.int64
    elif plain_f64(buf, tok):
        pair = _pair_f64
    elif _step2_kind(buf, tok) == "i32":
        pair = _pair_i32
        state = types.int64
    else:
        inner = _unit_codegen(_unit_kind(buf, tok), rows=2)
    sig = types.UniTuple(state, 4)(buf, types.int64, types.int64, types.int64, tok)

    def codegen(context, builder, sig_, args):
        args = [args[0], *(context.cast(builder, x, t, types.int64)
                           for x, t in zip(args[1:4], sig_.args[1:4])), args[4]]
        if inner is not None:
            return inner(context, builder, sig, args)
        return context.compile_internal(builder, pair, sig, args)

    return sig, codegen


@intrinsic
def token_step(typingctx, tok):
    """The step of the runs a reader token is for (see run_token): 2 for rank 3, else 1.

    A compile-time constant (an intrinsic: see :func:`_constant`).
    """
    return types.int64(tok), _constant(types.int64, 2 if tok.ndim == 3 else 1)


def _run_impl(buf, tok):
    """run_sum's implementation for ``buf`` read by ``tok`` (Numba types)."""
    fam = _family(buf, tok)
    run = _run_d_plain if plain_f64(buf, tok) else _RUN_SUM[fam]
    if tok.ndim == 1:  # runs of any stride
        return run
    if tok.ndim == 2:  # contiguous runs (see run_token)
        return _UNIT_RUNS[fam] if fam != "D" or run is _run_d_plain else run
    # every second value
    if run is _run_d_plain:
        return _STEP2_RUNS["D"]
    if _step2_kind(buf, tok):
        return _STEP2_RUNS[fam]
    if fam == "F" and buf.dtype.bitwidth == 16:  # float16 without F16C
        return _STEP2_RUNS["F16"]
    return run


@register_jitable
def _run_f16_step2(buf, off, n, stride, tok):
    if stride == 2:
        return _run_f2(buf, off, n, stride, tok)
    return _run_f_call(buf, off, n, stride, tok)


@register_jitable
def _run_each(buf, off, n, stride, tok):
    """A run of any stride, value by value (add_value)."""
    a, b = zero_state(buf, tok)
    for i in range(n):
        a, b = add_value(a, b, buf, np.uint64(off + i * stride), tok)
    return a, b


# A rank-3 token's runs step by 2 or -2 (run_token): the fallback for other
# strides is never taken, but compiles, so it is the smallest loop that
# serves any stride.  With _run_f_call's contiguous, stride-3 and strided
# loops there, a cold first float32 (32, 64, 64)[..., ::2] mean over (0, 2)
# took 7.6 s.
_STEP2_RUNS = {
    "D": _run_d_plain_step2,
    "F": _with_step2(_run_each),
    "I": _with_step2(_RUN_SUM["I"]),
    "F16": _run_f16_step2,
}


def run_token(tok, step):
    """The reader token for a plan whose runs all step by ``step`` (``Plan.run_step``).

    The same widening as ``tok``, in an empty array of another rank, so a
    distinct Numba type: the kernels compile only the run loops such a plan
    needs.  Rank 2: contiguous runs, no strided loop (the float64 one was a
    third of a first float64 call's compile).  Rank 3: every second value
    (a ``[..., ::2]`` view), the vector loops :func:`_sum_step2` and
    :func:`_f64_lanes8_step2` for runs, or for columns the constant-stride
    loops of 16-bit types (:func:`step2_columns`) and the other types' sum
    of every column spanned (:func:`superset_columns`), which no other
    kernel compiles.  Rank 4: groups of columns (``step`` 4, a column loop
    only; both parts of every second complex column, narrow crops),
    summed as the columns the groups span.
    Other steps, scaled and exact reads keep ``tok`` (rank 1, any stride).
    """
    return _RUN_TOKENS.get((id(tok), step), tok)


_RUN_TOKENS = {
    (id(t), step): np.empty((0,) * rank, t.dtype) if t.flags.writeable
    else _read_only(np.empty((0,) * rank, t.dtype))
    for t in (NATIVE, HALF, BF16, FLOAT32, NATIVE_SMALL)
    for step, rank in ((1, 2), (2, 3), (4, 4))
}


def _constant(ty, value):
    """An intrinsic's codegen for the constant ``value`` of Numba type ``ty``, emitted in place.

    An overload returning a constant is a function of its own, which Numba
    takes through its whole pipeline on a cold first call; an intrinsic's
    constant is emitted in the caller, and a branch on it folded away there.
    """
    return lambda context, builder, sig, args: context.get_constant(ty, value)


@intrinsic
def is_16bit(typingctx, buf):
    """Whether ``buf`` holds 16-bit values: a compile-time constant.

    ``buf.itemsize`` is read from the array at run time, so a branch on it
    keeps its loop in every dtype's code; this one is folded away.
    """
    return types.boolean(buf), _constant(types.boolean, buf.dtype.bitwidth == 16)


@intrinsic
def step2_columns(typingctx, buf, tok):
    """Whether the column loop of a plan of every second column has a constant stride.

    A compile-time constant: a step-2 plan (a rank-3 token, see run_token) of
    16-bit values.  Other types sum the contiguous columns such a plan spans
    instead (kernels.outer_block).
    """
    yes = tok.ndim == 3 and buf.dtype.bitwidth == 16
    return types.boolean(buf, tok), _constant(types.boolean, yes)


def _borrowed(context, builder, ty, values):
    """A tuple of type ``ty`` of the caller's own ``values`` (references taken)."""
    from numba.core.imputils import impl_ret_borrowed

    return impl_ret_borrowed(context, builder, ty, context.make_tuple(builder, ty, values))


def _internal(body):
    """An intrinsic's codegen that compiles ``body`` (a Python function) for the call's signature.

    The body takes the caller's error model, fast-math flags and NRT, as an
    overload's does (``compile_internal`` alone would give it Numba's
    defaults: the Python error model raises on 0 / 0, where a mean of no
    values is NaN).
    """

    def codegen(context, builder, sig, args):
        from numba.core.compiler import Flags

        flags = Flags()
        flags.inherit_if_not_set("nrt", default=True)
        flags.inherit_if_not_set("fastmath")
        flags.inherit_if_not_set("error_model", default="python")
        flags.inherit_if_not_set("forceinline")
        cres = context.compile_subroutine(builder, body, sig, flags=flags)
        return context.call_internal(builder, cres.fndesc, sig, args)

    return codegen


def _returns_none(*args):
    return types.none


def _returns_int64(*args):
    return types.int64


def emitted(stub, chooser, returns):
    """``stub`` as an intrinsic: the body ``chooser`` picks for the argument types, compiled
    into the caller.

    ``chooser`` is an overload's function (argument types in, a Python
    function or None out) and ``returns`` gives the body's return type from
    the argument types.  An overload's body is compiled on its own: the
    whole pipeline, machine code and a cache file, tens of ms for a few
    lines on a cold first call, and then linked and optimised again in each
    caller.  Compiled internally, it is only typed and lowered, once for a
    process and signature (Numba's ``compile_subroutine``), and optimised in
    its callers.
    """
    import inspect

    params = ", ".join(inspect.signature(stub).parameters)
    # Numba reads the typer's parameters as the call's: spelled out, not *args

    def typed(args):
        body = chooser(*args)
        if body is None:
            return None
        return returns(*args)(*args), _internal(body)

    scope = {"typed": typed}
    exec(f"def {stub.__name__}(typingctx, {params}):\n    return typed(({params},))\n", scope)
    typer = scope[stub.__name__]
    typer.__doc__ = stub.__doc__
    typer.__module__ = stub.__module__
    typer.__qualname__ = stub.__qualname__
    return intrinsic(typer)


def _superset_columns_body(sa, sb, ta, tb, width, step, group, buf, tok):
    if group == 1 and step != 2:
        return sa, sb, width, step
    wide = _superset_width(width, step, group)
    for j in range(wide):
        ta[j] = 0
        tb[j] = 0
    return ta[:wide], tb[:wide], wide, np.int64(1)


@intrinsic
def superset_columns(typingctx, sa, sb, ta, tb, width, step, group, buf, tok):
    """``(sa, sb, width, step)`` for the column loop of a plan of every second column, or of groups.

    For a step-2 plan (a rank-3 token, see run_token) of types other than
    16-bit: zeroed states for the ``2 * width - 1`` contiguous columns the
    plan spans, that width and a unit step (see kernels.outer_block); column
    ``j`` of the view is state ``2 * j``.  For groups of ``group``
    contiguous columns ``step`` apart (a rank-4 token, plan.Plan.group; both
    parts of every second complex column are groups of two, four apart;
    16-bit types included):
    states for the columns from the first group's first to the last
    group's last, and column ``j`` is state ``(j // group) * step + j %
    group``.  The states are the start of ``ta``/``tb``
    (:func:`superset_arrays`), zeroed here.  Otherwise the arguments
    themselves, decided at compile time, so no other kernel compiles the
    loop.  An intrinsic (see :func:`widen`): the arguments' case compiles
    nothing.
    """
    ret = types.Tuple((sa, sb, width, step))
    sig = ret(sa, sb, ta, tb, width, step, group, buf, tok)
    if _has_superset(buf, tok):
        return sig, _internal(_superset_columns_body)
    return sig, lambda context, builder, sig, args: _borrowed(
        context, builder, ret, [args[0], args[1], args[4], args[5]])


def _has_superset(buf, tok):
    """Whether plans read with ``tok`` (a Numba type) may sum a superset of their columns."""
    return tok.ndim == 4 or (tok.ndim == 3 and buf.dtype.bitwidth != 16)


@register_jitable
def _superset_width(width, step, group):
    """The columns a superset of ``width`` columns spans (see :func:`superset_columns`)."""
    return (width - 1) // group * step + (width - 1) % group + 1


def _superset_arrays_body(sa, sb, width, step, group, buf, tok):
    if group == 1 and step != 2 or width < 1:
        return sa, sb
    return state_arrays(_superset_width(width, step, group), buf, tok)


@intrinsic
def superset_arrays(typingctx, sa, sb, width, step, group, buf, tok):
    """The states :func:`superset_columns` uses for blocks of up to ``width`` columns.

    Allocated once by each column kernel's call, not by each block: blocks
    allocating their own (up to 1 MiB each) had the allocator map and unmap
    them, so every block paid a page fault per 4 KiB, and in some processes
    two threads took 6x the time of one ((786432, 2, 16) float32 over axis
    1: 150 ms, 61440 page faults a call, against 25 ms).  ``sa``/``sb``
    themselves, unused, for plans without a superset (decided at compile
    time, as there): no allocation, and nothing compiled (an intrinsic).
    """
    ret = types.Tuple((sa, sb))
    sig = ret(sa, sb, width, step, group, buf, tok)
    if _has_superset(buf, tok):
        return sig, _internal(_superset_arrays_body)
    return sig, lambda context, builder, sig, args: _borrowed(context, builder, ret, args[:2])


def _keep_every(keep_a, keep_b, sa, sb, width, step, group, buf, tok):
    for j in range(width):
        keep_a[j] = sa[j * step]
        keep_b[j] = sb[j * step]


def _keep_groups(keep_a, keep_b, sa, sb, width, step, group, buf, tok):
    k = 0  # a running offset: no division per state
    i = 0
    for j in range(width):
        keep_a[j] = sa[k + i]
        keep_b[j] = sb[k + i]
        i += 1
        if i == group:
            i = 0
            k += step


@intrinsic
def superset_keep(typingctx, keep_a, keep_b, sa, sb, width, step, group, buf, tok):
    """Copy the view's ``width`` states out of the superset's (see :func:`superset_columns`).

    Only plans with a superset compile a loop: a rank-3 token's takes every
    ``step``-th state, a rank-4 token's ``group`` states of every ``step``.
    For the others it is empty, so their first call compiles no copy (a
    cold (1024, 1024) float32 column call ran 0.8 G instructions more with
    the groups' loop compiled in, 13.1 G), nor anything else (an intrinsic).
    """
    sig = types.none(keep_a, keep_b, sa, sb, width, step, group, buf, tok)
    if not _has_superset(buf, tok):
        return sig, lambda context, builder, sig, args: context.get_dummy_value()
    return sig, _internal(_keep_every if tok.ndim == 3 else _keep_groups)


def add_value(a, b, buf, k, tok, one=None):
    """The state ``(a, b)`` with the storage value ``buf[k]`` added.

    Branch-free and call-free, so a loop over short rows that adds their
    values one by one vectorises across rows.  Given ``one``
    (:func:`opaque_one`'s, taken outside the loop), float64 values add by
    :func:`_fused_two_sum` where the CPU has FMA, else by Fast2Sum.
    """


@overload(add_value, jit_options=_OVERLOAD_OPTS)
def _add_value(a, b, buf, k, tok, one=None):
    fam = _family(buf, tok)
    if fam == "F":
        # (an add to a zero sum is exact: so [x, -x] is bounded by 0, not |x|)

        def impl_f(a, b, buf, k, tok, one=None):
            t = a + widen(buf[k], tok)
            return t, b + (abs(t) if a != 0.0 else 0.0)

        return impl_f
    if fam == "D" and FUSED and isinstance(one, types.Float):

        def impl_fused(a, b, buf, k, tok, one=None):
            return _fused_two_sum(a, b, widen(buf[k], tok), one)

        return impl_fused
    if fam == "D":

        def impl_d(a, b, buf, k, tok, one=None):
            x = widen(buf[k], tok)
            t = a + x
            return t, b + _fast_two_sum_err(a, x, t)

        return impl_d
    if fam in ("L", "UL"):
        shift, mask = (_I32, _IM32) if fam == "L" else (_S32, _M32)

        def impl_l(a, b, buf, k, tok, one=None):
            x = widen(buf[k], tok)
            return a + (x >> shift), b + (x & mask)

        return impl_l
    return lambda a, b, buf, k, tok, one=None: (a, b + widen(buf[k], tok))


def short_add(a, b, buf, k, tok, one):
    """:func:`add_value` for a row of fewer than 2**21 values, as the short kernels sum them.

    ``one`` is :func:`opaque_one`'s, taken outside the loop, for
    :func:`add_value`'s fused float64 step.  Rows of a run-time length (5
    to 15 values) took 0.45-0.65x the time of Fast2Sum's (scalar, a chain
    per row), literal rows of 2 to 8 values, which vectorise across rows,
    0.82-1.05x.

    int32 values are summed in float64, where :func:`add_value` sums them
    in int64: so few of them sum exactly in float64, and AVX2 converts
    int32 to float64 four at a time but int64 one at a time, which kept
    every row's division scalar (int32 rows of 2 to 8 values 1.5-2.7x
    faster).  Narrower integers add faster as integers, and uint32's
    conversion to float64 is several steps (rows of 8 measured slower), so
    they keep :func:`add_value`'s sums.  :func:`store_short` takes either
    state.
    """


def _short_in_f64(buf, tok):
    return _family(buf, tok) == "I" and buf.dtype == types.int32


@intrinsic
def short_zero(typingctx, buf, tok):
    """The empty sum of a short row, as an ``(a, b)`` state (see :func:`short_add`).

    An intrinsic (see :func:`widen`).
    """
    if _short_in_f64(buf, tok):
        return _zeros(types.Tuple((types.int64, types.float64)), buf, tok)
    return _zeros(_zero_state_type(buf, tok), buf, tok)


@overload(short_add, jit_options=_OVERLOAD_OPTS)
def _short_add(a, b, buf, k, tok, one):
    if _short_in_f64(buf, tok):
        return lambda a, b, buf, k, tok, one: (a, b + np.float64(buf[k]))
    return lambda a, b, buf, k, tok, one: add_value(a, b, buf, k, tok, one)


def short_merge(a1, b1, a2, b2, buf, tok):
    """:func:`merge` of two states of :func:`short_add`'s (parts of a short row of ``buf``).

    Integers of 32 bits or fewer keep the plain sum in the low word, which
    :func:`store_short` reads alone: their parts' sums are added there,
    where :func:`merge` would carry a negative one's high bits into the
    high word.
    """


@overload(short_merge, jit_options=_OVERLOAD_OPTS)
def _short_merge(a1, b1, a2, b2, buf, tok):
    if _family(buf, tok) in ("I", "U"):
        return lambda a1, b1, a2, b2, buf, tok: (a1, b1 + b2)
    return lambda a1, b1, a2, b2, buf, tok: merge(a1, b1, a2, b2, tok)


def store_short(out, i, a, b, n, buf, tok):
    """:func:`store` for a state of fewer than 2**21 values of ``buf``.

    Branch-free, so the loop over short rows vectorises.  Sums of so few
    integers of 32 bits or fewer are exact in float64, so their mean is one
    division; so is an int64 sum below 2**53.  For int64 states
    (:func:`wide_int_states`), whose out-of-range count is always 0, it
    returns 1 instead when the sum is larger, for the caller to finish the
    range with :func:`short_exact` (the exact finish per row, branches and
    all, kept int64 (100000, 3) rows scalar: 9 ns a row).  uint64 keeps its
    exact finish, which is cheap (unsigned halves) and measured no slower
    than the fast path plus a possible redo.  An integer result (the
    operators) is the float quotient truncated: for ``|s| < 2**53`` the
    quotient's rounding never reaches the next integer, so
    ``trunc(fl(s / n)) == trunc(s / n)``.
    """


def wide_int_states(buf, tok):
    """Whether ``buf`` (a Numba array type) read by ``tok`` sums into int64 states
    whose short rows may need :func:`short_exact`.

    For overloads that choose a loop at typing time.
    """
    return _family(buf, tok) == "L"


def _sum53(fam):
    """``(a, b) -> (sum, fits)`` for integer families: the exact sum when it is below 2**53."""
    if fam == "L":

        @register_jitable
        def sum53_l(a, b):
            h = a + (b >> _I32)
            v = (h << _I32) + (b & _IM32)  # wraps when h is large: then fits is False
            fits = (h >= -_H_FITS) & (h < _H_FITS) & (v > -_EXACT53) & (v < _EXACT53)
            return v, fits

        return sum53_l
    # I, U: the plain sum is the low word, under 2**36 for short rows
    return register_jitable(lambda a, b: (b, True))


@overload(store_short, jit_options=_OVERLOAD_OPTS)
def _store_short(out, i, a, b, n, buf, tok):
    fam = _family(buf, tok)
    flat = out.ndim == 1
    if fam in ("I", "U", "L") and flat and out.dtype in (types.float32, types.float64):
        sum53 = _sum53(fam)

        def impl_f(out, i, a, b, n, buf, tok):
            v, fits = sum53(a, b)
            out[i] = np.float64(v) / np.float64(n)
            return np.int64(not fits)

        return impl_f
    if fam in ("I", "U", "L") and flat and isinstance(out.dtype, types.Integer):
        sum53 = _sum53(fam)
        whole = np.uint64 if fam == "U" else np.int64

        def impl_i(out, i, a, b, n, buf, tok):
            v, fits = sum53(a, b)
            out[i] = whole(np.float64(v) / np.float64(n))  # truncated toward zero
            return np.int64(not fits)

        return impl_i
    if isinstance(b, types.Float) and fam == "I":  # short_add's state: an exact integer
        return lambda out, i, a, b, n, buf, tok: store(out, i, a, np.int64(b), n, tok)
    return lambda out, i, a, b, n, buf, tok: store(out, i, a, b, n, tok)


def short_exact(buf, out, tok, base, lo, hi, run):
    """Rows [lo, hi) of ``run`` contiguous values each, finished exactly row by row.

    For the ranges whose :func:`store_short` asked for a redo; compiled only
    for int64 states, the only ones that can ask.
    """


@overload(short_exact, jit_options=_OVERLOAD_OPTS)
def _short_exact(buf, out, tok, base, lo, hi, run):
    if not wide_int_states(buf, tok) or out.ndim != 1:
        return lambda buf, out, tok, base, lo, hi, run: np.int64(0)

    def impl(buf, out, tok, base, lo, hi, run):
        bad = 0
        for o in range(lo, hi):
            k = base + o * run
            a, b = zero_state(buf, tok)
            for i in range(run):
                a, b = add_value(a, b, buf, np.uint64(k + i), tok)
            bad += store(out, o, a, b, run, tok)
        return bad

    return impl


def col_add(A, B, j, buf, k, tok):
    """Add ``buf[k]`` (a storage value) into column ``j``'s state."""


def _col_add(A, B, j, buf, k, tok):
    fam = _family(buf, tok)
    if fam == "F":

        def impl(A, B, j, buf, k, tok):  # (as add_value)
            a = A[j]
            t = a + widen(buf[k], tok)
            A[j] = t
            B[j] += abs(t) if a != 0.0 else 0.0

    elif fam in ("D", "L", "UL"):  # both words change: add_value's step

        def impl(A, B, j, buf, k, tok):
            A[j], B[j] = add_value(A[j], B[j], buf, k, tok)

    else:  # I, U: the plain sum is the low word of the state

        def impl(A, B, j, buf, k, tok):
            B[j] += widen(buf[k], tok)

    return impl


col_add = emitted(col_add, _col_add, _returns_none)


@register_jitable
def _sum8_bound(buf, k0, k1, k2, k3, k4, k5, k6, k7, tok, one):
    """:func:`_sum8` and the sum of its four pair sums' magnitudes.

    Each level of the tree rounds by at most an ulp of its sums, none
    larger than the pairs' magnitudes: three times that sum bounds the
    tree's error (see bounded).
    """
    p0 = fused_add(widen(buf[k0], tok), widen(buf[k1], tok), one)
    p1 = fused_add(widen(buf[k2], tok), widen(buf[k3], tok), one)
    p2 = fused_add(widen(buf[k4], tok), widen(buf[k5], tok), one)
    p3 = fused_add(widen(buf[k6], tok), widen(buf[k7], tok), one)
    s = fused_add(fused_add(p0, p1, one), fused_add(p2, p3, one), one)
    return s, (abs(p0) + abs(p1)) + (abs(p2) + abs(p3))


@register_jitable
def _sum8(buf, k0, k1, k2, k3, k4, k5, k6, k7, tok, one):
    """Eight widened storage values summed as a tree (plain-sum families; see fused_add)."""
    return fused_add(
        fused_add(fused_add(widen(buf[k0], tok), widen(buf[k1], tok), one),
                  fused_add(widen(buf[k2], tok), widen(buf[k3], tok), one), one),
        fused_add(fused_add(widen(buf[k4], tok), widen(buf[k5], tok), one),
                  fused_add(widen(buf[k6], tok), widen(buf[k7], tok), one), one), one)


def col_add8(A, B, j, buf, k0, k1, k2, k3, k4, k5, k6, k7, tok, one):
    """Add eight storage values (eight rows of column ``j``) into its state at once.

    ``one`` is :func:`opaque_one`'s, taken outside the caller's loops.

    One load and store of the state per eight values is what lets a column
    reduction run at memory speed: with wide blocks the states live in L2,
    and with four values per pass their loads and stores, not memory,
    bounded the 16-bit, int32 and float64 column loops.
    """


def _col_add8(A, B, j, buf, k0, k1, k2, k3, k4, k5, k6, k7, tok, one):
    fam = _family(buf, tok)
    if fam == "F" and tok.dtype.bitwidth == 16:
        # float16: any eight values (multiples of 2**-24 under 2**16) sum
        # exactly in float64, so only the add to the state rounds

        def impl(A, B, j, buf, k0, k1, k2, k3, k4, k5, k6, k7, tok, one):
            t = fused_add(A[j], _sum8(buf, k0, k1, k2, k3, k4, k5, k6, k7, tok, one), one)
            A[j] = t
            B[j] += abs(t)

    elif fam == "F":
        # each add fused (see fused_add): the same sum, and (256, 4096)
        # float16 over axis 0 held in cache summed 10.7 -> 13.5 G values/s
        # on one thread

        def impl(A, B, j, buf, k0, k1, k2, k3, k4, k5, k6, k7, tok, one):
            s, p = _sum8_bound(buf, k0, k1, k2, k3, k4, k5, k6, k7, tok, one)
            t = fused_add(A[j], s, one)
            A[j] = t
            B[j] += 3.0 * p + abs(t)

    elif fam in ("I", "U"):  # the plain sum is the low word of the state

        def impl(A, B, j, buf, k0, k1, k2, k3, k4, k5, k6, k7, tok, one):
            B[j] += _sum8(buf, k0, k1, k2, k3, k4, k5, k6, k7, tok, one)

    else:  # D, L, UL: both words change, value by value (float64 fused: add_value)

        def impl(A, B, j, buf, k0, k1, k2, k3, k4, k5, k6, k7, tok, one):
            a, b = add_value(A[j], B[j], buf, k0, tok, one)
            a, b = add_value(a, b, buf, k1, tok, one)
            a, b = add_value(a, b, buf, k2, tok, one)
            a, b = add_value(a, b, buf, k3, tok, one)
            a, b = add_value(a, b, buf, k4, tok, one)
            a, b = add_value(a, b, buf, k5, tok, one)
            a, b = add_value(a, b, buf, k6, tok, one)
            A[j], B[j] = add_value(a, b, buf, k7, tok, one)

    return impl


col_add8 = emitted(col_add8, _col_add8, _returns_none)


def to_float(a, b, n, tok):
    """The mean ``state / n`` as a float64 (``n`` > 0)."""


def to_int(a, b, n, tok):
    """The mean ``state / n`` truncated toward zero, as a 64-bit integer.

    A sum below 2**53 takes one float division (see :func:`store_short`),
    a larger one the exact divmod: the divmod cost about 9 ns an output.
    """


_EXACT53 = np.int64(1 << 53)  # integers below this convert to float64 exactly
_UEXACT53 = np.uint64(1 << 53)
_Q62 = 2.0**62


@register_jitable
def _quotient_to_float(q, r, n):
    """``q + r/n`` (0 <= r < n) as a float64, rounded once in practice.

    The float64 head of ``q`` leaves an exact integer tail, so the fraction
    joins the tail before the one final rounding.
    """
    qh = np.float64(q)
    if abs(qh) >= _Q62:  # the head's integer form could overflow
        return qh + np.float64(r) / np.float64(n)
    tail = np.float64(q - np.int64(qh)) if q >= 0 else np.float64(np.int64(q) - np.int64(qh))
    return qh + (tail + np.float64(r) / np.float64(n))


SUM_LIMIT = 2.0**995  # larger sums take the engine's scaled second pass


@intrinsic
def _fma(typingctx, x, y, z):
    """``x * y + z`` rounded once: LLVM's ``fma`` (one instruction where the CPU has it)."""
    if not all(t == types.float64 for t in (x, y, z)):
        return None

    def codegen(context, builder, sig, args):
        return _fma_ir(builder, *args)

    return types.float64(types.float64, types.float64, types.float64), codegen


def _fma_ir(builder, x, y, z):
    """LLVM's ``fma(x, y, z)`` of three float64 values, emitted by ``builder``."""
    f64 = ir.DoubleType()
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(f64, [f64] * 3), "llvm.fma.f64")
    return builder.call(fn, [x, y, z])


def _make_split_divmod(shift16, mask16, shift32):
    """floor((h * 2**32 + l) / n) and the remainder, for 0 <= l < 2**32, 0 < n < 2**47.

    Long division in 16-bit digits keeps every intermediate below 2**63; the
    constants' types make the signed (int64) or unsigned (uint64) twin.
    """

    @register_jitable
    def split_divmod(h, l, n):
        q1 = h // n
        r1 = h - q1 * n
        x = (r1 << shift16) | (l >> shift16)
        q2 = x // n
        r2 = x - q2 * n
        x = (r2 << shift16) | (l & mask16)
        q3 = x // n
        r3 = x - q3 * n
        return (q1 << shift32) + (q2 << shift16) + q3, r3

    return split_divmod


_split_divmod = _make_split_divmod(_I16, _IM16, _I32)
_split_divmod_u = _make_split_divmod(_S16, _M16, _S32)


@register_jitable
def _floor_divmod(h, l, n):
    """floor((h * 2**32 + l) / n) and its remainder: in one word when it fits."""
    n = np.int64(n)
    if -_H_FITS <= h < _H_FITS:
        v = (h << _I32) + l
        q = v // n
        return q, v - q * n
    return _split_divmod(h, l, n)


@register_jitable
def _floor_divmod_u(h, l, n):
    """Unsigned twin of :func:`_floor_divmod`."""
    n = np.uint64(n)
    if h < _UH_FITS:
        v = (h << _S32) + l
        q = v // n
        return q, v - q * n
    return _split_divmod_u(h, l, n)


@overload(to_float, jit_options=_OVERLOAD_OPTS)
def _to_float(a, b, n, tok):
    if isinstance(a, types.Float):

        def impl_f(a, b, n, tok):
            nf = np.float64(n)
            inv = 1.0 / nf  # loop-invariant in a row loop: hoisted, one division
            if not np.isfinite(a):
                # an Inf or NaN sum makes the error term meaningless (Inf - Inf)
                return a * inv
            # (a + b) / n rounded once in practice: the pair renormalised first
            # (a low word as large as the high one, after a cancellation, made
            # the remainder below round: (2**53, -2**53, 1, 0.5, -1, -0.5) gave
            # -1.4e-17), q within two ulps of s / n, the remainder s - q * n
            # exact in one fma, and the correction joining q in the last
            # rounding: no second division on a row's critical path.
            s = a + b
            e = _fast_two_sum_err(a, b, s)
            q = s * inv
            r = _fma(-q, nf, s) + e
            return _fma(r, inv, q)

        return impl_f
    if isinstance(a, types.Integer) and a.signed:

        def impl_l(a, b, n, tok):
            h = a + (b >> _I32)
            l = b & _IM32
            if -_H_FITS <= h < _H_FITS:
                v = (h << _I32) + l
                if -_EXACT53 < v < _EXACT53:
                    return np.float64(v) / np.float64(n)  # exact sum: one rounding
            q, r = _floor_divmod(h, l, n)
            return _quotient_to_float(q, r, n)

        return impl_l

    def impl_u(a, b, n, tok):
        h = a + (b >> _S32)
        l = b & _M32
        if h < _UH_FITS:
            v = (h << _S32) + l
            if v < _UEXACT53:
                return np.float64(v) / np.float64(n)
        q, r = _floor_divmod_u(h, l, n)
        return _quotient_to_float(q, r, n)

    return impl_u


@overload(to_int, jit_options=_OVERLOAD_OPTS)
def _to_int(a, b, n, tok):
    if isinstance(a, types.Integer) and a.signed:

        def impl_l(a, b, n, tok):
            h = a + (b >> _I32)
            l = b & _IM32
            if -_H_FITS <= h < _H_FITS:
                v = (h << _I32) + l
                if -_EXACT53 < v < _EXACT53:
                    # the quotient's rounding never reaches the next integer
                    # (see store_short): one division, not the exact divmod
                    return np.int64(np.float64(v) / np.float64(n))
            q, r = _floor_divmod(h, l, n)
            if q < 0 and r != 0:
                q += 1  # floor to truncation toward zero
            return q

        return impl_l
    if isinstance(a, types.Integer):

        def impl_u(a, b, n, tok):
            h = a + (b >> _S32)
            l = b & _M32
            if h < _UH_FITS:
                v = (h << _S32) + l
                if v < _UEXACT53:
                    return np.uint64(np.float64(v) / np.float64(n))
            q, r = _floor_divmod_u(h, l, n)
            return q

        return impl_u
    return None


def store(out, i, a, b, n, tok):
    """Write the mean of state ``(a, b)`` over ``n`` values into ``out[i]``.

    A 2-D ``out`` receives the state itself: ``out[i] = (a, b)``.  Returns 1
    when the mean needs the engine's second pass (engine.redo), else 0: for
    float64 sums, when out of range: Inf or NaN (an Inf or NaN input, or a
    sum that overflowed: the caller tells them apart) or above ``2**995``;
    for the plain sums of narrower floats (:func:`bounded`), when the bound
    of the sum's rounding error does not clear the result.
    """


def store_block(out, oo, ostep, A, B, n, tok):
    """:func:`store` of the states ``A[j], B[j]`` into ``out[oo + j*ostep]``, for every ``j``.

    Integer sums below 2**52 in magnitude, the usual case, are exact in
    float64, so a block of them becomes one check and one division each,
    and both loops vectorise: a column block's outputs otherwise cost a
    branchy exact finish each (8 ns, more than summing eight rows).
    """


_FAST_HIGH = 1 << 20  # a high word below this: the state is below 2**52


@register_jitable
def _store_each(out, oo, ostep, A, B, n, tok):
    # Output offsets are never negative (C-ordered results): an unsigned
    # index drops Numba's wraparound, which kept the stores scalar; the
    # division loops below likewise (few-row columns up to 2x faster).
    bad = 0
    for j in range(A.shape[0]):
        bad += store(out, np.uint64(oo + j * ostep), A[j], B[j], n, tok)
    return bad


def _int_block(shift, mask, lim, signed, small, whole=np.float64):
    """store_block for integer states (signed: int64 words, else uint64).

    ``small``: the token says every sum is below 2**53 (small_sums_token), so
    the block is divided without the check, and the exact finish it falls
    back on is not compiled.  (The division loop is written out in both:
    a shared helper is one more function to compile on a first call.)
    ``whole``: the type of what is written, np.float64 for a mean, int64 or
    uint64 for the operators' integer results (the quotient truncated,
    exact below 2**53: see store_short); their per-output exact finish
    made (4, 2**20) int32 over axis 0 6x slower than a float result.
    """
    if small:

        @register_jitable
        def divide(out, oo, ostep, A, B, n, tok):
            nf = np.float64(n)
            for j in range(A.shape[0]):
                v = ((A[j] + (B[j] >> shift)) << shift) + (B[j] & mask)
                out[np.uint64(oo + j * ostep)] = whole(np.float64(v) / nf)
            return 0

        return divide

    @register_jitable
    def impl(out, oo, ostep, A, B, n, tok):
        big = 0
        for j in range(A.shape[0]):
            h = A[j] + (B[j] >> shift)
            if signed:
                big += (h >= lim) | (h <= -lim)
            else:
                big += h >= lim
        if big:
            return _store_each(out, oo, ostep, A, B, n, tok)
        nf = np.float64(n)
        for j in range(A.shape[0]):
            v = ((A[j] + (B[j] >> shift)) << shift) + (B[j] & mask)
            out[np.uint64(oo + j * ostep)] = whole(np.float64(v) / nf)
        return 0

    return impl


_INT_BLOCK = {
    (signed, small, int_out): _int_block(
        shift, mask, lim, signed, small,
        (np.int64 if signed else np.uint64) if int_out else np.float64)
    for signed, shift, mask, lim in ((True, _I32, _IM32, np.int64(_FAST_HIGH)),
                                     (False, _S32, _M32, np.uint64(_FAST_HIGH)))
    for small in (False, True)
    for int_out in (False, True)
}


def _store_block(out, oo, ostep, A, B, n, tok):
    if isinstance(A.dtype, types.Integer) and out.ndim == 1:
        if isinstance(out.dtype, types.Float):
            return _INT_BLOCK[A.dtype.signed, not tok.mutable, False]
        if isinstance(out.dtype, types.Integer):  # the operators' truncated means
            return _INT_BLOCK[A.dtype.signed, not tok.mutable, True]
    return _store_each


store_block = emitted(store_block, _store_block, _returns_int64)


@intrinsic
def _out_of_range(typingctx, a):
    """1 if the float sum ``a`` is past :data:`SUM_LIMIT` or NaN, else 0 (see :func:`widen`)."""
    if not isinstance(a, types.Float):
        return None

    def codegen(context, builder, sig, args):
        x = context.cast(builder, args[0], a, types.float64)
        fabs = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.DoubleType(), [ir.DoubleType()]), "llvm.fabs.f64")
        inside = builder.fcmp_ordered("<=", builder.call(fabs, [x]),
                                      ir.Constant(ir.DoubleType(), SUM_LIMIT))
        return builder.zext(builder.not_(inside), ir.IntType(64))

    return types.int64(a), codegen


def _store(out, i, a, b, n, tok):
    if out.ndim == 2:  # the state itself, for callers that merge partial sums later
        if isinstance(a, types.Float):

            def impl_sf(out, i, a, b, n, tok):
                out[i, 0] = a
                out[i, 1] = b
                return _out_of_range(a)

            return impl_sf

        def impl_s(out, i, a, b, n, tok):
            out[i, 0] = a
            out[i, 1] = b
            return np.int64(0)

        return impl_s
    if isinstance(a, types.Float) and bounded(tok) and out.dtype == types.uint16:
        # A float16 or bfloat16 result written as its bits (the token says
        # which), the float64 quotient rounded once (through float32 to odd).
        # The count is of sums the bound does not clear (see bounded); no
        # complex type has 16-bit parts.
        to_bits = _f32_to_f16c if tok.dtype.bitwidth == 16 else f32_to_bf16_bits
        redo = _REDO_F16 if tok.dtype.bitwidth == 16 else _REDO_BF16

        def impl_hb(out, i, a, b, n, tok):
            again = b > BOUND_RATIO * abs(a)
            out[i] = redo if again else to_bits(f64_to_f32_odd(a / np.float64(n)))
            return np.int64(again)

        return impl_hb
    if isinstance(a, types.Float) and bounded(tok):
        # Inf and NaN sums are never marked (NaN compares false), but they
        # are counted, as float64's are: a complex64 part then spreads into
        # the other as numpy's does (engine.complex_nonfinite_as_numpy).

        def impl_bound(out, i, a, b, n, tok):
            again = b > BOUND_RATIO * abs(a)
            out[i] = REDO_F64 if again else a / np.float64(n)
            return np.int64(again) | _out_of_range(a)

        return impl_bound
    if isinstance(out.dtype, types.Integer):

        def impl_i(out, i, a, b, n, tok):
            out[i] = to_int(a, b, n, tok)
            return np.int64(0)

        return impl_i

    if out.dtype == types.float32 and isinstance(a, types.Float):
        # A float64 quotient is 29 bits finer than a float32 ulp: no need for
        # the once-rounded correction, which would dominate very short slices.
        def impl_f32(out, i, a, b, n, tok):
            # an Inf or NaN sum leaves a NaN error term (Inf - Inf): ignore it
            s = a + b if np.isfinite(a) else a
            out[i] = s / np.float64(n)
            return _out_of_range(a)

        return impl_f32

    if isinstance(a, types.Float):

        def impl_ff(out, i, a, b, n, tok):
            out[i] = to_float(a, b, n, tok)
            return _out_of_range(a)

        return impl_ff

    if not tok.mutable:  # every sum below 2**53 (small_sums_token): one division
        shift, mask = (_I32, _IM32) if a.signed else (_S32, _M32)

        def impl_small(out, i, a, b, n, tok):
            out[i] = np.float64(((a + (b >> shift)) << shift) + (b & mask)) / np.float64(n)
            return np.int64(0)

        return impl_small

    def impl_f(out, i, a, b, n, tok):
        out[i] = to_float(a, b, n, tok)
        return np.int64(0)

    return impl_f


store = emitted(store, _store, _returns_int64)
