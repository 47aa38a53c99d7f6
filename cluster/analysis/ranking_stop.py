"""Is a leaderboard's order resolved, and which tables would resolve it: the statistics
of an adaptive tournament (:mod:`cluster.analysis.adaptive`).

**Data.** Pairwise results per board (:class:`PairwiseTally`): every game counts as the
pairwise results it implies, as the leaderboard counts them
(:mod:`cluster.analysis.leaderboard`): seats of different teams, the better result wins,
equal results tie, an entrant is never compared with itself, errored games count nothing.

(A free-for-all of more than two seats, one entrant a seat, is fitted by the winner model
instead, :mod:`cluster.analysis.winner_stop`; the tests below are the same.)

**Fit.** Bradley-Terry-Davidson by maximum likelihood (:func:`cluster.analysis.ratings.fit_davidson`,
the leaderboard's model). Its covariance is *cluster-robust over boards* (the sandwich
``H^-1 (sum_b g_b g_b^T) H^-1 B / (B - 1)``, with ``g_b`` a board's score and ``H`` the
observed information): the results of one board (its seat rotations, and the pairs of one
free-for-all game) are not independent, and treating them as such understates the
variance. The variance of a difference of two ratings is the larger of the sandwich's and
the model's (``H^-1``): with few boards the sandwich is itself noisy and can be far too
small. This costs one fit and one pass over the results per decision, where the
leaderboard's bootstrap costs a thousand fits.

**Resolved: a sequential test per adjacent pair.** Take the entrants in the order of their
ratings; for an adjacent pair let ``d`` be the rating difference (upper minus lower, ``>= 0``
as estimated) with variance ``V``. In information time ``I = 1 / V`` the score ``d I`` is
asymptotically a Brownian motion with drift ``d`` (the canonical joint distribution of
sequential estimates; Jennison and Turnbull, "Group Sequential Methods", 2000, ch. 11), also
when the tables are chosen from earlier results. On it the pair runs two likelihood-ratio
tests against the indifference margin ``delta``:

* *ordered*: the upper entrant is stronger, ``LLR(d = +delta vs d = -delta) = 2 delta d I >= log(1 / alpha)``;
* *within delta*: the two are within the margin, ``LLR(d = 0 vs d = +delta) = delta (delta / 2 - d) I >= log(1 / alpha)``
  (and so also against ``-delta``);
* else *open* (a pair that passes both is reported within delta, the closer statement). The
  order is resolved when no adjacent pair is open.

Each likelihood ratio is a martingale under the hypothesis it tests against, so by Ville's
inequality it ever reaches ``1 / alpha`` with chance at most ``alpha``, at whichever look,
however the looks are spaced (the looks only sample the path: at round ends the chance is
lower still). What this claims (the indifference-zone guarantee of ranking and selection,
Bechhofer 1954, made sequential): **for each adjacent pair whose true difference is at
least delta, the chance that it ends reported in the wrong order, or reported within delta,
is at most ``alpha = 1 - confidence``**; a pair closer than delta may end in either order
(that is what the margin says: such pairs are not told apart). It is asymptotic (the normal
approximation of the ratings, with the board-clustered variance), per pair (for a familywise
level over the ``N - 1`` adjacent pairs ask for confidence ``1 - alpha / (N - 1)``), and the
adjacent pairs are those of the order at the end, chosen by the data. So the error rates are
measured by simulation on entrants of known strength (``python -m jobs.bench.ranking``,
jobs/TOURNAMENTS.md). What it is not: a confidence interval for the difference (a pair
reported ordered may be closer than delta), nor an exact small-sample guarantee.

**Where to play next** (:func:`choose_tables`): every candidate table (the entrants round an
open adjacent pair, ``slots`` positions either side in the current order) is valued by how
much it would shrink the model variance of the open pairs' differences, relative to their
current variance (a game between two entrants of very different ratings tells little: its
information ``p (1 - p)`` is small). Tables are picked greedily, the information of each
pick added before the next (so a round spreads over the open pairs).

SciPy fits the model (L-BFGS-B); the sandwich, the boundary and the table values are
written here (no installed library computes cluster-robust Davidson covariances or runs
sequential tests on them).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from cluster.analysis.ratings import ELO_PER_NATURAL, LOG_NU_BOUNDS, PRIOR_SD_ELO, fit_davidson

__all__ = ["PairwiseTally", "RankingFit", "greedy_start", "PairStatus", "RankingStatus", "fit_ranking", "pair_state",
           "ranking_status", "candidate_tables", "choose_tables", "ORDERED", "WITHIN", "OPEN"]

#: States of an adjacent pair.
ORDERED, WITHIN, OPEN = "ordered", "within", "open"
#: Greedy steps of a round's table choice, per open pair (each step may take its table several times).
MAX_PICKS_PER_OPEN_PAIR = 4


@dataclass
class PairwiseTally:
    """Pairwise results of a tournament, one line per pair of opposing seats of a game:
    board, the two entrants (``first < second``) and whether ``first`` won, tied or lost."""

    entrants: int
    board: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    first: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    second: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    score: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """Score of ``first``: 1 win, 0.5 tie, 0 loss."""

    def add_games(self, boards: np.ndarray, seating: np.ndarray, ranks: np.ndarray, slot_of_seat: Sequence[int]):
        """Add games (``boards``: G; ``seating``: G x seats entrant at each seat; ``ranks``:
        G x seats, 2 win, 1 tie, 0 loss, a row of -1 for an errored game)."""
        seating = np.asarray(seating, dtype=np.int64).reshape(len(boards), -1)
        ranks = np.asarray(ranks, dtype=np.int64).reshape(seating.shape)
        played = (ranks >= 0).all(axis=1)
        boards, seating, ranks = np.asarray(boards, dtype=np.int64)[played], seating[played], ranks[played]
        slots = np.asarray(slot_of_seat)
        for s, t in itertools.combinations(range(seating.shape[1]), 2):
            if slots[s] == slots[t]:
                continue  # teammates
            a, b = seating[:, s], seating[:, t]
            keep = a != b  # an entrant is not compared with itself
            a, b, ra, rb = a[keep], b[keep], ranks[keep, s], ranks[keep, t]
            score = np.where(ra > rb, 1.0, np.where(ra < rb, 0.0, 0.5))
            swap = a > b
            self.board = np.concatenate([self.board, boards[keep]])
            self.first = np.concatenate([self.first, np.where(swap, b, a)])
            self.second = np.concatenate([self.second, np.where(swap, a, b)])
            self.score = np.concatenate([self.score, np.where(swap, 1.0 - score, score)])

    def counts(self) -> tuple[np.ndarray, np.ndarray]:
        """``wins`` (i beat j) and ``ties`` (symmetric), entrants x entrants."""
        n = self.entrants
        wins = np.zeros((n, n))
        ties = np.zeros((n, n))
        np.add.at(wins, (self.first[self.score == 1.0], self.second[self.score == 1.0]), 1.0)
        np.add.at(wins, (self.second[self.score == 0.0], self.first[self.score == 0.0]), 1.0)
        tie = self.score == 0.5
        np.add.at(ties, (self.first[tie], self.second[tie]), 1.0)
        np.add.at(ties, (self.second[tie], self.first[tie]), 1.0)
        return wins, ties

    @property
    def boards(self) -> int:
        return int(len(np.unique(self.board)))


@dataclass
class RankingFit:
    """A Davidson fit of a :class:`PairwiseTally` with its covariances (Elo scale)."""

    model = "davidson"
    """Which model (a class attribute: :class:`cluster.analysis.winner_stop.WinnerFit` is ``winner``)."""

    ratings: np.ndarray
    """Elo, centred on the entrants' mean."""
    covariance: np.ndarray
    """Cluster-robust (sandwich over boards) covariance of the ratings, Elo^2."""
    model_covariance: np.ndarray
    """Inverse observed information (results independent), Elo^2."""
    pair_information: np.ndarray
    """Information about ``rating_i - rating_j`` in one pairwise result, 1/Elo^2."""
    tie_parameter: float
    boards: int
    results: int
    optimum: np.ndarray
    """The optimum (natural scale, then log nu): a warm start for the next fit."""

    def difference_variance(self, i: int, j: int) -> float:
        """Variance of ``rating_i - rating_j``: the larger of the sandwich's and the model's."""
        def var(c):
            return c[i, i] + c[j, j] - 2.0 * c[i, j]
        return max(var(self.covariance), var(self.model_covariance))


def _pair_probabilities(theta: np.ndarray, log_nu: float):
    """``P(i beats j)`` and ``P(tie)`` for every ordered pair (natural scale)."""
    ti, tj = theta[:, None], theta[None, :]
    tie_term = log_nu + 0.5 * (ti + tj)
    log_d = np.logaddexp(np.logaddexp(ti, tj), tie_term)
    return np.exp(ti - log_d), np.exp(tie_term - log_d)


def fit_ranking(tally: PairwiseTally, start: np.ndarray | None = None) -> RankingFit:
    """The Davidson fit of ``tally`` and its covariances (see the module docstring)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):  # small matrices: BLAS threads only add overhead (10-30x)
        return _fit_ranking(tally, start)


def _fit_ranking(tally: PairwiseTally, start: np.ndarray | None) -> RankingFit:
    n = tally.entrants
    wins, ties = tally.counts()
    _, nu, optimum = fit_davidson(wins, ties, start=start)
    theta, log_nu = optimum[:-1], optimum[-1]
    p_win, p_tie = _pair_probabilities(theta, log_nu)
    games = wins + wins.T + ties
    off = ~np.eye(n, dtype=bool)
    m_own = p_win + 0.5 * p_tie  # d log D / d theta_i of the pair (i, j)
    # observed information (Hessian of the negative log-likelihood), theta then log nu
    h = np.zeros((n + 1, n + 1))
    diag = np.where(off, games * (p_win + 0.25 * p_tie - m_own ** 2), 0.0).sum(axis=1)
    h[:n, :n] = np.where(off, games * (0.25 * p_tie - m_own * m_own.T), 0.0)
    h[np.arange(n), np.arange(n)] = diag + (ELO_PER_NATURAL / PRIOR_SD_ELO) ** 2
    h[:n, n] = h[n, :n] = np.where(off, games * (0.5 * p_tie - m_own * p_tie), 0.0).sum(axis=1)
    h[n, n] = 0.5 * np.where(off, games * (p_tie - p_tie ** 2), 0.0).sum()
    # per-board scores (gradient of the log-likelihood) at the optimum
    boards, board_index = np.unique(tally.board, return_inverse=True)
    a, b, s = tally.first, tally.second, tally.score
    win, tie, loss = (s == 1.0).astype(float), (s == 0.5).astype(float), (s == 0.0).astype(float)
    g = np.zeros((len(boards), n + 1))
    np.add.at(g, (board_index, a), win + 0.5 * tie - m_own[a, b])
    np.add.at(g, (board_index, b), loss + 0.5 * tie - m_own[b, a])
    np.add.at(g, (board_index, np.full(len(a), n)), tie - p_tie[a, b])
    keep = np.arange(n + 1)
    if log_nu <= LOG_NU_BOUNDS[0] + 1e-6 or h[n, n] < 1e-9 * max(1.0, h[:n, :n].trace()):
        keep = np.arange(n)  # no ties: nu sits at its bound, the ratings alone
    h_inv = np.linalg.pinv(h[np.ix_(keep, keep)], hermitian=True)
    meat = g[:, keep].T @ g[:, keep] * (len(boards) / max(len(boards) - 1, 1))
    sandwich = (h_inv @ meat @ h_inv)[:n, :n]
    model = h_inv[:n, :n]
    centre = np.eye(n) - 1.0 / n
    scale = ELO_PER_NATURAL ** 2
    information = np.where(off, p_win + 0.25 * p_tie - m_own ** 2, 0.0) / scale
    ratings = centre @ theta * ELO_PER_NATURAL
    return RankingFit(ratings=ratings, covariance=centre @ sandwich @ centre * scale,
                      model_covariance=centre @ model @ centre * scale, pair_information=information,
                      tie_parameter=nu, boards=len(boards), results=len(a), optimum=optimum)


# --- resolution ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class PairStatus:
    """One adjacent pair of the current order."""

    upper: int
    """Entrant rated higher."""
    lower: int
    difference: float
    """Rating of ``upper`` minus ``lower`` (Elo, >= 0)."""
    se: float
    """Standard error of the difference (Elo)."""
    llr_ordered: float
    """``log`` likelihood ratio of ``d = +delta`` against ``d = -delta``."""
    llr_within: float
    """``log`` likelihood ratio of ``d = 0`` against ``d = +delta``."""
    state: str
    """``ordered``, ``within`` (delta) or ``open``."""


@dataclass(frozen=True)
class RankingStatus:
    """Where the order stands after a look."""

    order: tuple[int, ...]
    """Entrants, best first (ties in rating: lower index first)."""
    pairs: tuple[PairStatus, ...]
    """Adjacent pairs, from the top."""
    threshold: float
    """``log(1 / alpha)``: what a likelihood ratio must reach."""

    @property
    def resolved(self) -> bool:
        return all(p.state != OPEN for p in self.pairs)

    @property
    def open_pairs(self) -> list[PairStatus]:
        return [p for p in self.pairs if p.state == OPEN]


def pair_state(difference: float, variance: float, alpha: float, delta: float) -> tuple[float, float, str]:
    """The two log likelihood ratios of a pair ``difference`` Elo apart (``>= 0``) with
    ``variance`` (Elo^2), and its state (see the module docstring)."""
    information = 1.0 / max(variance, 1e-12)
    llr_ordered = 2.0 * delta * difference * information
    llr_within = delta * (0.5 * delta - difference) * information
    threshold = math.log(1.0 / alpha)
    state = WITHIN if llr_within >= threshold else ORDERED if llr_ordered >= threshold else OPEN
    return llr_ordered, llr_within, state


def ranking_status(fit: RankingFit, alpha: float, delta: float) -> RankingStatus:
    """The adjacent pairs of ``fit``'s order, each ordered, within ``delta`` or open."""
    order = tuple(int(i) for i in np.lexsort((np.arange(len(fit.ratings)), -fit.ratings)))
    pairs = []
    for upper, lower in zip(order, order[1:]):
        difference = float(fit.ratings[upper] - fit.ratings[lower])
        variance = fit.difference_variance(upper, lower)
        llr_ordered, llr_within, state = pair_state(difference, variance, alpha, delta)
        pairs.append(PairStatus(upper, lower, difference, math.sqrt(max(variance, 0.0)), llr_ordered, llr_within,
                                state))
    return RankingStatus(order=order, pairs=tuple(pairs), threshold=math.log(1.0 / alpha))


# --- where to play next ---------------------------------------------------------------------------
def candidate_tables(status: RankingStatus, slots: int) -> list[tuple[int, ...]]:
    """Tables (sorted entrant tuples) of ``slots`` entrants within ``slots`` positions of an
    open adjacent pair that seat at least one of its two; every table when that is all."""
    order, n = status.order, len(status.order)
    out: set[tuple[int, ...]] = set()
    for position, pair in enumerate(status.pairs):
        if pair.state != OPEN:
            continue
        lo, hi = max(0, position - slots + 1), min(n, position + slots + 1)
        if hi - lo < slots:
            lo, hi = max(0, hi - slots), min(n, lo + slots)
        window = order[lo:hi]
        for table in itertools.combinations(window, slots):
            if pair.upper in table or pair.lower in table:
                out.add(tuple(sorted(table)))
    return sorted(out)


def greedy_start(fit: RankingFit, open_pairs, count: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """What a greedy choice of tables starts from (:func:`choose_tables`, and the winner model's
    :func:`cluster.analysis.winner_stop.choose_winner_tables`): the model covariance (Elo^2,
    regularised), the open pairs' contrasts (n x P: +1 upper, -1 lower) and how many tables each
    greedy step takes. At most ``MAX_PICKS_PER_OPEN_PAIR`` steps per open pair, each taking its
    table as many times as the count allows (a round late in a long tournament has hundreds of
    tables; the values change slowly)."""
    n = len(fit.ratings)
    sigma = fit.model_covariance.copy() + 1e-9 * np.eye(n)
    contrasts = np.zeros((n, len(open_pairs)))
    for k, pair in enumerate(open_pairs):
        contrasts[pair.upper, k], contrasts[pair.lower, k] = 1.0, -1.0
    picks = min(count, MAX_PICKS_PER_OPEN_PAIR * len(open_pairs))
    copies = [count // picks + (k < count % picks) for k in range(picks)]
    return sigma, contrasts, copies


def choose_tables(fit: RankingFit, status: RankingStatus, slots: int, count: int,
                  results_per_pair: float) -> list[tuple[int, ...]]:
    """``count`` tables (sorted entrant tuples, repeats allowed) that shrink the variance of the
    open adjacent pairs' differences the most, relative to now; greedy, each pick's information
    added before the next (see the module docstring). ``results_per_pair``: pairwise results a
    table gives each pair of its entrants (its seat rotations times the pairs of seats)."""
    candidates = candidate_tables(status, slots)
    if not status.open_pairs or not candidates or count < 1:
        return []
    n = len(fit.ratings)
    sigma, contrasts, copies = greedy_start(fit, status.open_pairs, count)
    tables = np.asarray(candidates, dtype=np.int64)
    pairs = np.asarray(list(itertools.combinations(range(slots), 2)), dtype=np.int64)
    a, b = tables[:, pairs[:, 0]], tables[:, pairs[:, 1]]  # candidates x table pairs
    information = results_per_pair * fit.pair_information[a, b]
    chosen = []
    for times in copies:
        inverse_d = 1.0 / np.maximum(times * information, 1e-12)
        variance = np.einsum("ik,ij,jk->k", contrasts, sigma, contrasts)
        inner = _u_sigma_u(sigma, a, b) + np.einsum("cm,mn->cmn", inverse_d, np.eye(a.shape[1]))
        sigma_c = sigma @ contrasts  # n x P
        u_sigma_c = sigma_c[a] - sigma_c[b]  # C x m x P
        solved = np.linalg.solve(inner, u_sigma_c)
        reduction = np.einsum("cmp,cmp->cp", u_sigma_c, solved)
        value = (reduction / variance[None, :]).sum(axis=1)
        best = int(np.argmax(value))
        chosen += [tuple(int(e) for e in tables[best])] * times
        u = np.zeros((n, a.shape[1]))
        u[a[best], np.arange(a.shape[1])] += 1.0
        u[b[best], np.arange(a.shape[1])] -= 1.0
        sigma_u_best = sigma @ u
        core = np.linalg.inv(inner[best])
        sigma = sigma - sigma_u_best @ core @ sigma_u_best.T
    return chosen


def _u_sigma_u(sigma: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``U^T Sigma U`` of every candidate (C x m x m), ``U``'s columns ``e_a - e_b``."""
    return (sigma[a[:, :, None], a[:, None, :]] - sigma[a[:, :, None], b[:, None, :]]
            - sigma[b[:, :, None], a[:, None, :]] + sigma[b[:, :, None], b[:, None, :]])
