"""A monotonic clock callable from ``@njit(cache=True)`` kernels.

numba has no ``time`` support in nopython mode and ctypes function pointers
defeat its on-disk cache, so :func:`monotonic_ns` is an intrinsic that emits a
direct call to libc's ``clock_gettime(CLOCK_MONOTONIC)`` (Linux; the vDSO makes
it about 20-25 ns). Its value matches Python's ``time.monotonic_ns()``.
"""
from __future__ import annotations

import numba as nb
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

CLOCK_MONOTONIC = 1  # Linux


@intrinsic
def _clock_monotonic_ns(typingctx):
    sig = types.int64()

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        i32 = ir.IntType(32)
        timespec = ir.LiteralStructType([i64, i64])
        fnty = ir.FunctionType(i32, [i32, timespec.as_pointer()])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "clock_gettime")
        ts = cgutils.alloca_once(builder, timespec)
        builder.call(fn, [ir.Constant(i32, CLOCK_MONOTONIC), ts])
        sec = builder.load(cgutils.gep_inbounds(builder, ts, 0, 0))
        nsec = builder.load(cgutils.gep_inbounds(builder, ts, 0, 1))
        return builder.add(builder.mul(sec, ir.Constant(i64, 1_000_000_000)), nsec)

    return sig, codegen


@nb.njit(cache=True)
def monotonic_ns():
    """int64 nanoseconds of the monotonic clock (same origin as ``time.monotonic_ns``)."""
    return _clock_monotonic_ns()


@nb.njit(cache=True)
def deadline_ns(seconds):
    """The monotonic time ``seconds`` from now, or -1 for no limit (``seconds <= 0``)."""
    if seconds <= 0.0:
        return -1
    return monotonic_ns() + int(seconds * 1e9)


@nb.njit(cache=True, inline="always")
def budget_exhausted(iterations, max_iterations, start, deadline):
    """Whether a search that has done ``iterations`` must stop now.

    Stops at ``max_iterations``; under a time budget (``deadline >= 0``, from
    :func:`deadline_ns`) also when the next iteration, at the mean pace since
    ``start``, would end past the deadline. At least one iteration always runs.
    """
    if iterations >= max_iterations:
        return True
    if deadline < 0 or iterations == 0:
        return False
    now = monotonic_ns()
    return now + (now - start) // iterations >= deadline
