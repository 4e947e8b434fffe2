"""The throughput suite's targets, each judged from the figures of one run.

A run's record (what ``--json`` writes) holds every figure a target needs:

* the large inputs, at the suite's full size (24 to 512 MiB: runs that
  shrink them, as ``--quick`` does, are not judged), reach 0.85 of the
  read ceiling (the share the large table shows), every case but
  tall-skinny, which is held to the next target only;
* every large input is faster than each peer that took it (ratios over
  1.00x; a peer given a contiguous copy of a view still counts);
* the small inputs 8 x 8, 3 x 4 x 5, 64 x 128 and 256 x 256 are faster per
  call than numpy.mean, in each dtype and layout the run timed;
* the Python layer (the memo lookup, the dispatch, the result's
  allocation) costs under 1 us: a whole mean of a one-element array less
  the kernel's own compiled call on it (its arguments' unboxing and its
  sum), both timed round-robin in the run; a run that did not time the
  kernel call alone is judged on the whole mean;
* a fresh interpreter imports reducemean and makes its first call within
  0.5 s with Numba's cache warm and within 3 s cold (the first small call,
  and the columns' first call in processes of their own).

Nothing here times anything: a target the run did not measure (a section
left out, inputs shrunk by ``--quick``) is reported as not assessed.
"""

from __future__ import annotations

import textwrap

from .report import layer_s, peer_ratio, share_of, vs_numpy

SHARE = 0.85
#: Large cases held only to the peers' speed (see the module docstring).
PEERS_ONLY = ("tall_skinny",)
SMALL_SHAPES = ((8, 8), (3, 4, 5), (64, 128), (256, 256))
LAYER_S = 1e-6
WARM_S = 0.5
COLD_S = 3.0


def _entry(target, misses, total, what):
    """A target's verdict: met when ``total`` figures were judged and none missed."""
    return {"target": target, "total": total, "passed": total - len(misses),
            "met": None if total == 0 else not misses, "misses": misses, "what": what}


def _large(rows, ceiling_gbps, full):
    big = [r for r in rows if full and "median_s" in r["results"].get("reducemean", {})]
    below, behind = [], []
    shares = 0
    for r in big:
        ours = r["results"]["reducemean"]
        name = f"{r['case']} {r['dtype']}"
        if r["case"] not in PEERS_ONLY:
            share = share_of(ours, ceiling_gbps)
            if share is not None:
                shares += 1
                if share < SHARE:
                    below.append(f"{name} {100 * share:.0f}%")
        ratios = [f"{p} {peer_ratio(res, ours):.2f}x" + ("*" if res.get("copied") else "")
                  for p, res in r["results"].items()
                  if p != "reducemean" and "median_s" in res and peer_ratio(res, ours) <= 1.0]
        if ratios:
            behind.append(f"{name} ({', '.join(ratios)})")
    return [
        _entry(f"large inputs at {100 * SHARE:.0f}% of the read ceiling or more",
               below, shares, "below"),
        _entry("large inputs faster than every peer", behind, len(big), "behind"),
    ]


def _small(rows, overhead):
    # numpy's time for the same one-element mean goes with the layer's:
    # on a slow machine both grow
    judged = [r for r in rows if tuple(r["shape"]) in SMALL_SHAPES]
    slower = [f"{tuple(r['shape'])} axes {'all' if r['axes'] is None else tuple(r['axes'])} "
              f"{r['dtype']} {vs_numpy(r):.2f}x" for r in judged if vs_numpy(r) <= 1.0]
    out = [_entry("small inputs (8 x 8, 3 x 4 x 5, 64 x 128, 256 x 256) faster than numpy.mean",
                  slower, len(judged), "slower")]
    if overhead is not None:
        t = layer_s(overhead)
        if "kernel_s" in overhead:
            what = "a one-element mean less its kernel's own call"
            took = (f"{t * 1e6:.2f} us (the mean {overhead['reducemean_s'] * 1e6:.2f} us, its "
                    f"kernel call {overhead['kernel_s'] * 1e6:.2f} us; numpy.mean "
                    f"{overhead['numpy_s'] * 1e6:.2f} us)")
        else:
            what = "a one-element mean, kernel call included"
            took = f"{t * 1e6:.2f} us (numpy.mean {overhead['numpy_s'] * 1e6:.2f} us)"
        out.append(_entry(f"Python layer under 1 us ({what})", [] if t < LAYER_S else [took],
                          1, "took"))
    return out


def _first_calls(runs):
    """(label, import + first call in seconds) of each fresh interpreter, cold and warm."""
    out = {"cold": [], "warm": []}
    for res in runs:
        dt = res["dtype"]
        for temp in ("cold", "warm"):
            d = res[temp]
            if "first_small_s" in d:
                out[temp].append((f"{dt} {tuple(res['small_shape'])}", d["import_s"] + d["first_small_s"]))
            c = res.get("columns", {}).get(temp)
            if c and "first_big_s" in c:
                out[temp].append((f"{dt} {tuple(res['big_shape'])} columns",
                                  c["import_s"] + c["first_big_s"]))
    return out


def _coldstart(runs):
    firsts = _first_calls(runs)
    out = []
    for temp, limit in (("warm", WARM_S), ("cold", COLD_S)):
        figures = firsts[temp]
        over = [f"{label} {t:.2f} s" for label, t in figures if t > limit]
        out.append(_entry(f"import and first call within {limit:g} s, {temp} cache", over,
                          len(figures), "over"))
    return out


def assess(record):
    """Every target's verdict from a run's ``record`` (see :mod:`reducemean.bench.cli`)."""
    ceiling_gbps = record.get("ceiling", {}).get("gbps_best")
    full = record.get("settings", {}).get("scale", 0) >= 1
    out = _large(record.get("large", []), ceiling_gbps, full)
    out += _small(record.get("small", []), record.get("overhead"))
    out += _coldstart([record[k] for k in ("coldstart", "coldstart_float64") if k in record])
    return out


def format_report(entries, width=100):
    """One line a target (met, or how many of its figures did), its misses wrapped under it."""
    lines = ["Targets, judged from this run's figures:"]
    for e in entries:
        if e["met"] is None:
            verdict = "not assessed (not measured in this run)"
        elif e["total"] == 1:
            verdict = "met" if e["met"] else "not met"
        else:
            verdict = f"{e['passed']} of {e['total']}" + (" (met)" if e["met"] else "")
        lines.append(f"- {e['target']}: {verdict}")
        if e["misses"]:
            lines.extend(textwrap.wrap(f"{e['what']}: " + "; ".join(e["misses"]), width,
                                       initial_indent="    ", subsequent_indent="    "))
    return "\n".join(lines)
