"""Game records and replays (cluster.replay.records, cluster.replay.view, arena replay).

A record re-simulates to the same game step by step (both Pommerman rulesets,
iteration and time budgets); a tampered record is reported at the right step;
the GIF has one frame per state; the HTML page works in a headless browser;
a study writes a record per game and replay pages, and logs them to MLflow.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from agents.api import Budget
from agents.registry import make_agent
from cluster.replay.records import (
    GameRecorder, RecordError, ReplayMismatch, fingerprint, fold16, load_record, load_study_record, pack_records,
    record_path, replay, unpack_records,
    save_record, verify,
)
from cluster.replay.view import pick_replays, write_gif, write_html, write_png
from games.pommerman import Pommerman, PommermanConfig

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def play_recorded(config: PommermanConfig, agents: list[str], budget: Budget, seed: int, max_steps=None):
    """One game with ``agents`` (registry names), recorded as the study play loop records."""
    game = Pommerman(config)
    board_seed = np.random.SeedSequence(seed, spawn_key=(0,))
    game.reset(board_seed)
    players = [make_agent(name, {}, budget, config) for name in agents]
    for seat, agent in enumerate(players):
        agent.begin_game(seat, np.random.SeedSequence(seed, spawn_key=(1, seat)))
    recorder = GameRecorder("pommerman", config, board_seed, agents, game.num_actions)
    recorder.start(game)
    states = [game.to_json()]
    while not game.done:
        actions = [0] * 4
        for seat in range(4):
            if game.is_alive(seat):
                actions[seat] = players[seat].act(game.observation(seat))
                recorder.decision(seat, players[seat])
        game.step(actions)
        recorder.step(game, actions)
        states.append(game.to_json())
    return recorder.finish(), states, game.outcomes()


@pytest.mark.parametrize("ruleset,collapse", [("canonical", False), ("java", True)])
def test_replay_reproduces_every_step(ruleset, collapse, tmp_path):
    config = PommermanConfig(ruleset=ruleset, collapse=collapse, max_steps=120)
    record, states, outcomes = play_recorded(config, ["mcts", "rhea", "osla", "rule_based"],
                                             Budget(iterations=20), seed=5)
    path = save_record(tmp_path / "game.npz", record)
    loaded = load_record(path)
    replayed = [game.to_json() for _, game in replay(loaded)]
    assert replayed == states                      # the same state at every step
    assert loaded.length == len(states) - 1
    asked = loaded.iterations[:, :2]
    assert set(asked[asked >= 0].tolist()) <= {0, 20}           # MCTS and RHEA: their budget
    assert set(loaded.iterations[:, 2][loaded.iterations[:, 2] >= 0].tolist()) <= {6}  # OSLA
    mcts_values = loaded.values[:, 0].astype(float)
    assert np.isfinite(mcts_values[loaded.iterations[:, 0] > 0]).any()  # MCTS records its values
    assert np.isnan(loaded.values[:, 3].astype(float)).all()            # the rule-based player has none


def test_time_budget_game_replays(tmp_path):
    """Under a time budget a game is not a function of its seed; the record holds the actions."""
    config = PommermanConfig(ruleset="java", max_steps=60)
    record, states, _ = play_recorded(config, ["mcts", "mcts", "random", "random"], Budget(ms=2), seed=9)
    assert verify(load_record(save_record(tmp_path / "t.npz", record))) == len(states) - 1


def _tamper_step(record) -> int:
    """A step whose recorded action, if changed, changes the state (an agent that moves)."""
    for t in range(record.length):
        for seat in range(record.num_players):
            if record.iterations[t, seat] >= 0 and record.actions[t, seat] in (1, 2, 3, 4):
                return t
    raise AssertionError("no move to tamper with")


def test_tampered_record_is_a_mismatch_at_its_step(tmp_path):
    config = PommermanConfig(ruleset="java", max_steps=80)
    record, _, _ = play_recorded(config, ["rule_based"] * 4, Budget(iterations=1), seed=3)
    t = _tamper_step(record)
    seat = next(s for s in range(4) if record.iterations[t, s] >= 0 and record.actions[t, s] in (1, 2, 3, 4))
    record.actions[t, seat] = 0  # stop instead of the recorded move
    with pytest.raises(ReplayMismatch) as info:
        verify(record)
    assert info.value.step == t + 1
    assert f"step {t + 1}:" in str(info.value)


def test_corrupt_record_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(RecordError, match="not a readable record"):
        load_record(bad)
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(RecordError, match="field 'meta' is missing"):
        load_record(tmp_path / "other.npz")


def test_fingerprint_is_of_the_whole_state():
    game = Pommerman(PommermanConfig())
    game.reset(1)
    before = fingerprint(game)
    game.state.agents[0, 3] += 1  # ammo: not on the board, still part of the state
    assert fingerprint(game) != before
    assert 0 <= fold16(before) < 1 << 16


FLAME_LIST_RECORDS = Path(__file__).resolve().parents[1] / "data" / "pommerman_flame_list_records"


@pytest.mark.parametrize("name", ["rule_based_java_seed5.npz", "rule_based_canonical_seed5.npz"])
def test_record_of_the_flame_list_layout_says_why_it_cannot_be_checked(name, tmp_path):
    """A record written before the per-cell flames (fingerprint version 1, absent from its
    meta) is refused before the first step with the reason, by the API and by the CLI."""
    record = load_record(FLAME_LIST_RECORDS / name)
    assert record.fingerprint_version == 1 and record.length > 100
    with pytest.raises(RecordError, match="fingerprints are version 1, this Arena's pommerman "
                                          "fingerprints are version 2"):
        verify(record)
    cli = subprocess.run([sys.executable, "-m", "jobs.cli", "replay", str(FLAME_LIST_RECORDS / name)],
                         capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2])
    assert cli.returncode == 2
    assert "cannot be checked here" in cli.stderr and "Traceback" not in cli.stderr


def test_record_keeps_its_fingerprint_version(tmp_path):
    config = PommermanConfig(ruleset="java", max_steps=30)
    record, states, _ = play_recorded(config, ["rule_based"] * 4, Budget(iterations=1), seed=4)
    assert record.fingerprint_version == Pommerman.fingerprint_version == 2
    loaded = load_record(save_record(tmp_path / "v.npz", record))
    assert loaded.fingerprint_version == 2 and verify(loaded) == len(states) - 1
    loaded.fingerprint_version = 1
    with pytest.raises(RecordError, match="version 1"):
        next(replay(loaded))


def test_a_study_passes_the_board_index_and_its_record_keeps_it(tmp_path):
    """The plan's board seed reaches the game as ``reset(..., board_index=b)`` (a
    ``boards_file`` game plays record b) and the record keeps it, so the replay plays the
    same board; a record written before the board index was stored reads it from the
    board seed's spawn key, as the game did then."""
    import gzip
    import json

    from cluster.run.play import build_agents, play_recorded_game
    from cluster.spec.build import build_spec
    from cluster.spec.plan import plan_study
    from games.pommerman import generate
    from games.pommerman.kernels import state_to_dict

    boards = [state_to_dict(generate(PommermanConfig(ruleset="java"), 100 + b)) for b in range(3)]
    path = tmp_path / "boards.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.writelines(json.dumps({"scenario": {"rules": "java", "mode": "ffa"}, "states": [d]}) + "\n"
                      for d in boards)
    spec = build_spec({
        "study": {"name": "boards", "seed": 8, "results_dir": str(tmp_path / "studies")},
        "game": {"name": "pommerman", "ruleset": "java", "max_steps": 20, "boards_file": str(path)},
        "budget": {"iterations": 1}, "design": {"seeds": 3, "games_per_seed": 1},
        "lineup": [{"agent": "random"}] * 4, "tracking": {"enabled": False},
    }, check_files=False)
    agents = build_agents(spec)
    for series in plan_study(spec):
        task = series.games[0]
        _, _, record = play_recorded_game(spec, task, agents, worker="test")
        loaded = load_record(save_record(tmp_path / f"b{task.board_seed}.npz", record))
        assert loaded.board_index == task.board_seed and verify(loaded) == loaded.length
        initial = state_to_dict(next(replay(loaded))[1].state)
        assert initial["board"] == boards[task.board_seed]["board"]
    # An older record: no board_index in its meta; its board was the spawn key's last entry.
    arrays = dict(np.load(tmp_path / "b2.npz", allow_pickle=False))
    meta = json.loads(str(arrays["meta"]))
    del meta["board_index"]
    assert meta["board_spawn_key"] == [0, 2]
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    np.savez_compressed(tmp_path / "old.npz", **arrays)
    old = load_record(tmp_path / "old.npz")
    assert old.board_index == 2 and verify(old) == old.length


def test_pommerman_fingerprint_is_of_the_content_not_the_layout():
    """Equal states fingerprint equally however their arrays lie: a copy (fresh bomb rows
    past the count, where the played state keeps the rows of bombs gone), a state assembled
    from separate arrays, the initial state read back from JSON; bytes outside the content
    (bomb rows past the count) do not count, the content does."""
    config = PommermanConfig(ruleset="java")
    game = Pommerman(config)
    game.reset(np.random.SeedSequence(11))
    assert Pommerman.from_json(game.to_json()).fingerprint() == game.fingerprint()
    rng = np.random.default_rng(0)
    seen_flames = seen_stale_rows = False
    for _ in range(60):
        if game.done:
            break
        game.step([int(a) for a in rng.integers(0, 6, 4)])
        s = game.state
        seen_flames |= bool(s.meta[2])
        seen_stale_rows |= bool(s.bombs[int(s.meta[1]):].any())
        copy = game.copy()
        assert copy.fingerprint() == game.fingerprint()
        loose = Pommerman(config)
        loose.state = type(s)(*(np.array(a, copy=True) for a in s))  # six separate arrays
        assert loose.fingerprint() == game.fingerprint()
    assert seen_flames and seen_stale_rows
    s = game.state
    before = game.fingerprint()
    s.bombs[int(s.meta[1]):] = 7  # past the live count: not part of the state
    assert game.fingerprint() == before
    s.flames[0] += np.uint64(1) << np.uint64(8 * 3)  # one more flame of life 3 at (0, 0)
    assert game.fingerprint() != before


def test_gif_has_one_frame_per_state_and_png_frames(tmp_path):
    config = PommermanConfig(ruleset="java", max_steps=25)
    record, _, _ = play_recorded(config, ["random"] * 4, Budget(iterations=1), seed=4)
    gif = write_gif(record, tmp_path / "g.gif")
    with Image.open(gif) as img:
        assert img.n_frames == record.length + 1
    first = write_png(record, 0, tmp_path / "f0.png")
    fog = write_png(record, 0, tmp_path / "f0-view.png", observer=0)
    assert Image.open(first).size == Image.open(fog).size
    assert Image.open(first).tobytes() != Image.open(fog).tobytes()  # the fogged view differs
    with pytest.raises(ValueError, match="step must be in"):
        write_png(record, record.length + 1, tmp_path / "x.png")


def _screenshot(html: Path, out: Path, tmp_path: Path) -> bytes:
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path / 'chrome-profile'}", "--window-size=700,700",
           "--virtual-time-budget=3000", f"--screenshot={out}", html.as_uri()]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    return out.read_bytes()


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (Debian package 'chromium')")
def test_html_page_slider_changes_the_step(tmp_path):
    config = PommermanConfig(ruleset="java", max_steps=30)
    record, _, _ = play_recorded(config, ["rule_based"] * 4, Budget(iterations=1), seed=2)
    page = write_html(record, tmp_path / "replay.html")
    text = page.read_text()
    assert "http://" not in text and "https://" not in text  # self-contained: no network
    # Move the slider the way a user does (its input event), in a copy of the page.
    moved = tmp_path / "moved.html"
    moved.write_text(text.replace("</body>", "<script>slider.value = 20; "
                                  "slider.dispatchEvent(new Event('input'));</script></body>"))
    first = _screenshot(page, tmp_path / "a.png", tmp_path)
    second = _screenshot(moved, tmp_path / "b.png", tmp_path)
    assert first != second
    assert Image.open(tmp_path / "a.png").getbbox() is not None


def test_pick_replays_is_deterministic():
    import pandas as pd

    rows = []
    for g, (length, res) in enumerate([(50, ["win", "loss"]), (80, ["loss", "win"]), (80, ["tie", "tie"])]):
        for seat, label in enumerate(["A", "B"]):
            rows.append({"game_index": g, "seat": seat, "label": label, "result": res[seat], "length": length})
    df = pd.DataFrame(rows)
    # Longest: game 1 (80 steps; game 2 ties it, the lower index wins). A's only loss is
    # game 1, already shown; the first other win is game 0.
    assert pick_replays(df) == [("longest", 1), ("win", 0)]
    assert pick_replays(df.sample(frac=1, random_state=3)) == [("longest", 1), ("win", 0)]


def test_study_records_every_game_and_logs_replays(tmp_path, ray_local):
    from mlflow.tracking import MlflowClient

    from cluster.spec.build import build_spec
    from cluster.run.driver import run_study

    spec = build_spec({
        "study": {"name": "rec", "seed": 3, "results_dir": str(tmp_path / "studies")},
        "game": {"name": "pommerman", "ruleset": "java", "max_steps": 40},
        "budget": {"iterations": 10},
        "design": {"seeds": 1, "games_per_seed": 2},
        "lineup": [{"agent": "mcts"}, {"agent": "rule_based"}, {"agent": "osla"}, {"agent": "random"}],
        "tracking": {"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "experiment": "rec"},
    })
    result = run_study(spec, num_workers=2, progress=False)
    for g in range(2):
        record = load_study_record(result.study_dir, g)
        assert verify(record) == record.length
    pages = sorted((result.study_dir / "replays").glob("*.html"))
    assert pages and (result.study_dir / "report" / "replays.md").read_text().count("../replays/") == len(pages)
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    logged = [f.path for f in client.list_artifacts(result.mlflow_run_id, "replays")]
    assert len(logged) == len(pages)
    # The CLI re-simulates a study's game and renders it.
    out = subprocess.run([sys.executable, "-m", "jobs.cli", "replay", str(result.study_dir), "1",
                          "--png", "3", "--out", str(tmp_path / "out")], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert "every step matches" in out.stdout
    assert (tmp_path / "out" / "rec-game-000001-step0003.png").is_file()
    bad = subprocess.run([sys.executable, "-m", "jobs.cli", "replay", str(result.study_dir), "7"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "no record of game 7" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("name,options", [
    ("birds", {}),
    ("xcom", {"board": "mini"}),
    ("scotland_yard", {}),
])
def test_every_game_replays_and_renders(name, options, tmp_path):
    """Each game's record replays step by step and its renderer draws every frame,
    the true state and a player's view."""
    from cluster.run.play import acting_players
    from games.registry import make_game

    game = make_game(name, **options)
    board_seed = np.random.SeedSequence(4, spawn_key=(0,))
    game.reset(board_seed)
    players = [make_agent("random", {}, Budget(iterations=1), game.config) for _ in range(game.num_players)]
    for seat, agent in enumerate(players):
        agent.begin_game(seat, np.random.SeedSequence(4, spawn_key=(1, seat)))
    recorder = GameRecorder(name, game.config, board_seed, [f"r{s}" for s in range(game.num_players)],
                            game.num_actions)
    recorder.start(game)
    while not game.done and game.step_count < 40:
        actions = [0] * game.num_players
        for seat in acting_players(game):
            actions[seat] = players[seat].act(game.observation(seat))
            recorder.decision(seat, players[seat])
        game.step(actions)
        recorder.step(game, actions)
    record = recorder.finish()
    if not game.done:  # cut short for speed: check the steps that were played
        steps = [s for s, _ in zip(range(record.length + 1), replay(record))]
        assert steps == list(range(record.length + 1))
    else:
        assert verify(record) == record.length
    true_png = write_png(record, 1, tmp_path / "t.png")
    view_png = write_png(record, 1, tmp_path / "v.png", observer=game.num_players - 1)
    with Image.open(true_png) as a, Image.open(view_png) as b:
        assert a.size[0] > 200 and a.size[1] > 200
        assert a.size == b.size
