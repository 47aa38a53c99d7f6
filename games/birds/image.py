"""Bird card game pictures: a state (true, or one player's observation) drawn with Pillow.

    >>> from games.birds import Birds
    >>> game = Birds(); game.reset(seed=3)
    >>> game.render_image().save("table.png")                  # the true table
    >>> game.render_image(game.observation(0)).save("p0.png")  # what player 0 knows

One band per player (player 1 on top): its five board slots, its hand, its food
and score; between them the face-up tray, the feeder and the deck. A card shows
its points (large) and food cost (dots); a card the observer cannot see is
drawn face down, an empty slot as an outline. The player to move is marked.
"""
from __future__ import annotations

from PIL import Image, ImageDraw, ImageFont

from ._layout import (
    BOARD_SLOTS, C_COST, C_POINTS, EMPTY, HIDDEN, M_DECK_POS, M_FEEDER, M_OBSERVER, M_TO_MOVE, M_TURN,
    MAX_HAND, N_PLAYERS, P_BOARD, P_FOOD, P_HAND, P_SCORE, TOTAL_TURNS, TRAY_SLOTS,
)

__all__ = ["state_image"]

_CARD_W, _CARD_H, _GAP = 44, 60, 6
_PLAYER_COLOURS = ((46, 125, 50), (21, 101, 192))


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


def _card(draw, x, y, cards, card, big, small, edge=(60, 60, 60)):
    box = (x, y, x + _CARD_W, y + _CARD_H)
    if card == EMPTY:
        draw.rounded_rectangle(box, radius=5, outline=(190, 190, 190))
        return
    if card == HIDDEN:
        draw.rounded_rectangle(box, radius=5, fill=(120, 90, 160), outline=edge)
        draw.text((x + 15, y + 20), "?", font=big, fill=(255, 255, 255))
        return
    points, cost = int(cards[card, C_POINTS]), int(cards[card, C_COST])
    shade = 255 - 12 * points
    draw.rounded_rectangle(box, radius=5, fill=(255, shade, 200 - 8 * points), outline=edge)
    draw.text((x + 6, y + 4), str(points), font=big, fill=(0, 0, 0))
    for k in range(cost):  # food cost as dots along the bottom
        cx = x + 8 + k * 10
        draw.ellipse((cx, y + _CARD_H - 14, cx + 7, y + _CARD_H - 7), fill=(200, 120, 0))
    draw.text((x + 26, y + 6), "pt", font=small, fill=(80, 80, 80))


def state_image(state, title: str | None = None) -> Image.Image:
    """An RGB picture of a BirdsState (true state or observation).

    Returns:
        PIL.Image.Image, about 640 x 430 pixels (wider when hands are long).
    """
    big, small = _font(22), _font(12)
    hand_w = MAX_HAND * (_CARD_W + _GAP)
    width = max(640, 110 + hand_w)
    band = 2 * _CARD_H + 3 * _GAP + 18
    top = 18 if title else 0
    height = top + 2 * band + _CARD_H + 40
    img = Image.new("RGB", (width, height), (250, 250, 245))
    draw = ImageDraw.Draw(img)
    if title:
        draw.text((6, 2), title, font=small, fill=(0, 0, 0))
    meta = state.meta
    to_move = int(meta[M_TO_MOVE])
    observer = int(meta[M_OBSERVER])
    cards = state.cards
    for p in range(N_PLAYERS):
        y0 = top + (0 if p == 1 else band + _CARD_H + 40)
        colour = _PLAYER_COLOURS[p]
        marker = " (to move)" if to_move == p and int(meta[M_TURN]) < TOTAL_TURNS else ""
        seen = "" if observer < 0 else (" (observer)" if observer == p else "")
        pl = state.player[p]
        draw.text((6, y0 + 2), f"player {p}{seen}{marker}: score {int(pl[P_SCORE])}, food {int(pl[P_FOOD])}, "
                              f"hand {int(pl[P_HAND])}, board {int(pl[P_BOARD])}/{BOARD_SLOTS}",
                  font=small, fill=colour)
        draw.text((6, y0 + 22), "board", font=small, fill=(90, 90, 90))
        for i in range(BOARD_SLOTS):
            _card(draw, 60 + i * (_CARD_W + _GAP), y0 + 18, cards, int(state.board[p, i]), big, small, colour)
        draw.text((6, y0 + 22 + _CARD_H + _GAP), "hand", font=small, fill=(90, 90, 90))
        for i in range(int(pl[P_HAND])):
            _card(draw, 60 + i * (_CARD_W + _GAP), y0 + 18 + _CARD_H + _GAP, cards, int(state.hand[p, i]),
                  big, small)
    ym = top + band + 10
    draw.text((6, ym + 4), "tray", font=small, fill=(90, 90, 90))
    for j in range(TRAY_SLOTS):
        _card(draw, 60 + j * (_CARD_W + _GAP), ym, cards, int(state.tray[j]), big, small)
    x = 60 + TRAY_SLOTS * (_CARD_W + _GAP) + 20
    left = max(0, cards.shape[0] - int(meta[M_DECK_POS]))
    draw.text((x, ym + 4), f"feeder: {int(meta[M_FEEDER])} food", font=small, fill=(150, 90, 0))
    for k in range(int(meta[M_FEEDER])):
        draw.ellipse((x + k * 14, ym + 24, x + k * 14 + 10, ym + 34), fill=(200, 120, 0))
    draw.text((x, ym + 42), f"deck: {left} cards   turn {int(meta[M_TURN])}/{TOTAL_TURNS}", font=small,
              fill=(60, 60, 60))
    return img
