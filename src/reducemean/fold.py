"""Narrow columns summed as wider rows, then folded: (n, 3) over axis 0.

The column kernels accumulate a block of outputs row by row.  With only a
few columns (under FOLD_WIDTH, or FOLD_WIDE from FOLD_MIN_WIDE values)
there is little to vectorise across, and each value's state is loaded and
stored on its own, one dependent step per row: (100000, 3) float64 over
axis 0 measured 8-10 ns a value, slower than numpy.mean (2.4 ms against
1.5 ms; folded, 0.13 ms).

When those rows are contiguous, the values are one flat span, and column
``j`` holds the values at positions ``j, j + w, j + 2w, ...``.  So the span
is read as rows of ``lanes = w * 2**k`` values (at most FOLD_LANES): the
column kernels sum each lane, vectorised across lanes, into states; lanes
``j, j + w, ...`` are then merged exactly (halving: lane ``i`` with lane
``i + h`` while ``h`` stays a multiple of ``w``); the rows left over, fewer
than ``lanes / w``, are summed as they are and merged in.  Every merge is
the kernels' exact state merge, so the means are those of the plain path.
"""

from __future__ import annotations

import numpy as np

from . import kernels, launch
from .plan import FOLD_MIN, FOLD_MIN_WIDE, FOLD_WIDE, FOLD_WIDTH, plan_for

__all__ = [
    "applies", "run", "states", "prepare", "FOLD_LANES", "FOLD_MIN", "FOLD_MIN_WIDE", "FOLD_WIDE",
    "FOLD_WIDTH",
]

#: Most lanes a folded row has.
FOLD_LANES = 64


def applies(plan):
    """Whether ``plan`` reduces narrow contiguous rows over their one reduced dim.

    The plan decides it once (``Plan.folded``: columns under FOLD_WIDTH
    over spans of FOLD_MIN values or more, or under FOLD_WIDE over
    FOLD_MIN_WIDE); complex values whose part dimension stands alone are
    the parts family's, not folded.
    """
    return plan.folded


def run(plan, buf, out, tok, entry):
    """Means of the narrow columns of ``plan`` into ``out``; as :func:`launch.run`."""
    return kernels.finish_states(states(plan, buf, tok, entry), plan.count, out, tok)


def prepare(plan, buf, out, tok, entry):
    """:func:`run` of ``plan`` as ``kernel(buf, params, out, tok)``, for numpy_api's memo.

    Its steps are :func:`run`'s, each call (two plans of its own and a
    merge per halving).
    """
    return lambda buf, p, out, tok_: run(plan, buf, out, tok, entry)


def states(plan, buf, tok, entry):
    """The (w, 2) states of the narrow columns of ``plan``, folded."""
    (w, _, _), = plan.kept
    n = plan.count
    lanes = w << ((FOLD_LANES // w).bit_length() - 1)
    rows = n * w // lanes
    folded = _states(buf[: rows * lanes], rows, lanes, tok, entry)
    h = lanes
    while h > w:
        h //= 2
        kernels.merge_states(folded[:h], folded[h: 2 * h], tok)
    left = n - rows * lanes // w
    if left:
        kernels.merge_states(folded[:w], _states(buf[rows * lanes:], left, w, tok, entry), tok)
    return folded[:w]


def _states(span, rows, cols, tok, entry):
    """States of the columns of ``span`` read as C-ordered (rows, cols)."""
    size = span.itemsize
    plan = plan_for((rows, cols), (cols * size, size), size, (0,), False)
    states = np.zeros((cols, 2), entry.state_dtype)
    launch.run(plan, span, states, tok, entry.cost)
    return states
