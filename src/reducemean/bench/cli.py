"""``python -m reducemean.bench``: run the throughput suite and print its tables.

Order of a run: the read ceiling first, then the large cases (each also
timed in calls paired with the ceiling's read, for its share of the
ceiling), the first-call times, the small inputs, the sweep against
numpy.mean, thread scaling and, when asked for, the serial/parallel
threshold.  The report ends with the suite's targets, each judged from
the run's own figures (:mod:`.targets`).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from dataclasses import asdict, dataclass

import numba
import numpy as np

import reducemean
from reducemean.numpy_api import kernel_call

from . import cases as C
from . import ceiling, coldstart, peers, report, scaling, sweep, targets, threshold
from .timing import compare, compare_fast, paired, round_ratio


@dataclass(frozen=True)
class Settings:
    """How hard a run works: derived from --quick, --repeat and the hidden --tiny."""

    scale: float
    repeat: int
    budget: float  #: seconds of timed rounds per large case, all implementations together
    ceiling_bytes: int
    small_target: float  #: seconds per sample of a small-input timing
    coldstart_big: tuple | None
    threshold_sizes: tuple
    scaling_repeat: int
    coldstart_repeat: int = 3  #: fresh processes (each cold, then warm) behind each first-call figure
    settle: float = 0.05  #: pause before each implementation's block (see timing.compare)
    rounds: int = 4  #: rounds of blocks per large case; peers' ratios are per round


def settings_for(args):
    if args.tiny:
        return Settings(scale=args.scale or 1 / 4096, repeat=args.repeat or 2, budget=0.2,
                        ceiling_bytes=1 << 20, small_target=0.0005, coldstart_big=None,
                        threshold_sizes=threshold.TINY_SIZES, scaling_repeat=2, settle=0.0,
                        rounds=1, coldstart_repeat=1)
    if args.quick:
        return Settings(scale=args.scale or C.QUICK_SCALE, repeat=args.repeat or 5, budget=1.0,
                        ceiling_bytes=ceiling.CEILING_BYTES, small_target=0.005,
                        coldstart_big=(1024, 1024), threshold_sizes=threshold.SIZES[:-2],
                        scaling_repeat=5, rounds=2, coldstart_repeat=1)
    return Settings(scale=args.scale or 1.0, repeat=args.repeat or 7, budget=4.0,
                    ceiling_bytes=ceiling.CEILING_BYTES, small_target=0.01,
                    coldstart_big=(1024, 1024), threshold_sizes=threshold.SIZES, scaling_repeat=7)


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="python -m reducemean.bench",
        description="Throughput of reducemean.mean against numpy, torch, onnxruntime and openvino.",
    )
    ap.add_argument("--quick", action="store_true", help="smaller inputs (~16 MiB) and fewer repeats: about a minute")
    ap.add_argument("--json", metavar="FILE", help="write every figure of the run to FILE as JSON")
    ap.add_argument("--plot", metavar="FILE.png", help="bar chart of GB/s per case (needs matplotlib)")
    ap.add_argument("--threads", type=int, metavar="N",
                    help="threads for reducemean and every peer (default: all Numba threads)")
    ap.add_argument("--cases", metavar="NAME,...",
                    help="sections (" + ", ".join(C.SECTIONS) + "), large cases or globs ("
                    + ", ".join(c.name for c in C.LARGE) + ") and dtypes (" + ", ".join(C.DTYPE_NAMES)
                    + "); default: " + ", ".join(C.DEFAULT_SECTIONS))
    ap.add_argument("--repeat", type=int, metavar="K", help="timed calls per case and implementation (default 7, --quick 5)")
    ap.add_argument("--threshold", action="store_true", help="also measure where parallel kernels start paying")
    ap.add_argument("--no-check", action="store_true", help="skip checking each result against a float64 mean")
    # For the tests: tiny inputs that still walk every code path.
    ap.add_argument("--tiny", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--scale", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    try:
        args.sections, args.case_list, args.dtype_names = C.select(args.cases)
    except ValueError as e:
        ap.error(str(e))
    if args.threshold and "threshold" not in args.sections:
        args.sections += ("threshold",)
    if args.threads is not None and not 1 <= args.threads <= numba.config.NUMBA_NUM_THREADS:
        ap.error(f"--threads must be between 1 and {numba.config.NUMBA_NUM_THREADS} "
                 f"(Numba's pool; set NUMBA_NUM_THREADS for more)")
    if args.repeat is not None and args.repeat < 1:
        ap.error("--repeat must be at least 1")
    return args


class Progress:
    """tqdm on stderr when installed, else one plain line per step."""

    def __init__(self, total):
        self.total = total
        self.done = 0
        try:
            from tqdm import tqdm
        except ImportError:
            self.bar = None
        else:
            self.bar = tqdm(total=total, file=sys.stderr, unit="step", leave=False)

    def step(self, label="", n=1):
        self.done += n
        if self.bar is not None:
            self.bar.set_postfix_str(label, refresh=False)
            self.bar.update(n)
        else:
            print(f"[{self.done}/{self.total}] {label}", file=sys.stderr, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def machine_info(threads):
    info = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": _cpu_name(),
        "cpu_count": os.cpu_count(),
        "threads": threads,
        "load_average": _load(),
        # Variables that change how the thread pools wait between calls.
        "env": {k: os.environ[k] for k in _THREAD_ENV if k in os.environ},
        "versions": {"reducemean": reducemean.__version__, "numpy": np.__version__,
                     "numba": numba.__version__},
    }
    return info


_THREAD_ENV = ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME",
               "NUMBA_NUM_THREADS", "NUMBA_THREADING_LAYER", "MKL_NUM_THREADS")


def _load():
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # not on every platform
        return None


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _peer_versions(adapters):
    out = {}
    for name in adapters:
        mod = {"onnxruntime": "onnxruntime", "torch": "torch", "openvino": "openvino"}.get(name)
        if mod:
            out[name] = getattr(sys.modules.get(mod), "__version__", "?")
    return out


def run_case(case, x, adapters, settings, check, ceiling_read=None):
    """One large case: every adapter prepared and checked once, then each timed in turn.

    With ``ceiling_read``, a ``(callable, bytes)`` pair from
    :func:`ceiling.reader`, reducemean is timed once more in calls paired
    with the ceiling's read (:func:`timing.paired`): its share of the
    ceiling is the median of those pairs' ratios.
    """
    nbytes = x.size * x.itemsize
    results, prepared = {}, {}
    for name, adapter in adapters.items():
        try:
            prepared[name] = adapter.prepare(x, case.axes)
        except peers.Unsupported as e:
            results[name] = {"unsupported": str(e)}
    if check:
        ref = peers.reference(x, case.axes)
        for name, p in prepared.items():
            err, tol, ok = peers.error(p.result(), ref)
            results[name] = {"err": err, "tol": tol, "ok": ok}
        del ref
    timings = compare({n: p.call for n, p in prepared.items()}, repeat=settings.repeat,
                      warmup=1, budget=settings.budget, settle=settings.settle,
                      rounds=settings.rounds)
    ours = timings.get("reducemean")
    for name, t in timings.items():
        results.setdefault(name, {}).update(
            t.as_dict(), gbps=nbytes / t.median / 1e9, gbps_best=nbytes / t.best / 1e9,
            copied=prepared[name].copied)
        if ours is not None and name != "reducemean":
            results[name]["vs_reducemean"] = round_ratio(t, ours)
    if ceiling_read is not None and "reducemean" in prepared:
        read, read_bytes = ceiling_read
        ratio, ceil = paired(prepared["reducemean"].call, read, repeat=settings.repeat)
        results["reducemean"].update(
            ceiling_gbps=read_bytes / ceil.median / 1e9,
            ceiling_share=(nbytes / read_bytes) / ratio)  # (its GB/s) / (the read's), per pair
    return {
        "case": case.name, "label": case.label, "shape": case.shown_shape(settings.scale),
        "view_shape": list(x.shape), "axes": list(case.axes) if case.axes is not None else None,
        "dtype": x.dtype.name, "bytes": nbytes,
        "results": {n: results[n] for n in peers.ORDER if n in results},
    }


#: Rounds of a small input's timing: its verdict is the median of the
#: per-round ratios, so a spell of load that hits one side in one round
#: moves one ratio, not the verdict.
SMALL_ROUNDS = 11


def run_small(settings, progress):
    rows = []
    for dtype in C.SMALL_DTYPES:
        for shape, axes in C.SMALL:
            x = C.fill(int(np.prod(shape)), np.dtype(dtype)).reshape(shape)
            t = compare_fast({"reducemean": lambda: reducemean.mean(x, axis=axes),
                              "numpy": lambda: np.mean(x, axis=axes)},
                             repeat=SMALL_ROUNDS, target=settings.small_target)
            rows.append({"shape": list(shape), "axes": list(axes) if axes is not None else None,
                         "dtype": dtype, "reducemean_s": t["reducemean"].median,
                         "numpy_s": t["numpy"].median,
                         "vs_numpy": round_ratio(t["numpy"], t["reducemean"])})
            progress.step(f"small {shape} {dtype}")
    return rows


def _sweep_cases(args):
    """The sweep's dtypes and layouts: all of them, or a few for --tiny."""
    if args.tiny:
        return sweep.TINY_DTYPES, sweep.TINY_LAYOUTS
    return sweep.DTYPES, sweep.LAYOUTS


def _steps(args, settings):
    n = 1  # ceiling
    if "large" in args.sections:
        n += len(args.case_list) * len(args.dtype_names)
    if "small" in args.sections:
        n += len(C.SMALL) * len(C.SMALL_DTYPES)
    if "sweep" in args.sections:
        n += len(_sweep_cases(args)[0])
    if "coldstart" in args.sections:
        n += 2
    if "scaling" in args.sections:
        n += len(C.SCALING_CASES) * len(scaling.thread_counts(numba.config.NUMBA_NUM_THREADS))
    if "threshold" in args.sections:
        n += len(settings.threshold_sizes) * len(threshold.PATTERNS) * len(threshold.DTYPES)
    return n


def main(argv=None):
    args = parse_args(argv)
    prev_threads = numba.get_num_threads()
    if args.threads is not None:
        numba.set_num_threads(args.threads)
    try:
        return _run(args, settings_for(args), numba.get_num_threads())
    finally:
        numba.set_num_threads(prev_threads)  # callers in the same process keep their setting


def _run(args, settings, threads):
    """Measure every selected section, then print the tables (and write JSON, plot)."""
    adapters, missing = peers.load(threads)
    record = {"machine": machine_info(threads), "settings": asdict(settings) | {"sections": args.sections},
              "missing_peers": missing, "notes": []}
    record["machine"]["versions"].update(_peer_versions(adapters))
    def emit(text=""):
        print(text, flush=True)

    m = record["machine"]
    emit(f"reducemean {reducemean.__version__} bench: {m['cpu']}, {m['cpu_count']} CPUs, "
         f"{threads} threads for reducemean and every peer (numpy.mean is single-threaded)")
    emit("versions: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()))
    for name, note in missing.items():
        emit(f"{name}: {note}")
    load = m["load_average"]
    if load is not None and load > 0.5 * (os.cpu_count() or 1):
        emit(f"warning: load average {load:.2f} on {os.cpu_count()} CPUs before starting: "
             f"other work is running, figures will be noisy (thread pools that spin between "
             f"calls suffer most; compare OMP_WAIT_POLICY=PASSIVE)")

    progress = Progress(_steps(args, settings))
    try:
        ceil = ceiling.measure(settings.ceiling_bytes)
        record["ceiling"] = ceil
        progress.step("ceiling")
        ceil_gbps = ceil["gbps_best"]
        try:  # known only once a parallel kernel has run
            record["machine"]["numba_threading_layer"] = numba.threading_layer()
        except ValueError:
            pass

        if "large" in args.sections:
            record["large"] = rows = []
            buffers = C.Buffers(args.case_list, settings.scale)
            ceiling_read = ceiling.reader(settings.ceiling_bytes)
            for dt_name in args.dtype_names:
                dtype = C.resolve_dtype(dt_name)
                if dtype is None:
                    record["notes"].append(f"{dt_name} skipped: ml_dtypes is not installed")
                    progress.step(f"{dt_name} skipped", n=len(args.case_list))
                    continue
                buf = buffers.get(dtype)
                for case in args.case_list:
                    rows.append(run_case(case, case.make(buf, settings.scale), adapters, settings,
                                         not args.no_check, ceiling_read))
                    progress.step(f"{case.name} {dt_name}")
            buffers.clear()
            del ceiling_read

        if "coldstart" in args.sections:
            # float32, and float64: numpy's default, so most programs' first call
            for dt_name, key in (("float32", "coldstart"), ("float64", "coldstart_float64")):
                try:
                    record[key] = coldstart.measure(threads, dtype=dt_name,
                                                    big=settings.coldstart_big,
                                                    repeat=settings.coldstart_repeat)
                except (RuntimeError, OSError, subprocess.SubprocessError) as e:
                    record["notes"].append(f"first-call timing ({dt_name}) failed: {e}")
                progress.step(f"first call {dt_name}")

        if "small" in args.sections:
            record["small"] = run_small(settings, progress)
            one = C.fill(1, np.dtype(np.float32))
            reducemean.mean(one)  # memoised, so its kernel call can be timed alone
            fns = {"reducemean": lambda: reducemean.mean(one), "numpy": lambda: np.mean(one)}
            call = kernel_call(one)
            if call is not None:
                fns["kernel"] = call
            t = compare_fast(fns, target=settings.small_target)
            record["overhead"] = {"reducemean_s": t["reducemean"].median, "numpy_s": t["numpy"].median}
            if call is not None:
                record["overhead"]["kernel_s"] = t["kernel"].median

        if "sweep" in args.sections:
            dtypes, layouts = _sweep_cases(args)
            record["sweep"] = sweep.run(settings, progress, dtypes, layouts, record["notes"])

        if "scaling" in args.sections:
            record["scaling"] = []
            for name, dt_name in C.SCALING_CASES:
                case = next(c for c in C.LARGE if c.name == name)
                x = case.make(C.fill(case.elements(settings.scale), np.dtype(dt_name)), settings.scale)
                # 1 thread up to every core Numba may use, whatever --threads says
                rows_s = scaling.measure(x, case.axes, numba.config.NUMBA_NUM_THREADS,
                                         repeat=settings.scaling_repeat,
                                         ceiling_bytes=settings.ceiling_bytes,
                                         progress=lambda: progress.step(f"scaling {name}"))
                record["scaling"].append({"case": name, "dtype": dt_name,
                                          "shape": case.shown_shape(settings.scale), "rows": rows_s})
                del x

        if "threshold" in args.sections:
            record["threshold"] = threshold.measure(
                settings.threshold_sizes, threads=threads,
                progress=lambda: progress.step("threshold"))
    finally:
        progress.close()

    emit()
    emit(f"Read ceiling (Numba prange float32 sum over {ceil['bytes'] >> 20} MiB, four streams a "
         f"thread, {threads} threads, "
         f"{m.get('numba_threading_layer', '?')} layer): "
         f"{ceil['gbps_best']:.2f} GB/s best, {ceil['gbps_median']:.2f} GB/s median")
    if record.get("large") is not None:
        emit()
        emit(f"Large inputs (scale {settings.scale:g}; median of up to {settings.repeat} calls "
             f"in {min(settings.rounds, settings.repeat)} rounds):")
        if settings.scale < 1:
            emit("(shrunk inputs may fit in the last-level cache: %ceil can then pass 100%)")
        emit(report.format_large(record["large"], ceil_gbps))
    for key in ("coldstart", "coldstart_float64"):
        if key in record:
            emit()
            emit(report.format_coldstart(record[key]))
    if "small" in record:
        emit()
        emit("Small inputs, per call (median; vs numpy: median over rounds of numpy's time / ours):")
        emit(report.format_small(record["small"], record["overhead"]))
    if "sweep" in record:
        emit()
        emit("Against numpy.mean, per dtype and layout (median over rounds of the ratio of calls):")
        emit(sweep.format_report(record["sweep"]))
    for s in record.get("scaling", []):
        emit()
        emit(report.format_scaling(f"Thread scaling: {s['case']} {s['dtype']} {s['shape']}", s["rows"]))
    if "threshold" in record:
        emit()
        emit(threshold.format_report(record["threshold"]))
    record["targets"] = targets.assess(record)
    emit()
    emit(targets.format_report(record["targets"]))
    if args.plot:
        note = report.plot(args.plot, record.get("large", []), ceil_gbps)
        record["notes"].append(note or f"plot written to {args.plot}")
    if args.json:
        report.write_json(args.json, record)
        record["notes"].append(f"JSON written to {args.json}")
    if record["notes"]:
        emit()
        for note in record["notes"]:
            emit(f"note: {note}")
    return 0
