"""The card set: generated from a documented, seeded distribution, or read from a CSV.

Generated set (:func:`generate_cards`), resembling the published game's 180
birds (points 0-9, mean 3.94; generic food cost 0-3):

* **Points**: fixed counts per value, so every seed has the same point histogram::

      points   0   1   2   3   4   5   6   7   8   9
      cards    6  18  24  34  30  24  20  14   7   3     (180 cards, mean 709/180 = 3.94)

* **Cost** given points ``v``: ``clip(round(v / 3) + d, 0, 3)`` with
  ``d`` = -1, 0, +1 with probabilities 0.25, 0.5, 0.25, drawn from
  ``numpy.random.default_rng(card_seed)``; dearer birds tend to be worth more.
* The card order is then shuffled with the same generator (ids carry no meaning).

CSV (:func:`load_cards_csv`): a header row naming the columns ``points`` and
``cost`` (a ``name`` column and others are allowed and ignored), one card per
row; points must be an int in 0..9 and cost an int in 0..3. Errors name the
(1-based, header = row 1) row and the column.
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ._layout import MAX_CARDS, MAX_COST, MAX_POINTS, MIN_CARDS

#: Cards per point value 0..9 of the generated set.
POINT_COUNTS = (6, 18, 24, 34, 30, 24, 20, 14, 7, 3)


def generate_cards(card_seed: int) -> np.ndarray:
    """int16[180, 2] (points, cost) per card, from the distribution above."""
    rng = np.random.default_rng(int(card_seed))
    points = np.repeat(np.arange(len(POINT_COUNTS)), POINT_COUNTS)
    base = np.rint(points / 3.0).astype(np.int64)
    delta = rng.choice(np.array([-1, 0, 1]), size=points.size, p=[0.25, 0.5, 0.25])
    cost = np.clip(base + delta, 0, MAX_COST)
    cards = np.stack([points, cost], axis=1).astype(np.int16)
    return cards[rng.permutation(points.size)]


class CardFileError(ValueError):
    """A malformed card CSV; the message names the row and the column."""


def load_cards_csv(path, field: str = "cards_csv") -> np.ndarray:
    """int16[C, 2] from a CSV file (see the module docstring); raises
    :class:`CardFileError` ``"<field>: <path>: row R, column 'c': ..."``."""
    path = Path(path)
    where = f"{field}: {path}"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CardFileError(f"{where}: cannot read ({exc.strerror or exc})") from None
    rows = list(csv.reader(text.splitlines()))
    if not rows:
        raise CardFileError(f"{where}: row 1: empty file (expected a header with points,cost)")
    header = [h.strip().lower() for h in rows[0]]
    for column in ("points", "cost"):
        if column not in header:
            raise CardFileError(f"{where}: row 1, column {column!r}: missing from the header {rows[0]}")
    limits = {"points": MAX_POINTS, "cost": MAX_COST}
    index = {c: header.index(c) for c in limits}
    cards = []
    for r, row in enumerate(rows[1:], start=2):
        if not row or all(not cell.strip() for cell in row):
            continue
        values = []
        for column, limit in limits.items():
            i = index[column]
            if i >= len(row):
                raise CardFileError(f"{where}: row {r}, column {column!r}: missing value")
            cell = row[i].strip()
            try:
                value = int(cell)
            except ValueError:
                raise CardFileError(f"{where}: row {r}, column {column!r}: expected an int in "
                                    f"0..{limit}, got {cell!r}") from None
            if not 0 <= value <= limit:
                raise CardFileError(f"{where}: row {r}, column {column!r}: expected an int in "
                                    f"0..{limit}, got {value}")
            values.append(value)
        cards.append(values)
    if not MIN_CARDS <= len(cards) <= MAX_CARDS:
        raise CardFileError(f"{where}: needs {MIN_CARDS}..{MAX_CARDS} cards (both hands, the tray "
                            f"and one draw per turn), got {len(cards)}")
    return np.asarray(cards, dtype=np.int16)
