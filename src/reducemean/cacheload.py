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
nothing more.  A cache miss goes on to a compile, and Numba's compiler
refreshes both contexts itself before it types a function.  The target
context's part of that refresh, for a compile of an adopted kernel, imports
only the lowering the kernels use (:func:`_kernel_registries`: numbers,
tuples, ranges, slices, arrays, math, scalar ufuncs); the rest of Numba's
forty modules cost a cold first call about 0.1 s (callgrind, import and a
(1024, 1024) column call: float32 9.69 G -> 9.38 G instructions, float64
11.03 G -> 10.69 G).  Should a compile need more, it is done again after
Numba's full refresh, and counted in ``RETRIED``.
"""

from __future__ import annotations

import importlib
import os

from numba.core import errors
from numba.core.caching import CompileResultCacheImpl, FunctionCache
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


#: The modules of Numba's lowering the kernels use (see _kernel_registries).
_KERNEL_LOWERING = (
    "numba.core.inline_closurecall", "numba.core.optional", "numba.cpython.builtins",
    "numba.cpython.enumimpl", "numba.cpython.iterators", "numba.cpython.numbers",
    "numba.cpython.rangeobj", "numba.cpython.slicing", "numba.cpython.tupleobj",
    "numba.misc.literal", "numba.np.arrayobj",
)
#: Compiles of adopted kernels done again after Numba's full refresh:
#: (kernel name, the error the light one raised).
RETRIED: list = []


def _kernel_registries(context):
    """The target context's ``load_additional_registries`` while a kernel compiles.

    Numba's own imports some forty modules and installs what they register;
    the kernels' code is lowered with these.  (Most lowering registers, as
    it is imported, into Numba's builtin registry, which ``refresh``
    installs after this.)
    """
    rtsys.initialize(context)
    for name in _KERNEL_LOWERING:
        importlib.import_module(name)
    from numba.cpython import mathimpl
    from numba.np import npyimpl

    context.install_registry(mathimpl.registry)
    context.install_registry(npyimpl.registry)  # scalar ufuncs: np.isfinite


def _compiles_light(dispatcher):
    """Make ``dispatcher`` compile with :func:`_kernel_registries`, falling back on the full set.

    A dispatcher without Numba's compiler internals this relies on is left
    to compile as Numba does.
    """
    compiler = getattr(dispatcher, "_compiler", None)
    core = getattr(compiler, "_compile_core", None)
    if core is None or not hasattr(compiler, "targetdescr"):
        return

    def _compile_core(args, return_type):
        # Dispatcher.compile calls this under Numba's global compiler lock,
        # as every refresh Numba makes runs under it: no other thread's
        # compile sees the stand-in.
        context = compiler.targetdescr.target_context
        if "load_additional_registries" in vars(context):  # within a kernel's compile
            return core(args, return_type)
        context.load_additional_registries = lambda: _kernel_registries(context)
        try:
            return core(args, return_type)
        except errors.ForceLiteralArg:  # Numba's request to compile again, with literals
            raise
        except Exception as e:
            RETRIED.append((dispatcher.__name__, repr(e)[:500]))
        finally:
            del context.load_additional_registries
        return core(args, return_type)

    compiler._compile_core = _compile_core


_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_STAMP: dict = {}


def package_stamp(folder=_PACKAGE):
    """The modification times and sizes of the ``.py`` files in ``folder``, sorted by name.

    Taken once per folder and process (Numba, too, stamps a function's
    cache as it creates it).
    """
    stamp = _STAMP.get(folder)
    if stamp is None:
        stamp = []
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                st = os.stat(os.path.join(folder, name))
                stamp.append((name, st.st_mtime, st.st_size))
        stamp = _STAMP[folder] = tuple(stamp)
    return stamp


class _PackageStamped:
    """A cache locator for the package's functions: Numba's own, stamped with every module.

    Numba stamps a cached function with its own source file alone, and
    loads it while that file is unchanged.  A function's machine code holds
    the per-dtype code of other modules too (numerics' intrinsics are
    emitted into it, and a kernel links the cached overloads it calls), so
    an edit to numerics.py alone left kernels.py's kernels, and its
    overloads' implementations (each cached by itself), loading their old
    code.  This locator stands first in Numba's list: for a function of the
    package it takes the locator Numba would (same cache folder) and adds
    :func:`package_stamp` to its stamp; for any other it declines.
    """

    @classmethod
    def from_function(cls, py_func, py_file):
        if os.path.dirname(os.path.abspath(py_file)) != _PACKAGE:
            return None
        for other in CompileResultCacheImpl._locator_classes:
            if other is cls:
                continue
            locator = other.from_function(py_func, py_file)
            if locator is not None:
                own = locator.get_source_stamp
                locator.get_source_stamp = lambda: (own(), package_stamp())
                return locator
        return None


def _stamp_with_package():
    """Put :class:`_PackageStamped` first among the locators of Numba's function caches.

    On the class Numba's FunctionCache uses, not Numba's base list.  A
    Numba without that list (or ``NUMBA_CACHE_LOCATOR_CLASSES`` set, which
    Numba reads instead) keeps its own stamps.
    """
    classes = getattr(CompileResultCacheImpl, "_locator_classes", None)
    if isinstance(classes, list) and _PackageStamped not in classes:
        CompileResultCacheImpl._locator_classes = [_PackageStamped, *classes]


# before any module of the package makes a cached function
_stamp_with_package()


def adopt(namespace):
    """Give every disk-cached dispatcher among ``namespace``'s values the light load.

    ``namespace`` is a module's ``globals()``; dispatchers without
    ``cache=True`` are left alone.  Those adopted also type a first call's
    arguments with :mod:`reducemean.valuetypes`, which imports nothing
    either, and compile with the kernels' lowering alone (see above).
    """
    for value in list(namespace.values()):
        cache = getattr(value, "_cache", None)
        if isinstance(value, Dispatcher) and type(cache) is FunctionCache:
            cache.__class__ = _LoadOnly
            type_arguments(value)
            _compiles_light(value)


__all__ = ["RETRIED", "adopt", "package_stamp"]
