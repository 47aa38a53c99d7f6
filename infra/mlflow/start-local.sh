#!/usr/bin/env bash
# Local MLflow tracking server for Arena: SQLite backend, artifacts on local disk,
# bound to 127.0.0.1 (not reachable from other machines).
#
#   infra/mlflow/start-local.sh                 # http://127.0.0.1:5000
#   MLFLOW_PORT=5001 infra/mlflow/start-local.sh
#   export MLFLOW_TRACKING_URI=http://127.0.0.1:5000   # then: arena run ... / ray job submit ...
#
# Data lives in MLFLOW_DATA_DIR (default ~/.local/share/arena-mlflow, outside the
# repository so ray job submit --working-dir . never uploads it): mlflow.db (runs,
# params, metrics) and mlartifacts/ (tables, plots).
# Note: `arena run` without a server logs to ./mlflow.db directly; this server
# is for jobs that run elsewhere (ray job submit) or several concurrent studies.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATA_DIR="${MLFLOW_DATA_DIR:-${XDG_DATA_HOME:-${HOME}/.local/share}/arena-mlflow}"
HOST="${MLFLOW_HOST:-127.0.0.1}"
PORT="${MLFLOW_PORT:-5000}"
WORKERS="${MLFLOW_WORKERS:-2}"

if [[ -x "${ROOT}/.venv/bin/mlflow" ]]; then
    MLFLOW="${ROOT}/.venv/bin/mlflow"
elif command -v mlflow > /dev/null 2>&1; then
    MLFLOW="$(command -v mlflow)"
else
    echo "mlflow not found: pip install . (or activate the project's venv)" >&2
    exit 1
fi

mkdir -p "${DATA_DIR}/mlartifacts"
echo "MLflow on http://${HOST}:${PORT}  (data: ${DATA_DIR})" >&2
exec "${MLFLOW}" server \
    --backend-store-uri "sqlite:///${DATA_DIR}/mlflow.db" \
    --artifacts-destination "${DATA_DIR}/mlartifacts" \
    --host "${HOST}" \
    --port "${PORT}" \
    --workers "${WORKERS}" \
    "$@"
