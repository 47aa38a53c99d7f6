"""Render game records: a PNG frame, a GIF animation, a self-contained HTML page.

Every frame comes from re-simulating the record (:func:`cluster.replay.records.replay`,
which checks each step against the record), drawn by the game's own renderer:
``game.render_image(state)`` (Pommerman: :mod:`games.pommerman.image`; by
default the game's text ``render()``, :meth:`games.api.Game.render_image`). Nothing needs a display.

The HTML page embeds every frame (palette PNG, base64) and the per-step
details (joint action, each seat's search iterations and the value of its
choice, the game's status line) and needs no network: a step slider,
play/pause, previous/next, and the details of the shown step.
"""
from __future__ import annotations

import base64
import html
import io
import json
import math
import re
from pathlib import Path

from PIL import Image

from cluster.replay.records import GameRecord, RecordError, load_study_record, replay

__all__ = ["frame_image", "write_png", "write_gif", "write_html", "render_record", "pick_replays",
           "write_study_replays", "script_json"]


def frame_image(game, observer: int | None = None, title: str | None = None) -> Image.Image:
    """The game's current state (or ``observer``'s view of it) as an RGB image."""
    state = game.observation(observer) if observer is not None else None
    return game.render_image(state, title=title) if state is not None else game.render_image(title=title)


def _title(record: GameRecord, step: int, observer: int | None) -> str:
    view = f" | view of seat {observer} ({record.labels[observer]})" if observer is not None else ""
    return f"{record.game}: step {step} of {record.length}{view}"


def step_details(record: GameRecord, step: int, game) -> dict:
    """What the page shows for ``step``: the joint action that led to it and each
    seat's decision (iterations, value) at that step."""
    seats = []
    if step > 0:
        for s in range(record.num_players):
            it = int(record.iterations[step - 1, s])
            value = float(record.values[step - 1, s])
            seats.append({
                "seat": s, "label": str(record.labels[s]),
                "action": game.action_name(int(record.actions[step - 1, s])) if it >= 0 else "-",
                "iterations": it if it >= 0 else None,
                "value": None if math.isnan(value) else round(value, 4),
            })
    status = game.render().splitlines()[-1]
    return {"step": step, "seats": seats, "status": status}


def render_record(record: GameRecord, observer: int | None = None):
    """Yield ``(step, image, details)`` for every step, re-simulating and checking the record."""
    for step, game in replay(record):
        yield step, frame_image(game, observer, _title(record, step, observer)), step_details(record, step, game)


def write_png(record: GameRecord, step: int, path, observer: int | None = None) -> Path:
    """The frame of ``step`` (0 = the initial state) as a PNG."""
    if not 0 <= step <= record.length:
        raise ValueError(f"--png: step must be in [0, {record.length}], got {step}")
    for s, game in replay(record):
        if s == step:
            path = Path(path)
            frame_image(game, observer, _title(record, step, observer)).save(path)
            return path
    raise AssertionError("unreachable")


def _palette(img: Image.Image) -> Image.Image:
    """64 colours (fast octree): small frames, and the pictures use few colours anyway."""
    return img.quantize(colors=64, method=Image.Quantize.FASTOCTREE)


def write_gif(record: GameRecord, path, observer: int | None = None, ms_per_step: int = 120) -> Path:
    """An animation with one frame per state: ``record.length + 1`` frames."""
    frames = [_palette(img) for _, img, _ in render_record(record, observer)]
    path = Path(path)
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=ms_per_step, loop=0,
                   optimize=False, disposal=1)
    return path


def write_html(record: GameRecord, path, observer: int | None = None, title: str | None = None) -> Path:
    """A self-contained page (no network): frames, slider, play/pause, per-step details."""
    frames, details = [], []
    for _, img, info in render_record(record, observer):
        buffer = io.BytesIO()
        _palette(img).save(buffer, format="PNG", compress_level=6)
        frames.append(base64.b64encode(buffer.getvalue()).decode("ascii"))
        details.append(info)
    heading = html.escape(title or f"{record.game} replay: {', '.join(map(str, record.labels))}")
    values = {"TITLE": heading, "LAST": str(len(frames) - 1), "FRAMES": script_json(frames),
              "DETAILS": script_json(details)}
    # One pass: a placeholder inside a value (a label "__FRAMES__") is not substituted again.
    page = _PLACEHOLDER.sub(lambda m: values[m.group(1)], _PAGE)
    path = Path(path)
    path.write_text(page, encoding="utf-8")
    return path


#: What :func:`script_json` escapes: the characters that could end a ``<script>`` element
#: or open a comment or CDATA section in it (``</script>``, ``<!--``, ``]]>``), ``&``, and
#: the line separators that end a JavaScript string in older engines.
_SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_PLACEHOLDER = re.compile(r"__(TITLE|LAST|FRAMES|DETAILS)__")


def script_json(value) -> str:
    """``value`` as JSON that is safe inside an HTML ``<script>`` element: every string a
    user or a game wrote (labels, game names, action names, status lines) stays data, e.g.
    a label ``</script><script>alert(1)</script>`` is written ``\\u003c/script\\u003e...``
    and reads back as the same string in JavaScript."""
    text = json.dumps(value)
    for char, escape in _SCRIPT_ESCAPES.items():
        text = text.replace(char, escape)
    return text


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
body { font-family: sans-serif; margin: 16px; color: #222; }
#controls { margin: 8px 0; display: flex; gap: 8px; align-items: center; }
#slider { width: 420px; }
table { border-collapse: collapse; margin-top: 8px; }
td, th { border: 1px solid #bbb; padding: 2px 8px; text-align: right; }
th { background: #eee; } td.l { text-align: left; }
#status { font-family: monospace; margin-top: 6px; }
</style></head>
<body>
<h3>__TITLE__</h3>
<img id="frame" alt="game state">
<div id="controls">
  <button id="prev" title="previous step">&#9664;</button>
  <button id="play">play</button>
  <button id="next" title="next step">&#9654;</button>
  <input id="slider" type="range" min="0" max="__LAST__" value="0">
  <span id="stepno"></span>
</div>
<div id="status"></div>
<table id="details"><thead><tr><th>seat</th><th>label</th><th>action</th><th>iterations</th><th>value</th></tr></thead><tbody></tbody></table>
<script>
const FRAMES = __FRAMES__;
const DETAILS = __DETAILS__;
const slider = document.getElementById("slider");
let timer = null;
function show(step) {
  step = Math.max(0, Math.min(FRAMES.length - 1, step));
  slider.value = step;
  document.getElementById("frame").src = "data:image/png;base64," + FRAMES[step];
  document.getElementById("stepno").textContent = "step " + step + " / " + (FRAMES.length - 1);
  const d = DETAILS[step];
  document.getElementById("status").textContent = d.status;
  const body = document.querySelector("#details tbody");
  body.innerHTML = "";
  for (const s of d.seats) {
    const row = document.createElement("tr");
    for (const [v, cls] of [[s.seat, ""], [s.label, "l"], [s.action, "l"],
                            [s.iterations === null ? "-" : s.iterations, ""],
                            [s.value === null ? "-" : s.value.toFixed(3), ""]]) {
      const cell = document.createElement("td"); cell.textContent = v; if (cls) cell.className = cls;
      row.appendChild(cell);
    }
    body.appendChild(row);
  }
}
function stop() { if (timer) { clearInterval(timer); timer = null; } document.getElementById("play").textContent = "play"; }
document.getElementById("play").onclick = () => {
  if (timer) { stop(); return; }
  document.getElementById("play").textContent = "pause";
  timer = setInterval(() => { if (+slider.value >= FRAMES.length - 1) stop(); else show(+slider.value + 1); }, 150);
};
document.getElementById("prev").onclick = () => { stop(); show(+slider.value - 1); };
document.getElementById("next").onclick = () => { stop(); show(+slider.value + 1); };
slider.oninput = () => { stop(); show(+slider.value); };
const hash = parseInt((location.hash || "").replace("#step=", ""), 10);
show(Number.isFinite(hash) ? hash : 0);
</script>
</body></html>
"""


def pick_replays(df) -> list[tuple[str, int]]:
    """The games a study shows as replays, chosen deterministically from its rows:
    ``[(why, game_index), ...]``: the longest game, a loss of the first lineup
    label, a win (any label); each the lowest game index among its equals, and
    each game at most once."""
    if df is None or not len(df):
        return []
    ok = df[df["result"] != "error"]
    if not len(ok):
        return []
    picks: list[tuple[str, int]] = []
    games = ok.groupby("game_index")["length"].max().reset_index()
    longest = games.sort_values(["length", "game_index"], ascending=[False, True]).iloc[0]
    picks.append(("longest", int(longest["game_index"])))
    first_label = (df.attrs.get("label_order") or [str(ok.sort_values(["game_index", "seat"]).iloc[0]["label"])])[0]
    for why, mask in ((f"loss-{first_label}", (ok["label"] == first_label) & (ok["result"] == "loss")),
                      ("win", ok["result"] == "win")):
        chosen = sorted(int(g) for g in ok.loc[mask, "game_index"].unique()
                        if int(g) not in {p[1] for p in picks})
        if chosen:
            picks.append((why, chosen[0]))
    return picks


def write_study_replays(study_dir, df, first_label: str | None = None, out_dir=None) -> list[Path]:
    """Render the :func:`pick_replays` games of a study as HTML pages into
    ``<study_dir>/replays/`` (``<why>-game-<index>.html``). Games without a
    record (e.g. played before records existed) are skipped."""
    study_dir = Path(study_dir)
    out = Path(out_dir) if out_dir is not None else study_dir / "replays"
    if first_label is not None and df is not None:
        df = df.copy()
        df.attrs["label_order"] = [first_label]
    written = []
    for why, game_index in pick_replays(df):
        try:
            record = load_study_record(study_dir, game_index)
        except RecordError:  # no record of this game (e.g. played before records existed)
            continue
        out.mkdir(parents=True, exist_ok=True)
        safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in why)
        written.append(write_html(record, out / f"{safe}-game-{game_index:06d}.html",
                                  title=f"game {game_index} ({why}): {', '.join(map(str, record.labels))}"))
    return written
