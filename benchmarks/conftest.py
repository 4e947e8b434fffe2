"""pytest-benchmark setup for reducemean's throughput cases.

Run with ``pytest benchmarks --benchmark-only``; the normal test run only
collects ``tests/``.  Each test reduces one case with one implementation;
tests of the same case and dtype share a benchmark group, so the report
shows reducemean next to numpy and the installed peers.

Options: ``--bench-quick`` (inputs of ~16 MiB instead of 256 MiB),
``--bench-scale F`` (any other shrink factor), ``--bench-threads N`` and
``--bench-rounds K``.
"""

from __future__ import annotations

import numba
import pytest

from reducemean.bench import cases, peers


def pytest_addoption(parser):
    group = parser.getgroup("reducemean-bench")
    group.addoption("--bench-quick", action="store_true", help="shrink the large cases to ~16 MiB")
    group.addoption("--bench-scale", type=float, default=None, help="shrink factor of the large cases")
    group.addoption("--bench-threads", type=int, default=None, help="threads for reducemean and the peers")
    group.addoption("--bench-rounds", type=int, default=5, help="timed rounds per large case")


class BenchEnv:
    """What every benchmark shares: the scale, the adapters and one input buffer per dtype."""

    def __init__(self, config):
        scale = config.getoption("--bench-scale")
        if scale is None:
            scale = cases.QUICK_SCALE if config.getoption("--bench-quick") else 1.0
        self.scale = scale
        self.rounds = config.getoption("--bench-rounds")
        threads = config.getoption("--bench-threads")
        if threads is not None:
            numba.set_num_threads(threads)
        self.threads = numba.get_num_threads()
        self.adapters, self.missing = peers.load(self.threads)
        self.buffers = cases.Buffers(cases.LARGE, scale)


@pytest.fixture(scope="session")
def bench_env(request):
    env = BenchEnv(request.config)
    yield env
    env.buffers.clear()
