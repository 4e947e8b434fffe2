"""Presenting a run: text tables, the JSON record and the optional plot.

Ratios are "x faster": the peer's time over reducemean's (the median of
per-round ratios, see timing.compare), so 2.00x means reducemean took half
the peer's time and 0.50x twice as long.
"""

from __future__ import annotations

import json

from .peers import ORDER

#: Marks in the large table.
UNSUPPORTED = "-"
COPIED = "*"  # the peer was given a contiguous copy of a view (it reads less memory)
WRONG = "!"  # the result failed the accuracy check (see the notes under the table)


def _fmt_axes(axes):
    if axes is None:
        return "all"
    return ",".join(str(a) for a in axes)


def table(header, rows, right):
    """Plain columns: ``right`` says, per column, whether to right-align."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]

    def line(cells):
        return "  ".join(str(c).rjust(w) if r else str(c).ljust(w)
                         for c, w, r in zip(cells, widths, right)).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out.extend(line(r) for r in rows)
    return "\n".join(out)


def peers_in(rows):
    """Peers that appear in ``rows``, in report order (reducemean itself excluded)."""
    seen = {name for r in rows for name in r["results"]}
    return [p for p in ORDER if p in seen and p != "reducemean"]


def share_of(ours, ceiling_gbps):
    """reducemean's share of the read ceiling in a large row (None when unknown).

    From calls paired with the ceiling's read when the row has them
    (``ceiling_share``), else GB/s over the run's ``ceiling_gbps``.
    """
    share = ours.get("ceiling_share")
    if share is None and ceiling_gbps:
        share = ours["gbps"] / ceiling_gbps
    return share


def vs_numpy(row):
    """numpy's time over reducemean's in a small or sweep row: the rounds' median ratio when timed so.

    Rows of older records carry only the medians.
    """
    return row.get("vs_numpy", row["numpy_s"] / row["reducemean_s"])


def peer_ratio(res, ours):
    """A peer's time over reducemean's in a large row: the rounds' median ratio when timed so."""
    return res.get("vs_reducemean", res["median_s"] / ours["median_s"])


def format_large(rows, ceiling_gbps):
    """The big table: throughput, share of the ceiling (:func:`share_of`), speed against each peer."""
    peers = peers_in(rows)
    header = ["case", "shape", "axes", "dtype", "GB/s", "best", "%ceil"] + [f"vs {p}" for p in peers]
    body = []
    for r in rows:
        ours = r["results"].get("reducemean", {})
        cells = [r["case"], r["shape"], _fmt_axes(r["axes"]), r["dtype"]]
        if "median_s" in ours:
            share = share_of(ours, ceiling_gbps)
            cells += [f"{ours['gbps']:.2f}", f"{ours['gbps_best']:.2f}",
                      f"{100 * share:.0f}%" if share is not None else "?"]
            if ours.get("ok") is False:
                cells[4] += WRONG
        else:
            cells += [UNSUPPORTED] * 3
        for p in peers:
            res = r["results"].get(p)
            if res is None or "median_s" not in res or "median_s" not in ours:
                cells.append(UNSUPPORTED)
                continue
            cell = f"{peer_ratio(res, ours):.2f}x"
            if res.get("copied"):
                cell += COPIED
            if res.get("ok") is False:
                cell += WRONG
            cells.append(cell)
        body.append(cells)
    text = table(header, body, [False] * 4 + [True] * (len(header) - 4))
    legend = (f"GB/s = input bytes / median time (best: / best time); %ceil = median, over "
              f"calls each just after a read of the ceiling's, of the call's GB/s / the read's; "
              f"vs X = X's time / reducemean's, median of the rounds' ratios "
              f"({UNSUPPORTED}: X cannot take this dtype; "
              f"{COPIED}: X was given a contiguous copy of the view, made before timing; "
              f"{WRONG}: result beyond tolerance of a float64 mean)")
    return "\n".join([text, legend] + accuracy_notes(rows))


def accuracy_notes(rows):
    """One line per (implementation, dtype) with results beyond tolerance."""
    bad = {}
    for r in rows:
        for name, res in r["results"].items():
            if res.get("ok") is False:
                bad.setdefault((name, r["dtype"]), []).append((res["err"], res["tol"], r["case"]))
    notes = []
    for (name, dtype), hits in bad.items():
        total = sum(1 for r in rows if r["dtype"] == dtype and "ok" in r["results"].get(name, {}))
        err, tol, case = max(hits)
        notes.append(f"{WRONG} {name} {dtype}: {len(hits)} of {total} cases beyond tolerance "
                     f"{tol:.3g} (largest relative error {err:.3g}, on {case})")
    return notes


def format_small(rows, overhead=None):
    header = ["shape", "axes", "dtype", "reducemean us", "numpy us", "vs numpy"]
    body = [[str(tuple(r["shape"])), _fmt_axes(r["axes"]), r["dtype"],
             f"{r['reducemean_s'] * 1e6:.2f}", f"{r['numpy_s'] * 1e6:.2f}",
             f"{vs_numpy(r):.2f}x"] for r in rows]
    text = table(header, body, [False, False, False, True, True, True])
    if overhead:
        text += (f"\nPython-layer overhead (mean of a 1-element array): reducemean "
                 f"{overhead['reducemean_s'] * 1e6:.2f} us")
        if "kernel_s" in overhead:
            text += (f", of it the kernel's own call {overhead['kernel_s'] * 1e6:.2f} us (the "
                     f"layer {layer_s(overhead) * 1e6:.2f} us)")
        text += f"; numpy {overhead['numpy_s'] * 1e6:.2f} us"
    return text


def layer_s(overhead):
    """The Python layer's seconds a call: the one-element mean less its kernel's own call.

    The whole mean where the run did not time the kernel call alone.
    """
    return overhead["reducemean_s"] - overhead.get("kernel_s", 0.0)


def format_coldstart(res):
    def s(d, key):
        return f"{d[key]:.3f} s" if key in d else "-"

    cold, warm = res["cold"], res["warm"]
    rows = [
        ["import reducemean", s(cold, "import_s"), s(warm, "import_s")],
        [f"first call {tuple(res['small_shape'])} (serial kernel)", s(cold, "first_small_s"), s(warm, "first_small_s")],
        ["second call, same input", s(cold, "second_small_s"), s(warm, "second_small_s")],
    ]
    if res.get("big_shape"):
        rows.append([f"first call {tuple(res['big_shape'])} (parallel kernel)",
                     s(cold, "first_big_s"), s(warm, "first_big_s")])
    rows.append(["whole process, start to exit", s(cold, "process_s"), s(warm, "process_s")])
    if res.get("columns"):
        c = res["columns"]
        rows += [["new interpreter: import reducemean", s(c["cold"], "import_s"), s(c["warm"], "import_s")],
                 [f"first call {tuple(res['big_shape'])} over axis 0 (columns)",
                  s(c["cold"], "first_big_s"), s(c["warm"], "first_big_s")],
                 ["whole process, start to exit", s(c["cold"], "process_s"), s(c["warm"], "process_s")]]
    runs = res.get("repeat", 1)
    title = f"first call, {res['dtype']}, fresh interpreter" + (
        f" (medians of {runs})" if runs > 1 else "")
    return table([title, "cold cache", "warm cache"], rows, [False, True, True])


def format_scaling(title, rows):
    header = ["threads", "GB/s", "best", "speedup", "ceiling GB/s", "%ceil"]
    body = [[r["threads"], f"{r['gbps']:.2f}", f"{r['gbps_best']:.2f}", f"{r['speedup']:.2f}x",
             f"{r['ceiling_gbps']:.2f}",
             f"{100 * r.get('ceiling_share', r['gbps'] / r['ceiling_gbps']):.0f}%"] for r in rows]
    return f"{title}\n" + table(header, body, [True] * len(header))


def write_json(path, record):
    with open(path, "w") as f:
        json.dump(record, f, indent=1, default=_jsonable)
        f.write("\n")


def _jsonable(obj):
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def plot(path, rows, ceiling_gbps):
    """A bar chart of GB/s per case, one panel per dtype; returns a note when it cannot."""
    try:
        import matplotlib
    except ImportError:
        return "matplotlib not installed: no plot (pip install matplotlib)"
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    dtypes = list(dict.fromkeys(r["dtype"] for r in rows))
    if not dtypes:
        return "no large cases ran: no plot"
    impls = ["reducemean"] + peers_in(rows)
    cases = list(dict.fromkeys(r["case"] for r in rows))
    fig, axs = plt.subplots(len(dtypes), 1, figsize=(max(8, 0.9 * len(cases) * len(impls) / 2), 3.2 * len(dtypes)),
                            squeeze=False)
    width = 0.8 / len(impls)
    for ax, dt in zip(axs[:, 0], dtypes):
        by_case = {r["case"]: r for r in rows if r["dtype"] == dt}
        for k, impl in enumerate(impls):
            xs, ys = [], []
            for i, c in enumerate(cases):
                res = by_case.get(c, {}).get("results", {}).get(impl, {})
                if "gbps" in res:
                    xs.append(i + (k - (len(impls) - 1) / 2) * width)
                    ys.append(res["gbps"])
            ax.bar(xs, ys, width, label=impl)
        if ceiling_gbps:
            ax.axhline(ceiling_gbps, color="k", linestyle="--", linewidth=1, label="read ceiling")
        ax.set_title(dt)
        ax.set_ylabel("GB/s (median)")
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels(cases, rotation=30, ha="right", fontsize=8)
    axs[0, 0].legend(fontsize=8, ncol=len(impls) + 1)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return None
