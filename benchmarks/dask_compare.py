"""reducemean.dask.mean against dask.array.mean on a multi-GiB array, same cluster.

    python benchmarks/dask_compare.py [--gib 4] [--workers 2]

Starts a dask.distributed LocalCluster on 127.0.0.1 (processes, one thread
each), builds a lazy float32 array whose exact mean is known in closed form
(1e4 plus i mod 1000 over i < n), and times both means end to end (chunk
generation included, the same graph for both), best of three. Accuracy is the
relative error against the exact mean. Prints one line per implementation.
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction


def exact_mean(n, period=1000, offset=10_000):
    full, rest = divmod(n, period)
    total = full * (period * (period - 1) // 2) + rest * (rest - 1) // 2
    return Fraction(offset) + Fraction(total, n)


def main():
    import dask.array as da
    import numpy as np
    from dask.distributed import Client, LocalCluster

    import reducemean.dask as rdask

    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=4.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    n = int(args.gib * 2**30) // 4
    chunk = 2**25  # 128 MiB of float32
    n -= n % chunk
    x = (da.arange(n, chunks=chunk, dtype=np.int64) % 1000).astype(np.float32) + np.float32(10_000)
    want = exact_mean(n)

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      host="127.0.0.1", dashboard_address=None) as cluster, Client(cluster):
        print(f"array: {n} float32 ({n * 4 / 2**30:.1f} GiB), chunks of {chunk}, "
              f"{args.workers} workers x 1 thread; exact mean {float(want)!r}")
        for name, fn in (("reducemean.dask.mean", rdask.mean), ("dask.array.mean", da.mean)):
            times = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                got = fn(x).compute()
                times.append(time.perf_counter() - t)
            err = abs(Fraction(float(got)) - want) / want
            print(f"{name:22s} best {min(times):7.2f} s   result {float(got)!r:>22}   "
                  f"relative error {float(err):.2e}")


if __name__ == "__main__":
    main()
