"""End to end: a plugin game that declares the generic kernels (the tests' connect four,
loaded by import path) is played by mcts_generic in a study on Ray, with no change to
Arena: every game complete once, no error, the search's budget in the rows, and UCT
beating random play."""
from __future__ import annotations

from cluster.results.store import ResultStore
from cluster.run.driver import run_study
from cluster.spec.build import build_spec
from conftest import PLUGINS


def test_mcts_generic_plays_a_plugin_game_in_a_study_on_ray(ray_local, tmp_path):
    spec = build_spec({
        "study": {"name": "connect-four-uct", "seed": 5, "results_dir": str(tmp_path / "studies")},
        "game": {"name": "plugin_games.connect_four:ConnectFour", "opening_plies": 2},
        "budget": {"iterations": 200},
        "design": {"seeds": 4, "games_per_seed": 2},
        "lineup": [{"agent": "mcts_generic", "label": "UCT", "params": {"exploration": 2.0}},
                   {"agent": "random", "label": "Random"}],
        "tracking": {"enabled": False},
    })
    result = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS)
    rows = ResultStore(result.study_dir).read()
    total = spec.design.total_games
    assert result.games_played == total == 8 and result.error_games == 0
    assert sorted(rows["game_index"].unique()) == list(range(total)) and len(rows) == 2 * total
    uct = rows[rows["label"] == "UCT"]
    assert set(uct["seat"]) == {0, 1}  # seats rotate
    assert (uct["mean_iterations"] == 200).all()
    assert (uct["result"] == "win").sum() >= 6, uct["result"].tolist()
