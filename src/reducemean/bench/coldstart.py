"""First-call time: what a fresh process pays before its first mean.

Nothing is compiled at import; each kernel is compiled, or loaded from
Numba's on-disk cache, on first use.  So the first call is timed in a new
interpreter, twice with the same temporary ``NUMBA_CACHE_DIR``: once while it
is empty (cold: compilation) and once after the first run filled it (warm:
cache loads).  Each run times the import, a first small call (a serial
kernel: by default 8 x 8, whose short rows take a kernel of their own), its
second call, and a first large call (a parallel kernel, when the process has
more than one thread).  Those calls reduce rows; a second pair of fresh
interpreters, with a cache of their own, makes a columns reduction its first
call, since the column kernels take longest to compile.  Each run also
reports the whole process's time, start to exit, as its parent saw it.
Each figure is the median of several such pairs of runs, each pair on an
empty cache of its own: on a shared machine one warm start took 0.34 s
and the next 0.47 s, either side of the 0.5 s target.
The children may write Python's bytecode cache even where the parent sets
``PYTHONDONTWRITEBYTECODE``: warm means warm as an installed package is.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# Run in the child: one JSON line of timings on stdout.
_CHILD = r"""
import json, sys, time
clock = time.perf_counter
t0 = clock()
import numpy as np
import reducemean
t1 = clock()
res = {{"import_s": t1 - t0}}
if {small} is not None:
    small = np.ones({small}, np.{dtype})
    t2 = clock()
    reducemean.mean(small, axis={axis})
    t3 = clock()
    reducemean.mean(small, axis={axis})
    res.update(first_small_s=t3 - t2, second_small_s=clock() - t3)
if {big} is not None:
    big = np.ones({big}, np.{dtype})
    t4 = clock()
    reducemean.mean(big, axis={axis})
    res.update(first_big_s=clock() - t4)
print(json.dumps(res))
"""


def _child_env(cache_dir, threads):
    env = dict(os.environ)
    env["NUMBA_CACHE_DIR"] = cache_dir
    # Warm means every cache an installed package has: pip writes the
    # modules' bytecode at install, and Python writes an editable install's
    # on first import, unless told not to.  Told not to, each process
    # compiled reducemean's sources again, about 0.08 s of its import.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # The child must import this same reducemean, installed or not.
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    if threads:
        env["NUMBA_NUM_THREADS"] = str(threads)
    return env


def measure(threads=None, dtype="float32", small=(8, 8), big=(1024, 1024), timeout=600,
            repeat=3):
    """Cold and warm first-call times, in seconds, from fresh interpreters.

    ``big`` should hold more than ``launch.PARALLEL_MIN`` elements so its
    first call loads the parallel kernel; ``None`` leaves it out.  The
    ``columns`` entry times ``big`` reduced over axis 0 as a process's first
    call (the parallel column kernel when there are several threads, else
    the serial one).  Each run's ``process_s`` is the child's whole life as
    its parent saw it: interpreter start, imports, calls and exit.  Each
    figure is the median over ``repeat`` cold runs, and as many warm ones.
    """
    result = {"dtype": dtype, "small_shape": list(small), "big_shape": list(big) if big else None,
              "threads": threads, "repeat": repeat}
    rows = _CHILD.format(small=tuple(small), big=tuple(big) if big else None, dtype=dtype, axis=-1)
    result["cold"], result["warm"] = _cold_and_warm(rows, threads, timeout, repeat)
    if big:
        cols = _CHILD.format(small=None, big=tuple(big), dtype=dtype, axis=0)
        result["columns"] = dict(zip(("cold", "warm"),
                                     _cold_and_warm(cols, threads, timeout, repeat)))
    return result


def _cold_and_warm(code, threads, timeout, repeat=1):
    """``code``'s timings on an empty cache and on the cache that run filled: each the median
    of ``repeat`` such pairs, each pair with a cache of its own."""
    pairs = [_pair(code, threads, timeout) for _ in range(repeat)]
    return tuple({key: statistics.median(run[key] for run in runs) for key in runs[0]}
                 for runs in zip(*pairs))


def _pair(code, threads, timeout):
    """``code``'s JSON line from a run on an empty cache, then from one on the cache it filled."""
    out = []
    with tempfile.TemporaryDirectory(prefix="reducemean-coldstart-") as cache_dir:
        for label in ("cold", "warm"):
            env = _child_env(cache_dir, threads)
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                  text=True, timeout=timeout)
            process_s = time.perf_counter() - start
            if proc.returncode != 0:
                tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
                raise RuntimeError(f"{label} start failed: {tail}")
            out.append(dict(json.loads(proc.stdout.strip().splitlines()[-1]), process_s=process_s))
    return out
