"""The embedded Ray that Arena starts on this machine (no ``--address``): every listener on 127.0.0.1.

A Ray node listens on TCP ports: its GCS, its raylet (node manager and object manager),
the dashboard agent (gRPC, HTTP, and a Prometheus ``/metrics`` endpoint without
authentication, which answers the node's address and session name), the runtime-env
agent, and every worker's gRPC server. ``ray.init()`` alone binds them to the machine's
network address or to every interface (``0.0.0.0``, ``::``), so anyone on the network
could reach them; ``_node_ip_address="127.0.0.1"`` does not help on Linux, where Ray
replaces a loopback node address by the machine's (``resolve_ip_for_localhost``).

Ray has one switch for a node that is its machine's alone: ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER
= 0``, its default on Windows and macOS. The node's address is then 127.0.0.1, and every
Ray server binds the loopback (Ray's servers bind localhost when the node's address is
localhost). Ray reads the variable when it is imported, and Arena's driver has imported
Ray before it starts one, so :func:`init_local_ray` sets both the variable (for the
processes Ray starts) and the copy Ray read (``ray._private.ray_constants``) for the
call, and restores them after it (a later ``ray.init(address=...)`` in the process joins a
cluster as usual). The dashboard stays off. A cluster joined with ``--address`` is
configured where it is started (``ray start``, infra/README.md), not here.

``tests/cluster/test_local_ray.py`` starts this Ray as ``arena run`` does and lists the
listening sockets of every process of its session: all are on the loopback.
"""
from __future__ import annotations

import os
from contextlib import contextmanager

import ray

__all__ = ["LOOPBACK", "SINGLE_MACHINE_SWITCH", "local_ray_options", "init_local_ray"]

#: The address every listener of the embedded Ray binds.
LOOPBACK = "127.0.0.1"
#: Ray's switch for a node that is its machine's alone ("0": the node's address is the loopback).
SINGLE_MACHINE_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def local_ray_options(num_cpus: int | None = None) -> dict:
    """``ray.init`` keywords of a fresh embedded Ray bound to :data:`LOOPBACK` (``address =
    "local"``: a new Ray even if a ``ray start`` cluster runs on this machine), with
    ``num_cpus`` CPUs (default: all), no dashboard, and workers' output not echoed."""
    return {"address": "local", "num_cpus": num_cpus or os.cpu_count(), "include_dashboard": False,
            "dashboard_host": LOOPBACK, "_node_ip_address": LOOPBACK, "log_to_driver": False}


def init_local_ray(num_cpus: int | None = None, **overrides) -> None:
    """Start the embedded Ray (:func:`local_ray_options`; ``overrides`` replace keywords), its
    node's address the loopback (:func:`_single_machine`)."""
    with _single_machine():
        ray.init(**{**local_ray_options(num_cpus), **overrides})


@contextmanager
def _single_machine():
    """Ray's single-machine mode for the duration: :data:`SINGLE_MACHINE_SWITCH` set to "0"
    in the environment (the processes Ray starts read it) and in the copy this process's Ray
    read when it was imported; both restored after."""
    from ray._private import ray_constants

    before_env = os.environ.get(SINGLE_MACHINE_SWITCH)
    before = ray_constants.ENABLE_RAY_CLUSTER
    os.environ[SINGLE_MACHINE_SWITCH] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = before
        if before_env is None:
            os.environ.pop(SINGLE_MACHINE_SWITCH, None)
        else:
            os.environ[SINGLE_MACHINE_SWITCH] = before_env
