"""reducemean.dask.mean against dask.array.mean on a multi-GiB array, same cluster.

    python benchmarks/dask_compare.py [--gib 4] [--workers 2]

Starts a dask.distributed LocalCluster on 127.0.0.1 (processes, one thread
each) and times both means end to end (chunk generation included, the same
graph for both), best of three, on two lazy float32 arrays of ``--gib`` GiB
whose exact means are known in closed form:

* whole: 1e4 + (i mod 1000) over i < n, reduced over everything;
* columns: ones of shape (n/4, 4) in 512 MiB chunks, reduced over axis 0
  (numpy sums such a chunk column by column in float32).

Accuracy is the largest relative error against the exact mean.
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
    n -= n % (4 * chunk)
    whole = (da.arange(n, chunks=chunk, dtype=np.int64) % 1000).astype(np.float32) + np.float32(10_000)
    columns = da.ones((n // 4, 4), dtype=np.float32, chunks=(chunk, 4))
    cases = (
        ("whole", whole, None, exact_mean(n)),
        ("columns", columns, 0, Fraction(1)),
    )

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      host="127.0.0.1", dashboard_address=None) as cluster, Client(cluster):
        print(f"{n} float32 ({n * 4 / 2**30:.1f} GiB) per case, "
              f"{args.workers} workers x 1 thread")
        for case, x, axis, want in cases:
            for name, fn in (("reducemean.dask.mean", rdask.mean), ("dask.array.mean", da.mean)):
                times = []
                for _ in range(args.repeat):
                    t = time.perf_counter()
                    got = np.asarray(fn(x, axis=axis).compute(), dtype=np.float64).reshape(-1)
                    times.append(time.perf_counter() - t)
                err = max(abs(Fraction(float(g)) - want) / want for g in got)
                print(f"{case:8s} {name:22s} best {min(times):7.2f} s   "
                      f"result {float(got[0])!r:>20}   max relative error {float(err):.2e}")


if __name__ == "__main__":
    main()
