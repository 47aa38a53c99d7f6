"""Static checks of infra/: manifests parse, reference the real entry point and
specs, and keep the safe defaults (loopback ports, excluded local state)."""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
INFRA = ROOT / "infra"
YAML_FILES = sorted(p for p in INFRA.rglob("*") if p.suffix in (".yaml", ".yml"))
SPEC_RE = re.compile(r"jobs/[A-Za-z0-9_.\-]+\.toml")


def _docs(path: Path) -> list:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def _by_kind(path: Path, kind: str) -> list[dict]:
    return [d for d in _docs(path) if d.get("kind") == kind]


def _spec_paths(text: str) -> list[str]:
    return sorted(set(SPEC_RE.findall(text)))


def _assert_specs_exist(paths: list[str]) -> None:
    assert paths, "no jobs/*.toml spec referenced"
    existing = {p.relative_to(ROOT).as_posix() for p in ROOT.glob("jobs/*.toml")}
    missing = [p for p in paths if p not in existing]
    assert not missing, f"referenced specs not in jobs/: {missing} (have {sorted(existing)})"


def _invokes_arena_run(command: str) -> bool:
    words = shlex.split(command)
    return any(w == "arena" and words[i + 1:i + 2] == ["run"] for i, w in enumerate(words))


def test_infra_files_present():
    for rel in ("Dockerfile", "ray-cluster.yaml", "runtime_env.yaml", "README.md",
                "kuberay/raycluster.yaml", "kuberay/rayjob.yaml", "kuberay/mlflow.yaml",
                "mlflow/docker-compose.yaml", "mlflow/start-local.sh"):
        assert (INFRA / rel).is_file(), rel


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: p.relative_to(INFRA).as_posix())
def test_yaml_parses(path):
    docs = _docs(path)
    assert docs, f"{path} has no YAML documents"
    assert all(isinstance(d, dict) for d in docs)


def test_kuberay_kinds_and_api_versions():
    expected = {
        "raycluster.yaml": {"RayCluster"},
        "rayjob.yaml": {"RayJob"},
    }
    for name, kinds in expected.items():
        docs = _docs(INFRA / "kuberay" / name)
        ray_docs = [d for d in docs if d.get("kind") in ("RayCluster", "RayJob", "RayService")]
        assert {d["kind"] for d in ray_docs} == kinds, name
        for d in ray_docs:
            assert d["apiVersion"] == "ray.io/v1", (name, d["apiVersion"])
    core = {"Secret", "Service", "PersistentVolumeClaim"}
    for path in (INFRA / "kuberay").glob("*.yaml"):
        for d in _docs(path):
            assert "apiVersion" in d and "kind" in d and d.get("metadata", {}).get("name"), path
            if d["kind"] in core:
                assert d["apiVersion"] == "v1", (path, d["kind"])
            if d["kind"] in ("Deployment", "StatefulSet"):
                assert d["apiVersion"] == "apps/v1", (path, d["kind"])


def _cluster_spec_ok(spec: dict) -> None:
    head = spec["headGroupSpec"]
    assert isinstance(head["rayStartParams"], dict)
    assert head["template"]["spec"]["containers"][0]["image"]
    assert head.get("serviceType", "ClusterIP") == "ClusterIP"
    groups = spec["workerGroupSpecs"]
    assert groups
    for g in groups:
        assert g["groupName"] and isinstance(g["rayStartParams"], dict)
        assert g["minReplicas"] <= g.get("replicas", g["minReplicas"]) <= g["maxReplicas"]
        container = g["template"]["spec"]["containers"][0]
        assert container["resources"]["limits"]["cpu"]
    assert spec.get("authOptions", {}).get("mode") == "token"


def _env(container: dict) -> dict:
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def test_raycluster_manifest():
    (cluster,) = _by_kind(INFRA / "kuberay" / "raycluster.yaml", "RayCluster")
    spec = cluster["spec"]
    _cluster_spec_ok(spec)
    containers = [spec["headGroupSpec"]["template"]["spec"]["containers"][0]]
    containers += [g["template"]["spec"]["containers"][0] for g in spec["workerGroupSpecs"]]
    for c in containers:
        assert c["image"].endswith("arena:latest")
        assert _env(c)["MLFLOW_TRACKING_URI"].startswith("http://mlflow.")


def test_rayjob_manifest():
    (job,) = _by_kind(INFRA / "kuberay" / "rayjob.yaml", "RayJob")
    spec = job["spec"]
    assert spec["shutdownAfterJobFinishes"] is True
    assert _invokes_arena_run(spec["entrypoint"])
    _assert_specs_exist(_spec_paths(spec["entrypoint"]))
    assert "jobs/pommerman_ffa_demo.toml" in spec["entrypoint"]
    yaml.safe_load(spec["runtimeEnvYAML"])
    _cluster_spec_ok(spec["rayClusterSpec"])


def test_mlflow_manifest_matches_ray_side():
    docs = _docs(INFRA / "kuberay" / "mlflow.yaml")
    kinds = {d["kind"] for d in docs}
    assert {"Deployment", "Service", "Secret", "StatefulSet"} <= kinds
    (svc,) = [d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "mlflow"]
    assert svc["spec"].get("type", "ClusterIP") == "ClusterIP"
    (deploy,) = [d for d in docs if d["kind"] == "Deployment"]
    container = deploy["spec"]["template"]["spec"]["containers"][0]
    args = " ".join(container["command"] + container["args"])
    assert "--artifacts-destination" in args
    env = {e["name"]: e for e in container["env"]}
    assert "MLFLOW_BACKEND_STORE_URI" in env  # read by `mlflow server --backend-store-uri`
    # The URI the Ray pods use must be a host the server accepts.
    (cluster,) = _by_kind(INFRA / "kuberay" / "raycluster.yaml", "RayCluster")
    uri = _env(cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0])[
        "MLFLOW_TRACKING_URI"]
    host = uri.split("://", 1)[1].rstrip("/")
    allowed = next(a.split("=", 1)[1] for a in container["args"]
                   if a.startswith("--allowed-hosts="))
    assert host in allowed.split(","), (host, allowed)
    port = svc["spec"]["ports"][0]["port"]
    assert host.endswith(f":{port}")


def test_ray_cluster_launcher_config():
    path = INFRA / "ray-cluster.yaml"
    (config,) = _docs(path)
    assert config["provider"]["type"] == "aws"
    assert config["docker"]["image"].endswith("arena:latest")
    assert config["head_node_type"] in config["available_node_types"]
    assert len(config["available_node_types"]) >= 2
    head_start = " ".join(config["head_start_ray_commands"])
    assert "--dashboard-host=127.0.0.1" in head_start
    assert "RAY_AUTH_MODE=token" in head_start
    assert "RAY_AUTH_MODE=token" in " ".join(config["worker_start_ray_commands"])
    assert any("arena" in c.split() for c in config["setup_commands"])
    text = path.read_text()
    assert "arena run" in text
    _assert_specs_exist(_spec_paths(text))


def test_ray_cluster_launcher_schema():
    """Validate against the installed Ray's own cluster-config JSON schema."""
    jsonschema = pytest.importorskip("jsonschema")
    import json

    import ray.autoscaler

    schema_path = Path(os.path.dirname(ray.autoscaler.__file__)) / "ray-schema.json"
    if not schema_path.is_file():
        pytest.skip("ray-schema.json not shipped with this Ray")
    schema = json.loads(schema_path.read_text())
    (config,) = _docs(INFRA / "ray-cluster.yaml")
    jsonschema.validate(config, schema)


def _dockerfile() -> str:
    return (INFRA / "Dockerfile").read_text()


def test_dockerfile_base_image_matches_installed_ray():
    ray = pytest.importorskip("ray")
    m = re.search(r"^FROM\s+rayproject/ray:(\d+)\.(\d+)\.(\d+)-py(\d)(\d+)\S*", _dockerfile(), re.M)
    assert m, "Dockerfile must build FROM rayproject/ray:<x.y.z>-py<XY>..."
    major, minor = (int(x) for x in ray.__version__.split(".")[:2])
    assert (int(m.group(1)), int(m.group(2))) == (major, minor), ray.__version__
    assert (int(m.group(4)), int(m.group(5))) == sys.version_info[:2]


def test_dockerfile_installs_project_with_entry_point():
    text = _dockerfile()
    assert re.search(r"pip install[^\n]*\s\.(\s|$)", text), "Dockerfile must `pip install .`"
    assert re.search(r"^\s*(RUN|&&)[^\n]*\barena\b", text, re.M), "image build should run `arena`"
    for pkg in ("games", "agents", "cluster", "jobs"):
        assert re.search(rf"^COPY\b[^\n]*\b{pkg}\b", text, re.M), f"{pkg}/ not copied"
    assert "pyproject.toml" in text
    # The spec the KubeRay RayJob runs is resolved inside the image's WORKDIR.
    assert re.search(r"^WORKDIR\s+/home/ray/arena\s*$", text, re.M)
    _assert_specs_exist(_spec_paths(
        (INFRA / "kuberay" / "rayjob.yaml").read_text()))


def test_runtime_env_excludes_local_state():
    env = yaml.safe_load((INFRA / "runtime_env.yaml").read_text())
    assert env["working_dir"] == "."
    excludes = [e.rstrip("/") for e in env["excludes"]]
    for required in (".venv", "arena-studies", "mlruns", "mlflow.db", ".git"):
        assert required in excludes, required
    assert set(env["env_vars"]) >= {"MLFLOW_TRACKING_URI", "NUMBA_CACHE_DIR"}
    assert all(isinstance(v, str) for v in env["env_vars"].values())
    # Ray's own validation of the runtime_env dict (no upload happens here).
    from ray.runtime_env import RuntimeEnv

    RuntimeEnv(**env)


def test_docker_compose_ports_bound_to_loopback():
    (compose,) = _docs(INFRA / "mlflow" / "docker-compose.yaml")
    services = compose["services"]
    assert {"mlflow", "postgres"} <= set(services)
    published = 0
    for name, svc in services.items():
        for port in svc.get("ports", []):
            published += 1
            if isinstance(port, dict):
                assert port.get("host_ip") == "127.0.0.1", (name, port)
            else:
                assert str(port).startswith("127.0.0.1:"), (name, port)
    assert published >= 1
    command = " ".join(services["mlflow"]["command"])
    assert "--backend-store-uri=postgresql" in command
    assert "--artifacts-destination" in command


def test_start_local_script():
    path = INFRA / "mlflow" / "start-local.sh"
    assert os.access(path, os.X_OK), "start-local.sh must be executable"
    text = path.read_text()
    assert text.startswith("#!")
    assert re.search(r'(mlflow|\$\{MLFLOW\}")\s+server\b', text), "must run `mlflow server`"
    assert "sqlite:///" in text and "--artifacts-destination" in text
    assert 'HOST="${MLFLOW_HOST:-127.0.0.1}"' in text


def test_pyproject_console_script():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    target = data["project"]["scripts"]["arena"]
    module, _, func = target.partition(":")
    assert (module, func) == ("jobs.cli", "main")
    assert (ROOT / Path(*module.split("."))).with_suffix(".py").is_file()
