"""XCOM pictures: the board with walls and units, and the line of the last shot, drawn with Pillow.

    >>> from games.xcom import Xcom
    >>> game = Xcom(board="mini"); game.reset(seed=0)
    >>> game.render_image().save("board.png")

Walls are dark grey squares, humans blue discs and aliens green discs, each
numbered by its unit index; dead units are not drawn. After a shot, a red line
joins the shooter's cell centre to its victim's (the segment the line-of-sight
rule checks) and the victim's cell is crossed out. A status line gives the
command count, the side to move and each side's reward.
"""
from __future__ import annotations

from PIL import Image, ImageDraw, ImageFont

from ._layout import (
    ALIENS, HUMANS, M_MAX_MOVES, M_MOVES, M_SIZE, M_TO_MOVE, M_UNITS, U_ALIVE, U_COL, U_ROW, WALL,
)

__all__ = ["state_image"]

_SIDE_COLOURS = {HUMANS: (31, 119, 180), ALIENS: (44, 160, 44)}
_SIDE_NAMES = {HUMANS: "humans", ALIENS: "aliens"}


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


def state_image(state, shot=None, cell: int | None = None, title: str | None = None) -> Image.Image:
    """An RGB picture of an XcomState.

    Args:
        state: XcomState.
        shot: ``((row, col), (row, col))`` of the last shot's shooter and victim, or None.
        cell: pixels per cell (default: 48 on a 6x6 board, 24 on larger ones).
        title: optional text above the board.
    """
    n = int(state.meta[M_SIZE])
    cell = cell or (48 if n <= 8 else 24)
    font, small = _font(max(10, cell // 2)), _font(12)
    top = 18 if title else 0
    img = Image.new("RGB", (n * cell, top + n * cell + 20), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    if title:
        draw.text((4, 2), title, font=small, fill=(0, 0, 0))
    for r in range(n):
        for c in range(n):
            x0, y0 = c * cell, top + r * cell
            wall = int(state.board[r * n + c]) == WALL
            draw.rectangle((x0, y0, x0 + cell - 1, y0 + cell - 1), fill=(70, 70, 78) if wall else (238, 234, 222),
                           outline=(200, 196, 185))
    k = int(state.meta[M_UNITS])
    for side in (HUMANS, ALIENS):
        for u in range(k):
            unit = state.units[side, u]
            if not unit[U_ALIVE]:
                continue
            x0, y0 = int(unit[U_COL]) * cell, top + int(unit[U_ROW]) * cell
            m = max(2, cell // 8)
            draw.ellipse((x0 + m, y0 + m, x0 + cell - m, y0 + cell - m), fill=_SIDE_COLOURS[side])
            label = str(u)
            left, t, right, b = draw.textbbox((0, 0), label, font=font)
            draw.text((x0 + (cell - (right - left)) / 2 - left, y0 + (cell - (b - t)) / 2 - t), label,
                      font=font, fill=(255, 255, 255))
    if shot is not None:
        (r0, c0), (r1, c1) = shot
        p0 = (c0 * cell + cell / 2, top + r0 * cell + cell / 2)
        p1 = (c1 * cell + cell / 2, top + r1 * cell + cell / 2)
        draw.line((*p0, *p1), fill=(220, 30, 30), width=max(2, cell // 12))
        x1, y1 = c1 * cell, top + r1 * cell
        draw.line((x1 + 4, y1 + 4, x1 + cell - 4, y1 + cell - 4), fill=(220, 30, 30), width=3)
        draw.line((x1 + cell - 4, y1 + 4, x1 + 4, y1 + cell - 4), fill=(220, 30, 30), width=3)
    side = int(state.meta[M_TO_MOVE])
    draw.text((4, top + n * cell + 3),
              f"command {int(state.meta[M_MOVES])}/{int(state.meta[M_MAX_MOVES])}, "
              f"{_SIDE_NAMES.get(side, '-')} to move, reward humans {state.rewards[HUMANS]:+.0f} "
              f"aliens {state.rewards[ALIENS]:+.0f}", font=small, fill=(0, 0, 0))
    return img
