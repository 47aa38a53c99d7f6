"""The generic search through a game's Python members: ``mcts_generic`` with ``path = "python"``.

For a game that implements only the :class:`games.api.Game` API (``searchable = True``,
``games/CONTRACT.md``), and for a bridged game whose rules live in another library
(OpenSpiel's, through its Python face), the search of :mod:`agents.search.generic`
runs here in Python over :meth:`~games.api.Game.copy`, :meth:`~games.api.Game.acting_players`,
:meth:`~games.api.Game.legal_actions`, :meth:`~games.api.Game.apply`,
:meth:`~games.api.Game.returns`, the chance members and
:meth:`~games.api.Game.determinize`.

It is the kernel search step for step, draw for draw: the same xoroshiro128+
generator (:mod:`games.rng`, here on Python ints), the same rules of selection,
expansion, rollout, backup and final choice in the same order, the same floating-point
operations. So on a game that offers both paths (the tests' connect four) the two
choose the same moves from the same seed, and this one is the slow reference the
fast one is diffed against. The Python members mark who moves: a chance node is
:meth:`~games.api.Game.is_chance_node`, a simultaneous node one where
:meth:`~games.api.Game.acting_players` names more than one player. The game's
``heuristic`` is a kernel only: a cut rollout is worth the returns here.
"""
from __future__ import annotations

import math
import time

import numpy as np

from ..search import GenericParams

MASK = (1 << 64) - 1
NO_PLAYER = -1


def _rotl(x: int, k: int) -> int:
    return ((x << k) & MASK) | (x >> (64 - k))


class Xoroshiro:
    """:mod:`games.rng`'s generator on Python ints, over the same ``uint64[2]`` state."""

    __slots__ = ("s0", "s1")

    def __init__(self, state: np.ndarray):
        self.s0, self.s1 = int(state[0]), int(state[1])

    def store(self, state: np.ndarray) -> None:
        state[0], state[1] = np.uint64(self.s0), np.uint64(self.s1)

    def next(self) -> int:
        s0, s1 = self.s0, self.s1
        result = (s0 + s1) & MASK
        s1 ^= s0
        self.s0 = _rotl(s0, 24) ^ s1 ^ ((s1 << 16) & MASK)
        self.s1 = _rotl(s1, 37)
        return result

    def uniform(self) -> float:
        return (self.next() >> 11) * (1.0 / 9007199254740992.0)

    def integer(self, n: int) -> int:
        return (((self.next() >> 32) * n) & MASK) >> 32


def _tie_noise(x: float, epsilon: float, rng: Xoroshiro) -> float:
    return (x + epsilon) * (1.0 + epsilon * (rng.uniform() - 0.5))


def _random_legal(legal: list, rng: Xoroshiro) -> int:
    n = sum(1 for ok in legal if ok)
    if n == 0:
        return -1
    k = rng.integer(n)
    for a, ok in enumerate(legal):
        if ok:
            if k == 0:
                return a
            k -= 1
    return -1


def _sample_outcome(probs: list, rng: Xoroshiro) -> int:
    total = 0.0
    for p in probs:
        total += p
    if total <= 0:
        return -1
    x = rng.uniform() * total
    last = -1
    for k, w in enumerate(probs):
        if w <= 0:
            continue
        last = k
        if x < w:
            return k
        x -= w
    return last


class _Tree:
    """The search tree on Python lists (the kernel's Tree and decoupled statistics)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.visits: list[int] = [0]
        self.value_sum: list[float] = [0.0]
        self.parent: list[int] = [-1]
        self.player: list[int] = [NO_PLAYER]
        self.children: list[dict] = [{}]     # action, outcome or joint action -> child
        self.joint: list[tuple | None] = [None]  # the joint action into a simultaneous node's child
        self.slot: list[dict | None] = [None]    # a simultaneous node's per-player statistics

    def expand(self, node: int, key, player: int, joint=None) -> int:
        if len(self.visits) >= self.capacity:
            return -1
        child = len(self.visits)
        self.visits.append(0)
        self.value_sum.append(0.0)
        self.parent.append(node)
        self.player.append(player)
        self.children.append({})
        self.joint.append(joint)
        self.slot.append(None)
        self.children[node][key] = child
        return child


def _select_ucb1_untried_first(tree: _Tree, node: int, legal: list, c: float, rng: Xoroshiro) -> int:
    """``agents.search.select_ucb1_untried_first``."""
    k = len(legal)
    if not any(legal):
        return -1
    children = tree.children[node]
    untried = [a for a in range(k) if legal[a] and a not in children]
    if untried:
        return untried[rng.integer(len(untried))]
    log_n = math.log(max(tree.visits[node], 1))
    start = rng.integer(k)
    best, best_value = -1, -math.inf
    for i in range(k):
        a = (start + i) % k
        if not legal[a]:
            continue
        child = children[a]
        n = tree.visits[child]
        value = tree.value_sum[child] / n + c * math.sqrt(log_n / n)
        if value > best_value:
            best, best_value = a, value
    return best


def _select_among_legal_children(tree: _Tree, node: int, legal: list, c: float, rng: Xoroshiro) -> int:
    """``agents.search.random_untried_legal`` then ``select_ucb_among_legal_children``."""
    children = tree.children[node]
    untried = [a for a in range(len(legal)) if legal[a] and a not in children]
    if untried:
        return untried[rng.integer(len(untried))]
    total = sum(tree.visits[children[a]] for a in sorted(children) if a < len(legal) and legal[a])
    log_n = math.log(max(total, 1))
    best, best_value = -1, -math.inf
    for a in sorted(children):
        if a >= len(legal) or not legal[a]:
            continue
        n = tree.visits[children[a]]
        value = math.inf if n == 0 else tree.value_sum[children[a]] / n + c * math.sqrt(2.0 * log_n / n)
        value += 1e-9 * rng.uniform()
        if value > best_value:
            best, best_value = a, value
    return best


def _select_decoupled(slot: dict, player: int, legal: list, node_visits: int, c: float, rng: Xoroshiro) -> int:
    """``agents.search.decoupled.select_decoupled`` (slot: player -> (visits, value sums))."""
    visits, sums = slot[player]
    k = len(legal)
    untried = [a for a in range(k) if legal[a] and visits[a] == 0]
    if untried:
        return untried[rng.integer(len(untried))]
    log_n = math.log(max(node_visits, 1))
    start = rng.integer(k)
    best, best_value = -1, -math.inf
    for i in range(k):
        a = (start + i) % k
        if not legal[a]:
            continue
        value = sums[a] / visits[a] + c * math.sqrt(log_n / visits[a])
        if value > best_value:
            best, best_value = a, value
    return best


def _most_visited_child(tree: _Tree, epsilon: float, rng: Xoroshiro) -> int:
    """``agents.search.most_visited_child`` at the root (with ``best_mean_child`` on ties)."""
    children = tree.children[0]
    best, best_value, first, all_equal = -1, -math.inf, -1, True
    for a in sorted(children):
        visits = tree.visits[children[a]]
        if first == -1:
            first = visits
        elif visits != first:
            all_equal = False
        value = _tie_noise(float(visits), epsilon, rng)
        if value > best_value:
            best, best_value = a, value
    if best == -1:
        return 0
    if not all_equal:
        return best
    best, best_value = -1, -math.inf
    for a in sorted(children):
        child = children[a]
        q = _tie_noise(tree.value_sum[child] / (tree.visits[child] + epsilon), epsilon, rng)
        if q > best_value:
            best, best_value = a, q
    return best


class PythonSearch:
    """One agent's search through the Python members of ``game`` (an instance of the
    game, built from the agent's game config, whose state each decision replaces)."""

    def __init__(self, game, params: GenericParams, capacity: int):
        self.game = game
        self.params = params
        self.capacity = capacity
        self.num_players = int(game.num_players)

    # --- phases -----------------------------------------------------------
    def _world_generator(self, rng: Xoroshiro) -> np.random.Generator:
        return np.random.default_rng(rng.next())

    def _rollout(self, sim, rng: Xoroshiro) -> list[float]:
        depth = 0
        limit = self.params.max_rollout_depth
        joint = np.zeros(self.num_players, dtype=np.int64)
        while not sim.done and (limit == 0 or depth < limit):
            if sim.is_chance_node():
                sim.apply_chance(_sample_outcome([float(p) for p in sim.chance_outcomes()], rng))
            else:
                acting = list(sim.acting_players())
                joint[:] = 0
                if len(acting) > 1:
                    for p in acting:
                        a = _random_legal(sim.legal_actions(p).tolist(), rng)
                        joint[p] = a if a >= 0 else 0
                else:
                    a = _random_legal(sim.legal_actions(acting[0]).tolist(), rng)
                    joint[acting[0]] = a if a >= 0 else 0
                sim.apply(joint)
            depth += 1
        return [float(v) for v in sim.returns()]

    def _backup(self, tree: _Tree, leaf: int, values: list[float]) -> None:
        node = leaf
        while node != -1:
            p = tree.player[node]
            tree.visits[node] += 1
            tree.value_sum[node] += values[p] if p >= 0 else 0.0
            parent = tree.parent[node]
            if parent != -1 and tree.slot[parent] is not None:
                for q, a in enumerate(tree.joint[node]):
                    if a >= 0:
                        visits, sums = tree.slot[parent][q]
                        visits[a] += 1
                        sums[a] += values[q]
            node = parent

    # --- one decision -------------------------------------------------------
    def decide(self, observation, player: int, max_iterations: int, seconds: float,
               state: np.ndarray) -> tuple[int, int, float]:
        """(action, iterations, value of the action) from ``observation``; ``state`` is
        the agent's generator (uint64[2]), advanced."""
        params = self.params
        rng = Xoroshiro(state)
        start = time.monotonic_ns()
        deadline = -1 if seconds <= 0 else start + int(seconds * 1e9)
        root = self.game
        root.determinize(observation, player, self._world_generator(rng) if not root.perfect_information
                         else None)
        hidden = not root.perfect_information
        world_seeds = [rng.next() for _ in range(params.determinizations)] if hidden else []
        tree = _Tree(self.capacity)
        joint = np.zeros(self.num_players, dtype=np.int64)
        iterations = 0
        while not _budget_exhausted(iterations, max_iterations, start, deadline):
            sim = root.copy()
            if hidden:
                seed = world_seeds[iterations % len(world_seeds)] if world_seeds else rng.next()
                sim.determinize(observation, player, np.random.default_rng(seed))
            node = 0
            while not sim.done:
                if sim.is_chance_node():
                    outcome = _sample_outcome([float(p) for p in sim.chance_outcomes()], rng)
                    sim.apply_chance(outcome)
                    child = tree.children[node].get(outcome, -1)
                    if child < 0:
                        child = tree.expand(node, outcome, NO_PLAYER)
                        if child >= 0:
                            node = child
                        break
                    node = child
                    continue
                acting = list(sim.acting_players())
                joint[:] = 0
                if len(acting) > 1:  # simultaneous: decoupled UCT
                    slot = tree.slot[node]
                    if slot is None:
                        width = int(sim.num_actions)
                        slot = tree.slot[node] = {p: ([0] * width, [0.0] * width) for p in range(self.num_players)}
                    key = [-1] * self.num_players
                    for p in acting:
                        key[p] = joint[p] = _select_decoupled(slot, p, sim.legal_actions(p).tolist(),
                                                              tree.visits[node], params.exploration, rng)
                    sim.apply(joint)
                    key = tuple(key)
                    child = tree.children[node].get(key, -1)
                    if child < 0:
                        child = tree.expand(node, key, NO_PLAYER, joint=key)
                        if child >= 0:
                            node = child
                        break
                    node = child
                    continue
                mover = acting[0]
                legal = sim.legal_actions(mover).tolist()
                if hidden:
                    action = _select_among_legal_children(tree, node, legal, params.exploration / math.sqrt(2.0), rng)
                else:
                    action = _select_ucb1_untried_first(tree, node, legal, params.exploration, rng)
                if action < 0:
                    break
                joint[mover] = action
                sim.apply(joint)
                child = tree.children[node].get(action, -1)
                if child < 0:
                    child = tree.expand(node, action, mover)
                    if child >= 0:
                        node = child
                    break
                node = child
            self._backup(tree, node, self._rollout(sim, rng))
            iterations += 1
        acting = list(root.acting_players())
        if len(acting) > 1:
            slot = tree.slot[0]
            legal = root.legal_actions(player).tolist()
            best, best_value, value = -1, -math.inf, math.nan
            for a, ok in enumerate(legal):
                if ok:
                    visits = 0.0 if slot is None else float(slot[player][0][a])
                    noisy = _tie_noise(visits, params.epsilon, rng)
                    if noisy > best_value:
                        best, best_value = a, noisy
            if slot is not None and slot[player][0][best]:
                value = slot[player][1][best] / slot[player][0][best]
            action = best
        else:
            action = _most_visited_child(tree, params.epsilon, rng)
            child = tree.children[0].get(action, -1)
            value = tree.value_sum[child] / tree.visits[child] if child >= 0 and tree.visits[child] else math.nan
        rng.store(state)
        return int(action), iterations, float(value)


def _budget_exhausted(iterations: int, max_iterations: int, start: int, deadline: int) -> bool:
    """``agents.search.budget_exhausted``."""
    if iterations >= max_iterations:
        return True
    if deadline < 0 or iterations == 0:
        return False
    now = time.monotonic_ns()
    return now + (now - start) // iterations >= deadline
