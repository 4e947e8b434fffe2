"""One benchmark per (case, dtype, implementation); see conftest.py for the options."""

from __future__ import annotations

import numpy as np
import pytest

import reducemean
from reducemean.bench import cases, peers

pytest.importorskip("pytest_benchmark")

# dtype outermost: consecutive tests reuse one input buffer.
LARGE = [
    pytest.param(case, dt, impl, id=f"{case.name}-{dt}-{impl}")
    for dt in cases.DTYPE_NAMES
    for case in cases.LARGE
    for impl in peers.ORDER
]


def _axes(axes):
    return "all" if axes is None else ",".join(map(str, axes))


def _adapter(env, impl):
    adapter = env.adapters.get(impl)
    if adapter is None:
        pytest.skip(f"{impl}: {env.missing.get(impl, 'unavailable')}")
    return adapter


@pytest.mark.parametrize("case,dtype_name,impl", LARGE)
def test_large(benchmark, bench_env, case, dtype_name, impl):
    adapter = _adapter(bench_env, impl)
    dtype = cases.resolve_dtype(dtype_name)
    if dtype is None:
        pytest.skip(f"{dtype_name} needs ml_dtypes")
    x = case.make(bench_env.buffers.get(dtype), bench_env.scale)
    try:
        prepared = adapter.prepare(x, case.axes)
    except peers.Unsupported as e:
        pytest.skip(f"{impl} cannot take {dtype_name}: {e}")
    nbytes = x.size * x.itemsize
    benchmark.group = f"{case.name} {dtype_name} {case.shown_shape(bench_env.scale)} axes={_axes(case.axes)}"
    benchmark.extra_info.update(impl=impl, bytes=nbytes, threads=bench_env.threads,
                                copied_view=prepared.copied)
    benchmark.pedantic(prepared.call, rounds=bench_env.rounds, warmup_rounds=1, iterations=1)
    stats = getattr(benchmark, "stats", None)
    if stats is not None:  # absent under --benchmark-disable
        benchmark.extra_info["gbps_median"] = nbytes / stats.stats.median / 1e9


SMALL = [
    pytest.param(shape, axes, impl, id=f"{'x'.join(map(str, shape))}-{_axes(axes)}-{impl}")
    for shape, axes in cases.SMALL
    for impl in ("reducemean", "numpy")
]


@pytest.mark.parametrize("shape,axes,impl", SMALL)
def test_small(benchmark, shape, axes, impl):
    x = cases.fill(int(np.prod(shape)), np.dtype(np.float32)).reshape(shape)
    fn = reducemean.mean if impl == "reducemean" else np.mean
    benchmark.group = f"small {shape} axes={_axes(axes)} float32"
    benchmark.extra_info["impl"] = impl
    benchmark(fn, x, axis=axes)
