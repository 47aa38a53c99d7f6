"""The embedded Ray that Arena starts on this machine (no ``--address``): every listener on 127.0.0.1.

A Ray node listens on TCP ports: its GCS, its raylet (node manager and object manager),
the dashboard agent (gRPC, HTTP, and a Prometheus ``/metrics`` endpoint without
authentication, which answers the node's address and session name), the runtime-env
agent, and every worker's gRPC server. Started with ``ray.init()`` alone they bind the
machine's network address or every interface (0.0.0.0), so anyone on the network could
reach them. Arena's embedded Ray is one machine's: it gives Ray the loopback address as
the node's address (``_node_ip_address``), which Ray's own processes then bind, and keeps
the dashboard off. A cluster joined with ``--address`` is configured where it is started
(``ray start``, infra/README.md), not here.

``tests/cluster/test_local_ray.py`` starts this Ray as ``arena run`` does and lists the
listening sockets of every process of its session: all are on the loopback.
"""
from __future__ import annotations

import os

import ray

__all__ = ["LOOPBACK", "local_ray_options", "init_local_ray"]

#: The address every listener of the embedded Ray binds.
LOOPBACK = "127.0.0.1"


def local_ray_options(num_cpus: int | None = None) -> dict:
    """``ray.init`` keywords of a fresh embedded Ray bound to :data:`LOOPBACK` (``address =
    "local"``: a new Ray even if a ``ray start`` cluster runs on this machine), with
    ``num_cpus`` CPUs (default: all), no dashboard, and workers' output not echoed."""
    return {"address": "local", "num_cpus": num_cpus or os.cpu_count(), "include_dashboard": False,
            "dashboard_host": LOOPBACK, "_node_ip_address": LOOPBACK, "log_to_driver": False}


def init_local_ray(num_cpus: int | None = None, **overrides) -> None:
    """Start the embedded Ray (:func:`local_ray_options`; ``overrides`` replace keywords)."""
    ray.init(**{**local_ray_options(num_cpus), **overrides})
