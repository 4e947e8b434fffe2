"""Kernels loaded from Numba's on-disk cache without readying Numba's compiler.

Before Numba loads a cached function it refreshes its target context: that
imports some forty modules of Numba's own (strings, typed containers,
random numbers, linear algebra, ...) and installs their typing and lowering
registries, everything a compile would need.  Loading needs none of it: it
links the cached object code, against Numba's runtime (NRT), and wraps it.
With a warm cache that refresh was most of a fresh process's first call
(0.11-0.19 s of 0.15-0.24 s), and the modules it imported made the
interpreter take about 0.3 s longer to exit.

The dispatchers given to :func:`adopt` load with the runtime initialised and
nothing more.  A compile still readies everything, since Numba's compiler
refreshes both contexts itself before it types a function, and a cache miss
goes on to that compile as before.
"""

from __future__ import annotations

from numba.core.caching import FunctionCache
from numba.core.dispatcher import Dispatcher
from numba.core.runtime import rtsys

from .valuetypes import type_arguments


def _loading_only():
    """The target context's ``refresh`` while a cached function loads."""


class _LoadOnly(FunctionCache):
    """Numba's function cache, loading without the context refresh."""

    def load_overload(self, sig, target_context):
        if "refresh" in vars(target_context):  # already stood in for: leave it be
            return super().load_overload(sig, target_context)
        rtsys.initialize(target_context)  # the cached code links against the runtime
        # Dispatcher.compile calls this under Numba's global compiler lock, as
        # every refresh Numba makes runs under it: no other thread sees the
        # stand-in.
        target_context.refresh = _loading_only
        try:
            return super().load_overload(sig, target_context)
        finally:
            del target_context.refresh


def adopt(namespace):
    """Give every disk-cached dispatcher among ``namespace``'s values the light load.

    ``namespace`` is a module's ``globals()``; dispatchers without
    ``cache=True`` are left alone.  Those adopted also type a first call's
    arguments with :mod:`reducemean.valuetypes`, which imports nothing
    either.
    """
    for value in list(namespace.values()):
        cache = getattr(value, "_cache", None)
        if isinstance(value, Dispatcher) and type(cache) is FunctionCache:
            cache.__class__ = _LoadOnly
            type_arguments(value)


__all__ = ["adopt"]
