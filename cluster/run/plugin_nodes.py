"""Plugins on every Ray node: one check before any game that each node imports them.

A study may name plugin agents and games (installed entry points or import paths,
:mod:`games.plugins`). The driver loaded them while it validated the spec; the Ray
workers load them again on their own nodes (the spec they receive names the
plugins' config classes, and the registries resolve names lazily), so every node
needs them installed: ``pip install`` on each machine, in the image, or through
the job's runtime env (``infra/runtime_env.yaml``). :func:`check_plugins_on_nodes`
imports the plugins' modules once on every alive node and turns the first failure
into one :class:`~cluster.spec.fields.SpecError` naming the spec field, the module
and the node, before any game is played.
"""
from __future__ import annotations

from importlib import import_module

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from agents.plugins import AGENT_ENTRY_POINTS
from cluster.spec.fields import SpecError
from games.plugins import describe_import_error, plugin_module
from games.registry import GAME_ENTRY_POINTS

#: Packages of Arena itself: every node has them; not plugins.
ARENA_PACKAGES = ("games", "agents", "cluster", "jobs")


def _is_arena_module(module: str) -> bool:
    return module.split(".", 1)[0] in ARENA_PACKAGES


def plugin_modules(spec) -> dict[str, tuple[str, ...]]:
    """``{spec field: modules}``: the modules outside Arena that a worker imports to
    build the game and each lineup entry (the plugin's own module and its config
    class's); fields without any are left out."""
    wanted: dict[str, tuple[str, ...]] = {}

    def add(field: str, *modules: str | None) -> None:
        found = tuple(dict.fromkeys(m for m in modules if m and not _is_arena_module(m)))
        if found:
            wanted[field] = found

    add("game.name", plugin_module(spec.game, GAME_ENTRY_POINTS), type(spec.game_config).__module__)
    for i, seat in enumerate(spec.lineup):
        add(f"lineup[{i}].agent", plugin_module(seat.agent, AGENT_ENTRY_POINTS), type(seat.config).__module__)
    return wanted


def import_failures(wanted: dict[str, tuple[str, ...]]) -> list[tuple[str, str, str]]:
    """``(field, module, reason)`` for every module of ``wanted`` that does not import here."""
    failures = []
    for field, modules in wanted.items():
        for module in modules:
            try:
                import_module(module)
            except Exception as exc:
                failures.append((field, module, describe_import_error(exc)))
    return failures


@ray.remote(num_cpus=0, max_retries=0)
def _import_on_node(wanted: dict[str, tuple[str, ...]]) -> tuple[str, list[tuple[str, str, str]]]:
    return ray.util.get_node_ip_address(), import_failures(wanted)


def check_plugins_on_nodes(spec, timeout: float = 300.0) -> None:
    """Import the spec's plugin modules on every alive node; SpecError naming the
    field, the module and the node for the first one that does not import."""
    wanted = plugin_modules(spec)
    if not wanted:
        return
    refs = []
    for node in ray.nodes():
        if node.get("Alive"):
            strategy = NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False)
            refs.append(_import_on_node.options(scheduling_strategy=strategy).remote(wanted))
    for node_ip, failures in ray.get(refs, timeout=timeout):
        if failures:
            field, module, reason = failures[0]
            raise SpecError(f"{field}: plugin module {module!r} does not import on Ray node {node_ip} "
                            f"({reason}); install the plugin on every node (see infra/runtime_env.yaml)")
