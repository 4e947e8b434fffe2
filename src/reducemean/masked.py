"""``where=`` means: exact sums of the selected values over each output's own count.

The values the mask leaves out become zeros in a temporary (the one path
that copies the input), which the kernels sum as states (:mod:`.states`,
compensated for every float width) and finish over per-output counts.
A :class:`Steps` is one input shape's steps, prepared once: repeated calls
of the same shapes skip the plan, the kernels' lookup and the states'
generic paths (``reducemean.mean`` memoises them), which were most of a
small masked mean's time.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import kernels, launch, states
from .engine import EMPTY_SLICE, complex_nonfinite_as_numpy, out_of_range, summed_by
from .numerics import scaled_token
from .plan import plan_for

_F8 = np.dtype(np.float64)
_INTP = np.dtype(np.intp)
_empty = np.empty
_zeros = np.zeros
_count_nonzero = np.count_nonzero


def zero_filled(a, mask, bits=None):
    """``a`` with the values ``mask`` leaves out as zeros, in a new C-ordered array.

    Their bits times the mask: zero bits are 0 and +0.0 in every type, and
    the product has no branch, where np.where's choice of each value
    mispredicts on a random mask ((2048, 2048) float32, 70% selected: 14 ms
    -> 2.4 ms).  C order, as np.where's: the scaled second pass scales the
    temporary in place through a flat view of it.  ``bits``: the unsigned
    type of ``a``'s width, when the caller has it.
    """
    if a.dtype.itemsize > 8:  # complex128: no unsigned integer as wide
        # into zeros of C order: np.where follows its inputs' order, and a
        # Fortran temporary's flat view is a copy, which the scaled second
        # pass scaled in vain (a large value came back inf+nanj)
        filled = _zeros(a.shape, a.dtype)
        np.copyto(filled, a, where=mask)
        return filled
    if bits is None:
        bits = np.dtype(f"u{a.dtype.itemsize}")
    # (into an array of its own: of 0-d operands a ufunc makes a scalar)
    return np.multiply(a.view(bits), mask, out=_empty(a.shape, bits)).view(a.dtype)


class Steps:
    """A ``where=`` mean of ``shape`` inputs of ``entry``'s dtype over ``axes``, in ``rd``.

    Called with an input of that shape and dtype (any strides: the
    temporary is C-ordered) and a boolean mask that broadcasts to it;
    returns the means in ``out_shape``.
    """

    def __init__(self, shape, entry, axes, rd, out_shape):
        self.shape, self.entry, self.axes, self.rd = shape, entry, axes, rd
        self.out_shape = out_shape
        itemsize = entry.dtype.itemsize
        self.bits = np.dtype(f"u{itemsize}") if itemsize <= 8 else None
        strides = tuple(int(np.prod(shape[k + 1:], dtype=np.int64)) * itemsize
                        for k in range(len(shape)))
        # the temporary's plan, with the counts' shape (keepdims)
        self.plan = plan = plan_for(shape, strides, itemsize, axes, True, entry.pairs, entry.lanes)
        self.lead = plan.out_shape
        self.tok = entry.token_for(_F8)  # the states' token (states._token): compensated
        self.kern = None  # the states' kernel, once compiled (see ready)
        # folded or blocked columns sum states their own way, and a permuted
        # plan's states come back in its memory order: states.partial's paths
        self.generic = summed_by(plan) is not None or plan.permute is not None
        if entry.pairs:
            self.part = np.dtype(np.float32 if rd == np.complex64 else np.float64)
        self.wide = rd.itemsize == 2  # float16/bfloat16: finished in float64, then rounded
        self.finish = kernels.finish_states_counts

    def __call__(self, a, mask):
        if mask.shape != self.shape:
            mask = np.broadcast_to(mask, self.shape)
        filled = zero_filled(a, mask, self.bits)
        counts = mask.sum(axis=self.axes, keepdims=True, dtype=_INTP)
        if _count_nonzero(counts) != counts.size:  # (a third of counts.all()'s time)
            warnings.warn(EMPTY_SLICE, RuntimeWarning, stacklevel=3)  # reducemean.mean's caller
        res, bad = self._means(filled, counts)
        entry = self.entry
        if bad and entry.storage == _F8:
            self._redo(filled, counts, res)
        if entry.pairs:
            complex_nonfinite_as_numpy(res)
        return res.reshape(self.out_shape)

    def _means(self, filled, counts):
        """The means of ``filled`` over ``counts`` (in their shape), and how many are out of range."""
        entry, plan = self.entry, self.plan
        if self.generic:
            st = states.partial(filled, self.axes)[0].reshape(-1, 2)
        else:
            st = _zeros((plan.nout, 2), entry.state_dtype)
            buf = filled.reshape(-1).view(entry.storage)
            if self.kern is not None:
                self.kern(buf, self.params, st, self.ktok, *self.extra)
            elif plan.count and plan.nout:  # (no values: zero states, as states.partial's)
                launch.run(plan, buf, st, self.tok, entry.cost)
        n = counts.reshape(-1)
        res = _empty(self.lead, self.rd)
        if entry.pairs:
            n = np.repeat(n, 2)  # one count per complex value: the same for both parts
            target = res.reshape(-1).view(self.part)
        elif self.wide:
            target = _empty(plan.nout, _F8)
        else:
            target = res.reshape(-1)
        bad = self.finish(st, n, target, self.tok)
        if self.wide:
            res[...] = target.reshape(self.lead)
        return res, bad

    def _redo(self, filled, counts, res):
        """Means whose float64 sums left the range, again from scaled values.

        As engine.redo_out_of_range, on the temporary (ours to scale), part
        by part before a non-finite part spreads into the other (numpy's
        complex mean): an Inf real part had made the imaginary one NaN,
        redone scaled and so rounded, or the Inf itself NaN.
        """
        count = self.plan.count
        parts = res.reshape(-1).view(res.real.dtype)
        redo = out_of_range(parts, count)
        if redo.any():
            scale, unscale = scaled_token(count)
            filled.reshape(-1).view(self.entry.storage)[...] *= scale[0]  # complex: part by part
            again = self._means(filled, counts)[0].reshape(-1).view(res.real.dtype)
            with np.errstate(over="ignore"):
                parts[redo] = again[redo] * unscale

    def ready(self):
        """Bind the kernels' compiled entry points, once a call has compiled them for its types.

        The caller memoises these steps only for inputs of the same dtype
        and shape, which fix those types.
        """
        if self.generic:
            return
        plan, entry = self.plan, self.entry
        buf = _empty(plan.count * plan.nout, entry.storage)  # the temporary's flat storage
        st = _empty((plan.nout, 2), entry.state_dtype)
        self.kern, self.params, self.ktok, self.extra = launch.prepare(
            plan, buf, st, self.tok, entry.cost)
        target = _empty(plan.nout, self.part if entry.pairs else _F8 if self.wide else self.rd)
        n = _empty(plan.nout, _INTP)
        self.finish = launch.compiled(kernels.finish_states_counts, (st, n, target, self.tok))
