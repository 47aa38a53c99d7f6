"""OpenSpiel games on the cluster: a study on Ray (the same rows on 1 and 2 workers, seats
rotated, ratings, the sequential stop), records of OpenSpiel games with chance and hidden
information that replay, and a condition varying an OpenSpiel parameter."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspiel")

from cluster.analysis.ratings import rate  # noqa: E402
from cluster.replay.records import ReplayMismatch, replay, verify  # noqa: E402
from cluster.results.store import ResultStore  # noqa: E402
from cluster.run.driver import run_study  # noqa: E402
from cluster.run.play import build_agents, play_recorded_game  # noqa: E402
from cluster.spec.plan import plan_study  # noqa: E402
from cluster.spec.build import build_spec  # noqa: E402


def make_spec(tmp_path, name, game, lineup, design=None, budget=None):
    return build_spec({
        "study": {"name": name, "seed": 9, "results_dir": str(tmp_path / "studies")},
        "game": game, "budget": budget or {"iterations": 30},
        "design": design or {"seeds": 3, "games_per_seed": 2, "rotate_seats": True, "series_by": "game"},
        "lineup": lineup,
        "tracking": {"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "enabled": False},
    })


NONDETERMINISTIC = ["mean_ms", "finished_at", "worker"]


def comparable(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=NONDETERMINISTIC).sort_values(
        ["game_index", "seat"]).reset_index(drop=True)


LINEUP = [{"agent": "openspiel_mcts", "label": "MCTS"}, {"agent": "random", "label": "Random"}]


def test_study_on_ray_same_rows_on_1_and_2_workers_with_ratings(ray_local, tmp_path):
    game = {"name": "openspiel:tic_tac_toe"}
    one = run_study(make_spec(tmp_path / "one", "os-ttt", game, LINEUP), num_workers=1, progress=False)
    two = run_study(make_spec(tmp_path / "two", "os-ttt", game, LINEUP), num_workers=2, progress=False)
    rows = ResultStore(two.study_dir).read()
    pd.testing.assert_frame_equal(comparable(ResultStore(one.study_dir).read()), comparable(rows))
    assert two.games_done == 6 and (rows["result"] != "error").all()
    # seats rotated: each label sat in both seats
    assert rows.groupby("label")["seat"].nunique().to_dict() == {"MCTS": 2, "Random": 2}
    mcts = rows[rows["label"] == "MCTS"]
    assert (mcts["result"] != "loss").all()  # 30 simulations do not lose tic-tac-toe to random
    table = rate(rows, bootstrap=50)
    assert table.index[0].startswith("MCTS") and table["rating"].iloc[0] > table["rating"].iloc[1]


def test_sequential_stop_decides_on_an_openspiel_game(ray_local, tmp_path):
    design = {"seeds": 40, "games_per_seed": 2, "rotate_seats": True, "series_by": "game",
              "stop": {"sprt": {"elo0": 0, "elo1": 200, "alpha": 0.05, "beta": 0.05},
                       "between": ["MCTS", "Random"]}}
    spec = make_spec(tmp_path, "os-stop", {"name": "openspiel:connect_four"}, LINEUP, design,
                     budget={"iterations": 200})
    result = run_study(spec, num_workers=2, progress=False)
    assert result.games_done < spec.design.total_games  # H1 accepted before the cap of 80 games


@pytest.mark.parametrize("game,lineup", [
    ({"name": "openspiel:leduc_poker"}, [{"agent": "openspiel_ismcts", "label": "IS"},
                                         {"agent": "openspiel_mcts", "label": "M"}]),
    ({"name": "openspiel:goofspiel", "num_cards": 4, "imp_info": True},
     [{"agent": "random", "label": "R"}, {"agent": "openspiel_random", "label": "OR"}]),
    ({"name": "openspiel:pig", "winscore": 20}, [{"agent": "openspiel_mcts", "label": "M"},
                                                  {"agent": "random", "label": "R"}]),
])
def test_records_of_openspiel_games_replay(tmp_path, game, lineup):
    spec = make_spec(tmp_path, "os-rec", game, lineup, budget={"iterations": 20})
    agents = build_agents(spec)
    task = plan_study(spec)[0].games[0]
    rows, _, record = play_recorded_game(spec, task, agents)
    assert record is not None and all(r["result"] != "error" for r in rows), rows[0]["error"]
    assert verify(record) == record.length
    tampered = record.actions.copy()
    step = next(t for t in range(record.length) if tampered[t].any())  # a step some player chose
    tampered[step] = (tampered[step] + 1) % 2
    record.actions[:] = tampered
    with pytest.raises(ReplayMismatch):
        for _ in replay(record):
            pass


def test_a_condition_varies_an_openspiel_parameter(tmp_path):
    lineup = [{"agent": "random", "label": "R1"}, {"agent": "openspiel_random", "label": "R2"}]
    spec = make_spec(tmp_path, "os-vary", {"name": "openspiel:connect_four"}, lineup,
                     {"seeds": 1, "games_per_seed": 2, "vary": {"columns": [5, 7]}})
    assert [c.columns for c in spec.condition_configs] == [5, 7]
    for run in plan_study(spec):
        for task in run.games:
            agents = build_agents(spec, task.condition)
            assert agents[1].game_config.columns == spec.condition_configs[task.condition].columns
            rows, _, record = play_recorded_game(spec, task, agents)
            assert all(r["result"] != "error" for r in rows), rows[0]["error"]
            assert record.actions.max() < spec.condition_configs[task.condition].columns
            assert verify(record) == record.length
    assert np.unique([t.condition for r in plan_study(spec) for t in r.games]).tolist() == [0, 1]


def test_hosts_build_a_series_agents_for_its_condition_regression(ray_local, tmp_path):
    """Regression: the hosts built every series' agents with the study's base game config,
    so under design.vary of connect four's columns OpenSpiel's MCTS refused the 5-column
    condition's observations (every game of it an error row)."""
    lineup = [{"agent": "openspiel_mcts", "label": "MCTS"}, {"agent": "random", "label": "R"}]
    spec = make_spec(tmp_path, "os-vary-ray", {"name": "openspiel:connect_four"}, lineup,
                     {"seeds": 1, "games_per_seed": 2, "vary": {"columns": [5, 7]}, "series_by": "game"},
                     budget={"iterations": 10})
    result = run_study(spec, num_workers=2, progress=False)
    rows = ResultStore(result.study_dir).read()
    assert result.games_done == 4 and (rows["result"] != "error").all(), rows["error"].dropna().tolist()[:1]
    assert sorted(rows["condition"].unique().tolist()) == ["columns=5", "columns=7"]


def test_a_lineup_of_openspiels_bots_needs_no_parallel_warm_up(tmp_path, monkeypatch):
    """Regression: the warm-up's one decision of openspiel_mcts at 1 simulation failed (the
    root unexpanded), so the lineup was never marked warm and every OpenSpiel study paid
    the parallel warm-up's subprocesses again (3.7 CPU-s, 9-11 s at a load of 20) to
    compile nothing. The bots have no kernels: nothing is spawned, the decision is legal."""
    from cluster.run.warm import _warm_one, warm_up_parallel

    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    spec = make_spec(tmp_path, "os-warm", {"name": "openspiel:tic_tac_toe"},
                     [{"agent": "openspiel_mcts", "label": "M"}, {"agent": "openspiel_random", "label": "R"}],
                     budget={"iterations": 1})
    result = warm_up_parallel(spec)
    assert (result["processes"], result["skipped"], result["failed"]) == (0, True, [])
    _warm_one(spec, 0)  # raised AttributeError on the unexpanded root
