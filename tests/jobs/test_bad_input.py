"""Bad input to the newer commands (`arena rate`, `pairs`, `compare`, `replay`, `run`'s
options, card lists, XCOM layouts, `design.stop`): one line on stderr naming the file,
field or option, a non-zero exit, no traceback. Missing, empty, truncated and mixed
inputs for each. (Errors of the older commands: test_cli_errors.py; of the spec fields:
test_spec.py, test_sequential.py.)"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cluster.results.store import ResultStore
from jobs.cli import main

REPO = Path(__file__).resolve().parents[2]
INVALID = 2


def arena(capsys, *argv) -> tuple[int, str, str]:
    """``arena ARGV`` in this process: (exit code, stdout, stderr)."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's errors
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(result, *needles, code=INVALID):
    got, out, err = result
    assert got == code, (got, err)
    assert "Traceback" not in out + err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in err, err


def _rows(study: str, labels=("A", "B"), games: int = 8) -> list[dict]:
    """Two-player games on games // 2 boards, seats swapped on each board."""
    a, b = labels
    rows = []
    for g in range(games):
        results = [(a, "win"), (b, "loss")] if g % 2 == 0 else [(b, "tie"), (a, "tie")]
        rows += [{"study_id": study, "series_id": g, "game_index": g, "index_in_series": 0,
                  "board_seed": g // 2, "seat": seat, "label": label, "agent": "random",
                  "config_hash": f"h{label}", "team": seat, "result": result, "condition": "",
                  "score_margin": {"win": 2.0, "loss": -2.0, "tie": 0.0}[result]}
                 for seat, (label, result) in enumerate(results)]
    return rows


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, Path]:
    """Study directories: good (birds), xcom (another game), empty (no games yet),
    truncated (a results part cut short), one_label, no_spec, not_a_study."""
    root = tmp_path_factory.mktemp("stores")

    def store(name, game, rows):
        path = root / name
        store = ResultStore(path)  # makes results/
        if rows:
            store.append(rows)
        (path / "spec.json").write_text(json.dumps({"study": {"name": name}, "game": game}))
        return path

    out = {"good": store("good", {"name": "birds"}, _rows("good")),
           "xcom": store("xcom", {"name": "xcom", "board": "mini"}, _rows("xcom")),
           "start_food": store("start_food", {"name": "birds", "start_food": 4}, _rows("start_food")),
           "empty": store("empty", {"name": "birds"}, []),
           "truncated": store("truncated", {"name": "birds"}, _rows("truncated")),
           "one_label": store("one_label", {"name": "birds"},  # one seat a game (a game has seats from 0)
                              [dict(r, seat=0) for r in _rows("one_label") if r["label"] == "A"]),
           "no_spec": store("no_spec", {"name": "birds"}, _rows("no_spec")),
           "not_a_study": root / "not_a_study"}
    part = next((out["truncated"] / "results").glob("*.parquet"))
    part.write_bytes(part.read_bytes()[:100])
    out["truncated_part"] = part
    (out["no_spec"] / "spec.json").unlink()
    out["not_a_study"].mkdir()
    return out


# --- arena rate -----------------------------------------------------------------------------
@pytest.mark.parametrize("case, extra, needles", [
    ("missing", (), ["missing: no such directory"]),
    ("not_a_study", (), ["not_a_study: neither a study directory"]),
    ("empty", (), ["no finished games in", "empty"]),
    ("truncated", (), ["unreadable results file", "part-"]),
    ("no_spec", (), ["no_spec/spec.json: cannot read the study's game"]),
    ("one_label", (), ["no pairwise results to rate"]),
    ("good", ("--seed", "-1"), ["argument --seed: must be a non-negative integer, got -1"]),
    ("good", ("--seed", "x"), ["argument --seed: must be a non-negative integer, got 'x'"]),
    ("good", ("--bootstrap", "-3"), ["argument --bootstrap: must be a non-negative integer, got -3"]),
    ("good", ("--anchor", "Nobody"), ["--anchor: no player 'Nobody'"]),
    ("good", ("--condition", "view_range=2"), ["no games in condition 'view_range=2'"]),
    ("good", ("--game", "xcom"), ["no finished games of game 'xcom'"]),
])
def test_rate_refuses_bad_input_in_one_line(stores, tmp_path, capsys, case, extra, needles):
    study = stores.get(case, tmp_path / case)
    result = arena(capsys, "rate", study, *extra, "--no-tracking", "--out", tmp_path / "out")
    assert_one_line_error(result, *needles)
    assert not (tmp_path / "out").exists()


def test_rate_names_out_when_it_is_a_file(stores, tmp_path, capsys):
    taken = tmp_path / "ratings.txt"
    taken.write_text("not a directory")
    assert_one_line_error(arena(capsys, "rate", stores["good"], "--no-tracking", "--out", taken),
                          f"--out {taken}: not a directory")
    assert taken.read_text() == "not a directory"
    assert_one_line_error(arena(capsys, "rate", stores["good"], "--no-tracking", "--out", taken / "inside"),
                          f"--out {taken / 'inside'}: cannot write the ratings there")


def test_rate_refuses_mixed_games_and_game_options(stores, tmp_path, capsys):
    out = ("--no-tracking", "--out", tmp_path / "out")
    assert_one_line_error(arena(capsys, "rate", stores["good"], stores["xcom"], *out),
                          "games: ", "has 'birds'", "has 'xcom'")
    assert_one_line_error(arena(capsys, "rate", stores["good"], stores["start_food"], *out),
                          "game.start_food: ", "has None", "has 4")


# --- arena pairs / compare ------------------------------------------------------------------
@pytest.mark.parametrize("command", ["pairs", "compare"])
@pytest.mark.parametrize("case, needles", [
    ("missing", ["missing: not a study directory (no results/ inside)"]),
    ("not_a_study", ["not_a_study: not a study directory"]),
    ("empty", ["empty: ", "no finished games"]),
    ("truncated", ["unreadable results file", "part-"]),
])
def test_pairs_and_compare_refuse_missing_empty_and_truncated_stores(stores, tmp_path, capsys, command,
                                                                      case, needles):
    study = stores.get(case, tmp_path / case)
    extra = ("--out", tmp_path / "out") if command == "compare" else ()
    assert_one_line_error(arena(capsys, command, study, *extra), *needles)


def test_pairs_diff_refuses_studies_of_different_games(stores, capsys):
    assert_one_line_error(arena(capsys, "pairs", stores["good"], stores["xcom"], "--diff"),
                          "--diff: games: ", "has 'birds'", "has 'xcom'", "same boards of one game")
    assert_one_line_error(arena(capsys, "pairs", stores["good"], stores["start_food"], "--diff"),
                          "--diff: game.start_food: ")
    code, out, _ = arena(capsys, "pairs", stores["good"], stores["xcom"])  # side by side, no pairing
    assert code == 0 and "| xcom | A | 4 | 8 |" in out
    assert_one_line_error(arena(capsys, "pairs", stores["good"], "--label", "Nobody"),
                          "no finished games of 'Nobody'")


def test_compare_needs_two_labels(stores, tmp_path, capsys):
    assert_one_line_error(arena(capsys, "compare", stores["one_label"], "--out", tmp_path / "out"),
                          "one_label: a win ratio needs games between two lineup labels; only 'A'")
    code, out, _ = arena(capsys, "compare", stores["good"], stores["no_spec"], "--out", tmp_path / "out")
    assert code == 0 and "| no_spec | B | 0 | 4 | 4 | 0.000 |" in out


# --- arena replay -----------------------------------------------------------------------------
def test_replay_refuses_missing_empty_truncated_and_foreign_files(stores, tmp_path, capsys):
    record = tmp_path / "record.npz"  # an .npz archive cut in half: a truncated zip, as a record would be
    np.savez_compressed(record, meta=np.arange(1000), actions=np.arange(1000))
    (tmp_path / "truncated.npz").write_bytes(record.read_bytes()[: record.stat().st_size // 2])
    (tmp_path / "empty.npz").write_bytes(b"")
    (tmp_path / "text.npz").write_text("hello\n")
    np.savez(tmp_path / "weights.npz", w=np.zeros(3))
    for name in ("truncated", "empty", "text"):
        assert_one_line_error(arena(capsys, "replay", tmp_path / f"{name}.npz"),
                              f"{name}.npz: not a readable record (not an .npz archive")
    assert_one_line_error(arena(capsys, "replay", tmp_path / "weights.npz"),
                          "weights.npz: not a game record: field 'meta' is missing")
    assert_one_line_error(arena(capsys, "replay", tmp_path / "none.npz"), "none.npz: no such record")
    assert_one_line_error(arena(capsys, "replay", stores["not_a_study"]),
                          "not_a_study: not a study directory (no spec.json inside)")
    assert_one_line_error(arena(capsys, "replay", stores["good"]), "name a game index")
    assert_one_line_error(arena(capsys, "replay", stores["good"], 3), "good: no record of game 3")
    assert_one_line_error(arena(capsys, "replay", tmp_path / "text.npz", 3), "a record file takes no game index")


# --- arena run: options, card lists, layouts, design.stop ---------------------------------------
BIRDS = REPO / "jobs" / "birds" / "03_mcts_vs_single_det.toml"
XCOM = REPO / "jobs" / "xcom" / "mini_convae_vs_mcts.toml"


@pytest.mark.parametrize("workers, shown", [("0", "0"), ("-2", "-2"), ("two", "'two'")])
def test_run_refuses_a_worker_count_below_one(capsys, workers, shown):
    assert_one_line_error(arena(capsys, "run", BIRDS, "--workers", workers, "--check"),
                          f"arena run: argument --workers: must be a positive integer, got {shown}")


def test_version(capsys):
    from importlib.metadata import version

    code, out, _ = arena(capsys, "--version")
    assert code == 0 and out.startswith(f"arena {version('arena')} (commit ")


@pytest.mark.parametrize("text, needle", [
    ("points,cost\n3,1\n4,x\n", "row 3, column 'cost': expected an int in 0..3, got 'x'"),
    ("points,cost\n3,1\n12,1\n", "row 3, column 'points': expected an int in 0..9, got 12"),
    ("pts,cost\n3,1\n", "row 1, column 'points': missing from the header"),
    ("", "row 1: empty file"),
])
def test_a_card_list_with_a_bad_cell_names_row_and_column(tmp_path, capsys, text, needle):
    cards = tmp_path / "cards.csv"
    cards.write_text(text)
    assert_one_line_error(arena(capsys, "run", BIRDS, "--set", f"game.cards_csv={cards}", "--check"),
                          f"game.cards_csv: {cards}: {needle}")


@pytest.mark.parametrize("rows, needle", [
    (["0 0 0 0 0 0", "0 1 0 0 -1 0", "0 0 7 0 0 0"], "row 3, column 3: cell value 7 not in {-2, -1, 0, 1}"),
    (["0 0 a 0 0 0", "0 1 0 0 -1 0"], "row 1, column 3: 'a' is not an int"),
    (["0 0 0 0 0 0", "0 1 0 0 -1 0", "0 0 0 0 0"], "row 3, column 6: ragged row (5 cells, row 1 has 6)"),
    (["0 0 0 0 0 0", "0 1 0 0 0 0"] + ["0 0 0 0 0 0"] * 4,
     "row 2, column 2: wrong unit count: 1 humans and 0 aliens"),
    (["0 0 0 0 0 0", "0 1 0 0 -1 0"], "row 3, column 1: the board must be square, got 2 rows of 6 cells"),
    ([], "row 1, column 1: empty layout"),
])
def test_an_xcom_layout_with_a_bad_cell_names_row_and_column(tmp_path, capsys, rows, needle):
    layout = tmp_path / "board.txt"
    layout.write_text("\n".join(rows) + ("\n" if rows else ""))
    assert_one_line_error(arena(capsys, "run", XCOM, "--set", f"game.board={layout}", "--check"),
                          f"game.board: {layout}: {needle}")


@pytest.mark.parametrize("override, needle", [
    ("design.stop.sprt.alpha=0", "design.stop.sprt.alpha: must be in (0, 0.5), got 0"),
    ("design.stop.sprt.beta=0.5", "design.stop.sprt.beta: must be in (0, 0.5), got 0.5"),
    ("design.stop.sprt.elo1=0", "design.stop.sprt.elo1: must be greater than elo0 (0), got 0"),
    ("design.stop.sprt.elo1=-10", "design.stop.sprt.elo1: must be greater than elo0 (0), got -10"),
    ("design.stop.sprt.elo1=inf", "design.stop.sprt.elo1: must be a finite number, got inf"),
    ('design.stop.between=["MCTS-chance","Nobody"]', "design.stop.between[1]: no lineup label 'Nobody'"),
    ('design.stop.between=["MCTS-1det","MCTS-1det"]', "design.stop.between: the two labels must differ"),
    ("design.stop.max_games=0", "design.stop.max_games: must be a positive int, got 0"),
    # a Pommerman agent seated at the bird game passed --check and failed in the first game
    # (blamed on MLflow); refused before any game, naming the agents that play the game
    ("lineup.0.agent=mcts", "lineup[0].agent: 'mcts' does not play 'birds' (it plays pommerman); agents for 'birds': ["),
])
def test_an_impossible_sequential_stop_names_the_field(capsys, override, needle):
    assert_one_line_error(arena(capsys, "run", BIRDS, "--set", override, "--check"), needle)


@pytest.mark.parametrize("argv, needle", [
    (("play", "--iterations", "0"), "arena play: argument --iterations: must be a positive integer, got 0"),
    (("play", "--max-steps", "0"), "arena play: argument --max-steps: must be a positive integer, got 0"),
    (("replay", "somewhere", "-3"), "arena replay: argument game: must be a non-negative integer, got -3"),
    (("replay", "x.npz", "--png", "-1"), "arena replay: argument --png: must be a non-negative integer, got -1"),
    (("population", "export", "somewhere", "--label", "A", "--series", "-1", "--out", "x.npz"),
     "argument --series: must be a non-negative integer, got -1"),
    (("bench", "birds", "--rounds", "0"), "arena bench: argument --rounds: must be a positive integer, got 0"),
    (("ui", "--port", "0"), "arena ui: argument --port: must be a positive integer, got 0"),
    (("train-encoder", "--epochs", "0"), "argument --epochs: must be a positive integer, got 0"),
    (("nosuch",), "arena: argument command: invalid choice: 'nosuch'"),
])
def test_a_count_option_out_of_range_names_the_option(capsys, argv, needle):
    assert_one_line_error(arena(capsys, *argv), needle)


def test_rate_with_a_tracking_server_that_is_down_says_so_and_keeps_the_files(stores, tmp_path, capsys):
    from conftest import free_port

    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    result = arena(capsys, "rate", stores["good"], "--bootstrap", "10", "--out", tmp_path / "out",
                   "--tracking-uri", down)
    assert_one_line_error(result, f"MLflow at {down}: no answer to GET /health", "not logged")
    assert "| A [hA] |" in result[1] and (tmp_path / "out" / "ratings.csv").is_file()
