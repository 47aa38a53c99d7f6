"""What Arena writes for browsers keeps users' and games' strings as data (issue 54, point 5).

A replay page (cluster.replay.view.write_html) is opened from a study directory and from
the MLflow UI, which serves it: a lineup label, a game name, an action name, a status line
or a title like ``</script><script>...</script>`` must not become markup or script. The
Markdown tables of reports and of the MLflow run description escape it too.
"""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import numpy as np
import pytest

from agents.api import Budget
from agents.registry import make_agent
from cluster.analysis.tables import markdown_table
from cluster.replay.records import GameRecorder
from cluster.replay.view import script_json, write_html
from games import registry
from games.birds import Birds, BirdsConfig

SCRIPT = "</script><script>document.title='owned'</script>"
COMMENT = "<!--<script>"
HOSTILE_LABELS = [SCRIPT + " <img src=x onerror=alert(1)>", COMMENT + " __FRAMES__ A&amp;B \u2028\u2029"]
HOSTILE_GAME = "birds</title><script>alert('game')</script>"
HOSTILE_STATUS = "status </SCRIPT ><svg onload=alert('status')>"
HOSTILE_ACTION = "act</script><b>bold</b>"


class _HostileBirds(Birds):
    """Birds whose status line and action names are hostile text (as a plugin game could write)."""

    def render(self, state=None) -> str:
        return super().render(state) + "\n" + HOSTILE_STATUS

    def action_name(self, action: int) -> str:
        return HOSTILE_ACTION


class _Page(HTMLParser):
    """The elements of a page, its scripts' text and its title's text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str | None]] = []
        self.scripts: list[str] = []
        self.title = ""
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += attrs
        self._in = tag
        if tag == "script":
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "script":
            self.scripts[-1] += data
        elif self._in == "title":
            self.title += data


def _hostile_record(monkeypatch, labels):
    """A birds game recorded under a hostile game name with hostile labels."""
    monkeypatch.setitem(registry._GAMES, HOSTILE_GAME, (BirdsConfig, _HostileBirds))
    game = registry.make_game(HOSTILE_GAME, BirdsConfig())
    board_seed = np.random.SeedSequence(4, spawn_key=(0,))
    game.reset(board_seed)
    players = [make_agent("random", {}, Budget(iterations=1), game.config) for _ in range(game.num_players)]
    for seat, agent in enumerate(players):
        agent.begin_game(seat, np.random.SeedSequence(4, spawn_key=(1, seat)))
    recorder = GameRecorder(HOSTILE_GAME, game.config, board_seed, labels[:game.num_players], game.num_actions)
    recorder.start(game)
    from cluster.run.play import acting_players

    while not game.done:  # a page replays the whole game
        actions = [0] * game.num_players
        for seat in acting_players(game):
            actions[seat] = players[seat].act(game.observation(seat))
            recorder.decision(seat, players[seat])
        game.step(actions)
        recorder.step(game, actions)
    return recorder.finish()


@pytest.mark.parametrize("title", [None, "game 3 (loss-" + SCRIPT + "): " + COMMENT])
def test_replay_page_keeps_hostile_strings_as_data(title, monkeypatch, tmp_path):
    labels = HOSTILE_LABELS + [f"seat {i}" for i in range(8)]
    record = _hostile_record(monkeypatch, labels)
    text = write_html(record, tmp_path / "page.html", title=title).read_text(encoding="utf-8")
    page = _Page()
    page.feed(text)
    page.close()
    # Only the page's own elements, one script, and no event handler attribute.
    assert page.tags.count("script") == 1
    assert set(page.tags) <= {"html", "head", "meta", "title", "style", "body", "h3", "img", "div", "button",
                              "input", "span", "table", "thead", "tbody", "tr", "th", "script"}
    assert not [name for name, _ in page.attributes if name.startswith("on")]
    for hostile in [*HOSTILE_LABELS, HOSTILE_GAME, HOSTILE_STATUS, HOSTILE_ACTION, "<!--<", "<svg"]:
        assert hostile not in text
    assert text.lower().count("</script") == 1  # the page's own
    # The strings are still there as data: the title as text, the details as JSON.
    expected = title or f"{HOSTILE_GAME} replay: {', '.join(labels[:record.num_players])}"
    assert page.title == expected
    details = json.loads(re.search(r"const DETAILS = (.*);\n", page.scripts[0]).group(1))
    seats = details[1]["seats"]
    assert [s["label"] for s in seats] == labels[:record.num_players]
    assert {s["action"] for s in seats if s["iterations"] is not None} <= {HOSTILE_ACTION}
    assert details[0]["status"] == HOSTILE_STATUS
    assert "__FRAMES__" in page.scripts[0]  # a placeholder in a label is not substituted


def test_script_json_round_trips_and_has_no_markup():
    value = {"label": SCRIPT, "x": ["\u2028", "\u2029", "&", "]]>"]}
    text = script_json(value)
    assert not set(text) & set("<>&\u2028\u2029")
    assert json.loads(text) == value


def test_markdown_tables_escape_markup_and_cell_ends():
    table = markdown_table(["label", "W"], [[SCRIPT + " | x", 1]])
    assert "<" not in table and ">" not in table
    assert table.splitlines()[2] == ("| &lt;/script&gt;&lt;script&gt;document.title='owned'&lt;/script&gt; \\| x"
                                     " | 1 |")


def test_run_description_fences_hold_backticks():
    from cluster.run.tracker import _code_span, _fence

    command = "arena run x.toml --set 'lineup.0.params.note=```\n<script>'"
    assert _fence(command) == "````"
    assert _code_span("/tmp/a`b") == "``/tmp/a`b``"
    assert _code_span("`x") == "`` `x ``"


@pytest.mark.parametrize("experiment, directory", [("..", "experiment"), (".", "experiment"),
                                                   ("../../etc", "_.._etc"), (".hidden run", "hidden_run")])
def test_an_experiment_name_is_one_directory_under_mlartifacts(experiment, directory):
    from cluster.tracking import artifact_location

    assert artifact_location("sqlite:////data/m.db", experiment) == f"/data/mlartifacts/{directory}"
