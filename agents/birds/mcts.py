"""MCTS with decision and chance nodes over information sets (the bird game).

One search per decision, a new tree each time, on the shared core
(:mod:`agents.search`). Each iteration:

1. **Determinize**: the hidden cards (the opponent's cards not taken face up,
   and the deck order) are re-sampled uniformly from the cards the searching
   player has not seen, consistently with what it knows. The true deck order
   and the opponent's hand are never read: the search starts from the
   observation and overwrites every hidden slot (so a true state and its
   observation give the same search).
2. **Traverse** from the root. At a DECISION node (the searching player to
   move) :func:`~agents.search.select_ucb1_untried_first` picks among the actions legal
   in this determinization. An action that reveals a card leads to a CHANCE
   node: drawing from the deck (outcome: the class of the drawn card), taking a
   tray card (outcome: the class of the card refilling the tray). The outcome
   has probability p_k = the share of that class among the unseen cards (deck
   plus the opponent's hidden cards, as the searcher knows them at that
   point); the iteration follows an outcome by ``chance_selection``
   (``sample``: drawn with p_k; ``proportional``: value-free, visits kept in
   proportion to p_k; ``pw_ucb``: the seed's max of p_k x UCB value), then a
   card of that class is moved to the top of the deck (a swap that keeps the
   determinization uniform given the outcome). ``chance_grouping`` sets what an
   outcome is: the card class (``class``), one of 8 wider classes
   (``coarse``), or nothing (``none``: no chance node, the card the
   determinization holds); ``widening_alpha`` > 0 widens chance nodes
   progressively. The opponent's turn is not enumerated: it is played by the
   opponent model on the determinized state (by default the trained policy,
   which reads the opponent's own determinized hand; or uniform random, or
   the greedy rule), then the next DECISION node follows. Decision and chance
   nodes need not alternate.
3. **Expand** one node, **roll out** to the end (the searching player by the
   rollout model, the opponent by the opponent model) and **back up** the
   end state's value from the searching player's view (``backup``: the result
   1 / 0.5 / 0, or the point differential mapped onto [0, 1]; see
   :func:`leaf_value`).

With ``chance_nodes = false`` the agent is the single-determinization baseline:
one determinization per decision, fixed for all iterations, and no chance
nodes (the tree sees that sampled deck order, as the public project's tree saw
the true one). With ``true_state = true`` as well it is the **true-state tree, an
upper bound and not a fair player**: the study shows it the true state
(``cluster.run.play.observation_for``) and its one "determinization" is that state,
the opponent's hidden hand and the deck order included.

Chance outcomes are indexed by card class (``points * 4 + cost``, 40
classes; :func:`outcome_map` for the groupings); with ``closed_loop`` the
opponent's move is a chance node as well (outcomes ``OPP_*``: the class of the
bird it plays, the tray slot it takes, a blind draw, food; sampled by the
opponent model), and so is the tray refill after a tray take. The tree's action
axis is ``TREE_WIDTH`` = 40 wide (``CLOSED_LOOP_TREE_WIDTH`` = 45 with ``closed_loop``).

The pieces: the information sets (unseen cards, determinization, chance
outcomes) are in :mod:`agents.birds.information_sets`, the transitions (the
chance events an action leaves, the opponent's turn, rollouts and leaf values) in
:mod:`agents.birds.transitions`; this module holds the search and the agent and
re-exports their public names.

Today's options under their names replay the games recorded before issue 25's
options existed (``tests/agents/test_birds_chance.py``): ``opponent = "random"`` (the
old default), ``chance_selection = "proportional"`` (what ``pw_ucb`` meant).
"""
from __future__ import annotations

import math
from typing import Annotated, Literal, NamedTuple

import numba as nb
import numpy as np
from pydantic import Field, model_validator

from agents.api import Budget
from agents.registry import register
from agents.search import (
    CHANCE, DECISION, ROOT_INDEX, backup, budget_exhausted, deadline_ns, expand_as, Exploration,
    borrowed_tree, is_full, monotonic_ns, new_tree, recommend_root_action, reset_tree, sample_outcome,
    select_outcome_proportional, select_outcome_pw_ucb, select_ucb1_untried_first,
)
from games.lowlevel import borrow, keep_alive
from games.validation import Real, config_class, one_of
from games.birds.kernels import (
    HIDDEN, M_TO_MOVE, N_ACTIONS, N_CLASSES, copy_dynamic, empty_state, end_turn, is_terminal,
    legal_actions_into, borrowed_state,
)

from ._agent import BirdsAgent, WEIGHTS_KEY, check_weights, shipped_policy_id, shipped_weights
from .features import MODEL_GREEDY, MODEL_POLICY, MODEL_RANDOM, N_FEATURES
from .information_sets import (  # re-exported: the information sets' public names
    GROUPING_CLASS, GROUPING_COARSE, GROUPING_NONE, determinize, force_top_card, outcome_map,
    pool_outcome_counts, unseen_class_counts, unseen_outcome_counts, unseen_pool,
)
from .transitions import (  # re-exported: the transitions' public names
    BACKUP_MARGIN, BACKUP_RESULT, OPP_DECK, OPP_FOOD, OPP_PLAY, OPP_TRAY, PENDING_DRAW,
    PENDING_NONE, PENDING_OPP_REFILL, PENDING_OPPONENT, PENDING_REFILL, begin_action,
    leaf_value, opponent_move, opponent_pending, pending_after, resolve_chance, rollout,
)

#: Nodes a time-budgeted search may create (iteration budgets size the tree exactly).
MAX_TIMED_NODES = 100_000

CHANCE_SAMPLE = 0
CHANCE_PROPORTIONAL = 1
CHANCE_PW_UCB = 2
#: Search statistics (``BirdsMCTSAgent.stats``, summed over a decision's search).
STAT_DETERMINIZATIONS = 0
STAT_CHANCE_VISITS = 1
N_STATS = 2
#: The tree's action axis: actions and card classes share it (open loop) ...
TREE_WIDTH = max(N_ACTIONS, N_CLASSES)
#: ... and opponent moves too (``closed_loop``).
CLOSED_LOOP_TREE_WIDTH = max(TREE_WIDTH, OPP_FOOD + 1)


# --- the search -------------------------------------------------------------------
class BirdsMctsParams(NamedTuple):
    """A bird MCTS agent's search settings (built once per agent: :class:`BirdsMCTSAgent`).

    Fields:
        max_iterations: int; time_limit: float seconds (0 = none): the budget.
        exploration: float, the UCB1 constant.
        chance_nodes: bool (False: one determinization, no chance nodes).
        grouping: int, GROUPING_* (NONE: a fresh determinization per iteration and no
            chance node).
        chance_selection: int, CHANCE_SAMPLE, CHANCE_PROPORTIONAL or CHANCE_PW_UCB.
        widening_alpha: float, the progressive widening exponent at chance nodes (0: off).
        closed_loop: bool (the opponent's move and the refill after it are chance nodes
            too; else merged into the searcher's transition).
        opp_model, rollout_model: int, MODEL_* of the opponent and of the searcher's own
            rollout moves.
        most_visited: bool (else best mean).
        backup_kind: int, BACKUP_RESULT or BACKUP_MARGIN, with margin_scale: float
            (points; see :func:`leaf_value`).
        true_state: bool (with ``chance_nodes`` False: the one determinization is the
            root itself, hidden slots as given: the true-state upper bound when the root
            is the true state).
    """

    max_iterations: int
    time_limit: float
    exploration: float
    chance_nodes: bool
    grouping: int
    chance_selection: int
    widening_alpha: float
    closed_loop: bool
    opp_model: int
    rollout_model: int
    most_visited: bool
    backup_kind: int
    margin_scale: float
    true_state: bool


class SearchScratch(NamedTuple):
    """The work arrays of :func:`search` (the agent's, reallocated when the card table changes).

    Fields:
        pool: int16[C], the unseen cards; counts: int64[N_CLASSES], outcome counts;
        legal: bool[N_ACTIONS]; feats: float64[N_ACTIONS, N_FEATURES] and
        probs: float64[N_ACTIONS], the models' features and move probabilities.
    """

    pool: np.ndarray
    counts: np.ndarray
    legal: np.ndarray
    feats: np.ndarray
    probs: np.ndarray


@nb.njit(cache=True)
def widen(tree, node, counts, total, widening_alpha):
    """Progressive widening at a chance node: once ``node`` has
    ``ceil(N(node) ** widening_alpha)`` outcome children, the outcomes without a
    child are left out of ``counts`` (in place; the total of the rest is
    returned). If no outcome with a child has cards in this iteration, nothing
    is left out. ``widening_alpha`` 0 is off (``total`` unchanged)."""
    if widening_alpha <= 0.0:
        return total
    limit = math.ceil(max(tree.node_visits[node], 1) ** widening_alpha)
    children = 0
    kept = 0
    for k in range(counts.shape[0]):
        if tree.children[node, k] >= 0:
            children += 1
            kept += counts[k]
    if children < limit or kept <= 0:
        return total
    for k in range(counts.shape[0]):
        if tree.children[node, k] < 0:
            counts[k] = 0
    return kept


@nb.njit(cache=True, inline="always")
def select_outcome(tree, node, counts, total, chance_selection, exploration, rng):
    """The outcome this iteration follows at a chance node (CHANCE_* rule)."""
    if chance_selection == CHANCE_PW_UCB:
        return select_outcome_pw_ucb(tree, node, counts, total, exploration, rng)
    if chance_selection == CHANCE_PROPORTIONAL:
        return select_outcome_proportional(tree, node, counts, total, exploration, rng)
    return sample_outcome(counts, total, rng)


@nb.njit(cache=True)
def search(root, tree, sim, det, scratch, weights, outcome_of, stats, params, rng):
    """Search from ``root`` (the observation of the player to move) and return
    ``(action, iterations)``.

    Args:
        root: BirdsState, the searcher's observation (hidden slots are ignored).
        tree: a Tree of width ``TREE_WIDTH`` (``CLOSED_LOOP_TREE_WIDTH`` with
        ``closed_loop``; reset here).
        sim, det: scratch BirdsStates sharing ``root.cards``.
        scratch: :class:`SearchScratch`, the work arrays.
        weights: float64[N_FEATURES], the policy of MODEL_POLICY models.
        outcome_of: int64[N_CLASSES], the chance outcome of each card class
        (:func:`outcome_map`); stats: int64[N_STATS], counters (added to).
        params: :class:`BirdsMctsParams`, the budget and the search's settings.
        rng: uint64[2].
    """
    exploration, chance_nodes, grouping = params.exploration, params.chance_nodes, params.grouping
    chance_selection, widening_alpha = params.chance_selection, params.widening_alpha
    closed_loop = params.closed_loop
    opp_model, rollout_model = params.opp_model, params.rollout_model
    backup_kind, margin_scale = params.backup_kind, params.margin_scale
    # Borrowed views (no reference counts) of the scratch states and the tree for the
    # search's loops: numba counts a reference each time a kernel reads an array out
    # of a state or a tree, dozens of times per iteration. The owners (the arguments)
    # outlive this call; nothing borrowed is stored or returned.
    root = borrowed_state(root)
    sim = borrowed_state(sim)
    det = borrowed_state(det)
    tree = borrowed_tree(tree)
    # the work arrays, weights and rng too: they go to the opponent model, the
    # determinization and the rollout on every iteration (atomic reference counts were
    # a fifth of an iteration)
    pool, counts, legal = borrow(scratch.pool), borrow(scratch.counts), borrow(scratch.legal)
    feats, probs, weights = borrow(scratch.feats), borrow(scratch.probs), borrow(weights)
    work = SearchScratch(pool, counts, legal, feats, probs)  # the borrowed views, for resolve_chance
    outcome_of, stats, rng = borrow(outcome_of), borrow(stats), borrow(rng)
    player = root.meta[M_TO_MOVE]
    split = chance_nodes and grouping != GROUPING_NONE
    grouped = grouping == GROUPING_COARSE
    reset_tree(tree)
    n_pool = unseen_pool(root, player, pool)
    in_pool_owner = np.zeros(root.cards.shape[0], dtype=np.bool_)
    pool_counts_owner = np.zeros(counts.shape[0], dtype=np.int64)
    in_pool, pool_counts = borrow(in_pool_owner), borrow(pool_counts_owner)
    pool_outcome_counts(root.cards, pool, n_pool, grouped, outcome_of, in_pool, pool_counts)
    start = monotonic_ns()
    deadline = deadline_ns(params.time_limit)
    max_iterations = params.max_iterations
    if not chance_nodes:
        if params.true_state:
            copy_dynamic(det, root)
        else:
            determinize(det, root, player, pool, n_pool, rng)
        stats[STAT_DETERMINIZATIONS] += 1
    node_kind, children = tree.node_kind, tree.children  # read out of the tree once
    iterations = 0
    while not budget_exhausted(iterations, max_iterations, start, deadline):
        if chance_nodes:
            determinize(sim, root, player, pool, n_pool, rng)
            stats[STAT_DETERMINIZATIONS] += 1
        else:
            copy_dynamic(sim, det)
        node = ROOT_INDEX
        pending = PENDING_NONE
        value = -1.0
        expanded = False
        while True:
            if node_kind[node] == CHANCE:
                stats[STAT_CHANCE_VISITS] += 1
                if pending == PENDING_OPPONENT:  # closed loop: sampled by the opponent model
                    k, pending = opponent_move(sim, player, split, opp_model, weights, feats,
                                               probs, rng)
                else:
                    total = unseen_outcome_counts(sim, player, grouped, outcome_of, in_pool, pool_counts,
                                                   n_pool, counts)
                    if widening_alpha > 0.0:
                        total = widen(tree, node, counts, total, widening_alpha)
                    k = select_outcome(tree, node, counts, total, chance_selection, exploration, rng)
                    if pending == PENDING_OPP_REFILL:
                        force_top_card(sim, player, k, counts[k], grouped, outcome_of, rng)
                        end_turn(sim)
                        pending = PENDING_NONE
                    else:
                        resolve_chance(sim, player, pending, k, counts[k], outcome_of, params, weights, work, rng)
                        pending = opponent_pending(sim, player, closed_loop)
                child = children[node, k]
                if child < 0:
                    child = expand_as(tree, node, k, CHANCE if pending != PENDING_NONE else DECISION)
                    expanded = True
                if child < 0:  # tree full: evaluate from here
                    break
                node = child
                if expanded:
                    break
            else:
                if is_terminal(sim):
                    value = leaf_value(sim, player, backup_kind, margin_scale)
                    break
                legal_actions_into(sim, player, legal)
                a = select_ucb1_untried_first(tree, node, legal, exploration, rng)
                pending = pending_after(sim, a, split)
                begin_action(sim, player, a, pending, closed_loop, opp_model, weights, feats,
                             probs, rng)
                if pending == PENDING_NONE:
                    pending = opponent_pending(sim, player, closed_loop)
                child = children[node, a]
                if child < 0:
                    child = expand_as(tree, node, a, CHANCE if pending != PENDING_NONE else DECISION)
                    expanded = True
                if child < 0:
                    break
                node = child
                if expanded:
                    break
        if value < 0.0:
            if pending == PENDING_DRAW or pending == PENDING_REFILL:  # stopped before a chance event: sample it
                total = unseen_outcome_counts(sim, player, grouped, outcome_of, in_pool, pool_counts,
                                                   n_pool, counts)
                k = sample_outcome(counts, total, rng)
                resolve_chance(sim, player, pending, k, counts[k], outcome_of, params, weights, work, rng)
            elif pending == PENDING_OPP_REFILL:  # the opponent's turn ends (refill as dealt)
                end_turn(sim)
            # PENDING_OPPONENT: the rollout plays the opponent's move
            value = rollout(sim, player, rollout_model, opp_model, weights, feats, probs,
                            backup_kind, margin_scale, rng)
        backup(tree, node, value)
        iterations += 1
        if is_full(tree):
            break
    action = recommend_root_action(tree, not params.most_visited, 1e-6, rng)
    keep_alive((in_pool_owner, pool_counts_owner))
    return action, iterations


# --- the agent ------------------------------------------------------------------
OPPONENT_MODELS = {"random": MODEL_RANDOM, "policy": MODEL_POLICY, "greedy": MODEL_GREEDY}
CHANCE_SELECTIONS = {"sample": CHANCE_SAMPLE, "proportional": CHANCE_PROPORTIONAL,
                     "pw_ucb": CHANCE_PW_UCB}
BACKUPS = {"result": BACKUP_RESULT, "margin": BACKUP_MARGIN}
GROUPINGS = {"class": GROUPING_CLASS, "coarse": GROUPING_COARSE, "none": GROUPING_NONE}


@config_class
class BirdsMCTSConfig:
    """Parameters of the bird game's MCTS."""

    exploration: Exploration = math.sqrt(2.0)
    """UCB1 constant c in Q + c * sqrt(ln N / n) (rewards in [0, 1])."""
    chance_nodes: bool = True
    """True: re-determinize every iteration and branch on drawn cards at chance
    nodes; False: the single-determinization baseline (no chance nodes)."""
    chance_grouping: Annotated[str, one_of(GROUPINGS)] = "class"
    """What a chance node branches on (with ``chance_nodes``): ``class`` (the drawn
    card's (points, cost) class, 40 outcomes, the default), ``coarse`` (8 wider
    classes: points 0-2, 3-4, 5-6, 7-9 x cost 0-1, 2-3; :func:`outcome_map`) or
    ``none`` (no split: a fresh determinization per iteration and the drawn card
    is whatever that determinization holds; no chance node)."""
    widening_alpha: Annotated[Real, Field(ge=0, le=1)] = 0.0
    """Progressive widening at chance nodes: a node with N visits has at most
    ceil(N ** widening_alpha) outcome children; once it has that many, iterations
    follow only outcomes it has (by ``chance_selection`` among them). 0: off."""
    closed_loop: bool = False
    """True: the opponent's turn is a chance node too (outcome: what the searcher sees of
    the move, sampled by the opponent model: the class of a bird played, the tray slot
    taken, a blind draw, food), and so is the tray refill after it (by
    ``chance_selection``); False (the default): both are merged into the searcher's
    transition (open loop)."""
    chance_selection: Annotated[str, one_of(CHANCE_SELECTIONS)] = "sample"
    """The outcome an iteration follows at a chance node (``agents.search.selection``):
    ``sample`` (drawn by probability p_k, the default); ``proportional`` (value-free:
    the outcome whose visit share lags furthest behind p_k, the rule this option
    called ``pw_ucb`` before); ``pw_ucb`` (the seed's probability-weighted UCB: the
    outcome maximising p_k * (Q_k + exploration * sqrt(ln N / n_k)), untried outcomes
    first, the most probable first)."""
    opponent: Annotated[str, one_of(OPPONENT_MODELS)] = "policy"
    """Opponent model in the tree and rollouts: ``policy`` (the trained linear policy,
    the default: it reads the opponent's own hand in the determinized state), ``random``
    (uniform over the legal moves) or ``greedy``. The policy's weights are the seat's
    learned state when it has one (a spec's ``seed_population`` .npz with an array
    ``weights``), else the shipped policy (``agents/birds/weights/birds_policy.npz``)."""
    rollout: Annotated[str, one_of(OPPONENT_MODELS)] = "random"
    """The searcher's own rollout moves: ``random``, ``greedy`` or ``policy`` (weights as
    for ``opponent``)."""
    final: Literal["most_visited", "best_mean"] = "most_visited"
    """Root choice: ``most_visited`` or ``best_mean``."""
    backup: Annotated[str, one_of(BACKUPS)] = "result"
    """What a finished game backs up (in [0, 1], the searcher's view): ``result``
    (1 / 0.5 / 0, the default) or ``margin`` (the point differential d scaled to
    [-1, 1] and mapped onto [0, 1]: (1 + clip(d / margin_scale, -1, 1)) / 2)."""
    margin_scale: Annotated[Real, Field(gt=0, le=1000)] = 20.0
    """Points of differential that count as a sure win (value 1) with ``backup =
    "margin"``; board scores run 0 to 45, MCTS margins against random about +5 to +10."""
    true_state: bool = False
    """UPPER BOUND, not a fair player: True (with ``chance_nodes = false``) searches the
    true state the study shows this seat (``cluster.run.play.observation_for``): one tree on
    the opponent's real hand and the real deck order instead of a sampled
    determinization. Label such a seat as an upper bound."""

    @model_validator(mode="after")
    def _true_state_without_chance_nodes(self):
        if self.true_state and self.chance_nodes:
            raise ValueError("true_state: the true-state tree has no chance nodes; "
                             "set chance_nodes = false with it")
        return self

    @property
    def needs_weights(self) -> bool:
        return self.opponent == "policy" or self.rollout == "policy"


@register
class BirdsMCTSAgent(BirdsAgent):
    """MCTS with decision and chance nodes over information sets (module docstring)."""

    name = "birds_mcts"
    Config = BirdsMCTSConfig

    def __init__(self, config: BirdsMCTSConfig, budget: Budget, game_config):
        super().__init__(config, budget, game_config)
        self.max_iterations, self.time_limit = budget.kernel_args()
        capacity = self.max_iterations + 1 if budget.iterations is not None else MAX_TIMED_NODES
        self.tree = new_tree(capacity, CLOSED_LOOP_TREE_WIDTH if config.closed_loop else TREE_WIDTH)
        self.weights = shipped_weights()
        self.outcome_of = outcome_map(config.chance_grouping)
        self.stats = np.zeros(N_STATS, dtype=np.int64)
        self.has_weights = False  # True once learned state (a seed population) replaced them
        c = config
        self.params = BirdsMctsParams(
            int(self.max_iterations), float(self.time_limit), float(c.exploration), bool(c.chance_nodes),
            GROUPINGS[c.chance_grouping], CHANCE_SELECTIONS[c.chance_selection], float(c.widening_alpha),
            bool(c.closed_loop), OPPONENT_MODELS[c.opponent], OPPONENT_MODELS[c.rollout],
            c.final == "most_visited", BACKUPS[c.backup], float(c.margin_scale), bool(c.true_state))
        """The :class:`BirdsMctsParams` of the config and budget."""
        self._cards_shape = None
        #: the study shows this seat the true state (``cluster.run.play.observation_for``)
        self.reads_true_state = bool(config.true_state)

    def _scratch(self, observation):
        if self._cards_shape != observation.cards.shape:
            n = observation.cards.shape[0]
            self.sim = empty_state(observation.cards)
            self.det = empty_state(observation.cards)
            self.pool = np.zeros(n, dtype=np.int16)
            self.counts = np.zeros(N_CLASSES, dtype=np.int64)
            self.legal = np.zeros(N_ACTIONS, dtype=np.bool_)
            self.feats = np.zeros((N_ACTIONS, N_FEATURES), dtype=np.float64)
            self.probs = np.zeros(N_ACTIONS, dtype=np.float64)
            self._work = SearchScratch(self.pool, self.counts, self.legal, self.feats, self.probs)
            self._cards_shape = observation.cards.shape
        else:
            self.sim = self.sim._replace(cards=observation.cards)
            self.det = self.det._replace(cards=observation.cards)

    def decide(self, observation):
        self._scratch(observation)
        c = self.config
        if c.true_state and (np.any(observation.deck == HIDDEN) or np.any(observation.hand == HIDDEN)):
            raise ValueError("true_state: given an observation with hidden cards; the true-state "
                             "tree needs the true state (cluster.run.play.observation_for)")
        self.stats[:] = 0
        action, iterations = search(observation, self.tree, self.sim, self.det, self._work, self.weights,
                                    self.outcome_of, self.stats, self.params, self.rng)
        return int(action), int(iterations)

    # the policy weights of the opponent / rollout model travel as learned state (the
    # shipped default is part of the agent, not learned state: None then)
    def learned_state(self):
        return {WEIGHTS_KEY: self.weights.copy()} if self.has_weights else None

    def load_learned_state(self, arrays):
        self.weights = check_weights(arrays)
        self.has_weights = True

    @classmethod
    def check_learned_state(cls, config, arrays):
        check_weights(arrays)

    @classmethod
    def resolved_params(cls, config, game_config):
        """The shipped policy a seat without learned state uses (MLflow parameters)."""
        return {"default_policy": shipped_policy_id()} if config.needs_weights else {}
