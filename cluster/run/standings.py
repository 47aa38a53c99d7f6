"""A tournament's leaderboard while it runs: refreshed at a bounded rate, in the terminal and MLflow.

The driver hands every recorded game's rows to :class:`LiveStandings` (after they
are durable). At most once per ``refresh_seconds`` (and only when games arrived
since the last refresh) it recomputes the leaderboard
(:func:`cluster.analysis.leaderboard.leaderboard`, with ``bootstrap`` resamples:
fewer than the final table's, so a refresh costs well under a second of the
driver's time for ten entrants), prints it above the progress bar and logs its
metrics to the study's MLflow run (``rating/<label>``, ``rank_lo/<label>``, ...;
step = games done). A refresh that fails (too few games to rate, entrants that
have not all met yet) is skipped silently: the final report says what is wrong.
Games already in the store when a tournament resumes are counted from the start.
"""
from __future__ import annotations

import logging
import time
from typing import Callable

import pandas as pd

from cluster.analysis.leaderboard import Leaderboard, leaderboard, leaderboard_metrics
from cluster.analysis.ratings import RatingError

log = logging.getLogger(__name__)

__all__ = ["LiveStandings", "REFRESH_SECONDS", "LIVE_BOOTSTRAP", "standings_lines"]

#: Least seconds between two refreshes of the live leaderboard.
REFRESH_SECONDS = 60.0
#: Bootstrap resamples of a live refresh (the final leaderboard uses 1000).
LIVE_BOOTSTRAP = 200


def standings_lines(board: Leaderboard, games_done: int, games_total: int) -> list[str]:
    """A compact leaderboard for the terminal: one line per entrant."""
    lines = [f"leaderboard after {games_done} of {games_total} games ({board.boards} boards"
             f"{'; ' + board.warnings[0].split(':')[0] if board.warnings else ''}):"]
    for entrant, r in board.table.iterrows():
        rank = f"{int(r['rank_lo'])}" if r["rank_lo"] == r["rank_hi"] else f"{int(r['rank_lo'])}-{int(r['rank_hi'])}"
        lines.append(f"  {int(r['rank']):>2}. {entrant:<24} {r['rating']:>6.0f} Elo "
                     f"[{r['lo']:.0f}, {r['hi']:.0f}]  rank {rank}")
    return lines


class LiveStandings:
    """Recomputes and shows the leaderboard of a running tournament at a bounded rate."""

    def __init__(self, spec, existing: pd.DataFrame | None = None, tracker=None,
                 write: Callable[[str], None] | None = None, refresh_seconds: float = REFRESH_SECONDS,
                 bootstrap: int = LIVE_BOOTSTRAP, clock: Callable[[], float] = time.monotonic):
        self.spec = spec
        self.tracker = tracker
        self.write = write
        self.refresh_seconds = refresh_seconds
        self.bootstrap = bootstrap
        self.clock = clock
        self.rows: list[dict] = [] if existing is None or not len(existing) else existing.to_dict("records")
        self.games = {int(r["game_index"]) for r in self.rows}
        self._new = 0
        self._last = clock()
        self.refreshes = 0
        """Leaderboards computed so far."""
        self.seconds = 0.0
        """Driver seconds spent computing them."""
        self.board: Leaderboard | None = None
        """The last leaderboard computed (None before the first)."""

    def add(self, rows: list[dict]) -> None:
        """Count the rows of one recorded game; refresh when one is due."""
        self.rows.extend(rows)
        if rows:
            self.games.add(int(rows[0]["game_index"]))
        self._new += 1
        if self.clock() - self._last >= self.refresh_seconds:
            self.refresh()

    def refresh(self) -> Leaderboard | None:
        """Recompute now (if games arrived since the last time), show and log it."""
        if not self._new:
            return self.board
        self._new = 0
        self._last = self.clock()
        t0 = time.perf_counter()
        try:
            board = leaderboard(pd.DataFrame.from_records(self.rows), seed=self.spec.seed, bootstrap=self.bootstrap)
        except RatingError:
            return self.board  # not enough games between the entrants yet
        except Exception as exc:  # noqa: BLE001 - a live view must never stop a tournament
            log.warning("live leaderboard failed: %s: %s", type(exc).__name__, exc)
            return self.board
        finally:
            self.seconds += time.perf_counter() - t0
        self.board = board
        self.refreshes += 1
        total = self.spec.design.total_games
        if self.write is not None:
            self.write("\n".join(standings_lines(board, len(self.games), total)))
        if self.tracker is not None:
            self.tracker.log_leaderboard(board, step=len(self.games))
        return board

    def metrics(self) -> dict[str, float]:
        """The last leaderboard's metrics (empty before the first)."""
        return leaderboard_metrics(self.board) if self.board is not None else {}
