"""``arena ui``: a study's results in the MLflow UI (serves it on 127.0.0.1)."""
from __future__ import annotations

import sys
from pathlib import Path

from . import UsageError, positive_int


def add_parser(sub) -> None:
    """Register ``arena ui`` and its options."""
    p = sub.add_parser("ui", help="print the URL of a study's results in the MLflow UI and serve it on 127.0.0.1")
    p.add_argument("study", nargs="?",
                   help="a study directory: show its run (default: the experiment runs page of the "
                        "latest study in the store)")
    p.add_argument("--tracking-uri", help="MLflow store (default: the study's, else sqlite:///mlflow.db)")
    p.add_argument("--experiment", help="show this experiment's runs page")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=positive_int, default=5000, help="port (default 5000)")
    p.add_argument("--workers", type=positive_int, default=1, help="MLflow UI server processes (default 1)")
    p.add_argument("--open", action="store_true", help="also open the URL in a browser, where there is one")
    p.add_argument("--url-only", action="store_true", help="print the URL and exit (a UI already runs)")
    p.set_defaults(func=run)


def _ui_target(args) -> tuple[str, str, str | None]:
    """(tracking URI, experiment id, run id or None) that ``arena ui`` shows."""
    from cluster.tracking import normalize_uri, read_run_records, store_exists

    if args.study:
        study = Path(args.study)
        if not study.is_dir():
            raise UsageError(f"{study}: no such study directory")
        records = read_run_records(study)
        if args.tracking_uri:
            records = [r for r in records if r.get("tracking_uri") == normalize_uri(args.tracking_uri)]
        if not records:
            raise UsageError(f"{study}: no MLflow run recorded here (mlflow_run.json); was the study "
                             f"run with tracking off, or is it not a study directory?")
        record = records[-1]
        uri = record["tracking_uri"]
        if not store_exists(uri):
            raise UsageError(f"the study's MLflow store {uri} does not exist (moved or deleted?)")
        return uri, str(record["experiment_id"]), record["run_id"]
    uri = normalize_uri(args.tracking_uri or "sqlite:///mlflow.db")
    if not store_exists(uri):
        raise UsageError(f"no MLflow store at {uri}: run a study first (arena run SPEC), or pass "
                         f"--tracking-uri, or give a study directory (arena ui arena-studies/NAME)")
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    if args.experiment:
        exp = client.get_experiment_by_name(args.experiment)
        if exp is None:
            names = sorted(e.name for e in client.search_experiments())
            raise UsageError(f"--experiment: no experiment {args.experiment!r} in {uri}; known: {names}")
        return uri, exp.experiment_id, None
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()],
                              order_by=["attributes.start_time DESC"], max_results=1)
    if not runs:
        raise UsageError(f"no runs in the MLflow store {uri}: run a study first (arena run SPEC)")
    return uri, runs[0].info.experiment_id, None


def run(args) -> int:
    """Print the URL of the study's experiment runs page (or of one study's run), then
    serve the MLflow UI on it (``--open``: also launch a browser, where there is one)."""
    import os
    import subprocess

    from cluster.tracking import is_server, ui_url

    uri, experiment_id, run_id = _ui_target(args)
    if is_server(uri):
        url = ui_url(uri, experiment_id, run_id)
        print(url, flush=True)
        if args.open:
            _open_browser(url)
        return 0
    url = ui_url(f"http://{args.host}:{args.port}", experiment_id, run_id)
    print(url, flush=True)
    if args.url_only:
        if args.open:
            _open_browser(url)
        return 0
    print(f"serving the MLflow UI for {uri} (Ctrl-C to stop)", file=sys.stderr, flush=True)
    cmd = [sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", uri,
           "--host", args.host, "--port", str(args.port), "--workers", str(args.workers)]
    env = dict(os.environ)
    env.setdefault("MLFLOW_SERVER_ENABLE_JOB_EXECUTION", "false")  # no background job runners for browsing
    proc = subprocess.Popen(cmd, env=env)

    def _stop(signum, frame):  # a plain `kill` of arena ui stops the UI server too
        raise KeyboardInterrupt

    import signal

    signal.signal(signal.SIGTERM, _stop)
    if args.open:
        _open_browser(url, wait_for=f"http://{args.host}:{args.port}/health")
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        return 0


def _open_browser(url: str, wait_for: str | None = None, timeout: float = 60.0) -> None:
    """Open ``url`` in a browser once ``wait_for`` answers; say so when there is no browser."""
    import time
    import urllib.request
    import webbrowser

    deadline = time.monotonic() + timeout
    while wait_for and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(wait_for, timeout=2):
                break
        except OSError:
            time.sleep(0.5)
    try:
        opened = webbrowser.open(url)
    except webbrowser.Error:
        opened = False
    if not opened:
        print(f"no browser found here; open {url} yourself", file=sys.stderr, flush=True)
