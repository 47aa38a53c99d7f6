"""Pommerman pictures: a state (true, or one agent's observation) drawn with Pillow.

    >>> from games.pommerman import Pommerman
    >>> game = Pommerman(); game.reset(seed=3)
    >>> game.render_image().save("board.png")                  # the true board
    >>> game.render_image(game.observation(0)).save("fog.png")  # as agent 0 sees it

Cells are squares of ``cell`` pixels: passage (sand), rigid wall (dark grey),
wood (brown), fog (slate, hatched), flames (orange). Power-ups are lettered
discs (B extra bomb, R range, K kick). Bombs are black discs with their life
(steps to explosion) and, when moving, an arrow. Agents are coloured discs
with their id; dead agents are not drawn. A status line under the board gives
the step and each agent's ammo, blast strength and kick.
"""
from __future__ import annotations

from PIL import Image, ImageDraw, ImageFont

from ._layout import (
    A_ALIVE, A_AMMO, A_BLAST, A_COL, A_KICK, A_ROW, A_VISIBLE, B_COL, B_DIR, B_LIFE, B_ROW,
    BOARD_SIZE, EXTRA_BOMB, FLAMES, FOG, INCR_RANGE, KICK, M_N_BOMBS, M_STEP, N_AGENTS, RIGID, WOOD,
)

__all__ = ["state_image", "AGENT_COLOURS"]

#: Colour of agent i (teams 0+2 and 1+3 get related hues).
AGENT_COLOURS = ((214, 39, 40), (31, 119, 180), (244, 128, 40), (23, 190, 207))
_CELL_COLOURS = {RIGID: (70, 70, 78), WOOD: (150, 100, 55), FLAMES: (255, 140, 0), FOG: (60, 72, 90)}
_PASSAGE = (236, 226, 198)
_POWERUPS = {EXTRA_BOMB: ("B", (60, 90, 200)), INCR_RANGE: ("R", (200, 50, 50)), KICK: ("K", (40, 150, 60))}
_ARROWS = {1: "^", 2: "v", 3: "<", 4: ">"}


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has one fixed-size default font
        return ImageFont.load_default()


def _fog_tile(cell: int) -> Image.Image:
    tile = Image.new("RGB", (cell, cell), _CELL_COLOURS[FOG])
    draw = ImageDraw.Draw(tile)
    for k in range(0, 2 * cell, max(4, cell // 4)):
        draw.line((k, 0, 0, k), fill=(80, 94, 115))
    return tile


def _centred(draw, box, text, font, fill):
    x0, y0, x1, y1 = box
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    draw.text(((x0 + x1 - (right - left)) / 2 - left, (y0 + y1 - (bottom - top)) / 2 - top), text,
              font=font, fill=fill)


def state_image(state, cell: int = 32, title: str | None = None) -> Image.Image:
    """An RGB picture of ``state`` (a PommermanState: a true state or an observation).

    Args:
        state: PommermanState; FOG cells (an observation) are drawn as fog.
        cell: pixels per board cell.
        title: optional text above the board (e.g. "step 12 | view of agent 0").
    Returns:
        PIL.Image.Image of size (11 * cell, 11 * cell + status and title lines).
    """
    font = _font(max(10, cell // 2))
    small = _font(max(9, cell * 3 // 8))
    line = max(14, cell // 2 + 4)
    top = line if title else 0
    width = BOARD_SIZE * cell
    height = top + BOARD_SIZE * cell + 2 * line
    img = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    if title:
        draw.text((4, 1), title, font=small, fill=(0, 0, 0))
    board = state.board
    for r in range(BOARD_SIZE):
        for c in range(BOARD_SIZE):
            v = int(board[r * BOARD_SIZE + c])
            x0, y0 = c * cell, top + r * cell
            box = (x0, y0, x0 + cell - 1, y0 + cell - 1)
            draw.rectangle(box, fill=_CELL_COLOURS.get(v, _PASSAGE), outline=(200, 190, 165))
            if v == FOG:
                img.paste(_fog_tile(cell), (x0, y0))
            elif v == FLAMES:
                draw.ellipse((x0 + cell // 5, y0 + cell // 5, x0 + cell * 4 // 5, y0 + cell * 4 // 5),
                             fill=(255, 215, 0))
            elif v in _POWERUPS:
                letter, colour = _POWERUPS[v]
                m = cell // 6
                draw.ellipse((x0 + m, y0 + m, x0 + cell - m, y0 + cell - m), fill=colour)
                _centred(draw, box, letter, font, (255, 255, 255))
    bomb_cells = set()
    for k in range(int(state.meta[M_N_BOMBS])):
        b = state.bombs[k]
        r, c = int(b[B_ROW]), int(b[B_COL])
        bomb_cells.add((r, c))
        x0, y0 = c * cell, top + r * cell
        m = cell // 8
        draw.ellipse((x0 + m, y0 + m, x0 + cell - m, y0 + cell - m), fill=(20, 20, 20))
        label = str(int(b[B_LIFE])) + _ARROWS.get(int(b[B_DIR]), "")
        _centred(draw, (x0, y0, x0 + cell, y0 + cell), label, small, (255, 255, 255))
    status = []
    for i in range(N_AGENTS):
        a = state.agents[i]
        if not a[A_VISIBLE]:
            status.append(f"{i}:?")
            continue
        if not a[A_ALIVE]:
            status.append(f"{i}:dead")
            continue
        r, c = int(a[A_ROW]), int(a[A_COL])
        x0, y0 = c * cell, top + r * cell
        m = cell // 6
        on_bomb = (r, c) in bomb_cells  # drawn over its bomb: a thick outline shows it
        draw.ellipse((x0 + m, y0 + m, x0 + cell - m, y0 + cell - m), fill=AGENT_COLOURS[i],
                     outline=(0, 0, 0) if on_bomb else None, width=3 if on_bomb else 1)
        _centred(draw, (x0, y0, x0 + cell, y0 + cell), str(i), font, (255, 255, 255))
        status.append(f"{i}: ammo {int(a[A_AMMO])} blast {int(a[A_BLAST])}{' kick' if a[A_KICK] else ''}")
    y = top + BOARD_SIZE * cell + 2
    draw.text((4, y), f"step {int(state.meta[M_STEP])}   " + "   ".join(status[:2]), font=small, fill=(0, 0, 0))
    draw.text((4, y + line), "   ".join(status[2:]), font=small, fill=(0, 0, 0))
    return img
