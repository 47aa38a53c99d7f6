"""The statistic of an adaptive free-for-all (more than two sides, one seat each): the winner
model's own fit, its board-clustered variance and where to play next by its information.
The tests on the fit's adjacent pairs are :mod:`cluster.analysis.ranking_stop`'s
(:func:`~cluster.analysis.ranking_stop.ranking_status`), unchanged.

**Why not the pairwise fit.** A free-for-all whose rows record the winner (the others lose,
and tie among themselves) implies pairwise results that are not independent and whose
Davidson fit is misspecified: its rating differences depend on who else sits at the table
(through the ties between losers), and its variance does not shrink the most on the most
telling tables (jobs/TOURNAMENTS.md). The winner model is the game's own.

**Model.** Plackett-Luce's first place, a multinomial logit over the table: with strengths
``pi_i = exp(theta_i)``, ``P(seat s wins) = pi_{e_s} / sum_t pi_{e_t}`` over the table's
seats (an entrant seated twice counts twice). Fitted by maximum likelihood (SciPy, L-BFGS-B,
analytic gradient, warm-started from the last look) with the leaderboard's weak normal prior
on every rating (SD :data:`~cluster.analysis.ratings.PRIOR_SD_ELO`). Ratings on the Elo scale
as everywhere (``ELO_PER_NATURAL * theta``, centred on the mean): for two entrants at a table
alone this is Bradley-Terry, 100 Elo a 64% chance.

**Games with no single winner** (every seat tied or lost, or the best result shared) count
nothing here. The winner model's likelihood given that a game has a single winner is the
same whatever the chance of a draw is, as long as that chance does not depend on who is
stronger: counting nothing is then exact (conditional likelihood), where a Davidson-style
draw term would add a parameter whose form (how a draw's chance grows with the table's
strengths) nothing here checks. Draws are counted (:attr:`WinnerTally.draws`) and the
leaderboard, which counts them as ties, is unchanged.

**Variance.** As for the pairwise fit: the sandwich ``H^-1 (sum_b g_b g_b^T) H^-1 B / (B - 1)``
clustered by board (``g_b`` the score of a board's games: ``sum e_winner - J^T p``), and a
difference's variance the larger of the sandwich's and the model's (``H^-1``, ``H`` the
observed information ``sum_g J^T (diag(p) - p p^T) J`` plus the prior).

**Where to play next** (:func:`choose_winner_tables`): the pairwise model's candidates
(:func:`~cluster.analysis.ranking_stop.candidate_tables`: neighbours in the order) and every
table seating an open pair with any others (:func:`filler_tables`), each valued by how much
its games (every seat rotation) would shrink the winner model's variance of the open pairs'
differences, relative to now, greedily as :func:`~cluster.analysis.ranking_stop.choose_tables`.
Two close entrants are told apart when one of them wins, so they learn most beside weak
others: the winner model sees that, the pairwise one does not (and its stop did not gain from
such tables; this one does, jobs/TOURNAMENTS.md).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from cluster.analysis.ranking_stop import RankingFit, RankingStatus, candidate_tables, greedy_start
from cluster.analysis.ratings import ELO_PER_NATURAL, PRIOR_SD_ELO

__all__ = ["WinnerTally", "WinnerFit", "fit_winner", "choose_winner_tables", "filler_tables", "winner_model_applies"]


def winner_model_applies(slot_of_seat: Sequence[int]) -> bool:
    """A free-for-all: more than two slots, one seat each."""
    slots = max(slot_of_seat) + 1
    return slots > 2 and len(slot_of_seat) == slots


@dataclass
class WinnerTally:
    """Games of a free-for-all with a single winner: board, the entrant at every seat, the
    winning seat. ``draws``: games played with no single winner (counted nothing)."""

    entrants: int
    seats: int
    board: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    seating: np.ndarray = field(default=None)
    winner: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    draws: int = 0

    def __post_init__(self):
        if self.seating is None:
            self.seating = np.zeros((0, self.seats), dtype=np.int64)

    def add_games(self, boards: np.ndarray, seating: np.ndarray, ranks: np.ndarray,
                  slot_of_seat: Sequence[int] | None = None):
        """Add games (``boards``: G; ``seating``: G x seats; ``ranks``: G x seats, 2 win, 1
        tie, 0 loss, a row of -1 for an errored game). ``slot_of_seat`` is accepted for the
        pairwise tally's call and not read (one seat a slot)."""
        seating = np.asarray(seating, dtype=np.int64).reshape(len(boards), -1)
        ranks = np.asarray(ranks, dtype=np.int64).reshape(seating.shape)
        played = (ranks >= 0).all(axis=1)
        boards, seating, ranks = np.asarray(boards, dtype=np.int64)[played], seating[played], ranks[played]
        top = ranks.max(axis=1, keepdims=True)
        single = ((ranks == top).sum(axis=1) == 1)
        self.draws += int((~single).sum())
        self.board = np.concatenate([self.board, boards[single]])
        self.seating = np.concatenate([self.seating, seating[single]])
        self.winner = np.concatenate([self.winner, np.argmax(ranks[single], axis=1)])

    @property
    def games(self) -> int:
        return len(self.board)

    @property
    def boards(self) -> int:
        return int(len(np.unique(self.board)))


@dataclass
class WinnerFit(RankingFit):
    """A winner-model fit (:class:`~cluster.analysis.ranking_stop.RankingFit`'s fields: no
    tie parameter, ``pair_information`` unused, ``results`` its games)."""

    model = "winner"


def _table_probabilities(theta: np.ndarray, seating: np.ndarray) -> np.ndarray:
    logits = theta[seating]
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def fit_winner(tally: WinnerTally, start: np.ndarray | None = None) -> WinnerFit:
    """The winner model's fit of ``tally`` and its covariances (module docstring)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _fit_winner(tally, start)


def _fit_winner(tally: WinnerTally, start: np.ndarray | None) -> WinnerFit:
    from scipy.optimize import minimize

    n = tally.entrants
    # identical games (the same entrants at the same seats, the same winner) counted once
    keys = np.concatenate([tally.seating, tally.winner[:, None]], axis=1)
    unique, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    seating, winners = unique[:, :-1], unique[np.arange(len(unique)), unique[:, -1]]
    weight = counts.astype(float)
    won = np.bincount(winners, weights=weight, minlength=n)
    prior = (ELO_PER_NATURAL / PRIOR_SD_ELO) ** 2

    def objective(theta):
        logits = theta[seating]
        top = logits.max(axis=1)
        shifted = np.exp(logits - top[:, None])
        total = shifted.sum(axis=1)
        value = -(won @ theta) + weight @ (np.log(total) + top) + 0.5 * prior * theta @ theta
        p = shifted / total[:, None]
        grad = -won + np.bincount(seating.ravel(), weights=(p * weight[:, None]).ravel(), minlength=n) + prior * theta
        return value, grad

    x0 = np.zeros(n) if start is None or len(start) != n else np.asarray(start, dtype=float)
    theta = minimize(objective, x0, jac=True, method="L-BFGS-B",
                     options={"maxiter": 1000, "gtol": 1e-9}).x if len(unique) else np.zeros(n)
    # observed information: per game J^T (diag(p) - p p^T) J, plus the prior
    p = _table_probabilities(theta, seating) if len(unique) else np.zeros((0, tally.seats))
    k = tally.seats
    w = np.einsum("gi,ij->gij", p, np.eye(k)) - p[:, :, None] * p[:, None, :]
    h = np.zeros((n, n))
    np.add.at(h, (np.repeat(seating, k, axis=1).ravel(), np.tile(seating, (1, k)).ravel()),
              (w * weight[:, None, None]).ravel())
    h[np.arange(n), np.arange(n)] += prior
    # per-board scores at the optimum: e_winner - J^T p per game
    boards, board_index = np.unique(tally.board, return_inverse=True)
    g = np.zeros((len(boards), n))
    if len(unique):
        per_game = p[inverse]
        np.add.at(g, (np.repeat(board_index, k), tally.seating.ravel()), -per_game.ravel())
        np.add.at(g, (board_index, tally.seating[np.arange(len(tally.winner)), tally.winner]), 1.0)
    h_inv = np.linalg.pinv(h, hermitian=True)
    meat = g.T @ g * (len(boards) / max(len(boards) - 1, 1))
    sandwich = h_inv @ meat @ h_inv
    centre = np.eye(n) - 1.0 / n
    scale = ELO_PER_NATURAL ** 2
    return WinnerFit(ratings=centre @ theta * ELO_PER_NATURAL, covariance=centre @ sandwich @ centre * scale,
                     model_covariance=centre @ h_inv @ centre * scale, pair_information=np.zeros((n, n)),
                     tie_parameter=float("nan"), boards=len(boards), results=int(tally.games), optimum=theta)


#: Most sets of others seated with an open pair among the candidates (:func:`filler_tables`).
MAX_FILLER_SETS = 120


def filler_tables(status: RankingStatus, slots: int) -> list[tuple[int, ...]]:
    """Tables seating an open adjacent pair with any ``slots - 2`` others (when there are more
    than :data:`MAX_FILLER_SETS` sets of others, those among the ``2 slots`` lowest rated)."""
    order = status.order
    out = set()
    for pair in status.open_pairs:
        others = [e for e in order if e not in (pair.upper, pair.lower)]
        if math.comb(len(others), slots - 2) > MAX_FILLER_SETS:
            others = others[-2 * slots:]
        for rest in itertools.combinations(others, slots - 2):
            out.add(tuple(sorted((pair.upper, pair.lower) + rest)))
    return sorted(out)


def _winner_factors(theta: np.ndarray, tables: np.ndarray) -> np.ndarray:
    """``F`` (tables x slots x slots) with ``F F^T = diag(p) - p p^T``, ``p`` each table's
    chances to win: the information of one game, ``J^T F F^T J``."""
    p = _table_probabilities(theta, tables)
    q = np.sqrt(p)
    k = tables.shape[1]
    # diag(p) - p p^T = D^1/2 (I - q q^T) D^1/2, and I - q q^T is a projection (|q| = 1)
    projection = np.eye(k)[None] - q[:, :, None] * q[:, None, :]
    return q[:, :, None] * projection


def choose_winner_tables(fit: WinnerFit, status: RankingStatus, slots: int, count: int,
                         games_per_table: int) -> list[tuple[int, ...]]:
    """``count`` tables (sorted entrant tuples, repeats allowed) that shrink the winner model's
    variance of the open adjacent pairs' differences the most, relative to now; greedy as
    :func:`~cluster.analysis.ranking_stop.choose_tables`. ``games_per_table``: its rotations."""
    # a free-for-all has more than two slots: the neighbours' tables and every open pair's with others
    candidates = sorted(set(candidate_tables(status, slots)) | set(filler_tables(status, slots)))
    if not status.open_pairs or not candidates or count < 1:
        return []
    n = len(fit.ratings)
    sigma, contrasts, copies = greedy_start(fit, status.open_pairs, count)
    tables = np.asarray(candidates, dtype=np.int64)
    factors = _winner_factors(fit.optimum, tables) * np.sqrt(games_per_table) / ELO_PER_NATURAL  # C x k x k
    # U (n x k per candidate) = J^T F: rows of F added at the table's entrants
    u = np.zeros((len(tables), n, slots))
    np.add.at(u, (np.repeat(np.arange(len(tables)), slots), tables.ravel()), factors.reshape(-1, slots))
    chosen = []
    for times in copies:
        variance = np.einsum("ik,ij,jk->k", contrasts, sigma, contrasts)
        sigma_u = np.einsum("ij,cjm->cim", sigma, u)  # C x n x k
        inner = np.einsum("cim,cil->cml", u, sigma_u) + np.eye(slots)[None] / times
        u_sigma_c = np.einsum("cim,ip->cmp", sigma_u, contrasts)  # C x k x P
        solved = np.linalg.solve(inner, u_sigma_c)
        reduction = np.einsum("cmp,cmp->cp", u_sigma_c, solved)
        value = (reduction / variance[None, :]).sum(axis=1)
        best = int(np.argmax(value))
        chosen += [tuple(int(e) for e in tables[best])] * times
        sigma = sigma - sigma_u[best] @ np.linalg.solve(inner[best], sigma_u[best].T)
    return chosen
