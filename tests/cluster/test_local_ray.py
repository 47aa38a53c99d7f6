"""The embedded Ray that ``arena run`` starts listens on the loopback only (issue 54, point 5).

A driver process starts Ray exactly as a study does (:func:`cluster.run.scheduler.start_ray`
without an address), runs a task so that a worker is up, and waits; this test lists the
listening TCP sockets of the driver and of every process it started (GCS, raylet, the
dashboard and runtime-env agents with the Prometheus ``/metrics`` endpoint, log monitor,
workers) until they stop changing, and finds none outside 127.0.0.0/8 and ::1.
"""
from __future__ import annotations

import ipaddress
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

ray = pytest.importorskip("ray")

REPO = Path(__file__).resolve().parents[2]

DRIVER = textwrap.dedent("""
    import sys

    import ray

    from cluster.run.scheduler import start_ray

    assert start_ray(None, 1)

    @ray.remote
    def ping():
        return 1

    assert ray.get(ping.remote(), timeout=120) == 1
    print("ready", flush=True)
    sys.stdin.readline()
    ray.shutdown()
""")


def _listeners(root: psutil.Process) -> set[tuple[str, str, int]]:
    """``(process name, address, port)`` of every listening TCP socket of ``root`` and
    its descendants."""
    found = set()
    for proc in [root, *root.children(recursive=True)]:
        try:
            name = " ".join(proc.cmdline()[:2])[-80:] or proc.name()
            for conn in proc.net_connections(kind="tcp"):
                if conn.status == psutil.CONN_LISTEN:
                    found.add((name, conn.laddr.ip, conn.laddr.port))
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def _is_loopback(address: str) -> bool:
    """127.0.0.0/8, ::1, or an IPv4 loopback address mapped into IPv6 (``::ffff:127.0.0.1``)."""
    ip = ipaddress.ip_address(address.split("%")[0])
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)


def test_every_listener_of_the_embedded_ray_is_on_the_loopback(tmp_path):
    log = tmp_path / "driver.err"
    with open(log, "w") as err:
        driver = subprocess.Popen([sys.executable, "-c", DRIVER], cwd=REPO, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        lines = iter(driver.stdout.readline, "")
        assert any(line.strip() == "ready" for line in lines), log.read_text()[-3000:]
        root = psutil.Process(driver.pid)
        seen: set[tuple[str, str, int]] = set()
        last_change, start = time.monotonic(), time.monotonic()
        # The agents bind their ports some seconds after the node is up: watch until the
        # set of listeners has not changed for 5 s (at least 8 s in all, at most 60 s).
        while time.monotonic() - start < 60:
            now = _listeners(root)
            if not now <= seen:
                seen |= now
                last_change = time.monotonic()
            if time.monotonic() - last_change > 5 and time.monotonic() - start > 8:
                break
            time.sleep(0.5)
        assert seen, "no listening socket found: the probe did not see Ray's processes"
        exposed = sorted(item for item in seen if not _is_loopback(item[1]))
        assert not exposed, f"listening beyond the loopback: {exposed}"
    finally:
        if driver.poll() is None:
            driver.stdin.write("\n")
            driver.stdin.flush()
            try:
                driver.wait(timeout=60)
            except subprocess.TimeoutExpired:
                driver.kill()
                driver.wait()
