"""When kernels run in parallel, and that doing so is safe on every threading layer."""

import contextlib
import os
import subprocess
import sys
import textwrap
from fractions import Fraction

import numpy as np
import pytest
from exact import BFLOAT16, ulp_distance
from threads import run_threads

import reducemean
from reducemean import dispatch, engine, kernels, launch, numpy_api
from reducemean.numerics import NATIVE
from reducemean.plan import NARROW_KEPT, plan_for

BIG = 1 << 20  # well above PARALLEL_MIN


def _run_script(body, env_extra=None, timeout=240):
    env = dict(os.environ)
    env.update(env_extra or {})
    code = textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout
    )


_CONCURRENT = """
    import threading, numpy as np, numba, reducemean
    print("layer-requested", numba.config.THREADING_LAYER)
    rng = np.random.default_rng(0)
    arrays = [rng.integers(-1000, 1000, (1 << 20,)).astype(np.float32) for _ in range(4)]
    want = [int(a.astype(np.int64).sum()) / a.size for a in arrays]
    bad, done = [], []
    def work(k):
        try:  # a thread's exception would only be printed: count it as a failure
            for _ in range(25):
                got = float(reducemean.mean(arrays[k]))
                if abs(got - want[k]) > 1e-6 * max(1.0, abs(want[k])):
                    bad.append((k, got, want[k]))
            done.append(k)
        except BaseException as e:
            bad.append((k, repr(e)))
    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    print("layer-used", numba.threading_layer())
    print("bad", len(bad), bad[:3])
    print("done", len(done))
"""


@pytest.mark.timeout(300)
@pytest.mark.parametrize("layer", ["workqueue", "omp", "default"])
def test_concurrent_threads_never_abort_on_any_layer(layer):
    # workqueue aborts the process on concurrent parallel launches unless
    # reducemean serialises them; every layer must survive and agree.
    env = {} if layer == "default" else {"NUMBA_THREADING_LAYER": layer}
    r = _run_script(_CONCURRENT, env)
    if layer == "omp" and "No threading layer could be loaded" in r.stderr:
        pytest.skip("OpenMP layer not available here")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "bad 0 []" in r.stdout and "done 4" in r.stdout, r.stdout


_FORK = """
    import multiprocessing as mp, numpy as np, reducemean
    a = np.arange(1 << 20, dtype=np.float64)
    assert float(reducemean.mean(a)) == (a.size - 1) / 2   # parent uses the parallel kernels
    def child(q):
        b = np.arange(1 << 20, dtype=np.float32)
        q.put(float(reducemean.mean(b)))
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    got = q.get(timeout=120)
    p.join(120)
    print("exit", p.exitcode, "got", got)
"""


@pytest.mark.timeout(300)
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.parametrize("layer", ["default", "workqueue"])
def test_forked_child_computes_and_exits(layer):
    env = {} if layer == "default" else {"NUMBA_THREADING_LAYER": layer}
    r = _run_script(_FORK, env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"exit 0 got {((1 << 20) - 1) / 2}" in r.stdout


class _Forgetful(dict):
    """A memo that keeps nothing."""

    def __setitem__(self, key, value):
        pass


def _paired(dtype):
    """Whether contiguous runs of ``dtype`` go two at a time (numerics.pairs_runs): floats
    (float16 where the CPU has F16C, as here) and int32."""
    dt = np.dtype(dtype)
    return dt.kind in "fV" or dt == np.int32


@pytest.fixture
def spy(monkeypatch):
    """Record which kernel variant each call used.

    A kernel run as parallel tasks is recorded as "<name> in tasks", a split
    reduction as "<pieces> then <merge>".  Parallel calls are recorded as
    they are prepared, so every call prepares its own: the memos of
    prepared calls (launch) and of repeated calls (numpy_api) keep nothing.
    """
    monkeypatch.setattr(launch, "_PREPARED", _Forgetful())
    monkeypatch.setattr(numpy_api, "_DIRECT", _Forgetful())
    monkeypatch.setattr(numpy_api, "_CAST", _Forgetful())
    monkeypatch.setattr(numpy_api, "_MASKED", _Forgetful())
    calls = []
    for name in ("inner_serial", "inner_two", "inner_two_short", "rows_serial", "rows_paired", "rows_nested",
                 "rows_nested_paired", "whole_serial", "whole_long", "short_serial",
                 "outer_serial", "parts_serial", "parts_nested", "parts_general", "short_strided",
                 "interleaved_serial",
                 *kernels.SHORT_KERNELS.values()):
        real = getattr(kernels, name)

        def wrapped(*args, _real=real, _name=name):
            calls.append(_name)
            return _real(*args)

        wrapped.real = real
        monkeypatch.setattr(kernels, name, wrapped)
    in_tasks = launch.in_tasks

    def tasks_spy(kernel, *args):
        kernel = getattr(kernel, "real", kernel)  # a serial kernel is wrapped above
        calls.append(kernel.__name__ + " in tasks")
        return in_tasks(kernel, *args)

    monkeypatch.setattr(launch, "in_tasks", tasks_spy)
    split = launch._split

    def split_spy(pieces, merge, *args):
        calls.append(f"{pieces.__name__} then {merge.__name__}")
        return split(pieces, merge, *args)

    monkeypatch.setattr(launch, "_split", split_spy)
    return calls


def test_small_inputs_run_serially_and_big_ones_in_parallel(spy):
    # one contiguous run of at least two PAIR_BLOCKs: blocks in pairs
    reducemean.mean(np.ones(launch.PARALLEL_MIN // 2, np.float32))
    assert spy[-1] == "whole_long"
    reducemean.mean(np.ones(100, np.float32))
    assert spy[-1] == "whole_serial"  # one short run: the row loop for a single row
    # a single strided run, read backwards, through the same loop
    a = np.arange(30001, dtype=np.float64)
    assert reducemean.mean(a[::-3]) == float(sum(range(0, 30001, 3))) / 10001
    assert spy[-1] == "whole_serial"
    reducemean.mean(np.ones(BIG, np.float32))
    if launch.numba.get_num_threads() > 1:
        assert spy[-1] == "whole_long_pieces then merge_outputs"


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
def test_whole_runs_are_cut_into_pieces(spy, dtype):
    # One run, contiguous, strided, backwards or every second value: pieces
    # of it in parallel (kernels.whole_pieces; contiguous floats and int32
    # whole_long_pieces, their blocks in pairs), merged, against exact sums.
    rng = np.random.default_rng(13)
    x = rng.integers(-100, 100, 3 * BIG).astype(dtype)
    rtype = np.float64 if np.dtype(dtype).kind == "i" else dtype
    for view in (x, x[::-3], x[::2], x[1::2], x[5:-7]):
        got = reducemean.mean(view)
        long = view.flags.c_contiguous
        if launch.numba.get_num_threads() > 1:
            assert spy[-1] == ("whole_long_pieces" if long else "whole_pieces") + (
                " then merge_outputs"), view.strides
        s_ = int(view.astype(np.int64).sum())
        assert ulp_distance(got, Fraction(s_, view.size), rtype) <= (
            0.5 if rtype == np.float64 else 1), (dtype, view.strides)


def test_float64_goes_parallel_at_half_the_size(spy):
    # compensated float64 sums cost twice as much per element (Entry.cost)
    n = launch.PARALLEL_MIN // 2
    x = np.arange(n, dtype=np.float64)
    for _ in range(2):  # the second call may take numpy_api's remembered path
        assert reducemean.mean(x) == (n - 1) / 2
        if launch.numba.get_num_threads() > 1:
            assert spy[-1] == "whole_long_pieces then merge_outputs"
    # float32 of that size, and float64 of under half of it, stay serial (shapes
    # no other test uses, so numpy_api has no remembered path for them yet)
    assert reducemean.mean(x[:-3].astype(np.float32)) == np.float32((n - 4) / 2)
    assert spy[-1] == "whole_long"
    assert reducemean.mean(x[: n // 2 - 1]) == (n // 2 - 2) / 2
    assert spy[-1] == "whole_long"


def test_values_apart_go_parallel_at_half_the_size(spy):
    # runs of every second or third value, and columns of them, cost more
    # per value than contiguous ones (plan.Plan.weight)
    n = launch.PARALLEL_MIN // 2
    two = launch.numba.get_num_threads() > 1
    x = np.arange(3 * n, dtype=np.float32) % 1000
    for v, axis, parallel in (
            (x[: 2 * n: 2], None, "whole_pieces then merge_outputs"),
            (x[::3], None, "whole_pieces then merge_outputs"),
            (x[: 2 * n].reshape(512, -1)[:, ::2], 1, "rows_paired in tasks"),
            (x[: 2 * n].reshape(512, -1)[:, ::2], 0, "outer_pieces then outer_merge"),
            (x[:n], None, "whole_long"),  # contiguous: serial at this size
            (x[: n - 2: 2], None, "whole_serial"),  # under half: serial
    ):
        got = reducemean.mean(v, axis=axis)
        assert spy[-1] == (parallel if two else spy[-1].split(" ")[0]), (v.shape, axis)
        sums = v.astype(np.int64).sum(axis=axis)
        count = v.size // np.size(sums)
        want = np.array([Fraction(int(s), count) for s in np.ravel(sums)])
        assert all(ulp_distance(g, w, np.float32) <= 1
                   for g, w in zip(np.ravel(got), want)), (v.shape, axis)


def test_rows_run_as_ranges_of_outputs(spy):
    # one kept and one reduced dim: the row loop, in parallel over output ranges
    a = np.arange(BIG, dtype=np.float32).reshape(-1, 64)
    got = reducemean.mean(a, axis=1)
    if launch.numba.get_num_threads() > 1:
        assert spy[-1] == "rows_paired in tasks"
    want = np.arange(a.shape[0], dtype=np.float64) * 64 + 31.5  # exact in float64
    assert np.array_equal(got, want.astype(np.float32))
    got = reducemean.mean(a.reshape(-1, 4), axis=1)  # short rows
    if launch.numba.get_num_threads() > 1:
        assert spy[-1] == "short_serial_4 in tasks"
    assert np.array_equal(got, (np.arange(BIG // 4, dtype=np.float64) * 4 + 1.5).astype(np.float32))


@pytest.mark.parametrize("name", ["float64", "float32", "float16", "int32", "int64"])
def test_rows_of_kept_dims_that_do_not_merge_go_by_rows(spy, name):
    # One reduced dim and several kept ones that do not merge: rows along
    # the innermost kept dim, a row loop per offset of the outer ones, also
    # when a task's range of outputs starts or ends inside such a row loop
    # and when that kept dim is not the result's last.  Integer values:
    # every mean is checked against the exact one, to 1 ulp of the result.
    # Contiguous rows of floats and int32 go two at a time (rows_nested_paired).
    dt = np.dtype(name)
    rng = np.random.default_rng(len(name))
    x = rng.integers(0, 100, (30, 40, 50)).astype(dt)
    big = rng.integers(0, 100, (1023, 32, 64)).astype(dt)
    two = launch.numba.get_num_threads() > 1
    nested = "rows_nested_paired" if _paired(dt) else "rows_nested"
    cases = [
        (x[:, :20], 2, nested),
        (x[:, 1:20:2, ::3], 2, "rows_nested"),  # strided rows
        (x[::-1, :20], 2, nested),  # an outer kept dim read backwards
        (x.transpose(1, 0, 2)[:19], 2, nested),  # innermost kept dim: result's first
        (x[:, :19, :48].reshape(30, 19, 3, 16)[:, :, ::2], 3, nested),  # three kept dims
        (big[:, :23], 2, nested + " in tasks" if two else nested),
    ]
    for v, axis, kernel in cases:
        got = reducemean.mean(v, axis=axis)
        assert spy[-1] == kernel, (v.shape, v.strides)
        sums = v.astype(np.int64).sum(axis=axis)
        result = np.float64 if dt.kind in "iu" else dt
        n = v.shape[axis]
        for idx in np.ndindex(*sums.shape):
            if sums.size > 4096 and sum(idx) % 7:
                continue  # a sample of the big case, still every task's edge rows
            exact = Fraction(int(sums[idx]), n)
            assert ulp_distance(got[idx], exact, result) <= 1, (v.shape, idx)


@pytest.mark.parametrize("name", ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                                  "int64", "uint64", "float16", "bfloat16", "float32",
                                  "float64"])
def test_short_rows_of_every_dtype_in_tasks(spy, name):
    # The short-row kernel writes a vector of results per step, from ranges
    # of rows that start anywhere: every row of lengths with vector steps
    # of their own (4, 8 to 16 for float32, 16-bit floats and int32; 7 to
    # 16 for float64, compensated), literal lengths LLVM vectorises across
    # rows (2, 3, 5, 7) or would gather (9 to 15 of the other types: in
    # parts of 3 to 7 values, or for 13 the loop of any length), against
    # the exact mean of its integers.  Rows of 16 to 32 are short rows for
    # float32, 16-bit, int32 and float64 values only (plan.SHORT_VEC_ROWS,
    # SHORT_F64_ROWS), the row loop's for the others.
    if name == "bfloat16":
        dtype = pytest.importorskip("ml_dtypes").bfloat16
    else:
        dtype = np.dtype(name)
    rng = np.random.default_rng(7)
    signed = name != "bool" and not name.startswith("uint")
    # negative values too: a short row's parts must carry none into a high word
    x = rng.integers(-100 if signed else 0, 2 if name == "bool" else 100, BIG).astype(dtype)
    wide = x.astype(np.int64)
    rtype = np.float64 if np.dtype(dtype).kind in "biu" else dtype
    for run in (2, 3, 4, 5, 7, 8, 9, 10, 12, 13, 14, 15, 16, 24):
        n = BIG // run * run
        got = reducemean.mean(x[:n].reshape(-1, run), axis=1)
        if launch.numba.get_num_threads() > 1:
            kernel = f"short_serial_{run}"  # a kernel of its own for each length
            if run >= 16 and name not in ("float32", "float16", "bfloat16", "int32", "float64"):
                kernel = "rows_serial"
            assert spy[-1] == kernel + " in tasks"
        assert got.dtype == rtype and got.shape == (n // run,)
        sums = wide[:n].reshape(-1, run).sum(axis=1)  # exact: small integers
        want = sums / run  # one rounding of an exact quotient
        err = np.abs(got.astype(np.float64) - want)
        # within one ulp of the result type everywhere (a misplaced store is
        # off by tens), and correctly rounded on a sample, by Fractions
        assert np.all(err <= np.spacing(np.abs(want).astype(rtype)).astype(np.float64)), run
        for o in range(0, n // run, 997):
            assert ulp_distance(got[o], Fraction(int(sums[o]), run), rtype) <= 0.5, (run, o)


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "int32", "float64"])
@pytest.mark.parametrize("run", [2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 21, 32])
def test_short_rows_across_the_range_serially_and_in_tasks(spy, name, run):
    # Rows of 4 and 8 to 32 values of these types are summed four rows to a
    # vector, 64 rows a step (rows that share a vector each take their own
    # lanes of it), and the rows left one by one; rows of other literal
    # lengths are unrolled, and LLVM vectorises across them.  Fewer than 64
    # rows take the general kernel, or rows of 16 or more the row loop,
    # which is not a short plan's there (rows of 2 and 3 keep theirs);
    # int32 rows are summed in float64 (numerics.short_add), float64 rows
    # of 7 to 32 four rows to a vector too, compensated
    # (numerics.short_sums_f64).  Row counts that leave a tail, serially
    # and in tasks (whose ranges start anywhere), values across many
    # binades (float64 sums them exactly: float64 values of float32's
    # precision), int32 sums past 2**32 and non-finite rows, against exact
    # sums and means.
    dtype = BFLOAT16 if name == "bfloat16" else np.dtype(name)
    if dtype is None:
        pytest.skip("ml_dtypes is not installed")
    rng = np.random.default_rng(run)
    for rows in (63, 67, 64 * 5 + 3, BIG // run + 37):
        if name == "int32":
            x = rng.integers(-(2**31), 2**31, (rows, run), endpoint=False).astype(np.int32)
            x[:3] = np.iinfo(np.int32).max  # sums past 2**32
            x[3:6] = np.iinfo(np.int32).min
        else:
            # magnitudes in [2**-13, 2**12]: float64 sums sixteen of them exactly
            # (in [2**-13, 2**11], thirty-two)
            scale = 2.0 ** rng.integers(-12, 13 if run <= 16 else 12, (rows, run))
            mag = rng.uniform(0.5, 1.0, (rows, run)) * rng.choice([-1.0, 1.0], (rows, run))
            x = (mag * scale).astype(np.float32 if name == "float64" else dtype).astype(dtype)
            x[5, 1] = np.nan
            x[6, 0] = np.inf
            x[7, :2] = [np.inf, -np.inf]
            x[rows - 2, run - 1] = -np.inf
        start = len(spy)
        got = reducemean.mean(x, axis=1)
        # under one vector step of rows, rows of 4, 8 and 12 take the
        # general kernel, which compiles no vector step
        few = rows < 64 and run not in (2, 3)
        kernel = "short_serial" if few else f"short_serial_{run}"
        if rows < 64 and run >= 16:
            kernel = "rows_paired"
        # (the first kernel: a row whose values cancel to exactly 0, as
        # [0.03183, -0.01773, -0.0141] does in float16, is redone after it)
        assert spy[start] in (kernel, kernel + " in tasks")
        sums = x.astype(np.float64).sum(axis=1)  # exact
        if name == "int32":
            assert np.array_equal(sums, x.astype(np.int64).sum(axis=1))
            assert np.array_equal(got, sums / run)  # one rounding of the exact quotient
            trunc = reducemean.reduce_mean(x, axes=[1], keepdims=0)
            whole = x.astype(np.int64).sum(axis=1)
            assert np.array_equal(trunc, np.sign(whole) * (np.abs(whole) // run))
            narrow = reducemean.mean(x, axis=1, dtype=np.float32)
            assert np.array_equal(narrow, (sums / run).astype(np.float32))
        else:
            with np.errstate(invalid="ignore"):
                exact = sums / run  # within half a float64 ulp of the exact mean
            finite = np.isfinite(exact)
            err = np.abs(got[finite].astype(np.float64) - exact[finite])
            ulp = np.spacing(np.abs(exact[finite]).astype(dtype)).astype(np.float64)
            assert np.all(err <= ulp), rows  # a misplaced sum is off by far more
            assert np.isnan(got[[5, 7]].astype(np.float32)).all()
            assert got[6] == np.inf and got[rows - 2] == -np.inf
            for o in {0, 1, 62, min(63, rows - 1), min(64, rows - 1), rows - 1}:  # by Fractions
                want = sum(Fraction(float(v)) for v in x[o].astype(np.float64)) / run
                assert ulp_distance(got[o], want, dtype) <= 1, (rows, o)


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_rows_of_16_read_exactly_or_redone_take_the_row_loop(spy, name):
    # A float64 mean of narrow floats reads them compensated (an exact
    # token), which short_sums does not serve: rows of 16, a short plan,
    # go through the row loop then (launch._family), and so does the
    # second pass of rows whose float64 sums cancel past their bound.
    dtype = BFLOAT16 if name == "bfloat16" else np.dtype(name)
    if dtype is None:
        pytest.skip("ml_dtypes is not installed")
    rng = np.random.default_rng(16)
    x = rng.standard_normal((1000, 16)).astype(dtype)
    got = reducemean.mean(x, axis=1, dtype=np.float64)
    assert spy[-1] == "rows_serial" and got.dtype == np.float64  # (no pair loop for them)
    for o in (0, 1, 499, 999):
        want = sum(Fraction(float(v)) for v in x[o].astype(np.float64)) / 16
        assert ulp_distance(got[o], want, np.float64) <= 1, o
    if name == "float16":
        return  # its rows of 16 sum exactly in float64: never redone
    # rows whose large values cancel: each marked, and redone
    big = 2.0**60
    x[::7, 3] = big
    x[::7, 11] = -big
    start = len(spy)
    got = reducemean.mean(x, axis=1)
    assert spy[start] == "short_serial_16" and "rows_serial" in spy[start + 1:], spy[start:]
    for o in range(0, 1000, 7):
        want = sum(Fraction(float(v)) for v in x[o].astype(np.float64)) / 16
        assert ulp_distance(got[o], want, dtype) <= 1, o


@pytest.mark.parametrize("run", [5, 9])
@pytest.mark.parametrize("name", ["float32", "bfloat16"])
def test_short_rows_marked_are_certified_or_left_for_the_second_pass(monkeypatch, name, run):
    # Rows whose bound marks them, of a literal length LLVM vectorises (5)
    # or summed four rows to a vector (9): those that sum to exactly 0
    # within few binades are stored unmarked in the kernel (numerics.
    # short_mend after the store, short_certified before it); those whose
    # values cancel across more than float64 holds stay marked for the
    # engine's second pass.  Against exact means, with the marks counted.
    dtype = BFLOAT16 if name == "bfloat16" else np.dtype(name)
    if dtype is None:
        pytest.skip("ml_dtypes is not installed")
    rng = np.random.default_rng(run)
    rows = 3000
    x = rng.standard_normal((rows, run)).astype(dtype)
    v = rng.standard_normal(rows).astype(dtype)
    x[::3, :] = 0
    x[::3, 0] = v[::3]
    x[::3, run - 1] = -v[::3]  # a value and its negative: exactly 0
    x[1::3, :3] = np.array([2.0**60, 1.0, -2.0**60]).astype(dtype)  # 1 lost in float64
    marks = []
    real = engine.marked_for_redo
    monkeypatch.setattr(engine, "marked_for_redo",
                        lambda flat, entry: marks.append(real(flat, entry).size) or real(flat, entry))
    got = reducemean.mean(x, axis=1)
    assert marks == [len(range(1, rows, 3))]
    for o in list(range(0, 60)) + list(range(rows - 60, rows)):
        want = sum(Fraction(float(w)) for w in x[o].astype(np.float64)) / run
        assert ulp_distance(got[o], want, dtype) <= 1, o


def test_short_int64_rows_past_2_53_are_redone_exactly_in_tasks(spy):
    # A task's range with an int64 row sum past 2**53 is finished again
    # exactly, row by row (numerics.short_exact); the ranges without one
    # keep their single division.  Rows from the whole int64 range, with
    # runs of small rows, against exact means and truncated integer means.
    rng = np.random.default_rng(3)
    x = rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, (BIG // 4, 4),
                     dtype=np.int64, endpoint=True)
    x[: BIG // 8] = rng.integers(-1000, 1000, (BIG // 8, 4))  # first half: the fast path
    got = reducemean.mean(x, axis=1)
    if launch.numba.get_num_threads() > 1:
        assert spy[-1] == "short_serial_4 in tasks"
    got_int = reducemean.reduce_mean(x, axes=[1], keepdims=0)
    for o in list(range(0, x.shape[0], 509)) + [x.shape[0] - 1]:
        s = sum(int(v) for v in x[o])
        assert got[o] == float(Fraction(s, 4)), o
        q = abs(s) // 4
        assert int(got_int[o]) == (q if s >= 0 else -q), o


def test_first_row_calls_compile_only_their_own_loops():
    # A whole float64 mean takes whole_serial, which has no row pairs to
    # compile (rows_serial does, for contiguous float64 rows); each literal
    # short-row length has a kernel of its own (five together took a cold
    # first call 1.4 s), yet 8 rows of 8 are fewer than a vector step
    # of them, so a first (8, 8) mean over axis 1 compiles (or loads) the
    # general loop and no other; a contiguous complex mean compiles
    # parts_serial, not the strided loops of parts_general.
    r = _run_script("""
        import numpy as np, reducemean
        from reducemean import kernels
        x = np.arange(64, dtype=np.float64).reshape(8, 8)
        print("whole", reducemean.mean(x) == 31.5)
        got = reducemean.mean(x.astype(np.float32), axis=1)
        print("rows", got.tolist() == [8.0 * i + 3.5 for i in range(8)])
        print("complex", reducemean.mean(x + 2j * x) == 31.5 + 63j)
        for name in ("whole_serial", "rows_serial", "short_serial",
                     *kernels.SHORT_KERNELS.values(), "parts_serial", "parts_general"):
            print(name, len(getattr(kernels, name).signatures))
    """)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert "whole True" in lines and "rows True" in lines and "complex True" in lines
    assert "whole_serial 1" in lines and "short_serial 1" in lines
    assert "parts_serial 1" in lines
    for name in ("rows_serial", *kernels.SHORT_KERNELS.values(), "parts_general"):
        assert f"{name} 0" in lines


@pytest.mark.parametrize("view, first, kernel", [
    ((slice(None), slice(0, 4)), 1.5, "rows_paired"),
    ((slice(None), slice(None, None, 2)), 3.0, "short_strided"),
])
def test_short_rows_not_one_after_another_skip_the_short_kernels(spy, view, first, kernel):
    # part rows (the row loop) or every second value (short_strided): the
    # short-row kernels only take contiguous rows (their unrolled loops
    # assume them)
    a = np.arange(2 * BIG, dtype=np.float32).reshape(-1, 8)[view]
    got = reducemean.mean(a, axis=1)
    if launch.numba.get_num_threads() > 1:
        assert spy[-1] == kernel + " in tasks"
    want = np.arange(a.shape[0], dtype=np.float64) * 8 + first  # exact in float32
    assert np.array_equal(got, want.astype(np.float32))
    with launch.serial_only():
        got = reducemean.mean(a[:100], axis=1)
    assert spy[-1] == kernel
    assert np.array_equal(got, want[:100].astype(np.float32))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_runs_split_or_go_by_rows(spy, dtype):
    # A whole complex array is cut into pieces whose states are merged; many
    # complex rows go as ranges of rows.  Contiguous values take the kernels
    # of contiguous runs, other runs of one reduced dim parts_nested (rows
    # along the innermost kept dim but the part, also when a task's range
    # starts inside such a row loop), the whole strided array the general
    # pieces.  Integer-valued parts: exact means.
    k = np.arange(BIG, dtype=np.float64)
    x = (k + 1j * (BIG - k)).astype(dtype)
    two = launch.numba.get_num_threads() > 1
    assert reducemean.mean(x) == complex((BIG - 1) / 2, (BIG + 1) / 2)
    assert spy[-1] == ("parts_run_pieces then parts_merge" if two else "parts_serial")
    assert reducemean.mean(x[1::3]) == complex(float(np.mean(k[1::3])), float(np.mean(BIG - k[1::3])))
    assert spy[-1] == ("parts_pieces then parts_merge" if two else "parts_general")
    # strided runs of several reduced dims: each piece's runs read once for
    # both parts (numerics.run_parts_rows); dyadic means, exact
    got = reducemean.mean(x.reshape(-1, 64)[:, ::3])
    assert spy[-1] == ("parts_pieces then parts_merge" if two else "parts_general")
    want = [np.mean(part.reshape(-1, 64)[:, ::3]) for part in (k, BIG - k)]
    assert got == complex(*want)
    got = reducemean.mean(x[:8160].reshape(-1, 34)[:, ::2], axis=1)  # small, strided: serial
    assert spy[-1] == "parts_nested"
    start = np.arange(0, 8160, 34, dtype=np.float64)
    assert np.array_equal(got, (start + 16) + 1j * (BIG - start - 16))
    got = reducemean.mean(x.reshape(-1, 8, 64)[:2047, :5, ::3], axis=2)  # several kept dims
    assert spy[-1] == ("parts_nested in tasks" if two else "parts_nested")
    start = (np.arange(2047)[:, None] * 512 + np.arange(5) * 64).astype(np.float64)
    assert np.array_equal(got, (start + 31.5) + 1j * (BIG - start - 31.5))
    got = reducemean.mean(x.reshape(-1, 64), axis=1)
    assert spy[-1] == ("parts_serial in tasks" if two else "parts_serial")
    start = np.arange(0, BIG, 64, dtype=np.float64)
    assert np.array_equal(got, (start + 31.5) + 1j * (BIG - start - 31.5))
    got = reducemean.mean(x[:4080].reshape(-1, 17), axis=1)  # small: serial
    assert spy[-1] == "parts_serial"
    start = np.arange(0, 4080, 17, dtype=np.float64)
    assert np.array_equal(got, (start + 8) + 1j * (BIG - start - 8))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_short_runs_over_two_reduced_dims_go_by_rows(spy, dtype):
    # Runs of 10 over two reduced dims under 10 columns (plan's
    # RUNS_AS_ROWS_COLUMNS) are rows of runs, split among the threads by
    # ranges of outputs, not interleaved as longer runs with a reduced dim
    # outside the kept ones are; runs under launch.SHORT_RUNS values take
    # the short runs' loop.  Integer values, exact sums.
    two = launch.numba.get_num_threads() > 1
    x = (np.arange(2_000_000, dtype=np.int64) % 251).astype(dtype)
    for v in (x.reshape(-1, 10, 10, 10), x[:600_000].reshape(-1, 10, 10, 10),
              x[:300_000].reshape(-1, 40, 10, 10)):  # 20000, 6000 and 750 outputs
        n = len(spy)
        got = reducemean.mean(v, axis=(1, 3))
        assert spy[n:] == ["inner_two_short in tasks" if two else "inner_two_short"], v.shape
        sums = v.astype(np.int64).sum(axis=(1, 3))
        assert np.array_equal(got, (sums / (v.shape[1] * 10)).astype(got.dtype)), v.shape
    # longer runs so laid out are interleaved (on one thread too, from
    # launch.INTERLEAVE_SERIAL_BYTES of input)
    v = x[:600_000].reshape(-1, 10, 10, 20)
    got = reducemean.mean(v, axis=(1, 3))
    n = len(spy) - 2 if two else len(spy) - 1
    one = "interleaved_serial" if v.nbytes >= launch.INTERLEAVE_SERIAL_BYTES else "inner_two"
    assert spy[n:] == (["interleaved_pieces in tasks", "merge_outputs in tasks"] if two
                       else [one])
    assert np.array_equal(got, (v.astype(np.int64).sum(axis=(1, 3)) / 200).astype(got.dtype))


@pytest.mark.parametrize("nout", [256, launch.MERGE_TASKS_MIN])
def test_outer_reduced_dims_go_in_memory_order(spy, nout):
    # RKR with at least a run per thread: each thread takes a share of the
    # outer reduced range, all outputs' runs in turn; the states merge after,
    # in parallel too when there are enough outputs.
    a = np.add.outer(np.arange(float(nout)), np.arange(64) % 2).astype(np.float32)
    # a copy, not a broadcast view: an outer reduced dim of stride 0 lies
    # inside the kept one, and goes by outputs
    a = np.broadcast_to(a, (BIG // a.size, nout, 64)).copy()
    got = reducemean.mean(a, axis=(0, 2))
    if launch.numba.get_num_threads() > 1:
        if nout >= launch.MERGE_TASKS_MIN:
            assert spy[-2:] == ["interleaved_pieces in tasks", "merge_outputs in tasks"]
        else:
            assert spy[-1] == "interleaved_pieces then merge_outputs"
    assert np.array_equal(got, np.arange(nout, dtype=np.float32) + 0.5)  # exact


@pytest.mark.parametrize("name", ["float64", "float32", "float16", "bfloat16", "int32", "uint8",
                                  "int64", "uint64"])
def test_outer_reduced_dims_go_in_memory_order_on_one_thread(spy, name):
    # A serial RKR plan (one thread, serial_only, a forked child) reads every
    # output's run at each outer offset, in memory order, from
    # INTERLEAVE_SERIAL_BYTES of input (kernels.interleaved_serial); held in
    # cache it goes output after output (inner_two).  Small integer values,
    # exact in every dtype: the exact sums are numpy's int64 ones.
    dt = BFLOAT16 if name == "bfloat16" else np.dtype(name)
    if dt is None:
        pytest.skip("ml_dtypes is not installed")
    kept, run = 5, 257
    rows = -(-launch.INTERLEAVE_SERIAL_BYTES // (kept * run * dt.itemsize))
    i, o, j = np.ogrid[:rows, :kept, :run]
    values = (3 * i + 5 * o + j) % 11 - (4 if dt.kind in "if" or dt == BFLOAT16 else 0)
    rtype = dt if dt.kind == "f" or dt == BFLOAT16 else np.dtype(np.float64)
    for m, kernel in ((rows, "interleaved_serial"), (rows // 8, "inner_two")):
        x = values[:m].astype(dt)
        with launch.serial_only():
            got = reducemean.mean(x, axis=(0, 2))
        assert spy[-1] == kernel, (m, x.nbytes)
        sums = values[:m].astype(np.int64).sum(axis=(0, 2))
        assert got.dtype == rtype
        for k in range(kept):
            assert ulp_distance(got[k], Fraction(int(sums[k]), m * run), rtype) <= 1, (m, k)


@pytest.mark.parametrize("layout", ["plain", "step2", "two outer"])
@pytest.mark.parametrize("name", ["float64", "float32", "float16", "bfloat16", "int32"])
def test_few_outputs_pair_their_runs_across_outer_offsets(spy, name, layout):
    # Three outputs' runs at one outer offset lie next to one another, so
    # interleaved_pieces pairs each output's runs at two outer offsets up
    # to PAIR_GAP apart instead (launch.pairs_across): 2001 offsets of
    # runs of 300 values make several blocks of pairs and a last offset
    # alone in each piece, on two threads and, from INTERLEAVE_SERIAL_BYTES,
    # on one.  Small integer values, exact in every dtype: the exact sums
    # are numpy's int64 ones.
    dt = BFLOAT16 if name == "bfloat16" else np.dtype(name)
    if dt is None:
        pytest.skip("ml_dtypes is not installed")
    rtype = np.dtype(np.float64) if dt.kind == "i" else dt
    shape, axes = {"plain": ((2001, 3, 300), (0, 2)), "step2": ((2001, 3, 600), (0, 2)),
                   "two outer": ((23, 87, 3, 300), (0, 1, 3))}[layout]
    grids = np.ogrid[tuple(slice(n) for n in shape)]
    values = sum(w * g for w, g in zip((7, 3, 5, 1)[-len(shape):], grids)) % 11 - 4
    if layout == "step2":
        values = values[..., ::2]
    elif layout == "two outer":
        values = values[:, :80]  # two outer reduced dims that do not merge
    x = values.astype(dt)
    entry = dispatch.entry_for(x.dtype)
    plan = plan_for(x.shape, x.strides, x.itemsize, axes, False, entry.pairs, entry.lanes)
    buf = engine.storage_view(x, plan, entry)
    plan, tok = launch.resolve(plan, entry.token_for(rtype), buf.dtype)
    assert launch.pairs_across(plan, buf, tok) > 0  # the walk under test
    sums = values.astype(np.int64).sum(axis=axes)
    count = x.size // sums.size
    two = launch.numba.get_num_threads() > 1
    for serial in (False, True):
        with launch.serial_only() if serial else contextlib.nullcontext():
            got = reducemean.mean(x, axis=axes)
        if serial:
            one = "interleaved_serial" if x.nbytes >= launch.INTERLEAVE_SERIAL_BYTES else None
            assert one is None or spy[-1] == one
        elif two:
            assert spy[-1] == "interleaved_pieces then merge_outputs"
        assert got.dtype == rtype
        for k in range(sums.size):
            exact = Fraction(int(sums[k]), count)
            assert ulp_distance(got[k], exact, rtype) <= 1, (serial, k, float(got[k]), exact)


@pytest.mark.parametrize("name", ["float64", "float32", "float16", "bfloat16", "int32", "uint8",
                                  "int64", "uint64"])
def test_strided_short_rows_are_added_value_by_value(spy, name):
    # Rows under 16 values that are strided take short_strided, serial and
    # as parallel tasks; contiguous rows apart, and int64 and uint64 rows,
    # keep the row loop (rows_paired for floats and int32, two rows at a time).
    # Integer values: every mean is checked against the exact one, to 1 ulp
    # of the result.
    dt = BFLOAT16 if name == "bfloat16" else np.dtype(name)
    rng = np.random.default_rng(len(name))
    wide = dt.kind in "iu" and dt.itemsize == 8
    small = rng.integers(0, 100, (64, 30)).astype(dt)
    big = rng.integers(0, 100, (BIG // 4, 8)).astype(dt)
    two = launch.numba.get_num_threads() > 1
    cases = [
        (small[:, ::2], "short_strided"),  # 15 values, every second
        (small[:, 1::3], "short_strided"),
        (small[::-1, ::4], "short_strided"),  # rows read backwards, their values strided
        (small[:, :12], "rows_paired" if _paired(dt) else "rows_serial"),  # rows apart
        (big[:, ::2], "short_strided in tasks" if two else "short_strided"),
    ]
    for v, kernel in cases:
        got = reducemean.mean(v, axis=1)
        if wide:
            kernel = kernel.replace("short_strided", "rows_serial")
        assert spy[-1] == kernel, (v.shape, v.strides)
        sums = v.astype(np.int64).sum(axis=1)
        result = np.float64 if dt.kind in "iu" else dt
        for r in range(0, v.shape[0], max(1, v.shape[0] // 64)):
            exact = Fraction(int(sums[r]), v.shape[1])
            assert ulp_distance(got[r], exact, result) <= 1, (v.shape, r)


def test_kept_dims_outside_the_reduced_ones_go_by_outputs(spy):
    # KRR (a crop of NCHW over (2, 3)): each output's values lie together,
    # so threads take ranges of outputs; the interleaved kernel would jump
    # between outputs at every run.  Integer values: exact means.
    x = np.arange(2 * BIG, dtype=np.float32).reshape(-1, 8, 64)[:, :, :32]
    got = reducemean.mean(x, axis=(1, 2))
    if launch.numba.get_num_threads() > 1:
        assert spy[-1] == "inner_two in tasks"
    want = x.astype(np.float64).mean(axis=(1, 2))
    assert np.array_equal(got, want.astype(np.float32))


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "int32", "uint8"])
def test_short_runs_under_outer_kept_dims_go_by_outputs(spy, name):
    # KRR with runs under SHORT_RUN values (a narrow crop of NCHW over (2,
    # 3)) and many runs an output: rows of runs by ranges of outputs, as
    # longer runs, serially and in tasks, in the short runs' loop.  Integer
    # values: exact sums.
    dt = np.dtype(name)
    x = (np.arange(2 * BIG // 640 * 640, dtype=np.int64) % 251).astype(dt).reshape(-1, 40, 16)
    two = launch.numba.get_num_threads() > 1
    for v, tasks in ((x[:, :, :5], two), (x[:200, :, 3:15], False)):
        with launch.serial_only() if not tasks else contextlib.nullcontext():
            got = reducemean.mean(v, axis=(1, 2))
        assert spy[-1] == "inner_two_short" + (" in tasks" if tasks else ""), v.shape
        sums = v.astype(np.int64).sum(axis=(1, 2))
        result = np.float64 if dt.kind in "iu" else dt
        want = [Fraction(int(s), v.shape[1] * v.shape[2]) for s in sums]
        assert max(ulp_distance(g, w, result) for g, w in zip(got, want)) <= 1, v.shape


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16", "int32", "int64",
                                  "uint8"])
def test_short_runs_in_lanes_are_rows_from_fewer_runs(spy, name):
    # KRR runs of 5 values, 8 an output: the dtypes that sum short runs in
    # vector lanes (dispatch.Entry.lanes) take them as rows of runs from 8
    # runs (plan.RUNS_KRR_ROWS_LANES), the others keep the column loop
    # until 16.  Integer values: exact sums.
    dt = BFLOAT16 if name == "bfloat16" else np.dtype(name)
    v = (np.arange(256 * 8 * 16) % 61).astype(dt).reshape(256, 8, 16)[..., 2:7]
    got = reducemean.mean(v, axis=(1, 2))
    lanes = name not in ("int64", "uint8")
    assert (spy[-1] == "inner_two_short") == lanes, spy[-1]
    result = np.float64 if dt.kind in "iu" else dt
    sums = v.astype(np.int64).sum(axis=(1, 2))
    assert max(ulp_distance(g, Fraction(int(s), 40), result) for g, s in zip(got, sums)) <= 1


@pytest.mark.parametrize("name, shape, w, rows", [
    ("float32", (257, 2, 2048), 9, True),  # 2 runs, 72 bytes an output, 4 MiB
    ("float32", (255, 2, 2048), 9, False),  # under 4 MiB: the column loop
    ("float32", (257, 2, 2048), 8, False),  # 64 bytes an output
    ("float64", (129, 3, 2048), 5, True),
    ("float64", (129, 3, 2048), 4, False),  # runs of 4: not wide
    ("bfloat16", (520, 3, 2048), 11, True),
    ("int32", (257, 2, 2048), 12, True),
    ("int64", (257, 4, 2048), 5, True),  # others from 16 MiB and 4 runs
    ("int64", (257, 3, 2048), 8, False),
    ("int64", (255, 4, 2048), 5, False),
    ("uint8", (257, 8, 8192), 9, True),
])
def test_short_runs_past_the_caches_are_rows_from_fewer_runs(spy, name, shape, w, rows):
    # KRR runs below the run counts above (plan.RUNS_KRR_ROWS*) are rows
    # when the input spans RUNS_KRR_SPAN bytes (RUNS_KRR_SPAN_OTHER for
    # dtypes not in lanes) and each output holds more than
    # RUNS_KRR_OUT_BYTES of runs of RUNS_KRR_WIDE values or more.
    # Integer values: exact sums.
    dt = BFLOAT16 if name == "bfloat16" else np.dtype(name)
    x = (np.arange(int(np.prod(shape))) % 61).astype(dt).reshape(shape)
    v = x[..., 3:3 + w]
    got = reducemean.mean(v, axis=(1, 2))
    assert spy[-1].startswith("inner_two_short") == rows, spy[-1]
    result = np.float64 if dt.kind in "iu" else dt
    sums = v.astype(np.int64).sum(axis=(1, 2))
    n = shape[1] * w
    assert max(ulp_distance(g, Fraction(int(s), n), result) for g, s in zip(got, sums)) <= 1


def test_a_whole_reduction_of_several_runs_goes_in_pieces(spy):
    # One output over two reduced dims (a crop of a wider array): pieces of
    # its flat range, each summed a run of runs at a time, not the
    # interleaved kernel's run sum and merge per run.  Exact means.
    x = np.arange(2 * BIG, dtype=np.float32).reshape(-1, 64)[:, :48]
    got = reducemean.mean(x)
    if launch.numba.get_num_threads() > 1:
        assert spy[-1] == "inner_pieces then merge_outputs"
    assert got == np.float32(x.astype(np.float64).mean())


@pytest.mark.parametrize("name", ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                                  "int64", "uint64", "float16", "bfloat16", "float32", "float64"])
def test_split_kernels_hold_every_dtypes_states(spy, name):
    # Partial states are allocated outside the kernels, in the accumulator's
    # own type: a whole array (pieces of one run) and one block of columns
    # (pieces of the rows), against exact means from Python ints.
    if name == "bfloat16":
        dtype = pytest.importorskip("ml_dtypes").bfloat16
    else:
        dtype = np.dtype(name)
    rng = np.random.default_rng(len(name))
    if name in ("int64", "uint64"):  # sums past 64 bits: the exact finish
        info = np.iinfo(name)
        x = rng.integers(info.min, info.max, BIG, dtype=name, endpoint=True)
    else:  # small integers: exact in every float type
        x = rng.integers(0, 2 if name == "bool" else 100, BIG).astype(dtype)
    exact = [int(v) for v in x.tolist()]
    two = launch.numba.get_num_threads() > 1
    got = reducemean.mean(x)
    if two:  # floats and int32: the run's blocks in pairs
        pieces = "whole_long_pieces" if _paired(dtype) else "whole_pieces"
        assert spy[-1] == pieces + " then merge_outputs"
    rtype = np.float64 if np.dtype(dtype).kind in "biu" else dtype
    assert ulp_distance(got, Fraction(sum(exact), BIG), rtype) <= 1
    cols = x.reshape(-1, 256)
    got = reducemean.mean(cols, axis=0)
    if two:
        assert spy[-1] == "outer_pieces then outer_merge"
    for j in range(0, 256, 15):
        col = exact[j::256]
        assert ulp_distance(got[j], Fraction(sum(col), len(col)), rtype) <= 1


def test_serial_only_forces_serial_kernels(spy):
    with launch.serial_only():
        got = reducemean.mean(np.ones((BIG // 64, 64), np.float32), axis=0)
    assert set(spy) == {"outer_serial"}
    assert np.array_equal(got, np.ones(64, np.float32))


def test_a_caller_that_finds_the_lock_taken_runs_serially(spy):
    with launch._lock:  # another thread's parallel reduction is in flight
        got = reducemean.mean(np.full(BIG, 3, np.int32))
    assert spy == ["whole_long"]
    assert got == 3.0


def test_one_thread_means_serial(spy):
    import numba

    prev = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        reducemean.mean(np.ones(BIG, np.float32))
    finally:
        numba.set_num_threads(prev)
    assert spy == ["whole_long"]


def test_repeated_big_calls_prepare_their_parallel_call_once(monkeypatch):
    # numpy_api's memo calls launch.direct's kernel: it prepares the parallel
    # call once for the number of threads, then only runs it; with one
    # thread, serial_only or the lock taken it runs the serial kernel.
    import numba

    if numba.get_num_threads() < 2:
        pytest.skip("one thread: nothing runs in parallel")
    prepared, runs = [], []
    real = launch._prepare

    def counting(plan, *args):
        prepared.append(plan)
        call = real(plan, *args)

        def counted(*a):
            runs.append(plan)
            return call(*a)

        return counted

    monkeypatch.setattr(launch, "_prepare", counting)
    monkeypatch.setattr(launch, "_PREPARED", {})
    monkeypatch.setattr(numpy_api, "_DIRECT", {})
    rng = np.random.default_rng(21)
    x = rng.integers(-1000, 1000, (1024, 512)).astype(np.float64)
    want = x.astype(np.int64).sum(axis=1).astype(np.float64)  # exact: |sums| < 2**53

    def check():
        assert np.array_equal(reducemean.mean(x, axis=1) * 512, want)

    check()  # the full path: launch.parallel_call prepares and memoises
    assert (len(prepared), len(runs)) == (1, 1)
    for _ in range(3):  # the memoised path: the direct kernel prepares its own, once
        check()
    assert (len(prepared), len(runs)) == (2, 4)
    prev = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        check()
    finally:
        numba.set_num_threads(prev)
    with launch.serial_only():
        check()
    with launch._lock:
        check()
    assert (len(prepared), len(runs)) == (2, 4)  # none of those three ran in parallel
    check()
    assert (len(prepared), len(runs)) == (2, 5)


def test_few_column_blocks_split_the_rows(spy):
    # One block of columns: two threads take half the rows each, then merge.
    a = np.arange(4096 * 256, dtype=np.float64).reshape(4096, 256)
    got = reducemean.mean(a, axis=0)
    if launch.numba.get_num_threads() > 1:
        assert spy[-1] == "outer_pieces then outer_merge"
    assert np.array_equal(got, 256 * 2047.5 + np.arange(256.0))  # exact
    # Under sixteen rows the pieces would be too short: no split, no merge.
    b = np.arange(9 * 40000, dtype=np.float32).reshape(9, 40000)
    got = reducemean.mean(b, axis=0)
    if launch.numba.get_num_threads() > 1:
        assert spy[-1] == "outer_serial in tasks"
    assert np.array_equal(got, (4 * 40000 + np.arange(40000.0)).astype(np.float32))
    # Past COLUMN_SPLIT_MAX bytes: a block of columns per thread up to
    # COLUMN_SPLIT_ROWS rows, pieces of the rows beyond.
    for rows, kernel in ((launch.COLUMN_SPLIT_ROWS, "outer_serial in tasks"),
                         (launch.COLUMN_SPLIT_ROWS + 8, "outer_pieces then outer_merge")):
        # wide enough for two blocks of NARROW, past COLUMN_SPLIT_MAX bytes
        cols = max(2 * launch.kernels.NARROW, launch.COLUMN_SPLIT_MAX // (8 * rows)) + 8
        c = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols)
        got = reducemean.mean(c, axis=0)
        if launch.numba.get_num_threads() > 1:
            assert spy[-1] == kernel
        assert np.array_equal(got, cols * (rows - 1) / 2 + np.arange(float(cols)))  # exact


@pytest.mark.parametrize("name", ["float32", "float64", "int32", "uint8", "complex64"])
def test_a_few_column_blocks_are_recut_per_thread_under_few_rows(spy, name):
    # Three blocks of MAX_BLOCK columns on two threads: up to COLUMN_SPLIT_ROWS
    # rows, two narrower blocks a thread (no partial states); more rows,
    # past COLUMN_SPLIT_MAX bytes, pieces of the rows.  Exact references.
    dtype = np.dtype(name)
    cols = 2 * launch.kernels.MAX_BLOCK + 1000
    if dtype.kind == "c":
        cols //= 2  # two storage columns a value
    for rows, kernel in ((16, "outer_serial in tasks"),
                         (launch.COLUMN_SPLIT_ROWS + 8, "outer_pieces then outer_merge")):
        ints = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols) % 251
        x = ints.astype(dtype)
        if dtype.kind == "c":
            x.imag = 250 - ints
        got = reducemean.mean(x, axis=0)
        if launch.numba.get_num_threads() > 1:
            assert spy[-1] == kernel
        want = ints.sum(axis=0) / rows  # exact sums, one rounding
        if dtype.kind == "c":
            want = want + 1j * ((250 * rows - ints.sum(axis=0)) / rows)
        assert np.array_equal(got, want.astype(got.dtype))


@pytest.mark.parametrize("cap", [launch.SCRATCH_MAX, 0])
def test_split_states_are_zeroed_for_every_call(spy, monkeypatch, cap):
    # A split's partial states come from storage kept from call to call
    # (launch._scratch): each call gets them zeroed, whatever a call before
    # left there, of another state type or more of them.  With no storage
    # kept (cap 0) every call makes its own.  Exact integer references.
    monkeypatch.setattr(launch, "SCRATCH_MAX", cap)
    monkeypatch.setattr(launch, "_SCRATCH", [np.empty(0), np.empty(0)])
    rng = np.random.default_rng(cap)
    two = launch.numba.get_num_threads() > 1
    held = []
    # (two outer kept offsets: blocks at each, not re-cut per thread)
    for shape, dtype in [((2, 64, 32768), np.float64), ((1, 2048, 600), np.int32),
                         ((2, 64, 20000), np.float32), ((2, 32, 32768), np.int64),
                         ((2, 64, 32768), np.float64)]:
        x = rng.integers(1, 1000, shape).astype(dtype)  # (no sum cancels to 0: no redo)
        got = reducemean.mean(x, axis=1)
        if two:
            assert spy[-1] == "outer_pieces then outer_merge"
        want = x.astype(np.int64).sum(axis=1)  # exact, then one rounding
        assert np.array_equal(got, (want / shape[1]).astype(got.dtype))
        held.append(launch._SCRATCH[0])
    if two and cap:  # the largest states' storage, kept: made once, by the first call
        assert all(h is held[0] for h in held) and held[0].size >= 2 * 65536
    elif two:
        assert launch._SCRATCH[0].size == 0


def test_tall_narrow_columns_past_l2_read_eight_spread_rows_a_pass(spy):
    # One narrow block of columns, or two outer units of one, beyond L2 (in
    # pieces of their rows, one per thread): rows are read eight a pass,
    # each from its own eighth, and the rows past the last whole eighth one
    # at a time.
    # Every column against its exact sum, whatever order the rows went in.
    rng = np.random.default_rng(7)
    two = launch.numba.get_num_threads() > 1
    # (5603, 100): 16-bit pieces between 256 KiB and 1 MiB, in L2
    for shape, axis in (((8 * 2051 + 5, 200), 0), ((2, 4099, 200), 1), ((12001, 64), 0),
                        ((8 * 700 + 3, 100), 0)):
        for dt in (np.int32, np.int8, np.float64, np.float32, np.float16):
            a = rng.integers(-100, 100, shape).astype(dt)
            assert a.nbytes > 1 << 20 or dt == np.int8
            if shape == (8 * 700 + 3, 100) and a.itemsize == 2:
                assert 1 << 18 < a.nbytes / 2 <= 1 << 20
            sums = a.astype(np.int64).sum(axis=axis).ravel()
            got = reducemean.mean(a, axis=axis)
            if two:
                assert spy[-1] == "outer_pieces then outer_merge", (shape, dt)
            n = a.shape[axis]
            worst = max(ulp_distance(g, Fraction(int(s), n), got.dtype)
                        for g, s in zip(got.ravel(), sums))
            assert worst <= (0.5 if dt in (np.int32, np.int8) else 1), (shape, dt, worst)
    # pieces past 16 MiB, one row at a time until they too read eight a pass:
    # uint8 rows, and float64 narrow columns folded into rows of 48 lanes
    for a in (rng.integers(0, 256, (8 * 87500 + 5, 48), dtype=np.uint8),
              rng.integers(-1000, 1000, (1400003, 3)).astype(np.float64)):
        assert a.nbytes > 2 * (16 << 20)
        got = reducemean.mean(a, axis=0)
        assert np.array_equal(got, a.sum(axis=0, dtype=np.int64) / a.shape[0]), a.dtype
    # a serial call takes the whole block as one range
    a = rng.integers(-1000, 1000, (8 * 4099 + 3, 100)).astype(np.int32)
    with launch.serial_only():
        got = reducemean.mean(a, axis=0)
    assert spy[-1] == "outer_serial"
    assert np.array_equal(got, a.astype(np.int64).sum(axis=0) / a.shape[0])


def test_column_rows_over_two_reduced_dims_keep_every_row():
    # Rows of a column block that span two reduced dims that do not merge
    # ((k, m + 1, w)[:, :m] over (0, 1)), each row's offset found from its
    # flat index (kernels._reduced_offset): inner extents under and over
    # the eight rows a pass, narrow blocks in L2 and past it at many outer
    # offsets (eight spread rows a pass), wide ones (eight adjacent), the
    # last rows one at a time, pieces of the rows per thread, and short
    # runs summed as columns.  Serially and in parallel, every output
    # against its exact sum.
    rng = np.random.default_rng(13)
    views = [
        (lambda b: b[:, :3], (37, 4, 20), (0, 1)),
        (lambda b: b[:, :11], (29, 12, 600), (0, 1)),
        (lambda b: b[:, :3], (70, 4, 520), (0, 1)),
        (lambda b: b[:, :, :32], (8, 128, 33, 64), (1, 2)),
        (lambda b: b[:, :6], (8 * 300 + 5, 7, 100), (0, 1)),
        (lambda b: b[:, :, ::16, :5], (14, 17, 1000, 16), (0, 2, 3)),
    ]
    for view, shape, axes in views:
        for dt in (np.float32, np.float64, np.int32, np.uint8, np.float16):
            x = view(rng.integers(0, 100, shape).astype(dt))
            plan = plan_for(x.shape, x.strides, x.itemsize, axes, False)
            assert len((plan.block[0] if plan.block else plan).reduced) == 2, (shape, dt)
            exact_sums = x.astype(np.int64).sum(axis=axes)
            n = x.size // exact_sums.size
            for serial in (False, True):
                with launch.serial_only() if serial else contextlib.nullcontext():
                    got = reducemean.mean(x, axis=axes)
                assert _within_one_ulp(got, exact_sums.astype(np.float64), n), (shape, dt, serial)


def test_wide_rows_end_to_end_read_eight_spread_rows_a_pass():
    # Whole rows under SPREAD_ROW bytes that lie end to end (NCHW over axis
    # 1, a tall 2-D input; serial, in tasks and in pieces) are read eight a
    # pass, each from its own eighth of the block; float64, and rows too
    # long, strided or apart, eight adjacent rows a pass.  Every column
    # against its exact sum.
    rng = np.random.default_rng(9)
    dtypes = [np.float16, np.float32, np.int32, np.int8, np.float64] + (
        [BFLOAT16] if BFLOAT16 is not None else [])
    cases = [((3, 8 * 37 + 5, 1000), 1), ((8 * 523 + 7, 1100), 0), ((5, 64, 2048), 1),
             ((2, 8 * 9 + 1, 9000), 1), ((8 * 40 + 3, 2100), 0)]
    for shape, axis in cases:
        for dt in dtypes:
            a = rng.integers(-100, 100, shape).astype(dt)
            for x, ax in ((a, axis), (a[..., ::-1], axis), (a[..., :-50], axis)):
                sums = x.astype(np.int64).sum(axis=ax).ravel()
                n = x.shape[ax]
                for serial in (False, True):
                    with launch.serial_only() if serial else contextlib.nullcontext():
                        got = reducemean.mean(x, axis=ax)
                    worst = max(ulp_distance(g, Fraction(int(s), n), got.dtype)
                                for g, s in zip(got.ravel()[::7], sums[::7]))
                    assert worst <= (0.5 if dt in (np.int32, np.int8) else 1), (
                        shape, dt, x.strides, serial, worst)


def test_every_second_column_is_summed_as_the_columns_it_spans():
    # [..., ::2] views over their rows: types other than 16-bit sum every
    # column the view spans and keep every second state (kernels.outer_block),
    # serially, in tasks and in pieces, in blocks of MAX_BLOCK columns and a
    # last narrower one, down to a last block of one column.  Every fifth
    # column and the last against their exact sums; int64 values near 2**62,
    # whose sums only the exact states hold.
    rng = np.random.default_rng(10)
    wide = 2 * kernels.MAX_BLOCK + 6  # three blocks of view columns
    cases = [((8 * 40 + 3, 2 * 700 + 1), (np.s_[:, ::2], np.s_[:, 1::2]), 0),
             ((5, 8 * 11 + 2, 130), (np.s_[..., ::2], np.s_[:, :, 1:-1:2]), 1),
             ((21, wide), (np.s_[:, ::2],), 0),
             ((21, 2 * kernels.MAX_BLOCK + 2), (np.s_[:, ::2],), 0),  # a last block of one
             ((600, 1200), (np.s_[:, ::2],), 0)]
    for shape, views, axis in cases:
        for dt in (np.float32, np.float64, np.int32, np.int64, np.uint8):
            if dt == np.int64:
                a = rng.integers(-(1 << 62), 1 << 62, shape, dtype=np.int64)
            else:
                a = rng.integers(0 if dt == np.uint8 else -100, 100, shape).astype(dt)
            for sl in views:
                x = a[sl]
                n = x.shape[axis]
                cols = np.moveaxis(x, axis, -1).reshape(-1, n)
                pick = list(range(0, len(cols), 5)) + [len(cols) - 1]
                sums = [sum(int(v) for v in cols[i]) for i in pick]
                for serial in (False, True):
                    with launch.serial_only() if serial else contextlib.nullcontext():
                        got = reducemean.mean(x, axis=axis).ravel()
                    worst = max(ulp_distance(got[i], Fraction(s_, n), got.dtype)
                                for i, s_ in zip(pick, sums))
                    assert worst <= (1 if dt == np.float32 else 0.5), (shape, sl, dt, serial)


def _dtype_values(name, seed):
    """The dtype called ``name``, a generator, and a bound for integer values every sum keeps exact."""
    dt = BFLOAT16 if name == "bfloat16" else np.dtype(name)
    if dt is None:
        pytest.skip("bfloat16 needs ml_dtypes")
    hi = 100 if dt.kind in "iu" or dt.itemsize == 2 else 1 << 20
    return dt, np.random.default_rng(len(name) + seed), hi


@pytest.mark.parametrize("name", ["float32", "float64", "int32", "int64", "uint8", "float16",
                                  "bfloat16"])
def test_narrow_column_groups_are_summed_as_the_columns_they_span(name):
    # A crop of the last axis reduced over the first: groups of w columns,
    # S apart, one kept dim (plan run_step 4), summed as the contiguous
    # columns they span, then w states of every S kept.  Serially and in
    # tasks: blocks of MAX_BLOCK (not a multiple of 7) and a last short
    # block, split rows (two blocks, pieces merged), a block per thread
    # over an odd number of groups, several outer kept dims, rows read
    # backwards.  Every fifth column and the last against exact means, to
    # 1 ulp of the result.
    dt, rng, hi = _dtype_values(name, 3)
    cases = [
        ((18, 144, 22), np.s_[:, :, :7], 0),
        ((20, 2400, 22), np.s_[:, :, 2:9], 0),  # 16800 columns: 16380, then 420
        ((40, 1001, 22), np.s_[:, :, :7], 0),  # 7007 columns: a block per thread
        ((3, 18, 50, 22), np.s_[..., 5:11], 1),  # three outer offsets
        ((18, 144, 22), np.s_[::-1, :, :7], 0),  # rows backwards
        # the reduced dim between the groups' dims: (n, m, w) over the middle
        ((6000, 2, 3), np.s_[:], 1),  # 18000 columns: 16383, then 1617
        ((50000, 2, 3), np.s_[:], 1),  # in tasks
        ((300, 3, 16), np.s_[:], 1),
        ((6000, 2, 3), np.s_[:, ::-1], 1),  # rows backwards
    ]
    for shape, sl, axis in cases:
        x = rng.integers(0, hi, shape).astype(dt)[sl]
        p = plan_for(x.shape, x.strides, x.itemsize, (axis,), False)
        assert (p.run_step, p.group) == (4, x.shape[-1]), (shape, sl)
        n = x.shape[axis]
        cols = np.moveaxis(x, axis, -1).reshape(-1, n)
        pick = list(range(0, len(cols), 5)) + [len(cols) - 1]
        sums = [sum(int(v) for v in cols[i]) for i in pick]
        result = np.float64 if dt.kind in "iu" else dt
        for serial in (False, True):
            with launch.serial_only() if serial else contextlib.nullcontext():
                got = reducemean.mean(x, axis=axis).ravel()
            worst = max(ulp_distance(got[i], Fraction(s_, n), result) for i, s_ in zip(pick, sums))
            assert worst <= 1, (shape, sl, serial)


@pytest.mark.parametrize("name", ["float32", "float64", "int32", "int64", "uint8", "float16",
                                  "bfloat16", "complex64"])
def test_narrow_kept_dims_under_few_rows_are_summed_outermost(name):
    # (n, m, w) over the middle with m over GROUP_SPAN: the w kept values
    # go outermost, the n columns, m * w apart, are the blocks.  Serially
    # and in tasks: one block, blocks of MAX_BLOCK and a short last one,
    # two outer kept dims, two reduced dims, rows backwards.  Every
    # 13th output and the last against exact means, to 1 ulp of the result.
    dt, rng, hi = _dtype_values(name, 5)
    cases = [
        ((1100, 7, 3), np.s_[:], (1,)),  # (16-bit types from 1024 columns)
        ((60000, 7, 3), np.s_[:], (1,)),  # in tasks
        ((20000, 5, 7), np.s_[:], (1,)),  # 20000 columns: 16384, then 3616
        ((4, 300, 9, 5), np.s_[:], (2,)),  # the outer kept dims merged
        ((3000, 4, 4, 3), np.s_[:], (1, 2)),
        ((1100, 7, 3), np.s_[:, ::-1], (1,)),  # rows backwards
    ]
    for shape, sl, axes in cases:
        x = rng.integers(0, hi, shape)
        if dt.kind == "c":
            x = x + 1j * rng.integers(0, hi, shape)
        x = x.astype(dt)[sl]
        p = plan_for(x.shape, x.strides, x.itemsize, axes, False, dt.kind == "c")
        w = x.shape[-1] * (2 if dt.kind == "c" else 1)
        assert p.family == "outer"
        if w < NARROW_KEPT:  # (complex: in storage values, two a value)
            assert p.kept[0] == (w, 1, 1), (shape, p.kept)
        n = p.count
        for serial in (False, True):
            with launch.serial_only() if serial else contextlib.nullcontext():
                got = reducemean.mean(x, axis=axes)
            for g, v in ((got.real, x.real), (got.imag, x.imag)) if dt.kind == "c" else ((got, x),):
                sums = v.astype(np.int64).sum(axis=axes).ravel()
                pick = list(range(0, sums.size, 13)) + [sums.size - 1]
                worst = max(ulp_distance(g.ravel()[i], Fraction(int(sums[i]), n), g.dtype)
                            for i in pick)
                assert worst <= 1, (shape, sl, serial)


def test_narrow_column_groups_read_exactly_or_scaled():
    # Exact reads (float32 into float64) and the scaled second pass of sums
    # past 2**995 have tokens without the superset loop: their plans keep
    # the groups' two dims apart (plan.Plan.fallback).  Exact sums:
    # integers, times 2**1000 for the scaled pass.
    rng = np.random.default_rng(15)
    k = rng.integers(-100, 100, (40, 144, 22))
    sl = np.s_[:, :, 3:10]
    n = k.shape[0]
    want = [Fraction(int(s_)) for s_ in k[sl].sum(axis=0).ravel()]
    for dt, scale, kw in ((np.float32, 1.0, {"dtype": np.float64}), (np.float64, 2.0**1000, {})):
        x = (k * scale).astype(dt)[sl]
        assert plan_for(x.shape, x.strides, x.itemsize, (0,), False).run_step == 4
        got = reducemean.mean(x, axis=0, **kw).ravel()
        for g, w in zip(got, want):
            assert ulp_distance(g, w * Fraction(scale) / n, np.float64) <= 0.5


def test_every_second_complex_column_is_summed_as_the_columns_it_spans():
    # [..., ::2] views of complex values over their rows: one kept dim of
    # both parts (plan run_step 4), summed as the contiguous storage columns
    # the pairs span, the first two states of every four kept.  Serially and
    # in tasks: a block of columns per thread over an odd number of complex
    # columns (the block must not split a pair), blocks of MAX_BLOCK and a
    # last block of one complex column, 3-D views, odd offsets.  Every fifth
    # column and the last, both parts, against exact sums.
    rng = np.random.default_rng(11)
    cases = [((160, 2 * 1025), (np.s_[:, ::2],), 0),
             ((21, 2 * (kernels.MAX_BLOCK // 2 + 1)), (np.s_[:, ::2],), 0),
             ((8 * 40 + 3, 2 * 300 + 1), (np.s_[:, ::2], np.s_[:, 1::2]), 0),
             ((5, 8 * 11 + 2, 26), (np.s_[..., ::2], np.s_[:, :, 1:-1:2]), 1)]
    for shape, views, axis in cases:
        for dt in (np.complex64, np.complex128):
            a = (rng.integers(-100, 100, shape) + 1j * rng.integers(-100, 100, shape)).astype(dt)
            for sl in views:
                x = a[sl]
                assert plan_for(x.shape, x.strides, x.itemsize, (axis,), False,
                                True).run_step == 4
                n = x.shape[axis]
                cols = np.moveaxis(x, axis, -1).reshape(-1, n)
                pick = list(range(0, len(cols), 5)) + [len(cols) - 1]
                sums = [(sum(int(v.real) for v in cols[i]), sum(int(v.imag) for v in cols[i]))
                        for i in pick]
                part = x.real.dtype
                for serial in (False, True):
                    with launch.serial_only() if serial else contextlib.nullcontext():
                        got = reducemean.mean(x, axis=axis).ravel()
                    worst = max(max(ulp_distance(got[i].real, Fraction(re, n), part),
                                    ulp_distance(got[i].imag, Fraction(im, n), part))
                                for i, (re, im) in zip(pick, sums))
                    assert worst <= (1 if part == np.float32 else 0.5), (shape, sl, dt, serial)


def test_every_second_complex_column_read_exactly_or_scaled():
    # Exact reads (complex64 into complex128) and the scaled second pass of
    # sums past 2**995 have tokens without the pair loop: their plans put
    # the part outermost again (plan.Plan.fallback).  Exact sums: integers,
    # times 2**1000 for the scaled pass.
    rng = np.random.default_rng(14)
    for shape, sl, axis in (((40, 2 * 300 + 1), np.s_[:, ::2], 0),
                            ((5, 26, 2 * 40), np.s_[:, :, 1::2], 1)):
        re = rng.integers(-100, 100, shape)
        im = rng.integers(-100, 100, shape)
        n = shape[axis]
        for dt, scale, kw in ((np.complex64, 1.0, {"dtype": np.complex128}),
                              (np.complex128, 2.0**1000, {})):
            x = ((re + 1j * im) * scale).astype(dt)[sl]
            got = reducemean.mean(x, axis=axis, **kw).ravel()
            sre = np.moveaxis(re[sl], axis, -1).reshape(-1, n)
            sim = np.moveaxis(im[sl], axis, -1).reshape(-1, n)
            for g, r_, i_ in zip(got, sre, sim):
                want_re = Fraction(int(r_.sum())) * Fraction(scale) / n
                want_im = Fraction(int(i_.sum())) * Fraction(scale) / n
                assert ulp_distance(g.real, want_re, np.float64) <= 0.5, (shape, dt)
                assert ulp_distance(g.imag, want_im, np.float64) <= 0.5, (shape, dt)


def _within_one_ulp(got, exact_sums, n):
    """Every output of ``got`` within an ulp of ``exact_sums / n`` (float64 division: exact enough)."""
    want = exact_sums / n
    if np.iscomplexobj(got):
        return (_within_one_ulp(got.real, exact_sums.real, n)
                and _within_one_ulp(got.imag, exact_sums.imag, n))
    if got.dtype == np.float64:
        return np.array_equal(got, want)  # an exact sum divided once: correctly rounded
    return bool(np.all(np.abs(got.astype(np.float64) - want)
                       <= np.spacing(np.abs(got)).astype(np.float64)))


@pytest.mark.timeout(600)
def test_column_blocks_at_their_boundaries_keep_every_column():
    # Widths about a multiple of MAX_BLOCK (a last block of one, a single
    # full block, one column short), contiguous, every second column and
    # every second complex column, serially, a block per thread (21 rows)
    # and pieces of rows (8 * 40 + 3 rows, past COLUMN_SPLIT_MAX): every
    # output against exact sums.  Small integers, so float64 sums are exact.
    rng = np.random.default_rng(12)
    mb = kernels.MAX_BLOCK
    for w in (mb - 1, mb, mb + 1, 2 * mb + 1):
        for rows, dtypes in ((21, (np.float32, np.float64, np.int32, np.float16, np.complex64,
                                   np.complex128)),
                             (8 * 40 + 3, (np.float32, np.int32))):
            for dt in dtypes:
                base = rng.integers(-100, 100, (rows, 2 * w))
                if np.dtype(dt).kind == "c":
                    base = base + 1j * rng.integers(-100, 100, (rows, 2 * w))
                base = base.astype(dt)
                for x in (base[:, :w], base[:, ::2], base[:, 1::2]):
                    exact_sums = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64).sum(
                        axis=0)
                    for serial in (False, True):
                        with launch.serial_only() if serial else contextlib.nullcontext():
                            got = reducemean.mean(x, axis=0)
                        assert _within_one_ulp(got, exact_sums, rows), (w, rows, dt, x.strides,
                                                                        serial)


def test_16bit_rows_under_2_kib_take_the_narrow_row_loops():
    # 768 float16 values a row (1.5 KiB): a tall block and NHWC-like
    # blocks (many units) take the eight spread rows a pass.
    rng = np.random.default_rng(8)
    dtypes = [np.float16] + ([BFLOAT16] if BFLOAT16 is not None else [])
    for shape, axis in (((8 * 1500 + 5, 768), 0), ((32, 101, 600), 1)):
        for dt in dtypes:
            a = rng.integers(-100, 100, shape).astype(dt)
            sums = a.astype(np.int64).sum(axis=axis).ravel()
            got = reducemean.mean(a, axis=axis)
            n = a.shape[axis]
            worst = max(ulp_distance(g, Fraction(int(s), n), dt) for g, s in zip(got.ravel(), sums))
            assert worst <= 1, (shape, dt, worst)


def test_one_wide_column_block_is_cut_into_blocks_per_thread(spy):
    # One block of columns, wide enough, in a small input: each thread takes
    # its own columns over every row, with no partial states to merge.  Odd
    # widths leave a narrower last block.
    for ncols in (2048, 2 * kernels.NARROW + 1):
        a = np.arange(128 * ncols, dtype=np.float64).reshape(128, ncols)
        got = reducemean.mean(a, axis=0)
        if launch.numba.get_num_threads() > 1:
            assert spy[-1] == "outer_serial in tasks"
        assert np.array_equal(got, 63.5 * ncols + np.arange(float(ncols)))  # exact
    # From memory whole rows stream better: a larger input splits the rows.
    a = np.arange(1024 * 1024, dtype=np.float64).reshape(1024, 1024)
    assert a.nbytes > launch.COLUMN_SPLIT_MAX
    got = reducemean.mean(a, axis=0)
    if launch.numba.get_num_threads() > 1:
        assert spy[-1] == "outer_pieces then outer_merge"
    assert np.array_equal(got, 511.5 * 1024 + np.arange(1024.0))


def test_chunks_bound_partial_memory_by_threads():
    # partial states never exceed outputs x threads
    for units in (1, 2, 3, 7, 100):
        for threads in (1, 2, 4, 16):
            c = launch._chunks(units, threads, 10**6)
            assert 1 <= c <= max(1, threads)
            assert c == 1 or units * c >= min(4 * threads, units * threads)


def test_many_threads_in_process_agree_with_exact_sums():
    rng = np.random.default_rng(1)
    arrays = [rng.integers(-50, 50, (512, 1024)).astype(dt)
              for dt in (np.float32, np.int64, np.float64, np.int16)]
    want = [a.astype(np.int64).sum(axis=0) for a in arrays]
    wrong = []

    def work(k):
        for _ in range(20):
            got = reducemean.mean(arrays[k], axis=0)
            if not np.array_equal(got * 512, want[k].astype(np.float64)):
                wrong.append(k)

    assert run_threads(work, [(k,) for k in range(4)]) == []
    assert wrong == []


def test_helpers_compile_once_for_serial_and_parallel_callers():
    # A kernel calling a helper with a literal 0 start, or with an unsigned
    # index, would compile a second copy of the helper, typed
    # Literal[int](0) or uint64 (cold first calls).
    from numba import types
    from numba.core.registry import CPUDispatcher

    def start(t):  # the scalar types a literal 0 or an unsigned index would add
        zero = isinstance(t, types.IntegerLiteral) and t.literal_value == 0
        return types.int64 if zero or t == types.uint64 else t

    x = np.ones((1024, 1024), np.float32)
    for a, axis in ((x, 1), (x[:64, :64], 1), (x, 0), (x[:64, :64], 0),
                    (np.ones((1 << 18, 4), np.float32), 1), (x[:8, :64], 0),
                    (np.ones((64, 64, 64, 64), np.float32), (1, 3)),
                    (np.ones((512, 512), np.complex64), 1), (np.ones((4, 4), np.complex64), 1)):
        reducemean.mean(a, axis=axis)
    for name, d in vars(kernels).items():
        if isinstance(d, CPUDispatcher):
            same = [tuple(start(t) for t in sig) for sig in d.signatures]
            twice = [str(sig) for sig, s in zip(d.signatures, same) if same.count(s) > 1]
            assert not twice, (name, twice)


def test_integer_sums_that_stay_below_2_53_get_the_small_sums_token():
    # Integers of b <= 32 bits over at most 2**(53 - b) values: every sum is
    # exact in float64, and the kernels get the read-only token that compiles
    # no exact finish.  One value more, 64-bit integers, and floats keep theirs.
    def token(dtype, n):
        dt = np.dtype(dtype)
        plan = plan_for((n,), (dt.itemsize,), dt.itemsize, (0,), False)
        return launch.plan_token(plan, NATIVE, dt)

    for dtype, bits in ((np.int32, 32), (np.uint32, 32), (np.int16, 16), (np.uint8, 8)):
        n = min(1 << (53 - bits), 1 << 22)
        assert not token(dtype, n).flags.writeable, dtype
        if bits == 32:
            assert token(dtype, n + 1).flags.writeable, dtype
    for dtype in (np.int64, np.uint64, np.float32, np.float64):
        assert token(dtype, 8).flags.writeable, dtype
