"""Test helper: run calls in threads of their own at once, and keep what they raise.

An exception inside a ``threading.Thread`` only prints a warning, so a test
that starts threads passes when every call in them raises unless it keeps
their exceptions itself.
"""

from __future__ import annotations

import threading


def run_threads(work, args, timeout=None):
    """``work(*a)`` for each ``a`` of ``args``, each in a thread, all started together.

    Returns the ``(a, exception)`` pairs of the threads that raised; a
    thread still running after ``timeout`` seconds is one too.
    """
    errors = []
    barrier = threading.Barrier(len(args))

    def guarded(*a):
        try:
            barrier.wait()
            work(*a)
        except BaseException as e:  # noqa: BLE001 - every failure is the test's
            errors.append((a, e))

    threads = [threading.Thread(target=guarded, args=a) for a in args]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    errors += [(a, TimeoutError("still running")) for a, t in zip(args, threads) if t.is_alive()]
    return errors
