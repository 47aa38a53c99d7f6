"""Compile-time repairs to numba's IR inliner (``inline="always"``), applied when ``games`` is imported.

Arena's kernels inline their helpers at numba's IR level (``inline="always"``: the
searches' speed depends on it, see ``agents/pommerman/_common.py``). On a fresh cache
most of a Pommerman cold start went to the inliner, not to code generation: under
numba 0.60-0.68 each inlined call site

1. deep-copies the callee's blocks one at a time, and a variable's deep copy copies
   its scope (every variable of the function), so one inlined copy of a callee with
   ``B`` blocks and ``V`` variables made ``B x V`` variable copies, twice (numba issue
   #8989). :func:`_scope_copied_once` gives the blocks of one inlined copy one shared
   copy of the scope, as the callee's own blocks share one scope;
2. re-runs the untyped front end on the callee, which inlines the callee's own
   inlinables again, so a tree of nested inlinables was rebuilt at every transitive
   call site. :func:`_callee_ir_once` keeps one front-end result per callee (and
   compiler flags) in the process; the inliner copies it before it changes it.

Neither changes the IR that reaches type inference, only how often it is built and
copied: the kernels and the games are the same (the golden and same-games tests run
on the repaired inliner). Measured with ``python jobs/bench/probes/pommerman_compile_profile.py
--ruleset java`` (CPU seconds of compiling, one process): see the README's "Cold start".

``ARENA_NUMBA_INLINER=stock`` leaves numba as it is (to measure, or to rule the
repair out). On a numba whose internals differ the repair is skipped (``installed()``
says whether it is in place; a test pins it for the versions ``pyproject.toml`` allows).
"""
from __future__ import annotations

import copy
import os
import threading

_state = threading.local()
_installed = False


def installed() -> bool:
    """Whether the repaired inliner is in place in this process."""
    return _installed


def _scope_deepcopy(scope, memo):
    """``copy.deepcopy`` of an ``ir.Scope``: numba's default field-by-field copy, except
    that within one inlined call (:func:`_scope_copied_once`) a scope is copied once
    and every block's copy shares it."""
    shared = getattr(_state, "scopes", None)
    if shared is not None:
        hit = shared.get(id(scope))
        if hit is not None:
            memo[id(scope)] = hit[1]
            return hit[1]
    cls = scope.__class__
    out = cls.__new__(cls)
    memo[id(scope)] = out
    if shared is not None:
        shared[id(scope)] = (scope, out)  # the original kept alive: its id stays unique
    for name, value in scope.__dict__.items():
        setattr(out, name, copy.deepcopy(value, memo))
    return out


def _scope_copied_once(inline_ir):
    """Wrap ``InlineWorker.inline_ir``: the scope copies it makes share one memo."""

    def wrapped(self, *args, **kwargs):
        outer = getattr(_state, "scopes", None)
        _state.scopes = {}
        try:
            return inline_ir(self, *args, **kwargs)
        finally:
            _state.scopes = outer

    wrapped.__wrapped__ = inline_ir
    return wrapped


_callee_irs: dict = {}


def _callee_ir_once(self, caller_ir, block, i, function, arg_typs=None):
    """``InlineWorker.inline_function`` with the callee's front end run once per
    (callee, flags): ``inline_ir`` copies the callee IR before it changes it."""
    key = (function, self.flags.summary())
    callee_ir = _callee_irs.get(key)
    if callee_ir is None:
        callee_ir = self.run_untyped_passes(function)
        _callee_irs[key] = callee_ir
    return self.inline_ir(caller_ir, block, i, callee_ir, function.__code__.co_freevars,
                          arg_typs=arg_typs)


def install() -> None:
    """Put the repaired inliner in place (idempotent); a no-op when
    ``ARENA_NUMBA_INLINER=stock`` or when numba's internals are not the expected ones."""
    global _installed
    if _installed or os.environ.get("ARENA_NUMBA_INLINER", "") == "stock":
        return
    try:
        from numba.core import ir
        from numba.core.inline_closurecall import InlineWorker
    except ImportError:
        return
    if ("__deepcopy__" in ir.Scope.__dict__ or not hasattr(InlineWorker, "inline_ir")
            or not hasattr(InlineWorker, "inline_function")
            or not hasattr(InlineWorker, "run_untyped_passes")):
        return
    ir.Scope.__deepcopy__ = _scope_deepcopy
    InlineWorker.inline_ir = _scope_copied_once(InlineWorker.inline_ir)
    InlineWorker.inline_function = _callee_ir_once
    _installed = True
