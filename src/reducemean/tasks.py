"""Serial kernels that a parallel kernel calls through their address, as its tasks.

Numba links every function a jitted function calls into the caller's own
library, and optimises and emits the whole tree again there.  A parallel
kernel's loop body is compiled as a gufunc, which Numba wraps twice more, so
a task called by name was linked, optimised and emitted in five libraries:
its own, the gufunc's, both wrappers' and the kernel's.  That made a first
parallel call cost 1.2-1.5 s more to compile than a serial one.

Called through its address, a task is compiled once, on its own: it is the
serial kernel itself, so a parallel call after a serial one compiles only the
small driver that hands out the ranges (``kernels.tasks_parallel``).  A task
is a Numba-compiled function ``task(*head, lo, hi) -> int64`` that does the
work for the range ``[lo, hi)`` of some units (rows, outputs, blocks) and
returns how many float sums came out of range.  The drivers hand the tasks
to Numba's threading layer themselves (:func:`run_tasks`), with no
``prange`` loop and so no gufunc at all.
"""

from __future__ import annotations

import functools

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.callconv import Status
from numba.extending import intrinsic

from .valuetypes import typeof

#: Drivers' entry points with a task's address bound (see bind).
_BOUND: dict = {}
#: The array flags that make up a Numba array type, with dtype and ndim:
#: layout (C, F), alignment and whether it is writeable.
_TYPE_FLAGS = 0x1 | 0x2 | 0x100 | 0x400
#: The Numba type of the drivers' ``counts``.
_COUNTS = typeof(np.empty(1, np.int64))


@intrinsic
def call_task(typingctx, fn, head, lo, hi):
    """``task(*head, lo, hi)`` for the task whose address is ``fn`` (see :func:`address`).

    The task must have been compiled for exactly these argument types and
    return int64; :func:`address` gives such an address.  An exception the
    task raises (a failed allocation) propagates to the caller.
    """
    if not (isinstance(fn, types.Integer) and isinstance(head, types.BaseTuple)):
        return None
    argtys = tuple(head) + (lo, hi)

    def codegen(context, builder, sig, args):
        fnptr, headv, lov, hiv = args
        values = cgutils.unpack_tuple(builder, headv, len(head)) + [lov, hiv]
        fnty = context.call_conv.get_function_type(types.int64, argtys)
        callee = builder.inttoptr(fnptr, ir.PointerType(fnty))
        status, res = context.call_conv.call_function(
            builder, callee, types.int64, argtys, values)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return res

    return types.int64(fn, head, lo, hi), codegen


@intrinsic
def run_tasks(typingctx, fn, head, total, counts):
    """Tasks ``t`` in [0, len(counts)) on Numba's threads: ``counts[t] = task(*head, lo, hi)``.

    Task ``t`` takes the even range ``[lo, hi)`` of [0, ``total``); ``fn``
    is the task's address (:func:`address`).  The tasks are dealt in even
    runs, one to each of the calling thread's ``numba.get_num_threads()``
    threads, the way a ``prange`` deals its iterations.  Returns nothing;
    an exception a task raises (the first, when several do) is raised here
    once every task has finished.

    This hands the threading layer its work directly, as a ``prange``
    lowers to, without the parfor passes: a ``parallel=True`` driver cost
    0.6-0.7 s of compile on a cold process's first parallel call, for every
    kind of head.  And a ``prange`` loop dropped a task's exception: the
    parallel kernels returned as if it had succeeded.
    """
    if not (isinstance(fn, types.Integer) and isinstance(head, types.BaseTuple)
            and isinstance(total, types.Integer) and isinstance(counts, types.Array)
            and counts.dtype == types.int64 and counts.ndim == 1 and counts.layout == "C"):
        return None
    # imported here: the compiler's modules, which a process that only
    # loads cached kernels never needs
    from numba.core.typed_passes import _reload_parfors
    from numba.np.ufunc.parallel import _launch_threads

    _launch_threads()  # the threading layer, whose functions the code calls by name
    argtys = tuple(head) + (types.int64, types.int64)

    def codegen(context, builder, sig, args):
        fnv, headv, totalv, countsv = args
        fnv = context.cast(builder, fnv, fn, types.int64)
        totalv = context.cast(builder, totalv, total, types.int64)
        # The tasks get the head's arrays borrowed (see borrow), as a
        # prange's gufunc got them: each task's calls count references on
        # the arrays' owners, an atomic add on one cache line that every
        # thread shares: complex64 rows of 2-4 values, a few such calls a
        # row, ran 2.2x slower on two threads than on one (2.8x a prange's
        # time).  This caller holds the head until every task has finished.
        for i, ty in enumerate(head):
            if isinstance(ty, types.Array):
                view = _borrowed(context, builder, ty, builder.extract_value(headv, i))
                headv = builder.insert_value(headv, view, i)
        # A cached library re-launches the threading layer before it links.
        context.active_code_library._reload_init.add(_reload_parfors)
        mod = builder.module
        i64 = ir.IntType(64)
        i32 = ir.IntType(32)
        bytep = ir.IntType(8).as_pointer()
        fnty = context.call_conv.get_function_type(types.int64, argtys)
        excty = fnty.args[1].pointee  # a task's exception info, as it returns it
        # the tasks' shared arguments: task address, head, total, number of
        # tasks and of runs, counts, the base the runs are numbered from, and
        # the first failure's status code and exception
        ctxty = ir.LiteralStructType([i64, headv.type, i64, i64, i64, i64.as_pointer(), bytep,
                                      i32, excty])
        body = _tasks_body(context, mod, ctxty, fnty, argtys, len(head))

        counts_arr = context.make_array(counts)(context, builder, countsv)
        ntasks = builder.extract_value(counts_arr.shape, 0)
        threads = builder.call(cgutils.get_or_insert_function(
            mod, ir.FunctionType(i64, []), "get_num_threads"), [])
        runs = builder.select(builder.icmp_signed("<", ntasks, threads), ntasks, threads)
        ctx = cgutils.alloca_once(builder, ctxty)
        base = builder.bitcast(ctx, bytep)
        for i, v in enumerate((fnv, headv, totalv, ntasks, runs, counts_arr.data, base, i32(0),
                               cgutils.get_null_value(excty))):
            builder.store(v, cgutils.gep_inbounds(builder, ctx, 0, i))
        argv = cgutils.alloca_once_value(builder, base)  # run d: base + d
        dims = cgutils.alloca_once_value(builder, runs)
        steps = cgutils.alloca_once_value(builder, i64(1))
        parallel_for = cgutils.get_or_insert_function(
            mod, ir.FunctionType(ir.VoidType(), [bytep] * 5 + [i64] * 3), "numba_parallel_for")
        with builder.if_then(builder.icmp_signed(">", runs, i64(0))):
            builder.call(parallel_for, [builder.bitcast(body, bytep), builder.bitcast(argv, bytep),
                                        builder.bitcast(dims, bytep), builder.bitcast(steps, bytep),
                                        base, i64(0), i64(1), threads])
        code = builder.load(cgutils.gep_inbounds(builder, ctx, 0, 7))
        with cgutils.if_unlikely(builder, builder.icmp_signed("!=", code, i32(0))):
            exc = builder.load(cgutils.gep_inbounds(builder, ctx, 0, 8))
            context.call_conv.return_status_propagate(
                builder, Status(code, None, None, None, None, None, None, exc))
        return context.get_dummy_value()

    return types.none(fn, head, total, counts), codegen


def _tasks_body(context, mod, ctxty, fnty, argtys, nhead):
    """The function each thread runs: ``body(args, dims, steps, data)``, as the threading layer calls.

    It is given ``dims[0]`` runs from ``args[0]`` on, ``steps[0]`` apart;
    run ``d`` is ``args[0] - base`` (ctx's base, ``data`` the ctx), and
    takes tasks [ntasks * d // runs, ntasks * (d + 1) // runs).
    """
    i64 = ir.IntType(64)
    bytep = ir.IntType(8).as_pointer()
    body = ir.Function(mod, ir.FunctionType(ir.VoidType(), [bytep.as_pointer(), i64.as_pointer(),
                                                             i64.as_pointer(), bytep]),
                       name=mod.get_unique_name("reducemean.tasks.body"))
    body.linkage = "internal"
    builder = ir.IRBuilder(body.append_basic_block("entry"))
    args, dims, steps, data = body.args
    ctx = builder.bitcast(data, ctxty.as_pointer())

    def field(i):
        return builder.load(cgutils.gep_inbounds(builder, ctx, 0, i))

    fnv, headv, total, ntasks, runs, counts, base = (field(i) for i in range(7))
    callee = builder.inttoptr(fnv, fnty.as_pointer())
    values = cgutils.unpack_tuple(builder, headv, nhead)
    first = builder.sub(builder.ptrtoint(builder.load(args), i64), builder.ptrtoint(base, i64))
    step = builder.load(steps)
    with cgutils.for_range(builder, builder.load(dims)) as run:
        d = builder.add(first, builder.mul(run.index, step))
        t0 = builder.sdiv(builder.mul(ntasks, d), runs)
        t1 = builder.sdiv(builder.mul(ntasks, builder.add(d, i64(1))), runs)
        with cgutils.for_range_slice(builder, t0, t1, i64(1)) as (t, _):
            lo = builder.sdiv(builder.mul(total, t), ntasks)
            hi = builder.sdiv(builder.mul(total, builder.add(t, i64(1))), ntasks)
            status, res = context.call_conv.call_function(builder, callee, types.int64, argtys,
                                                          values + [lo, hi])
            with builder.if_else(status.is_error) as (failed, done):
                with failed:  # the first failure's status is kept
                    code = cgutils.gep_inbounds(builder, ctx, 0, 7)
                    old = builder.extract_value(builder.cmpxchg(
                        code, ir.IntType(32)(0), status.code, "monotonic", "monotonic"), 1)
                    with builder.if_then(old):
                        builder.store(status.excinfoptr, cgutils.gep_inbounds(builder, ctx, 0, 8))
                with done:
                    builder.store(res, builder.gep(counts, [t]))
    builder.ret_void()
    return body


@intrinsic
def borrow(typingctx, arr):
    """``arr`` without its memory's owner: a view Numba does not reference-count.

    Numba increments and decrements an array's reference count (an atomic
    add on its owner) wherever the array is put in a tuple or passed as an
    argument.  A column loop calling its block task through its address
    for every unit of a few dozen values did that about 40 times a unit:
    float32 (18, 15, 33, 3) of a wider array over axis 0 (495 blocks of 3
    columns by 18 rows) spent 27% of its samples on those two instructions
    (perf), and took 86-110 us; with borrowed views 75 us (int32 118 ->
    96-99 us).  A borrowed view has no owner, so each count is a test and
    a return.  The caller keeps the array itself alive while the view is
    used (:func:`keep`).
    """
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, sig, args):
        return _borrowed(context, builder, arr, args[0])

    return arr(arr), codegen


def _borrowed(context, builder, ty, value):
    """The array ``value`` (of Numba type ``ty``) with no owner and no parent object."""
    view = context.make_array(ty)(context, builder, value=value)
    view.meminfo = cgutils.get_null_value(view.meminfo.type)
    view.parent = cgutils.get_null_value(view.parent.type)
    return view._getvalue()


@intrinsic
def keep(typingctx, arrays):
    """Nothing, but a use of ``arrays`` (a tuple): they stay alive until here.

    Numba frees an array after its last use, and a :func:`borrow` of it
    is not one.
    """
    if not isinstance(arrays, types.BaseTuple):
        return None

    def codegen(context, builder, sig, args):
        return context.get_dummy_value()

    return types.none(arrays), codegen


def address(task, head):
    """The address of ``task`` (a Numba dispatcher) compiled for ``(*head, lo, hi)``.

    Compiled, or loaded from Numba's cache, on the first use for these
    argument types; ``lo`` and ``hi`` are int64.  Not memoised here: bind,
    which calls it, keeps what it binds.
    """
    tys = tuple(typeof(v) for v in head) + (types.int64, types.int64)
    task.compile(tys)
    cres = task.overloads[tys]
    if cres.signature.return_type != types.int64:
        raise TypeError(f"task {task.__name__} returns {cres.signature.return_type}, not int64")
    return cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)


def kinds(values):
    """What fixes each value's Numba type, quicker to find than the type itself."""
    return [(v.dtype, v.ndim, v.flags.num & _TYPE_FLAGS) if type(v) is np.ndarray else type(v)
            for v in values]


def bind(driver, task, head, merge=None, mhead=(), typed_by=None):
    """``driver``'s compiled entry point with the tasks' addresses bound.

    Without ``merge`` (``kernels.tasks_parallel``): ``run(head, total,
    counts)`` calls ``driver(address of task, head, total, counts)``.  With
    it (``kernels.pieces_then_merge``): ``run(head, mhead, total, counts,
    nmerge)`` calls ``driver(address of task, address of merge, head,
    mhead, total, counts, nmerge)``.

    Memoised on the heads' dtypes, dims and flags: Numba's own dispatch
    types a tuple argument in Python, about 6 us for each array in it, on
    every call.  Finding them takes about 0.3 us an array, so a caller whose
    heads' other values have fixed types passes the few that vary as
    ``typed_by``, and the memo keys on those alone.
    """
    key = (driver, task, merge, len(head),
           *kinds(head + mhead if typed_by is None else typed_by))
    run = _BOUND.get(key)
    if run is None:
        if merge is None:
            tys = (types.int64, typeof(head), types.int64, _COUNTS)
            bound = (address(task, head),)
        else:
            tys = (types.int64, types.int64, typeof(head), typeof(mhead), types.int64, _COUNTS,
                   types.int64)
            bound = (address(task, head), address(merge, mhead))
        driver.compile(tys)
        run = _BOUND[key] = functools.partial(driver.overloads[tys].entry_point, *bound)
    return run
