"""Reduced dims inside a small contiguous block: its columns summed, then merged.

(n, m, w) over axes (0, 2) keeps m outputs, each the sum of a w-value piece
of every row of m * w values.  Walked as the plan has it, that is m columns
w apart, one pass of all n * w reduced rows for every m values: (4M, 2, 3)
float32 read about 1 GB/s.  Read as (n, m * w) over axis 0 instead, every
row is one contiguous run, summed by the column kernels (or the fold, for
narrow ones) into one state per column; each column's state is then merged
into its output's.  Every merge is the kernels' exact state merge, so the
means are those of the plain path.  ``Plan.block`` (see plan.make_plan)
holds the columns' plan and where each column goes.
"""

from __future__ import annotations

import numpy as np

from . import fold, kernels, launch

__all__ = ["applies", "run", "states", "prepare"]


def applies(plan):
    """Whether ``plan`` is summed as the columns of its kept dims' block."""
    return plan.block is not None


def run(plan, buf, out, tok, entry):
    """Means of ``plan`` into ``out`` by its block's columns; as :func:`launch.run`."""
    return kernels.finish_states(states(plan, buf, tok, entry), plan.count, out, tok)


def states(plan, buf, tok, entry):
    """The (outputs, 2) states of ``plan``, summed by its block's columns."""
    # Every dim of a block plan is read forwards (reduced ones flipped), so
    # its first value read is the lowest address, where ``columns`` starts.
    columns, pairs = plan.block
    if fold.applies(columns):
        sums = fold.states(columns, buf, tok, entry)
    else:
        sums = np.zeros((columns.nout, 2), entry.state_dtype)
        launch.run(columns, buf, sums, tok, entry.cost)
    acc = np.zeros((plan.nout, 2), entry.state_dtype)
    kernels.merge_columns(acc, sums, pairs, tok)
    return acc


def prepare(plan, buf, out, tok, entry):
    """:func:`run` of ``plan`` for repeated calls with arguments of the types given.

    Returns ``kernel(buf, params, out, tok)`` (numpy_api's memo calls it
    so; ``params`` and ``tok`` are fixed by its key and not read).  The
    columns' kernel and the merge and store are called through their
    compiled entry points (launch.compiled): the call's Python steps cost
    about as much as summing a few thousand values.
    """
    columns, pairs = plan.block
    if fold.applies(columns):
        return lambda buf, p, out, tok_: run(plan, buf, out, tok, entry)
    sdt = entry.state_dtype
    nstates, nout, count = columns.nout, plan.nout, plan.count
    sums = np.zeros((nstates, 2), sdt)
    acc = np.zeros((nout, 2), sdt)
    sum_columns, params, ctok, extra = launch.prepare(columns, buf, sums, tok, entry.cost)
    merge = launch.compiled(kernels.merge_columns, (acc, sums, pairs, tok))
    finish = launch.compiled(kernels.finish_states, (acc, count, out, tok))
    zeros = np.zeros

    def kernel(buf, p, out, tok_):
        sums = zeros((nstates, 2), sdt)
        sum_columns(buf, params, sums, ctok, *extra)
        acc = zeros((nout, 2), sdt)
        merge(acc, sums, pairs, tok)
        return finish(acc, count, out, tok)

    return kernel

