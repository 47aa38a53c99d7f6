import sys, time
sys.path.insert(0, "tests")
import conftest  # registers count/fake
from cluster.spec.study import build_spec
from cluster.run.driver import run_study
from cluster.analysis.leaderboard import leaderboard_markdown, crosstable_markdown
import tempfile, pathlib
tmp = pathlib.Path(tempfile.mkdtemp())
def spec(n):
    return build_spec({
        "study": {"name": "rr", "seed": 3, "results_dir": str(tmp / "s")},
        "game": {"name": "count", "max_steps": 6, "num_players": 3},
        "budget": {"iterations": 3},
        "design": {"format": "round_robin", "rounds": 2, "series_by": "game"},
        "lineup": [{"agent": "fake", "label": f"S{k}", "params": {"skill": k / 5}} for k in range(n)],
        "tracking": {"uri": f"sqlite:///{tmp / 'mlflow.db'}", "enabled": True, "experiment": "t"},
    })
s5 = spec(5)
print(s5.design.total_games)
import os
os.environ["PYTHONPATH"] = "tests:" + os.getcwd()
r = run_study(s5, num_workers=2, progress=False, plugins=("conftest",), warm_up=False)
print(r.counts, r.games_total)
print(leaderboard_markdown(r.leaderboard))
s6 = spec(6)
r = run_study(s6, num_workers=2, progress=False, plugins=("conftest",), warm_up=False)
print(r.counts, r.games_total)
print(leaderboard_markdown(r.leaderboard)); print(crosstable_markdown(r.leaderboard))
try:
    run_study(spec(4), num_workers=2, progress=False, plugins=("conftest",), warm_up=False)
except Exception as e:
    print(type(e).__name__, e)
print(list((tmp/"s"/"rr"/"report").iterdir()))
