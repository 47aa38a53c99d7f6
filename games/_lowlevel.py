"""Low-level numba helpers for hot kernels (shared by every game).

Both remove costs numba adds to tight loops; both are unsafe if misused, so
their rules are in their docstrings:

- :func:`stack_alloca` -- scratch memory on the caller's stack (no heap
  allocation per call; must not escape the function);
- :func:`borrow` -- an array view without reference counting (the owner must
  outlive the view; never return or store a borrowed view).
"""
from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def stack_alloca(typingctx, count, dtype):
    """Pointer to ``count`` uninitialised ``dtype`` elements on the caller's stack.

    ``count`` must be a compile-time constant (a literal or a module-level
    int); ``dtype`` a numpy dtype such as ``np.int16``. Wrap the pointer with
    ``nb.carray(ptr, count)`` to get a 1-D array that needs no heap
    allocation (no NRT meminfo, no refcounting). The memory lives until the
    calling function returns, so the array must not escape it. The kernels
    use this for their per-tick scratch: a heap ``np.empty`` costs ~50-100 ns
    per call, a stack slot nothing.
    """
    if not isinstance(count, types.IntegerLiteral) or not isinstance(dtype, types.DTypeSpec):
        return None
    n = count.literal_value
    elem = dtype.dtype

    def codegen(context, builder, sig, args):
        return cgutils.alloca_once(builder, context.get_value_type(elem), size=n)

    return types.CPointer(elem)(count, dtype), codegen


@intrinsic
def borrow(typingctx, arr):
    """``arr`` (any numba array) as an unowned view: same data, no reference count.

    numba increments and decrements (atomically, through a call) the
    reference count of an array each time a variable is bound to it, and its
    pruning pass leaves dozens of these pairs in a kernel with loops: ~40 per
    tick, about half the cost of a step. A borrowed view has a NULL meminfo,
    so those calls return at once. The caller must keep the owner alive for
    as long as the view is used (the kernels borrow their arguments' arrays
    for the duration of one call).
    """
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, sig, args):
        ary = args[0]
        null = cgutils.get_null_value(ary.type.elements[0])
        return builder.insert_value(ary, null, 0)

    return arr(arr), codegen
