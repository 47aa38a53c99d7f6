"""Sequential stopping of a comparison of two agents: a generalized SPRT on game pairs.

A study with ``[design] stop = { sprt = { elo0 = 0, elo1 = 20, alpha = 0.05,
beta = 0.05 }, between = ["A", "B"] }`` (:class:`cluster.spec.study.StopSpec`) tests
H0: "A is at most ``elo0`` stronger than B" against H1: "A is at least ``elo1``
stronger" and stops dispatching games as soon as the log-likelihood ratio
leaves ``(log(beta / (1 - alpha)), log((1 - beta) / alpha))``, as chess engine
testing does (fishtest, OpenBench, fastchess).

**Units.** With ``scoring = "pairs"`` (the default: a two-player game whose
design plays every board twice with the seats swapped) the unit is a pair of
games on one board, A's score in the pair (0, 0.5, 1, 1.5 or 2) one of five
outcomes (the *pentanomial*): the seat and the board cancel out within the pair,
so the test needs fewer games than on single games. With ``scoring = "games"``
(no seat swap, e.g. Scotland Yard's Mr X against the seekers; or more than two
players) each game is a unit scored 0 / 0.5 / 1 for A against B (the ranking of
their two results, as :mod:`cluster.analysis.ratings` counts a free-for-all game). A unit
with an errored game is counted as played and scored as nothing.

**Determinism.** The test reads its units *in plan order* (pair ``u`` is games
``2u`` and ``2u + 1``, the two seatings of a board, boards in order), and only
the longest prefix of units whose games are all in the store: a unit that
finished early, out of order, waits for the ones before it. The decision is the
first unit of that prefix at which the LLR crosses a bound, so it depends on
the games' results only, never on the order they arrived in or on how many
hosts played them, and a resumed (or killed and restarted) study recomputes the
same decision from the stored games. Games in flight when the bound is crossed
finish and are recorded; units after the deciding one are stored but not part
of the test. While the test runs the scheduler starts no series more than
``hosts x max(2, longest series)`` games past the first incomplete unit
(:meth:`SequentialMonitor.admits`; 2 games per host when every game is its own
series), so a slow game cannot let the others run far ahead of the decision.
``max_games`` (default: the design's games) caps the test: the
games after it are never dispatched, and a test that has not crossed a bound
by then ends undecided.

**The LLR** (written here: SciPy has no sequential tests; the formulas are
M. Van den Bergh's generalized SPRT, "A generalized sequential probability ratio
test", 2018, as used by fishtest): for a multinomial with empirical frequencies
``p_hat`` over per-game scores ``a_k``, the maximum-likelihood distribution
with mean score ``s`` is ``p_k = p_hat_k / (1 + lam (a_k - s))`` with ``lam``
solving ``sum_k p_hat_k (a_k - s) / (1 + lam (a_k - s)) = 0`` (one root, found by
bisection); the LLR after ``N`` units is
``N sum_k p_hat_k log(p_k(s1) / p_k(s0))`` with ``s = 1 / (1 + 10^(-elo / 400))``
(logistic Elo). Empty outcome classes get a count of :data:`REGULARIZE` so that
the root exists (fishtest does the same).

**The estimate** after the test: Elo of A over B from the mean score of the
units used, with a 95% normal interval from the units' variance (not corrected
for the bias of a sequential stop, like fishtest's plain estimate).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
from scipy.stats import norm

from cluster.results.store import StoreError, read_stored_spec
from cluster.spec.plan import SeriesTask, plan_study
from cluster.spec.fields import SpecError
from cluster.stats import Z95

__all__ = ["elo_to_score", "score_to_elo", "gsprt_llr", "sprt_bounds", "SequentialMonitor",
           "SequentialResult", "simulate_sprt", "fixed_sample_units", "PAIR_SCORES", "GAME_SCORES",
           "sequential_markdown", "llr_plot", "truncate_plan", "outcome_probabilities"]

#: Per-game score of A in a pair, by pentanomial outcome (0, 0.5, 1, 1.5, 2 points out of 2).
PAIR_SCORES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
#: Score of A in one game (loss, tie, win).
GAME_SCORES = np.array([0.0, 0.5, 1.0])
#: Count given to an outcome class never seen (keeps the constrained MLE defined).
REGULARIZE = 1e-3
#: Decisions.
H1, H0, UNDECIDED, RUNNING = "H1", "H0", "undecided", "running"
#: How the scores of ``between[0]`` rank against ``between[1]`` (win > tie > loss).
_RANK = {"win": 2, "tie": 1, "loss": 0}


def elo_to_score(elo):
    """Expected score of a player ``elo`` points stronger (logistic Elo)."""
    return 1.0 / (1.0 + 10.0 ** (-np.asarray(elo, dtype=np.float64) / 400.0))


def score_to_elo(score):
    """Elo difference of an expected score (±inf at 0 and 1)."""
    s = np.asarray(score, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return -400.0 * np.log10(1.0 / s - 1.0)


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's (lower, upper) LLR bounds: accept H0 below, H1 above."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def _constrained_lambda(p_hat: np.ndarray, x: np.ndarray, iterations: int = 50) -> np.ndarray:
    """Root ``lam`` of ``sum_k p_hat[t, k] x[k] / (1 + lam x[k]) = 0`` for every row ``t``
    (``x`` has entries of both signs; the function decreases in ``lam``); bisection."""
    lo = np.full(p_hat.shape[0], -1.0 / x.max())
    hi = np.full(p_hat.shape[0], -1.0 / x.min())
    width = hi - lo
    lo, hi = lo + 1e-12 * width, hi - 1e-12 * width
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        value = np.sum(p_hat * x / (1.0 + mid[:, None] * x), axis=1)
        positive = value > 0
        lo = np.where(positive, mid, lo)
        hi = np.where(positive, hi, mid)
    return 0.5 * (lo + hi)


def gsprt_llr(counts: np.ndarray, scores: np.ndarray, s0: float, s1: float) -> np.ndarray:
    """The generalized SPRT's LLR (H1: mean score ``s1`` against H0: ``s0``) for each row
    of ``counts`` (T x K: units per outcome class; ``scores``: the K per-game scores)."""
    counts = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    n = counts.sum(axis=1)
    regular = np.where(counts > 0, counts, REGULARIZE)
    p_hat = regular / regular.sum(axis=1, keepdims=True)
    x0, x1 = scores - s0, scores - s1
    lam0 = _constrained_lambda(p_hat, x0)
    lam1 = _constrained_lambda(p_hat, x1)
    log_ratio = np.log1p(lam0[:, None] * x0) - np.log1p(lam1[:, None] * x1)
    return n * np.sum(p_hat * log_ratio, axis=1)


def fixed_sample_units(sd: float, s0: float, s1: float, alpha: float, beta: float) -> int:
    """Units a fixed-size one-sided test needs for the same alpha, beta and bounds
    (normal approximation, per-unit score SD ``sd``)."""
    z = norm.ppf(1 - alpha) + norm.ppf(1 - beta)
    return int(math.ceil((z * sd / (s1 - s0)) ** 2))


def _estimate(counts: np.ndarray, scores: np.ndarray) -> tuple[float, float, float, float]:
    """(mean score, Elo, Elo low, Elo high) of A, 95% normal interval."""
    n = counts.sum()
    if n == 0:
        return math.nan, math.nan, math.nan, math.nan
    p = counts / n
    mean = float(p @ scores)
    sd = math.sqrt(float(p @ (scores - mean) ** 2))
    half = Z95 * sd / math.sqrt(n)
    lo, hi = max(mean - half, 0.0), min(mean + half, 1.0)
    return mean, float(score_to_elo(mean)), float(score_to_elo(lo)), float(score_to_elo(hi))


@dataclass
class SequentialResult:
    """Where a sequential test stands (see the module docstring)."""

    decision: str
    """``H1`` (A at least elo1 stronger), ``H0`` (at most elo0), ``undecided`` (max_games
    reached without crossing a bound) or ``running``."""
    between: tuple[str, str]
    scoring: str
    elo0: float
    elo1: float
    alpha: float
    beta: float
    lower: float
    upper: float
    units_used: int
    """Units (pairs or games) in the test, up to the deciding one."""
    games_used: int
    """Games in those units."""
    games_cap: int
    """The test's cap: max_games, or the design's games."""
    llr: list = field(default_factory=list)
    """LLR after each scored unit."""
    counts: list = field(default_factory=list)
    """Units per outcome class (pentanomial: A scored 0, 0.5, 1, 1.5, 2 in the pair)."""
    units_errored: int = 0
    score: float = math.nan
    elo: float = math.nan
    elo_lo: float = math.nan
    elo_hi: float = math.nan
    fixed_games: int | None = None
    """Games a fixed-size test with the same alpha, beta, elo0, elo1 would need at the
    observed variance."""

    @property
    def finished(self) -> bool:
        return self.decision != RUNNING

    def text(self) -> str:
        a, b = self.between
        if self.decision == H1:
            verdict = f"H1 accepted: {a} is stronger than {b} (Elo >= {self.elo1:g} favoured over <= {self.elo0:g})"
        elif self.decision == H0:
            verdict = f"H0 accepted: {a} is not {self.elo1:g} Elo stronger than {b} (Elo <= {self.elo0:g} favoured)"
        elif self.decision == UNDECIDED:
            verdict = f"undecided after the cap of {self.games_cap} games"
        else:
            verdict = "running (no bound crossed yet)"
        return verdict


def truncate_plan(plan, limit: int | None):
    """The plan without the games from ``limit`` on (series that keep no game are dropped)."""
    if limit is None:
        return plan
    out = []
    for series in plan:
        games = tuple(g for g in series.games if g.game_index < limit)
        if games:
            out.append(SeriesTask(series_id=series.series_id, games=games))
    return out


def _units_of(plan, scoring: str, limit: int) -> list[tuple[int, ...]]:
    """The test's units in plan order: seat-swapped pairs of one board, or single games."""
    tasks = sorted((g for s in plan for g in s.games if g.game_index < limit), key=lambda g: g.game_index)
    if scoring == "games":
        return [(g.game_index,) for g in tasks]
    units, by_board = [], {}
    for task in tasks:
        by_board.setdefault((task.condition, task.board_seed), []).append(task)
    for task in tasks:  # a pair is two consecutive games of one board with the seats swapped
        games = by_board[(task.condition, task.board_seed)]
        position = games.index(task)
        if position % 2 == 0 and position + 1 < len(games):
            other = games[position + 1]
            if tuple(reversed(task.seat_lineup)) != tuple(other.seat_lineup):
                raise ValueError(f"games {task.game_index} and {other.game_index} are not seat-swapped")
            units.append((task.game_index, other.game_index))
    return units


class SequentialMonitor:
    """Follows a study's sequential test as games are recorded (on the driver).

    ``add_game(rows)`` takes the rows of one finished game, ``add_frame(df)`` the
    store's rows; ``finished`` says whether to dispatch more games; ``result()``
    is the current :class:`SequentialResult`."""

    def __init__(self, stop, plan, total_games: int):
        self.stop = stop
        self.cap = min(int(stop.max_games), total_games) if stop.max_games else total_games
        self.units = _units_of(plan, stop.scoring, self.cap)
        self.scores_of_outcomes = PAIR_SCORES if stop.scoring == "pairs" else GAME_SCORES
        sprt = stop.sprt
        self.s0, self.s1 = float(elo_to_score(sprt.elo0)), float(elo_to_score(sprt.elo1))
        self.lower, self.upper = sprt_bounds(sprt.alpha, sprt.beta)
        self.game_scores: dict[int, float | None] = {}
        self.prefix = 0
        self.errored = 0
        self.counts = np.zeros(len(self.scores_of_outcomes))
        self.llr: list[float] = []
        self.decision = RUNNING
        self.decided_at: int | None = None
        if not self.units:
            self.decision = UNDECIDED

    @classmethod
    def from_spec(cls, spec, plan=None) -> "SequentialMonitor":
        return cls(spec.design.stop, plan if plan is not None else plan_study(spec),
                   spec.design.total_games)

    # --- input -------------------------------------------------------------------------
    def _score(self, rows: Sequence[dict]) -> float | None:
        a, b = self.stop.between
        by_label = {r["label"]: r for r in rows}
        if a not in by_label or b not in by_label:
            return None
        ra, rb = by_label[a]["result"], by_label[b]["result"]
        if ra == "error" or rb == "error":
            return None
        return 1.0 if _RANK[ra] > _RANK[rb] else 0.0 if _RANK[ra] < _RANK[rb] else 0.5

    def add_game(self, rows: Sequence[dict]) -> None:
        if not rows:
            return
        self.game_scores[int(rows[0]["game_index"])] = self._score(rows)
        self._advance()

    def add_frame(self, df) -> None:
        if df is None or not len(df):
            return
        for game_index, game in df.groupby("game_index", sort=True):
            self.game_scores[int(game_index)] = self._score(game.to_dict("records"))
        self._advance()

    # --- the test ---------------------------------------------------------------------------
    def _advance(self) -> None:
        """Extend the test over the units now complete in plan order; stop at a crossing."""
        if self.decision != RUNNING:
            return
        outcomes: list[int | None] = []  # one per newly complete unit (None: an errored game)
        while self.prefix + len(outcomes) < len(self.units) and \
                all(g in self.game_scores for g in self.units[self.prefix + len(outcomes)]):
            scores = [self.game_scores[g] for g in self.units[self.prefix + len(outcomes)]]
            outcomes.append(None if any(v is None for v in scores) else int(round(2 * sum(scores))))
        scored = [i for i, o in enumerate(outcomes) if o is not None]
        end = len(outcomes)  # units of ``outcomes`` that join the test
        if scored:
            steps = np.zeros((len(scored), len(self.counts)))
            steps[np.arange(len(scored)), [outcomes[i] for i in scored]] = 1.0
            cumulative = self.counts + np.cumsum(steps, axis=0)
            llr = gsprt_llr(cumulative, self.scores_of_outcomes, self.s0, self.s1)
            crossed = np.flatnonzero((llr >= self.upper) | (llr <= self.lower))
            last = int(crossed[0]) if len(crossed) else len(scored) - 1
            self.llr.extend(float(v) for v in llr[:last + 1])
            self.counts = cumulative[last]
            if len(crossed):
                end = scored[last] + 1
                self.decision = H1 if llr[last] >= self.upper else H0
        self.errored += sum(1 for o in outcomes[:end] if o is None)
        self.prefix += end
        self.decided_at = self.prefix if self.decision in (H0, H1) else None
        if self.decision == RUNNING and self.prefix == len(self.units):
            self.decision = UNDECIDED

    @property
    def finished(self) -> bool:
        """Decided, or every unit up to the cap is in: dispatch no more games."""
        return self.decision != RUNNING

    @property
    def frontier(self) -> int:
        """The first game of the first unit not yet complete (the cap when all are)."""
        return self.units[self.prefix][0] if self.prefix < len(self.units) else self.cap

    def admits(self, game_index: int, window: int) -> bool:
        """Whether to start ``game_index`` now: at most ``window`` games past the
        frontier, so that a decision wastes at most ``window`` games however
        unevenly the games finish."""
        return game_index < self.frontier + window

    def result(self) -> SequentialResult:
        sprt = self.stop.sprt
        used = self.units[:self.prefix]
        mean, elo, lo, hi = _estimate(self.counts, self.scores_of_outcomes)
        fixed = None
        if self.counts.sum() > 1:
            p = self.counts / self.counts.sum()
            sd = math.sqrt(float(p @ (self.scores_of_outcomes - mean) ** 2))
            if sd > 0:
                fixed = fixed_sample_units(sd, self.s0, self.s1, sprt.alpha, sprt.beta) * \
                    (2 if self.stop.scoring == "pairs" else 1)
        return SequentialResult(
            decision=self.decision, between=tuple(self.stop.between), scoring=self.stop.scoring,
            elo0=sprt.elo0, elo1=sprt.elo1, alpha=sprt.alpha, beta=sprt.beta, lower=self.lower,
            upper=self.upper, units_used=len(used), games_used=sum(len(u) for u in used),
            games_cap=self.cap, llr=list(self.llr), counts=[int(c) for c in self.counts],
            units_errored=self.errored, score=mean, elo=elo, elo_lo=lo, elo_hi=hi, fixed_games=fixed)


# --- reporting ------------------------------------------------------------------------------
def sequential_markdown(result: SequentialResult) -> str:
    """The test's outcome in a few Markdown lines."""
    a, b = result.between
    unit = "pairs" if result.scoring == "pairs" else "games"
    classes = ("0-2, 0.5-1.5, 1-1, 1.5-0.5, 2-0" if result.scoring == "pairs" else "loss, tie, win")
    llr = result.llr[-1] if result.llr else 0.0
    lines = [f"**Sequential test** {a} vs {b}: SPRT elo0 = {result.elo0:g}, elo1 = {result.elo1:g}, "
             f"alpha = {result.alpha:g}, beta = {result.beta:g} (LLR bounds {result.lower:.3f}, "
             f"{result.upper:.3f}), scored by {unit}.", "",
             f"- Decision: **{result.text()}**",
             f"- Games used: {result.games_used} ({result.units_used} {unit}"
             + (f", {result.units_errored} with an errored game" if result.units_errored else "")
             + f") of the cap of {result.games_cap}"
             + (f"; a fixed-size test at this variance: {result.fixed_games} games" if result.fixed_games else ""),
             f"- LLR: {llr:.3f}",
             f"- {a} over {b}: {_elo_text(result.elo)} Elo (95% {_elo_text(result.elo_lo)} to "
             f"{_elo_text(result.elo_hi)}), score {result.score:.3f}",
             f"- Outcomes of A's {unit} ({classes}): {result.counts}"]
    return "\n".join(lines) + "\n"


def _elo_text(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value:+.1f}"


def llr_plot(result: SequentialResult, path, title: str | None = None) -> Path:
    """The LLR after each unit with the two bounds."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = Figure(figsize=(7, 4), tight_layout=True)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(1, len(result.llr) + 1)
    ax.plot(x, result.llr, color="#4c78a8", label="LLR")
    ax.axhline(result.upper, color="#54a24b", linestyle="--", label=f"accept H1 ({result.upper:.2f})")
    ax.axhline(result.lower, color="#e45756", linestyle="--", label=f"accept H0 ({result.lower:.2f})")
    ax.set_xlabel("pairs scored" if result.scoring == "pairs" else "games scored")
    ax.set_ylabel("log-likelihood ratio")
    ax.legend(loc="best")
    ax.set_title(title or f"SPRT {result.between[0]} vs {result.between[1]}: {result.decision}")
    fig.savefig(path)
    return path


# --- simulation -------------------------------------------------------------------------
def outcome_probabilities(elo: float, draw_rate: float, scoring: str) -> np.ndarray:
    """Outcome probabilities of a unit when A is ``elo`` stronger: a game is a win, tie
    or loss with ties at ``draw_rate`` and expected score ``elo_to_score(elo)``; a pair
    is two independent games (its pentanomial is the convolution)."""
    s = float(elo_to_score(elo))
    win, tie = s - draw_rate / 2, draw_rate
    loss = 1.0 - win - tie
    if min(win, loss) < 0:
        raise ValueError(f"draw_rate {draw_rate} too high for Elo {elo}")
    game = np.array([loss, tie, win])
    return game if scoring == "games" else np.convolve(game, game)


def simulate_sprt(elo: float, elo0: float, elo1: float, alpha: float, beta: float, *, tests: int,
                  rng: np.random.Generator, draw_rate: float = 0.3, scoring: str = "pairs",
                  max_units: int = 100_000, block: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Run ``tests`` independent SPRTs on simulated units of a true difference ``elo``;
    returns (decisions: +1 H1, -1 H0, 0 undecided; units used). Vectorised in blocks of
    ``block`` units over the tests still running."""
    probs = outcome_probabilities(elo, draw_rate, scoring)
    scores = PAIR_SCORES if scoring == "pairs" else GAME_SCORES
    s0, s1 = float(elo_to_score(elo0)), float(elo_to_score(elo1))
    lower, upper = sprt_bounds(alpha, beta)
    counts = np.zeros((tests, len(probs)))
    decisions = np.zeros(tests, dtype=np.int64)
    used = np.full(tests, max_units, dtype=np.int64)
    active = np.arange(tests)
    done_units = 0
    while len(active) and done_units < max_units:
        steps = min(block, max_units - done_units)
        draws = rng.choice(len(probs), size=(len(active), steps), p=probs)
        onehot = np.zeros((len(active), steps, len(probs)))
        np.put_along_axis(onehot, draws[..., None], 1.0, axis=2)
        cumulative = counts[active][:, None, :] + np.cumsum(onehot, axis=1)
        llr = gsprt_llr(cumulative.reshape(-1, len(probs)), scores, s0, s1).reshape(len(active), steps)
        crossed = (llr >= upper) | (llr <= lower)
        first = np.where(crossed.any(axis=1), crossed.argmax(axis=1), -1)
        stopped = first >= 0
        idx = active[stopped]
        at = first[stopped]
        decisions[idx] = np.where(llr[stopped, at] >= upper, 1, -1)
        used[idx] = done_units + at + 1
        counts[active] = cumulative[:, -1, :]
        active = active[~stopped]
        done_units += steps
    return decisions, used



def write_sequential_report(result: SequentialResult, out, title: str | None = None) -> list[Path]:
    """``sprt.md`` (the outcome, :func:`sequential_markdown`), ``sprt_llr.csv`` and
    ``sprt_llr.png`` (the LLR curve) in ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    md = out / "sprt.md"
    md.write_text((f"# {title}\n\n" if title else "") + sequential_markdown(result), encoding="utf-8")
    csv = out / "sprt_llr.csv"
    unit = "pair" if result.scoring == "pairs" else "game"
    csv.write_text(f"{unit},llr\n" + "".join(f"{i + 1},{v:.6f}\n" for i, v in enumerate(result.llr)),
                   encoding="utf-8")
    return [md, csv, llr_plot(result, out / "sprt_llr.png",
                              title=f"{title}: SPRT {result.decision}" if title else None)]


def sequential_of_study(study_dir, rows) -> SequentialResult | None:
    """The sequential test of a stored study (its ``spec.json`` has ``design.stop``) from
    its rows, None when it has no test (or its spec cannot be rebuilt here)."""
    spec_path = Path(study_dir) / "spec.json"
    try:
        stored = read_stored_spec(study_dir)
    except StoreError:
        return None
    if stored is None or stored.design is None or stored.design.stop is None:
        return None
    try:
        spec = stored.study_spec()
    except SpecError as exc:  # e.g. a game or agent registered by a plugin not imported here
        warnings.warn(f"{spec_path}: the sequential test is not reported ({exc})", RuntimeWarning, stacklevel=2)
        return None
    monitor = SequentialMonitor.from_spec(spec)
    monitor.add_frame(rows)
    return monitor.result()
