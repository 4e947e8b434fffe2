"""Smoke tests of the benchmark suite's plumbing (``python -m reducemean.bench``).

Tiny inputs only and no assertion on any timing: these check that a run goes
through every section, that missing optional packages become notes, and
that the table, JSON and plot come out in shape.
"""

from __future__ import annotations

import json
import os
import statistics
import sys

import numpy as np
import pytest

import reducemean
from reducemean import launch
from reducemean.bench import cases, cli, peers, report, sweep, targets, threshold, timing

OPTIONAL = ("torch", "openvino", "onnxruntime", "tqdm", "matplotlib")


def _block(monkeypatch, names):
    """Make ``import name`` fail as if the package were not installed."""
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def test_cli_tiny_without_optional_packages(tmp_path, monkeypatch, capsys):
    _block(monkeypatch, OPTIONAL)
    out_json = tmp_path / "run.json"
    out_png = tmp_path / "run.png"
    rc = cli.main(["--tiny", "--cases",
                   "whole,columns,step2_cols,float32,bfloat16,small,sweep,coldstart,scaling",
                   "--json", str(out_json), "--plot", str(out_png)])
    assert rc == 0
    captured = capsys.readouterr()
    text = captured.out
    for name in ("torch", "openvino", "onnxruntime"):
        assert f"{name}: not installed" in text
    assert "Read ceiling" in text
    assert "vs numpy" in text and "vs torch" not in text
    assert "step2_cols" in text and "bfloat16" in text
    assert "first call" in text and "cold cache" in text
    assert "Python-layer overhead" in text
    assert "Thread scaling: whole float32" in text
    assert "matplotlib not installed" in text
    assert not out_png.exists()
    assert "[1/" in captured.err  # plain progress lines stand in for tqdm

    record = json.loads(out_json.read_text())
    assert set(record["missing_peers"]) == {"torch", "openvino", "onnxruntime"}
    assert record["ceiling"]["gbps_best"] > 0
    large = record["large"]
    assert [(r["case"], r["dtype"]) for r in large] == [
        (c, d) for d in ("float32", "bfloat16") for c in ("whole", "columns", "step2_cols")]
    for row in large:
        assert set(row["results"]) == {"reducemean", "numpy"}
        ours = row["results"]["reducemean"]
        assert ours["ceiling_share"] > 0 and ours["ceiling_gbps"] > 0  # paired with the read
        assert row["results"]["numpy"]["vs_reducemean"] > 0  # per-round ratio
        ours = row["results"]["reducemean"]
        assert ours["ok"], row  # reducemean agrees with a float64 mean
        assert ours["median_s"] >= ours["best_s"] > 0
    assert len(record["small"]) == len(cases.SMALL) * len(cases.SMALL_DTYPES)
    assert {r["dtype"] for r in record["small"]} == set(cases.SMALL_DTYPES)
    assert "numpy time / reducemean's" in text and "numpy.mean faster in" in text
    assert [(r["layout"], r["dtype"]) for r in record["sweep"]] == [
        (lay[0], d) for d in sweep.TINY_DTYPES for lay in sweep.TINY_LAYOUTS]
    assert all(r["reducemean_s"] > 0 and r["numpy_s"] > 0 for r in record["sweep"])
    assert {"cold", "warm"} <= set(record["coldstart"])
    assert record["coldstart"]["dtype"] == "float32"
    assert record["coldstart_float64"]["dtype"] == "float64"
    assert {"cold", "warm"} <= set(record["coldstart_float64"])
    assert "first call, float64, fresh interpreter" in text
    assert [s["case"] for s in record["scaling"]] == [c for c, _ in cases.SCALING_CASES]
    for s in record["scaling"]:
        assert all(r["ceiling_share"] > 0 and r["ceiling_gbps"] > 0 for r in s["rows"])
    # tiny inputs are not the suite's large ones: the large targets are not judged
    share, peers_, small = record["targets"][:3]
    assert share["met"] is None and peers_["met"] is None
    assert small["target"].startswith("small inputs")
    # every small shape but the one-element array, in each dtype
    assert small["total"] == (len(cases.SMALL) - 1) * len(cases.SMALL_DTYPES)
    assert "Targets, judged from this run's figures:" in text
    assert "- large inputs faster than every peer: not assessed" in text


def test_cli_tiny_with_installed_peers(tmp_path, capsys):
    usable, _ = peers.load(1, ("torch", "onnxruntime", "openvino"))
    if not usable:
        pytest.skip("no optional peer installed")
    out_png = tmp_path / "run.png"
    rc = cli.main(["--tiny", "--threads", "1", "--cases", "whole,transposed,float32",
                   "--plot", str(out_png)])
    assert rc == 0
    text = capsys.readouterr().out
    for name in usable:
        assert f"vs {name}" in text
    if "onnxruntime" in usable or "openvino" in usable:
        assert "x*" in text  # the transposed view was copied for them
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib not installed" in text
    else:
        assert out_png.stat().st_size > 0


def test_cli_rejects_unknown_case(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--tiny", "--cases", "no_such_case"])
    assert "unknown case" in capsys.readouterr().err


def test_select():
    assert cases.select(None) == (cases.DEFAULT_SECTIONS, cases.LARGE, cases.DTYPE_NAMES)
    sections, chosen, dtypes = cases.select("nchw*,float16")
    assert sections == ("large",)
    assert [c.name for c in chosen] == ["nchw_hw", "nchw_c", "nchw_nhw"]
    assert dtypes == ("float16",)
    sections, chosen, dtypes = cases.select("small,threshold")
    assert sections == ("small", "threshold")
    with pytest.raises(ValueError):
        cases.select("whole,bogus")


@pytest.mark.parametrize("names", [("float64",), ("float64", "float32", "float64"), ("int32",)])
def test_buffers_hold_each_dtype_asked_for(names):
    # A first float64 buffer came back None (numpy compares None equal to
    # float64, its default dtype), so `--cases float64` failed.
    buffers = cases.Buffers(cases.LARGE[:1], 1 / 4096)
    for name in names:
        buf = buffers.get(np.dtype(name))
        assert buf.dtype == np.dtype(name) and buf.size == buffers.need > 0


def test_cli_float64_alone(tmp_path, capsys):
    out_json = tmp_path / "run.json"
    assert cli.main(["--tiny", "--cases", "whole,float64", "--json", str(out_json)]) == 0
    large = json.loads(out_json.read_text())["large"]
    assert [(r["case"], r["dtype"]) for r in large] == [("whole", "float64")]
    assert large[0]["results"]["reducemean"]["ok"]


@pytest.mark.parametrize("case", cases.LARGE, ids=lambda c: c.name)
def test_case_views(case):
    scale = 1 / 4096
    buf = np.arange(case.elements(scale), dtype=np.float32)
    x = case.make(buf, scale)
    assert np.shares_memory(x, buf)  # a view, never a copy
    np.mean(x, axis=case.axes)  # the axes fit the view
    full = case.base_shape(1.0)
    assert full == case.shape
    if case.odd:
        assert case.base_shape(scale)[case.scaled] % 2 == 1
    if case.view == "step2":
        assert not x.flags.c_contiguous and not x.flags.f_contiguous
    if case.view == "T":
        assert x.flags.f_contiguous and not x.flags.c_contiguous


def test_timing_compare():
    res = timing.compare({"a": lambda: None, "b": lambda: sum(range(10))}, repeat=3, warmup=1, budget=0.0)
    assert set(res) == {"a", "b"}
    assert all(t.samples == 3 and t.median >= t.best >= 0 for t in res.values())
    fast = timing.compare_fast({"a": lambda: None}, repeat=2, target=0.0005)
    assert fast["a"].samples == 2


def test_compare_fast_pairs_its_rounds_for_the_ratio():
    # each repeat is a round with one sample of each callable, so a ratio is
    # the median of same-round ratios, not of two medians taken apart
    fast = timing.compare_fast({"a": lambda: None, "b": lambda: sum(range(50))},
                               repeat=5, target=0.0005)
    for t in fast.values():
        assert len(t.rounds) == 5 and t.median == statistics.median(t.rounds)
    pairs = [b / a for a, b in zip(fast["a"].rounds, fast["b"].rounds)]
    assert timing.round_ratio(fast["b"], fast["a"]) == statistics.median(pairs)
    # two medians agreeing while the rounds disagree: the rounds decide
    ours = timing.Timing(2.0, 1.0, 5, (1.0, 1.0, 3.0, 3.0, 2.0))
    theirs = timing.Timing(2.0, 0.5, 5, (0.5, 0.5, 2.0, 2.0, 4.0))
    assert timing.round_ratio(theirs, ours) == statistics.median([0.5, 0.5, 2 / 3, 2 / 3, 2.0])
    assert theirs.median / ours.median == 1.0


def test_error_check():
    ref = np.array([0.5, 0.25])
    assert peers.error(np.array([0.5, 0.25], np.float32), ref)[2]
    assert not peers.error(np.array([0.5, 0.3], np.float32), ref)[2]
    assert not peers.error(np.array([0.5]), ref)[2]  # wrong shape
    # integer results are the truncated mean: off by less than one passes
    assert peers.error(np.array([2, -3], np.int32), np.array([2.7, -3.4]))[2]
    assert not peers.error(np.array([1], np.int32), np.array([2.5]))[2]


def test_format_large_marks():
    def res(median, **kw):
        return {"median_s": median, "best_s": median, "gbps": 1.0, "gbps_best": 1.0, **kw}

    rows = [{
        "case": "whole", "shape": "(8,)", "axes": None, "dtype": "float32",
        "results": {
            "reducemean": res(1.0, ok=True),
            "numpy": res(2.0, ok=False, err=0.1, tol=1e-6),
            "onnxruntime": res(0.5, copied=True),
            "openvino": {"unsupported": "no kernel"},
        },
    }]
    text = report.format_large(rows, ceiling_gbps=2.0)
    assert "2.00x!" in text and "0.50x*" in text
    assert "50%" in text  # no paired share: GB/s over the run's ceiling
    line = [ln for ln in text.splitlines() if ln.startswith("whole")][0]
    assert line.rstrip().endswith("-")
    assert "numpy float32: 1 of 1 cases beyond tolerance" in text
    rows[0]["results"]["reducemean"]["ceiling_share"] = 0.9  # from paired calls: that one counts
    line = [ln for ln in report.format_large(rows, ceiling_gbps=2.0).splitlines()
            if ln.startswith("whole")][0]
    assert "90%" in line.split()


def test_paired_ratio_is_per_pair(monkeypatch):
    # The machine turns three times slower after the first seven calls, on a
    # fake clock.  Paired with the reference, the call meets the reference's
    # conditions in all but one pair (ratio 1); timed in a block after the
    # reference's block, every call would have met the slow phase (ratio 3).
    now, calls = [0.0], []
    monkeypatch.setattr(timing, "clock", lambda: now[0])

    def cost():
        calls.append(None)
        now[0] += 1.0 if len(calls) <= 7 else 3.0

    ratio, ref_t = timing.paired(cost, cost, repeat=7, warmup=0)
    assert ratio == 1.0  # pairs (1, 1), (1, 1), (1, 1), (1, 3), (3, 3), (3, 3), (3, 3)
    assert ref_t.samples == 7


def test_round_ratio_is_per_round(monkeypatch):
    # A machine that turns three times slower after the fourth call, on a
    # fake clock.  In rounds of blocks both callables meet each phase alike
    # (ratio 1); one block each would give the second the slow phase alone.
    now, calls = [0.0], []
    monkeypatch.setattr(timing, "clock", lambda: now[0])

    def cost():
        calls.append(None)
        now[0] += 1.0 if len(calls) <= 4 else 3.0

    fns = {"a": cost, "b": cost}
    t = timing.compare(fns, repeat=4, warmup=0, settle=0, rounds=4)
    assert [x.rounds for x in t.values()] == [(1.0, 1.0, 3.0, 3.0)] * 2
    assert timing.round_ratio(t["b"], t["a"]) == 1.0
    calls.clear()
    t = timing.compare(fns, repeat=4, warmup=0, settle=0, rounds=1)
    assert t["a"].median == 1.0 and t["b"].median == 3.0
    assert timing.round_ratio(t["b"], t["a"]) == 3.0


def test_compare_budget_drops_a_slow_callable_from_later_rounds(monkeypatch):
    now, seen = [0.0], []
    monkeypatch.setattr(timing, "clock", lambda: now[0])

    def call(name, cost):
        def fn():
            seen.append(name)
            now[0] += cost
        return fn

    t = timing.compare({"fast": call("fast", 0.125), "slow": call("slow", 8.0)},
                       repeat=8, warmup=0, settle=0, rounds=4, budget=2.0, min_repeat=3)
    assert t["fast"].samples == 8 and t["slow"].samples == 3
    assert t["slow"].rounds == (8.0, 8.0, None, None)
    assert seen.count("slow") == 3  # no call at all in the rounds it sat out
    assert timing.round_ratio(t["slow"], t["fast"]) == 64.0


def test_threshold_crossover():
    def row(size, s, p):
        # medians twice the best times, except at size 16 where parallel's median lost
        return {"size": size, "serial_best_s": s, "parallel_best_s": p,
                "serial_s": 2 * s, "parallel_s": 2 * p if size != 16 else 9 * s}

    rows = [row(1, 1.0, 2.0), row(2, 1.0, 0.5), row(4, 1.0, 1.5), row(8, 2.0, 1.0), row(16, 4.0, 1.0)]
    assert threshold.crossover(rows) == 8  # the lucky size 2 does not count
    assert threshold.crossover(rows, key="median") is None
    assert threshold.crossover([row(1, 1.0, 2.0)]) is None
    # bandwidth-bound sizes where both tie do not undo an earlier crossover
    tied = rows + [row(32, 8.0, 8.0), row(64, 16.0, 17.0)]
    assert threshold.crossover(tied) == 8
    assert threshold.crossover(tied + [row(128, 16.0, 20.0)]) is None
    # one paying size amid ties is a blip, not a crossover
    assert threshold.crossover([row(1, 1.0, 1.0), row(2, 1.0, 0.5), row(4, 1.0, 1.0)]) is None


def test_threshold_measure_restores_limit():
    before = launch.PARALLEL_MIN
    res = threshold.measure(threshold.TINY_SIZES[:2], patterns=("whole",), dtypes=("float32",), repeat=1)
    assert launch.PARALLEL_MIN == before
    if res["threads"] >= 2:
        assert len(res["rows"]) == 2
        assert res["recommended"] is None or res["recommended"] & (res["recommended"] - 1) == 0
    assert "recommended PARALLEL_MIN" in threshold.format_report(res) or res["rows"] == []


def test_coldstart_times_a_columns_first_call_in_its_own_processes():
    from reducemean.bench import coldstart

    res = coldstart.measure(threads=1, small=(4, 4), big=(16, 8), timeout=300, repeat=1)
    for run in (res["cold"], res["warm"], res["columns"]["cold"], res["columns"]["warm"]):
        assert run["import_s"] > 0
        # the parent times the child's whole life, which holds what the child timed
        inside = sum(v for k, v in run.items() if k != "process_s")
        assert run["process_s"] > inside
    assert "first_small_s" not in res["columns"]["cold"]  # the columns call comes first
    assert res["columns"]["cold"]["first_big_s"] > 0
    text = report.format_coldstart(res)
    assert "(16, 8) over axis 0 (columns)" in text
    assert text.count("whole process, start to exit") == 2


def test_coldstart_figures_are_medians_of_fresh_pairs(monkeypatch):
    """Each figure is the median over pairs of runs (cold, then warm), a pair per cache."""
    from reducemean.bench import coldstart

    import_s = iter([0.9, 0.4, 0.3, 0.2, 0.6, 0.5])  # cold, warm; cold, warm; ...
    calls = []

    def pair(code, threads, timeout):
        calls.append(code)
        return [{"import_s": next(import_s), "process_s": 1.0} for _ in ("cold", "warm")]

    monkeypatch.setattr(coldstart, "_pair", pair)
    res = coldstart.measure(threads=1, small=(4, 4), big=None, repeat=3)
    assert len(calls) == 3 and res["repeat"] == 3
    assert res["cold"] == {"import_s": 0.6, "process_s": 1.0}  # of 0.9, 0.3, 0.6
    assert res["warm"] == {"import_s": 0.4, "process_s": 1.0}  # of 0.4, 0.2, 0.5
    assert "(medians of 3)" in report.format_coldstart(dict(res, small_shape=[4, 4]))


def test_coldstart_children_may_cache_bytecode(monkeypatch):
    """Warm as an installed package is: Python's bytecode cache may be written."""
    from reducemean.bench import coldstart

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("NUMBA_NUM_THREADS", "7")
    env = coldstart._child_env("cache-dir", 2)
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["NUMBA_CACHE_DIR"] == "cache-dir" and env["NUMBA_NUM_THREADS"] == "2"
    assert os.environ["PYTHONDONTWRITEBYTECODE"] == "1"  # the parent's own is left alone


def test_sweep_report_lists_the_cells_where_numpy_is_faster():
    rows = [{"layout": "a", "dtype": "int8", "reducemean_s": 1.0, "numpy_s": 2.0},
            {"layout": "a", "dtype": "float32", "reducemean_s": 4.0, "numpy_s": 3.0},
            {"layout": "b", "dtype": "int8", "reducemean_s": 1.0, "numpy_s": 1.5},
            # the rounds' median ratio, where a row has it, over the medians'
            {"layout": "b", "dtype": "float32", "reducemean_s": 1.0, "numpy_s": 1.1,
             "vs_numpy": 0.9}]
    text = sweep.format_report(rows)
    assert text.splitlines()[0].split()[-2:] == ["i8", "f32"]
    assert "2.00" in text and "0.75" in text and "1.50" in text and "1.10" not in text
    assert text.endswith("numpy.mean faster in 2 of 4 cells: a float32 0.75x; b float32 0.90x")


def test_sweep_inputs_have_their_dtype_and_view():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for dt in (np.dtype(np.bool_), np.dtype(np.uint64), np.dtype(ml_dtypes.bfloat16),
               np.dtype(np.complex64)):
        x = sweep.make((6, 8), dt, "step2")
        assert x.dtype == dt and x.shape == (6, 4) and not x.flags.c_contiguous
        assert sweep.make((6, 8), dt, "T").shape == (8, 6)


def _large_row(case, dtype, share, **peer_ratios):
    res = {"reducemean": {"median_s": 1.0, "gbps": 1.0, "ceiling_share": share}}
    for name, ratio in peer_ratios.items():
        copied = name.endswith("_copy")
        res[name.removesuffix("_copy")] = {"median_s": ratio, "vs_reducemean": ratio,
                                           "copied": copied}
    return {"case": case, "dtype": dtype, "results": res}


def test_targets_hold_each_figure_to_its_target():
    record = {
        "ceiling": {"gbps_best": 50.0},
        "large": [
            _large_row("whole", "float32", 0.90, numpy=2.0, torch=1.01),
            _large_row("rows", "float64", 0.85, torch=0.97, onnxruntime_copy=0.5),
            _large_row("step2_rows", "int32", 0.45, numpy=3.0),
            _large_row("tall_skinny", "float16", 0.30, openvino=1.5),
            _large_row("tall_skinny", "bfloat16", 0.20, torch=1.0),  # a tie is not faster
        ],
        "settings": {"scale": 1.0},
        "small": [
            {"shape": [1], "axes": None, "dtype": "float32", "reducemean_s": 2.0, "numpy_s": 1.0},
            {"shape": [8, 8], "axes": None, "dtype": "float32", "reducemean_s": 1.0, "numpy_s": 2.0},
            {"shape": [256, 256], "axes": [0], "dtype": "float64", "reducemean_s": 2.0,
             "numpy_s": 1.6},
            # faster by the medians, not by the rounds' ratios: the rounds decide
            {"shape": [64, 128], "axes": [1], "dtype": "float32", "reducemean_s": 1.0,
             "numpy_s": 1.2, "vs_numpy": 0.95},
            {"shape": [3, 4, 5], "axes": [1], "dtype": "float32", "reducemean_s": 1.0,
             "numpy_s": 0.9, "vs_numpy": 1.25},
        ],
        "overhead": {"reducemean_s": 1.5e-6, "numpy_s": 2e-6},
        "coldstart": {
            "dtype": "float32", "small_shape": [8, 8], "big_shape": [1024, 1024],
            "cold": {"import_s": 0.4, "first_small_s": 2.5, "first_big_s": 1.0},
            "warm": {"import_s": 0.3, "first_small_s": 0.1, "first_big_s": 0.5},
            "columns": {"cold": {"import_s": 0.4, "first_big_s": 2.7},
                        "warm": {"import_s": 0.45, "first_big_s": 0.1}},
        },
    }
    got = {e["target"]: e for e in targets.assess(record)}
    share, peers_, small, layer, warm, cold = got.values()
    # three rows judged for the share (the tall-skinny ones are not)
    assert (share["total"], share["met"]) == (3, False)
    assert share["misses"] == ["step2_rows int32 45%"]
    # five rows judged against the peers: rows behind torch and the copied onnxruntime,
    # bfloat16 tall-skinny only tied with torch
    assert (peers_["total"], peers_["passed"]) == (5, 3)
    assert peers_["misses"] == ["rows float64 (torch 0.97x, onnxruntime 0.50x*)",
                                "tall_skinny bfloat16 (torch 1.00x)"]
    assert (small["total"], small["passed"]) == (4, 2)
    assert small["misses"] == ["(256, 256) axes (0,) float64 0.80x",
                               "(64, 128) axes (1,) float32 0.95x"]
    assert layer["met"] is False and layer["misses"] == ["1.50 us (numpy.mean 2.00 us)"]
    # warm: 0.4 s for the rows, 0.55 s for the columns' process; cold: 2.9 and 3.1 s
    assert warm["misses"] == ["float32 (1024, 1024) columns 0.55 s"] and warm["total"] == 2
    assert cold["misses"] == ["float32 (1024, 1024) columns 3.10 s"] and cold["passed"] == 1
    text = targets.format_report(list(got.values()))
    assert "- import and first call within 0.5 s, warm cache: 1 of 2" in text
    assert "- Python layer under 1 us (a one-element mean, kernel call included): not met" in text
    assert "    below: step2_rows int32 45%" in text
    # shrunk inputs (--quick) are not the suite's large ones: not judged
    record["settings"]["scale"] = 0.25
    share, peers_ = targets.assess(record)[:2]
    assert share["met"] is None and peers_["met"] is None and peers_["total"] == 0


def test_the_python_layer_is_a_one_element_mean_less_its_kernels_own_call():
    def layer(overhead):
        return next(e for e in targets.assess({"overhead": overhead})
                    if e["target"].startswith("Python layer"))

    met = layer({"reducemean_s": 1.3e-6, "numpy_s": 5e-6, "kernel_s": 0.4e-6})
    assert met["met"] is True and "less its kernel's own call" in met["target"]
    missed = layer({"reducemean_s": 1.3e-6, "numpy_s": 5e-6, "kernel_s": 0.2e-6})
    assert missed["met"] is False
    assert missed["misses"] == ["1.10 us (the mean 1.30 us, its kernel call 0.20 us; "
                                "numpy.mean 5.00 us)"]
    text = report.format_small([], {"reducemean_s": 1.3e-6, "numpy_s": 5e-6, "kernel_s": 0.4e-6})
    assert "reducemean 1.30 us, of it the kernel's own call 0.40 us (the layer 0.90 us)" in text


def test_kernel_call_is_the_memoised_call_of_a_mean_alone():
    from reducemean.numpy_api import kernel_call

    b = np.arange(7, dtype=np.float32) + 0.5
    assert kernel_call(b) is None  # no mean of it memoised yet
    assert float(reducemean.mean(b)) == 3.5
    call = kernel_call(b)
    assert call is not None and call() == 0  # its kernel ran: no value to redo
    v = np.arange(14, dtype=np.float32)[::2]
    reducemean.mean(v)
    assert kernel_call(v) is None  # a view: its span is made per call


def test_targets_of_a_run_that_measured_nothing():
    entries = targets.assess({})
    assert [e["met"] for e in entries] == [None] * 5  # no overhead figure: no entry for it
    text = targets.format_report(entries)
    assert text.count("not assessed") == 5 and "met" not in text.replace("not assessed", "")
