"""Ratings across studies (cluster.analysis.ratings, arena rate): the Davidson fit, FFA and team
games as pairwise results, bootstrap intervals, anchors, refusing mixed studies."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cluster.analysis.ratings import (ELO_PER_NATURAL, RatingError, load_rows, pairwise_results,
                             rate, ratings_markdown)
from cluster.results.store import ResultStore
from jobs.cli import main


def _game_rows(study: str, game_index: int, board: int, results: list[tuple[str, str]], teams=None):
    return [{"study_id": study, "series_id": game_index, "game_index": game_index, "index_in_series": 0,
             "board_seed": board, "seat": seat, "label": label, "agent": "fake", "config_hash": f"h{label}",
             "team": seat if teams is None else teams[seat], "result": result, "condition": ""}
            for seat, (label, result) in enumerate(results)]


def _simulated_rows(truth: dict[str, float], nu: float, games_per_pair: int, seed: int, study="s"):
    """Two-player games drawn from the Davidson model with ratings ``truth`` (Elo)."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    labels = list(truth)
    rows, g = [], 0
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            pa, pb = np.exp(truth[a] / ELO_PER_NATURAL), np.exp(truth[b] / ELO_PER_NATURAL)
            tie = nu * np.sqrt(pa * pb)
            p = np.array([pa, tie, pb]) / (pa + pb + tie)
            for k in range(games_per_pair):
                outcome = rng.choice(3, p=p)
                ra, rb = [("win", "loss"), ("tie", "tie"), ("loss", "win")][outcome]
                seats = [(a, ra), (b, rb)] if k % 2 == 0 else [(b, rb), (a, ra)]
                rows += _game_rows(study, g, g // 2, seats)
                g += 1
    return pd.DataFrame(rows)


def test_fit_recovers_known_ratings_and_tie_parameter():
    truth = {"A": 200.0, "B": 100.0, "C": 0.0, "D": -150.0}
    rows = _simulated_rows(truth, nu=0.5, games_per_pair=600, seed=1)
    table = rate(rows, anchor="C", seed=0, bootstrap=60)
    for label, rating in truth.items():
        row = table.loc[f"{label} [h{label}]"]
        assert row["rating"] == pytest.approx(rating, abs=30), (label, row["rating"])
        assert row["lo"] <= row["rating"] <= row["hi"]
    assert table.attrs["tie_parameter"] == pytest.approx(0.5, abs=0.08)
    assert list(table.index[:2]) == ["A [hA]", "B [hB]"]  # best first
    assert table.loc["C [hC]", ["rating", "lo", "hi"]].tolist() == [0.0, 0.0, 0.0]


def test_gradient_matches_finite_differences():
    from cluster.analysis.ratings import _negative_log_posterior

    rng = np.random.default_rng(3)
    wins = rng.integers(0, 9, size=(4, 4)).astype(float)
    np.fill_diagonal(wins, 0)
    ties = rng.integers(0, 5, size=(4, 4)).astype(float)
    ties = np.triu(ties, 1) + np.triu(ties, 1).T
    x = rng.normal(size=5)
    value, grad = _negative_log_posterior(x, wins, ties, 0.01)
    numeric = [(_negative_log_posterior(x + e, wins, ties, 0.01)[0]
                - _negative_log_posterior(x - e, wins, ties, 0.01)[0]) / 2e-6 for e in np.eye(5) * 1e-6]
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-5)


def test_ffa_game_counts_as_its_pairwise_results_and_teammates_are_not_compared():
    ffa = pd.DataFrame(_game_rows("s", 0, 0, [("A", "win"), ("B", "loss"), ("C", "loss"), ("D", "loss")]))
    ffa["player"] = ffa["label"]
    pairs = pairwise_results(ffa)
    assert len(pairs) == 6
    assert pairs[pairs["first"] == "A"]["score"].tolist() == [1.0, 1.0, 1.0]
    assert pairs[pairs["first"] != "A"]["score"].tolist() == [0.5, 0.5, 0.5]
    team = pd.DataFrame(_game_rows("s", 0, 0, [("A", "win"), ("B", "loss"), ("C", "win"), ("D", "loss")],
                                   teams=[0, 1, 0, 1]))
    team["player"] = team["label"]
    pairs = pairwise_results(team)
    assert sorted(zip(pairs["first"], pairs["second"])) == [("A", "B"), ("A", "D"), ("B", "C"), ("C", "D")]


def test_same_seed_same_table_and_perfect_records_are_flagged():
    rows = _simulated_rows({"A": 50.0, "B": 0.0}, nu=0.3, games_per_pair=40, seed=2)
    rows = pd.concat([rows, pd.DataFrame(_game_rows("s", 999, 999, [("A", "win"), ("Z", "loss")]))])
    first = rate(rows, seed=7, bootstrap=50)
    again = rate(rows, seed=7, bootstrap=50)
    pd.testing.assert_frame_equal(first, again)
    assert ratings_markdown(first) == ratings_markdown(again)
    assert first.loc["Z [hZ]", "note"].startswith("lost every result")
    assert abs(first["rating"].mean()) < 1e-6  # no anchor: the mean is fixed at 0
    with pytest.raises(RatingError, match="--anchor: no player 'Q'"):
        rate(rows, anchor="Q", bootstrap=0)


def _store(tmp_path, name: str, game: dict, rows: list[dict], vary=None) -> str:
    study = tmp_path / name
    ResultStore(study).append(rows)
    spec = {"study": {"name": name}, "game": game, "design": {"seeds": 1, **({"vary": vary} if vary else {})}}
    (study / "spec.json").write_text(json.dumps(spec))
    return str(study)


def test_mixed_games_or_conditions_are_refused_in_one_line(tmp_path, capsys):
    rows = [r for g in range(4) for r in _game_rows("x", g, g, [("A", "win"), ("B", "loss")])]
    a = _store(tmp_path, "a", {"name": "birds", "start_food": 3}, rows)
    b = _store(tmp_path, "b", {"name": "birds", "start_food": 4}, rows)
    c = _store(tmp_path, "c", {"name": "xcom", "board": "mini"}, rows)
    with pytest.raises(RatingError, match=r"^game.start_food: .* has 3, .* has 4; rate studies of one game"):
        load_rows([a, b])
    assert main(["rate", a, c, "--no-tracking", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena rate: games: ") and "Traceback" not in err and len(err.splitlines()) == 1
    assert len(load_rows([tmp_path], game="xcom").studies) == 1  # a results folder, one game of it
    varied = [dict(r, condition=f"view_range={r['game_index'] % 2}", **{"vary.view_range": r["game_index"] % 2})
              for r in rows]
    d = _store(tmp_path / "v", "d", {"name": "birds", "start_food": 3}, varied, vary={"view_range": [0, 1]})
    with pytest.raises(RatingError, match="games of 2 conditions"):
        load_rows([d])
    assert load_rows([d], condition="view_range=1").rows["game_index"].tolist() == [1, 1, 3, 3]


def test_rate_pools_studies_and_one_player_per_label_and_config(tmp_path, capsys):
    one = [r for g in range(6) for r in _game_rows("one", g, g // 2, [("A", "win"), ("B", "loss")]
                                                    if g % 2 == 0 else [("B", "tie"), ("A", "tie")])]
    two = [r for g in range(6) for r in _game_rows("two", g, g // 2, [("B", "win"), ("C", "loss")])]
    game = {"name": "birds", "start_food": 3}
    s1, s2 = _store(tmp_path, "one", game, one), _store(tmp_path, "two", game, two)
    out = tmp_path / "out"
    assert main(["rate", s1, s2, "--anchor", "C", "--bootstrap", "30", "--no-tracking", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "2 studies, 12 games of birds" in printed
    table = pd.read_csv(out / "ratings.csv", index_col=0)
    assert list(table.index) == ["A [hA]", "B [hB]", "C [hC]"]
    assert table.loc["B [hB]", "games"] == 12 and table.loc["C [hC]", "rating"] == 0
    assert (out / "ratings.png").is_file() and "| A [hA] |" in (out / "ratings.md").read_text()


def test_players_that_never_met_are_refused():
    rows = pd.DataFrame(_game_rows("s", 0, 0, [("A", "win"), ("B", "loss")])
                        + _game_rows("s", 1, 1, [("C", "win"), ("D", "loss")]))
    with pytest.raises(RatingError, match=r"^the players fall into 2 groups .*\[\['A \[hA\]', 'B \[hB\]'\]"):
        rate(rows, bootstrap=0)
