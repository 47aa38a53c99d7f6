"""jobs.femcts.side_by_side on a tiny java-ruleset study: the rows it writes agree with the
cluster's own result rows for the same games, and the table it prints puts the framework's
counts next to Arena's (with their Wilson intervals)."""
from __future__ import annotations

import csv

import pytest

from cluster.run.play import build_agents, play_recorded_game
from cluster.spec.plan import plan_study
from cluster.stats import wilson_interval
from games.pommerman.kernels import LAY_BOMB
from jobs.spec import load_spec
from jobs.femcts import side_by_side

SPEC = """
[study]
name = "side-by-side-smoke"
seed = 11
results_dir = "{results}"

[game]
name = "pommerman"
mode = "ffa"
ruleset = "java"
collapse = true

[budget]
iterations = 4

[design]
seeds = 1
games_per_seed = 2

[[lineup]]
agent = "osla"
label = "OSLA"

[[lineup]]
agent = "simple"
label = "simple"

[[lineup]]
agent = "random"
label = "Random"

[[lineup]]
agent = "rule_based"
label = "Rules"

[tracking]
enabled = false
"""

#: The framework's side, as its harness writes it: agent, result, died_at, bombs.
FRAMEWORK = [("osla", "WIN", "", 3), ("osla", "LOSS", "12", 1), ("simple", "TIE", "", 0)]


def test_side_by_side_rows_match_the_cluster_and_the_table_sets_both_sides(tmp_path, capsys):
    spec_path = tmp_path / "spec.toml"
    spec_path.write_text(SPEC.format(results=tmp_path / "studies"), encoding="utf-8")
    framework = tmp_path / "framework.csv"
    with open(framework, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["agent", "result", "died_at", "bombs"])
        writer.writerows(FRAMEWORK)
    out = tmp_path / "arena.csv"
    overrides = ["--set", "game.max_steps=60"]
    assert side_by_side.main([str(spec_path), *overrides, "--framework", str(framework), "--out", str(out)]) == 0
    captured = capsys.readouterr()

    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(int(r["game_index"]), int(r["seat"])) for r in rows] == [(g, s) for g in range(2) for s in range(4)]
    assert {r["agent"] for r in rows} == {"OSLA", "simple", "Random", "Rules"}
    assert all(int(r["ticks"]) <= 60 for r in rows)
    assert [line for line in captured.err.splitlines() if line.startswith("game ")] == [
        f"game {g}: " + " ".join(f"{r['agent']}={r['result']}" for r in rows if int(r["game_index"]) == g)
        for g in range(2)]

    # The same games through the cluster's own loop: the same result and death of every seat.
    spec = load_spec(spec_path, ["game.max_steps=60"])
    agents = build_agents(spec)
    cluster_rows, bomb_actions = [], {}
    for series in plan_study(spec):
        for task in series.games:
            game_rows, _, record = play_recorded_game(spec, task, agents)
            cluster_rows += game_rows
            for seat in range(record.num_players):
                bomb_actions[task.game_index, seat] = int((record.actions[:, seat] == LAY_BOMB).sum())
    assert [(r["game_index"], r["seat"], r["label"], r["result"].upper(), r["died_at"]) for r in cluster_rows] == \
        [(int(r["game_index"]), int(r["seat"]), r["agent"], r["result"], int(r["died_at"]) if r["died_at"] else None)
         for r in rows]
    assert any(r["died_at"] for r in rows) and {r["result"] for r in rows} >= {"TIE", "LOSS"}  # not all alike
    # Bombs laid, counted on the replay: at most one per LAY_BOMB action the seat played (the
    # recorded actions; an action without ammo or on a bomb lays none), and at least one by
    # every seat that played one (its first, with full ammo; here 1 to 6 laid a seat, of 2 to 15 asked).
    bombs = {(int(r["game_index"]), int(r["seat"])): int(r["bombs"]) for r in rows}
    assert bombs.keys() == bomb_actions.keys()
    assert all(0 < bombs[key] <= n if n else bombs[key] == 0 for key, n in bomb_actions.items())

    # The table: one line per agent (lower-cased), framework / Arena side by side.
    table = [[cell.strip() for cell in line.strip().strip("|").split("|")]
             for line in captured.out.splitlines() if line.startswith("|")]
    assert table[0][:4] == ["agent", "games (fw / arena)", "wins fw", "wins arena"]
    lines = {line[0]: line for line in table[2:]}  # after the header and its rule
    assert sorted(lines) == ["osla", "random", "rules", "simple"]

    def cell(k: int, n: int) -> str:
        lo, hi = wilson_interval(k, n)
        return f"{k} [{100 * lo:.0f}-{100 * hi:.0f}%]"

    osla = [r for r in rows if r["agent"] == "OSLA"]
    osla_wins = sum(r["result"] == "WIN" for r in osla)
    osla_deaths = sum(r["died_at"] != "" for r in osla)
    osla_bombs = sum(int(r["bombs"]) for r in osla)
    assert lines["osla"][1:4] == [f"2 / {len(osla)}", cell(1, 2), cell(osla_wins, len(osla))]
    assert lines["osla"][8:10] == [cell(1, 2), cell(osla_deaths, len(osla))]  # deaths fw / arena
    assert lines["osla"][10] == f"2.0 / {osla_bombs / len(osla):.1f}"
    assert lines["random"][1] == "0 / 2"  # no framework games for it
    assert lines["simple"][4] == cell(1, 1)  # the framework's one tie


@pytest.mark.parametrize("framework, spec, needle", [
    (None, "missing.toml", "missing.toml: spec file not found"),
    ("missing.csv", None, "missing.csv: cannot read the framework's CSV"),
    ("agent,result\nosla,WIN\n", None, "no column died_at, bombs"),
    ("agent,result,died_at,bombs\nosla,WON,,1\n", None, "line 2: result must be WIN, TIE or LOSS"),
    ("agent,result,died_at,bombs\nosla,WIN,,-1\n", None, "line 2:"),
    (None, "jobs/xcom/mini_convae_vs_mcts.toml", "game: side_by_side plays Pommerman specs only"),
])
def test_side_by_side_refuses_bad_input_in_one_line_before_any_game(tmp_path, capsys, framework, spec, needle):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spec_path = tmp_path / spec if spec == "missing.toml" else root / (spec or "jobs/femcts/framework_side_by_side.toml")
    argv = [str(spec_path)]
    if framework is not None:
        csv_path = tmp_path / "framework.csv"
        if framework != "missing.csv":
            csv_path.write_text(framework, encoding="utf-8")
        else:
            csv_path = tmp_path / "missing.csv"
        argv += ["--framework", str(csv_path)]
    assert side_by_side.main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert captured.err.count("\n") == 1 and captured.err.startswith("side_by_side: ") and needle in captured.err
