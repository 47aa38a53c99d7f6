"""Low-level numba helpers for hot kernels: the kernels' toolkit, for games and agents.

Public on purpose: every game's kernels use these helpers, and so do the agents'
search kernels that call them (``agents.search.tree``, the Pommerman, Scotland Yard
and bird-game searches), which may import nothing private of ``games``. They
remove costs numba adds to tight loops; all are unsafe if misused, so their rules
are in their docstrings:

- :func:`stack_alloca` -- scratch memory on the caller's stack (no heap
  allocation per call; must not escape the function);
- :func:`borrow` -- an array view without reference counting (the owner must
  outlive the view; never return or store a borrowed view);
- :func:`keep_alive` -- marks the point up to which a kernel's own array must
  live, so that a view borrowed from it stays valid until there;
- :func:`data_pointer` -- an array's data as a typed pointer, so that a hot
  kernel can take a state as a few pointers (one register each) instead of
  arrays (seven to nine machine words each, pushed on the stack at every call);
- :func:`carve` / :func:`add_references` -- several arrays over one new buffer
  with one reference-count store instead of one atomic increment per array;
- :func:`data_address` / :func:`copy_bytes` -- a state laid out in one buffer
  is recognised by its arrays' addresses and copied by ``memcpy`` over byte spans;
- :func:`zero_bytes` -- one ``memset`` over a stretch of an array's bytes.
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


def _buffer_view(buf, offset, dtype, rows, cols, take_reference: bool):
    """Typing and codegen of :func:`sub_array` (``take_reference``: the view increments
    ``buf``'s reference count) and :func:`carve` (it does not); None when the arguments
    are not a 1-D C uint8 buffer and compile-time constants."""
    if not (isinstance(buf, types.Array) and buf.ndim == 1 and buf.layout == "C"
            and buf.dtype == types.uint8):
        return None
    lits = (offset, rows, cols)
    if not all(isinstance(x, types.IntegerLiteral) for x in lits) or not isinstance(dtype, types.DTypeSpec):
        return None
    off, n_rows, n_cols = (x.literal_value for x in lits)
    elem = dtype.dtype
    shape = (n_rows,) if n_cols == 0 else (n_rows, n_cols)
    ret = types.Array(elem, len(shape), "C")

    def codegen(context, builder, sig, args):
        from numba.np.arrayobj import make_array, populate_array
        src = make_array(sig.args[0])(context, builder, args[0])
        item = context.get_abi_sizeof(context.get_data_type(elem))
        intp = context.get_value_type(types.intp)
        strides = (item,) if n_cols == 0 else (n_cols * item, item)
        data = builder.bitcast(cgutils.pointer_add(builder, src.data, intp(off)),
                               context.get_data_type(elem).as_pointer())
        out = make_array(ret)(context, builder)
        populate_array(out, data=data, shape=[intp(s) for s in shape],
                       strides=[intp(s) for s in strides], itemsize=intp(item),
                       meminfo=src.meminfo)
        if take_reference:
            context.nrt.incref(builder, sig.args[0], args[0])
        return out._getvalue()

    return ret(buf, offset, dtype, rows, cols), codegen


@intrinsic
def sub_array(typingctx, buf, offset, dtype, rows, cols):
    """A C-contiguous ``dtype`` array over the bytes of ``buf`` from ``offset`` on,
    sharing (and holding a reference to) ``buf``'s memory.

    ``buf`` is a 1-D C-contiguous uint8 array; ``offset``, ``rows`` and ``cols``
    are compile-time constants; the result has shape ``(rows,)`` when ``cols`` is
    0, else ``(rows, cols)``. ``offset`` must be a multiple of the item size and
    the array must fit in ``buf`` (not checked). Unlike ``buf[a:b].view(t).reshape(s)``
    this emits no runtime reshape call: several arrays carved from one buffer cost
    one heap allocation (``games/pommerman/_layout.copy_state``).
    """
    return _buffer_view(buf, offset, dtype, rows, cols, take_reference=True)


@intrinsic
def keep_alive(typingctx, arr):
    """Emit nothing, but count as a use of ``arr`` (a numba array, or a tuple of arrays) here.

    numba releases a local array right after its last use. A kernel that borrows
    a view of an array it allocated itself (``view = borrow(owner)``) and then
    reads only the view would free the owner under the view; ``keep_alive(owner)``
    after the last use of the view keeps the owner until that point.
    """
    if not (isinstance(arr, types.Array) or (isinstance(arr, types.BaseTuple)
                                             and all(isinstance(t, types.Array) for t in arr))):
        return None

    def codegen(context, builder, sig, args):
        return context.get_dummy_value()

    return types.none(arr), codegen


@intrinsic
def data_pointer(typingctx, arr):
    """The data pointer of a C-contiguous numba array, as ``CPointer(dtype)``.

    ``nb.carray(data_pointer(a), shape)`` rebuilds ``a`` (with a compile-time
    shape) inside the callee, without a reference count. A kernel called once
    per simulated tick takes its state this way: an array argument is passed as
    seven (1-D) or nine (2-D) machine words, so a six-array state and an action
    array cost some 55 stack pushes per call, a pointer one register. The
    caller must keep ``a`` alive while the pointer is used (a kernel's own
    arguments are).
    """
    if not (isinstance(arr, types.Array) and arr.layout == "C"):
        return None

    def codegen(context, builder, sig, args):
        from numba.np.arrayobj import make_array
        ary = make_array(sig.args[0])(context, builder, args[0])
        return ary.data

    return types.CPointer(arr.dtype)(arr), codegen


@intrinsic
def carve(typingctx, buf, offset, dtype, rows, cols):
    """As :func:`sub_array`, but the view takes NO reference of ``buf``'s memory:
    the caller accounts for it with :func:`add_references` (one plain store for all
    the views carved from a buffer, where ``sub_array`` does one atomic increment
    each, ~20 cycles apiece). A carved view that is not so accounted for frees the
    buffer under the other views when it dies.
    """
    return _buffer_view(buf, offset, dtype, rows, cols, take_reference=False)


@intrinsic
def add_references(typingctx, buf, count):
    """Add ``count`` (a compile-time constant) to the reference count of ``buf``'s
    memory with a plain (non-atomic) store: only for a buffer the calling kernel has
    just allocated and not yet shared with anything (so no other thread can hold it),
    to account for the ``count`` views :func:`carve` made of it.
    """
    if not (isinstance(buf, types.Array) and isinstance(count, types.IntegerLiteral)):
        return None
    n = count.literal_value

    def codegen(context, builder, sig, args):
        from numba.np.arrayobj import make_array
        ary = make_array(sig.args[0])(context, builder, args[0])
        intp = context.get_value_type(types.intp)
        # NRT's MemInfo starts with its reference count (a size_t)
        refct = builder.bitcast(ary.meminfo, intp.as_pointer())
        builder.store(builder.add(builder.load(refct), intp(n)), refct)
        return context.get_dummy_value()

    return types.none(buf, count), codegen


@intrinsic
def data_address(typingctx, arr):
    """The address of an array's data as an integer (to compare the layout of arrays)."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, sig, args):
        from numba.np.arrayobj import make_array
        ary = make_array(sig.args[0])(context, builder, args[0])
        return builder.ptrtoint(ary.data, context.get_value_type(types.intp))

    return types.intp(arr), codegen


@intrinsic
def copy_bytes(typingctx, dst, src, start, stop):
    """``memcpy`` of the bytes ``start`` (inclusive) to ``stop`` (exclusive) of array
    ``src``'s data onto the same bytes of array ``dst``'s data (integers; nothing when
    ``stop <= start``). The arrays need not be of that size: the caller guarantees that
    both regions are valid memory (for instance the one buffer several arrays were carved
    from, addressed through its first array) and do not overlap. Constant bounds (after
    inlining) let LLVM emit the moves inline.
    """
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array)
            and isinstance(start, types.Integer) and isinstance(stop, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        from numba.np.arrayobj import make_array
        d = make_array(sig.args[0])(context, builder, args[0])
        s = make_array(sig.args[1])(context, builder, args[1])
        lo = context.cast(builder, args[2], sig.args[2], types.intp)
        hi = context.cast(builder, args[3], sig.args[3], types.intp)
        with builder.if_then(builder.icmp_signed(">", hi, lo)):
            dp = cgutils.pointer_add(builder, builder.bitcast(d.data, cgutils.voidptr_t), lo)
            sp = cgutils.pointer_add(builder, builder.bitcast(s.data, cgutils.voidptr_t), lo)
            cgutils.raw_memcpy(builder, dp, sp, builder.sub(hi, lo), 1)
        return context.get_dummy_value()

    return types.none(dst, src, start, stop), codegen


@intrinsic
def zero_bytes(typingctx, arr, start, stop):
    """``memset`` to zero of the bytes ``start`` (inclusive) to ``stop`` (exclusive) of
    array ``arr``'s data (integers; nothing when ``stop <= start``). The caller guarantees
    that they lie inside the array's memory. An element loop over a 2-D slice compiles to
    scalar stores with a negative-index check each; this is one ``memset``.
    """
    if not (isinstance(arr, types.Array) and isinstance(start, types.Integer)
            and isinstance(stop, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        from numba.np.arrayobj import make_array
        ary = make_array(sig.args[0])(context, builder, args[0])
        intp = context.get_value_type(types.intp)
        lo = context.cast(builder, args[1], sig.args[1], types.intp)
        hi = context.cast(builder, args[2], sig.args[2], types.intp)
        with builder.if_then(builder.icmp_signed(">", hi, lo)):
            ptr = cgutils.pointer_add(builder, builder.bitcast(ary.data, cgutils.voidptr_t), lo)
            cgutils.memset(builder, ptr, builder.sub(hi, lo), 0)
        return context.get_dummy_value()

    return types.none(arr, start, stop), codegen
