"""Compiled tasks called through their address (reducemean.tasks, kernels.tasks_parallel)."""

import os
import subprocess
import sys

import numba
import numpy as np
import pytest
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from reducemean import kernels, tasks


@njit
def _sum_range(a, scale, lo, hi):
    s = 0
    for i in range(lo, hi):
        s += a[i] * scale
    return s


@njit
def _mark_range(marks, lo, hi):
    for i in range(lo, hi):
        marks[i] += 1
    return hi - lo


@njit
def _fails(n, lo, hi):
    return np.empty(n - hi).size  # negative when hi > n: numpy's ValueError


@njit
def _float_result(a, lo, hi):
    return 0.5


@njit
def _call(fn, head, lo, hi):
    return tasks.call_task(fn, head, lo, hi)


def test_a_task_called_through_its_address_gets_its_arguments():
    a = np.arange(100, dtype=np.int64)
    head = (a, 3)
    fn = tasks.address(_sum_range, head)
    assert _call(fn, head, 10, 20) == 3 * sum(range(10, 20))
    assert _call(fn, head, 0, 100) == 3 * sum(range(100))
    assert tasks.address(_sum_range, head) == fn  # remembered


def test_a_task_compiled_for_other_types_gets_its_own_address():
    head_i = (np.arange(10, dtype=np.int64), 1)
    head_32 = (np.arange(10, dtype=np.int32), 1)
    assert tasks.address(_sum_range, head_i) != tasks.address(_sum_range, head_32)
    assert _call(tasks.address(_sum_range, head_32), head_32, 0, 10) == 45


def test_an_exception_in_a_task_reaches_the_caller():
    head = (np.int64(5),)
    fn = tasks.address(_fails, head)
    assert _call(fn, head, 0, 5) == 0
    with pytest.raises(ValueError, match="negative"):
        _call(fn, head, 0, 6)


def test_a_task_must_return_int64():
    with pytest.raises(TypeError, match="_float_result returns float64"):
        tasks.address(_float_result, (np.zeros(3),))


@pytest.mark.parametrize("total, ntasks", [(1000, 2), (7, 3), (3, 3), (1, 4), (0, 2), (1 << 20, 64)])
def test_parallel_tasks_cover_every_unit_once(total, ntasks):
    marks = np.zeros(total, np.int64)
    head = (marks,)
    counts = np.full(ntasks, -1, np.int64)
    got = kernels.tasks_parallel(tasks.address(_mark_range, head), head, total, counts)
    assert got == total  # the sum of the tasks' results
    assert (marks == 1).all()
    # even ranges: sizes differ by at most one
    assert counts.sum() == total and counts.max() - counts.min() <= 1


def test_a_bound_driver_runs_the_task_and_is_kept_per_kind_of_head():
    a = np.arange(1000, dtype=np.int64)
    run = tasks.bind(kernels.tasks_parallel, _sum_range, (a, 2))
    assert run((a, 2), 1000, np.empty(3, np.int64)) == 2 * sum(range(1000))
    b = a[::-1].copy()  # same dtype, dims and flags: the same entry point
    assert tasks.bind(kernels.tasks_parallel, _sum_range, (b, 7)) is run
    assert run((b, 7), 10, np.empty(2, np.int64)) == 7 * sum(range(990, 1000))
    ro = a.copy()
    ro.flags.writeable = False  # a read-only array is another Numba type
    run_ro = tasks.bind(kernels.tasks_parallel, _sum_range, (ro, 1))
    assert run_ro is not run
    assert run_ro((ro, 1), 1000, np.empty(2, np.int64)) == sum(range(1000))
    strided = a[::2]  # not contiguous: another layout
    run_s = tasks.bind(kernels.tasks_parallel, _sum_range, (strided, 1))
    assert run_s is not run
    assert run_s((strided, 1), 500, np.empty(2, np.int64)) == sum(range(0, 1000, 2))


_FROM_CACHE = """
import numpy as np, reducemean
a = np.arange(1 << 20, dtype=np.float32).reshape(1024, 1024)
print("means", float(reducemean.mean(a)), reducemean.mean(a, axis=0)[:3].tolist(),
      reducemean.mean(a, axis=1)[:2].tolist())
from reducemean import kernels
ir = "".join(kernels.outer_serial.inspect_llvm(s) for s in kernels.outer_serial.signatures)
print("column kernel", "outer_serial" in ir, "block loop linked in", "outer_block" in ir)
"""


def test_tasks_loaded_from_numbas_cache_run_in_a_new_process(tmp_path):
    # The second process loads the parallel loop and its tasks from the cache
    # its predecessor filled: their addresses come from cached code.
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NUMBA_DEBUG_CACHE="1")
    runs = [subprocess.run([sys.executable, "-c", _FROM_CACHE], env=env, capture_output=True,
                           text=True, timeout=600) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
        # whole, columns (a block per thread) and rows, in parallel; exact
        assert "means 524287.5 [523776.0, 523777.0, 523778.0] [511.5, 1535.5]" in r.stdout
    # compiled: the column kernel calls its block loop by address, so the
    # loop's code is optimised and emitted once, in a library of its own
    assert "column kernel True block loop linked in False" in runs[0].stdout
    loaded = [line for line in runs[1].stdout.splitlines() if "data loaded" in line]
    for kernel in ("tasks_parallel", "outer_serial", "outer_block", "rows_paired",
                   "whole_long_pieces"):
        assert any(f"kernels.{kernel}-" in line for line in loaded), kernel
    assert "data saved" not in runs[1].stdout


def test_pieces_then_merge_runs_the_merge_after_every_piece():
    # the merge sums the marks every piece left: all of them, once each
    marks = np.zeros(10007, np.int64)
    head, mhead = (marks,), (marks, 1)
    run = tasks.bind(kernels.pieces_then_merge, _mark_range, head, _sum_range, mhead)
    assert run(head, mhead, 10007, np.empty(5, np.int64), 10007) == 10007
    assert (marks == 1).all()
    assert tasks.bind(kernels.pieces_then_merge, _mark_range, head, _sum_range, mhead) is run


@njit
def _through_borrowed(a, marks, fn):
    # a view without an owner, passed to a task by address and written
    # through; the arrays it borrows stay alive until the keep
    fresh = np.zeros(a.shape[0], np.int64)
    va, vm, vf = tasks.borrow(a), tasks.borrow(marks), tasks.borrow(fresh)
    done = tasks.call_task(fn, (vm,), np.int64(0), np.int64(marks.shape[0]))
    for i in range(va.shape[0]):
        vf[i] = va[i] * 2
    total = 0
    for i in range(fresh.shape[0]):
        total += fresh[i]
    tasks.keep((fresh,))
    return done, total, va.shape[0], va.strides[0]


def test_a_borrowed_view_reads_and_writes_its_array():
    marks = np.zeros(7, np.int64)
    fn = tasks.address(_mark_range, (marks,))
    a = np.arange(10, dtype=np.int64)[::2]  # strided: the view keeps shape and strides
    done, total, n, stride = _through_borrowed(a, marks, fn)
    assert done == 7 and np.array_equal(marks, np.ones(7, np.int64))
    assert total == 2 * sum(range(0, 10, 2))
    assert (n, stride) == (5, 16)


@njit
def _fails_past(n, marks, lo, hi):
    # fails (numpy's ValueError) on the range past n; marks the others
    for i in range(lo, hi):
        marks[i] += 1
    return np.empty(n - hi).size


@pytest.mark.parametrize("ntasks", [2, 5])
def test_an_exception_in_a_parallel_task_reaches_the_caller(ntasks):
    # the last task fails; every other task still runs its whole range
    marks = np.zeros(10, np.int64)
    head = (np.int64(9), marks)
    counts = np.zeros(ntasks, np.int64)
    with pytest.raises(ValueError, match="negative"):
        kernels.tasks_parallel(tasks.address(_fails_past, head), head, 10, counts)
    assert (marks == 1).all()


def test_a_split_whose_piece_fails_raises_before_its_merge():
    marks = np.zeros(10, np.int64)
    head, mhead = (np.int64(9), marks), (marks,)
    run = tasks.bind(kernels.pieces_then_merge, _fails_past, head, _mark_range, mhead)
    with pytest.raises(ValueError, match="negative"):
        run(head, mhead, 10, np.zeros(3, np.int64), 10)
    assert (marks == 1).all()  # the pieces' marks only: the merge would add one more


@njit
def _thread_of(ids, lo, hi):
    for i in range(lo, hi):
        ids[i] = numba.get_thread_id()
    return hi - lo


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="one thread")
def test_parallel_tasks_run_on_the_threads_numba_is_told_to_use():
    before = numba.get_num_threads()
    try:
        for threads in (2, 1):
            numba.set_num_threads(threads)
            ids = np.full(64, -1, np.int64)
            kernels.tasks_parallel(tasks.address(_thread_of, (ids,)), (ids,), 64,
                                   np.zeros(2, np.int64))
            # two tasks, one to each thread: ids 0 and 1, 32 values each
            assert sorted(np.unique(ids, return_counts=True)[1]) == [64 // threads] * threads
            assert set(ids.tolist()) == set(range(threads))
    finally:
        numba.set_num_threads(before)


@intrinsic
def _owned(typingctx, arr):
    # whether the array carries its owner (a meminfo Numba counts references on)
    def codegen(context, builder, sig, args):
        view = context.make_array(sig.args[0])(context, builder, value=args[0])
        null = cgutils.get_null_value(view.meminfo.type)
        return builder.icmp_unsigned("!=", view.meminfo, null)

    return types.boolean(arr), codegen


@njit
def _owner_count(a, b, lo, hi):
    return np.int64(_owned(a)) + np.int64(_owned(b))


def test_parallel_tasks_get_the_heads_arrays_borrowed():
    # every reference count a task's calls make on an owner shared by all
    # the threads is an atomic add on one cache line: the tasks get views
    # without the owner (the driver's caller keeps the arrays alive)
    a, b = np.zeros(5), np.zeros(3, np.int64)
    assert _owner_count(a, b, 0, 1) == 2  # owned, called directly
    fn = tasks.address(_owner_count, (a, b))
    counts = np.full(4, -1, np.int64)
    assert kernels.tasks_parallel(fn, (a, b), 8, counts) == 0
    assert (counts == 0).all()
