"""Scotland Yard pictures: the station graph with the detectives, Mr X and his possible locations.

    >>> from games.scotland_yard import ScotlandYard
    >>> game = ScotlandYard(); game.reset(seed=3)
    >>> game.render_image().save("board.png")                  # Mr X's true station shown
    >>> game.render_image(game.observation(1)).save("seekers.png")  # what the seekers know

The board file has no coordinates, so stations are placed by a deterministic
force-directed layout of the graph (Fruchterman-Reingold, computed once per
board and cached): neighbours end up close, the picture is the same every
time. Connections are coloured by transport (taxi grey, bus green,
underground red, ferry dashed blue). Stations where Mr X may be (the public
possible-locations set) are orange; Mr X's true station (when the state holds
it) is a black disc marked X; detectives are coloured discs numbered 1..5.
A status line gives the round, the tickets Mr X used and everyone's tickets.
"""
from __future__ import annotations

import functools
import hashlib

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ._board import BUS, FERRY, TAXI, UNDERGROUND
from ._layout import (
    HIDDEN, M_NUM_DETECTIVES, M_ROUND, M_ROUNDS, M_SEEKER_VIEW, MRX, TICKET_NAMES,
)

__all__ = ["station_layout", "state_image"]

_EDGE = {TAXI: (200, 200, 200), BUS: (60, 160, 80), UNDERGROUND: (210, 50, 50), FERRY: (40, 90, 200)}
_DETECTIVE = ((31, 119, 180), (44, 160, 44), (148, 103, 189), (140, 86, 75), (227, 119, 194))


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


def _edges(neighbours, transport, degree):
    out = []
    for u in range(1, degree.shape[0]):
        for k in range(int(degree[u])):
            v = int(neighbours[u, k])
            if u < v:
                out.append((u, v, int(transport[u, k])))
    return out


@functools.lru_cache(maxsize=8)
def _layout_cached(key: str, edges: tuple, n: int) -> np.ndarray:
    del key
    rng = np.random.default_rng(12345)  # fixed: the same picture every time
    pos = rng.uniform(-1.0, 1.0, size=(n, 2))
    a = np.array([e[0] for e in edges]) - 1
    b = np.array([e[1] for e in edges]) - 1
    k = 1.0 / np.sqrt(n)
    temperature = 0.2
    for _ in range(400):
        delta = pos[:, None, :] - pos[None, :, :]
        dist = np.sqrt((delta ** 2).sum(-1)) + 1e-9
        force = (k * k / dist ** 2)[:, :, None] * delta                 # repulsion
        disp = force.sum(1)
        d = pos[a] - pos[b]
        length = np.sqrt((d ** 2).sum(-1)) + 1e-9
        pull = (length / k)[:, None] * d                                # attraction along edges
        np.add.at(disp, a, -pull)
        np.add.at(disp, b, pull)
        norm = np.sqrt((disp ** 2).sum(-1)) + 1e-9
        pos += disp / norm[:, None] * np.minimum(norm, temperature)[:, None]
        temperature *= 0.99
    pos -= pos.min(0)
    pos /= pos.max(0)
    return pos


def station_layout(neighbours, transport, degree) -> np.ndarray:
    """float64[S + 1, 2]: a position in [0, 1]^2 for each station (row 0 unused)."""
    edges = tuple(_edges(neighbours, transport, degree))
    key = hashlib.sha1(repr(edges).encode()).hexdigest()
    pos = _layout_cached(key, edges, degree.shape[0] - 1)
    return np.vstack([np.zeros((1, 2)), pos])


@functools.lru_cache(maxsize=4)
def _background(key: str, edges: tuple, n: int, size: int) -> tuple:
    """The static picture (connections, stations, numbers) and the station pixel positions."""
    small, tiny = _font(13), _font(9)
    del small
    pos = _layout_cached(key, edges, n)
    margin, top = 16, _TOP
    span = size - 2 * margin
    xy = [(0.0, 0.0)] + [(margin + span * p[0], top + margin + span * p[1]) for p in pos]
    img = Image.new("RGB", (size, size + top + 44), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    for u, v, t in edges:
        colour = _EDGE.get(t, (0, 0, 0))
        if t == FERRY:
            (x0, y0), (x1, y1) = xy[u], xy[v]
            for s in np.linspace(0, 1, 12)[::2]:
                e = min(1.0, s + 1 / 11)
                draw.line((x0 + (x1 - x0) * s, y0 + (y1 - y0) * s, x0 + (x1 - x0) * e, y0 + (y1 - y0) * e),
                          fill=colour, width=2)
        else:
            draw.line((*xy[u], *xy[v]), fill=colour, width=1 if t == TAXI else 2)
    for s in range(1, n + 1):
        x, y = xy[s]
        draw.ellipse((x - 5, y - 5, x + 5, y + 5), fill=(250, 250, 250), outline=(120, 120, 120))
        draw.text((x + 5, y - 11), str(s), font=tiny, fill=(110, 110, 110))
    return img, xy


_TOP = 20


def state_image(state, size: int = 760, title: str | None = None) -> Image.Image:
    """An RGB picture of a ScotlandYardState (true state or a seeker's observation).

    The connections and stations are drawn once per board and cached; a frame
    adds the possible locations, the pieces and the status lines.
    """
    small, tiny = _font(13), _font(9)
    edges = tuple(_edges(state.neighbours, state.transport, state.degree))
    key = hashlib.sha1(repr(edges).encode()).hexdigest()
    background, xy = _background(key, edges, state.degree.shape[0] - 1, size)
    img = background.copy()
    draw = ImageDraw.Draw(img)
    if title:
        draw.text((6, 3), title, font=small, fill=(0, 0, 0))
    seeker_view = bool(state.meta[M_SEEKER_VIEW])
    for s in np.flatnonzero(state.possible[1:]) + 1:
        x, y = xy[s]
        draw.ellipse((x - 5, y - 5, x + 5, y + 5), fill=(255, 160, 40), outline=(120, 120, 120))
    mrx = int(state.positions[MRX])
    if mrx != HIDDEN and not seeker_view:
        x, y = xy[mrx]
        draw.ellipse((x - 9, y - 9, x + 9, y + 9), fill=(0, 0, 0))
        draw.text((x - 4, y - 7), "X", font=small, fill=(255, 255, 255))
    detectives = int(state.meta[M_NUM_DETECTIVES])
    for d in range(1, detectives + 1):
        station = int(state.positions[d])
        if station <= 0:
            continue
        x, y = xy[station]
        draw.ellipse((x - 9, y - 9, x + 9, y + 9), fill=_DETECTIVE[(d - 1) % len(_DETECTIVE)],
                     outline=(0, 0, 0))
        draw.text((x - 4, y - 7), str(d), font=small, fill=(255, 255, 255))
    rnd = int(state.meta[M_ROUND])
    used = [TICKET_NAMES[int(t)][0].upper() for t in state.ticket_log[1:rnd + 1] if t >= 0]
    y = _TOP + size + 2
    draw.text((6, y), f"round {rnd}/{int(state.meta[M_ROUNDS])}   Mr X used: {' '.join(used) or '-'}   "
                      f"possible locations: {int(state.possible[1:].sum())}"
                      + ("   (seekers' view)" if seeker_view else ""), font=small, fill=(0, 0, 0))
    tickets = []
    for p in range(detectives + 1):
        name = "X" if p == MRX else f"D{p}"
        tickets.append(name + " " + "/".join(str(int(v)) for v in state.tickets[p]))
    draw.text((6, y + 20), "tickets taxi/bus/ug/black/double: " + "  ".join(tickets), font=tiny, fill=(60, 60, 60))
    return img
