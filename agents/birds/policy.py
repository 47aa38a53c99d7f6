"""The trained linear softmax policy of the bird game: a player, and its REINFORCE training.

The policy (``features.py``) plays ``softmax(weights . phi(s, a))`` over the
legal actions. :func:`train_policy` fits ``weights`` by REINFORCE: batches of
games in which the learner (seat alternating) plays the current policy against
uniform random moves (``opponent = "random"``) or against itself
(``"self"``, self-play: both seats play the current policy and both learn); the gradient of each game is
``(reward - baseline) * sum_t (phi(s_t, a_t) - E_pi[phi(s_t, .)])`` with the
batch's mean reward as the baseline, applied with Adam. The reward is the
result (1 / 0.5 / 0) plus ``score_weight`` times the score difference.

The weights are learned state: a ``.npz`` with one float64 array ``weights``
(:data:`~agents.birds._agent.WEIGHTS_KEY`), given to a study seat as its
``seed_population`` (a path or an MLflow artifact URI).
"""
from __future__ import annotations

from typing import Annotated, Literal

import numba as nb
import numpy as np
from pydantic import Field

from agents.registry import register
from games.rng import make_rng
from games.birds import CardsCsv
from games.validation import Real, config_class
from games.birds.kernels import (
    M_TO_MOVE, N_ACTIONS, N_PLAYERS, P_SCORE, deal, empty_state, is_terminal, returns, step,
)

from ._agent import BirdsAgent, WEIGHTS_KEY, check_weights
from .features import (
    MODEL_GREEDY, MODEL_POLICY, MODEL_RANDOM, MODEL_TYPED_RANDOM, N_FEATURES, model_action,
    policy_probabilities,
    sample_from,
)


@config_class
class BirdsPolicyConfig:
    """Parameters of the policy player."""

    greedy: bool = False
    """Play the most probable action instead of sampling from the policy."""


@register
class BirdsPolicyAgent(BirdsAgent):
    """The linear softmax policy as a player; its weights are its learned state
    (load them with a spec's ``seed_population``). Without weights it is uniform."""

    name = "birds_policy"
    Config = BirdsPolicyConfig

    @classmethod
    def learns(cls, config) -> bool:
        return True  # its weights are its learned state (carried from game to game)

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        self.weights = np.zeros(N_FEATURES, dtype=np.float64)
        self.feats = np.zeros((N_ACTIONS, N_FEATURES), dtype=np.float64)
        self.probs = np.zeros(N_ACTIONS, dtype=np.float64)

    def decide(self, observation):
        p = int(observation.meta[M_TO_MOVE])
        policy_probabilities(observation, p, self.weights, self.feats, self.probs)
        if self.config.greedy:
            return int(np.argmax(self.probs)), 0
        return int(sample_from(self.probs, self.rng)), 0

    def learned_state(self):
        return {WEIGHTS_KEY: self.weights.copy()}

    def load_learned_state(self, arrays):
        self.weights = check_weights(arrays)

    @classmethod
    def check_learned_state(cls, config, arrays):
        check_weights(arrays)


# --- training -------------------------------------------------------------------
@nb.njit(cache=True)
def play_match(state, weights, models, rng, feats, probs):
    """Play one game from a dealt ``state``: seat ``p`` moves by ``models[p]``
    (MODEL_*; MODEL_POLICY uses ``weights``). Returns (rewards float64[2],
    score difference of seat 0)."""
    while not is_terminal(state):
        p = state.meta[M_TO_MOVE]
        step(state, model_action(state, p, models[p], weights, feats, probs, rng))
    r = returns(state)
    return r, float(state.player[0, P_SCORE] - state.player[1, P_SCORE])


@nb.njit(cache=True)
def reinforce_batch(state, start_food, weights, games, self_play, score_weight, rng, grad):
    """Play ``games`` games (dealt into the scratch ``state``, whose ``cards`` are the
    card set) and accumulate the REINFORCE gradient into ``grad``
    (float64[N_FEATURES], zeroed here). Returns the learner's mean result (1 / 0.5 / 0)."""
    feats = np.zeros((N_ACTIONS, N_FEATURES))
    probs = np.zeros(N_ACTIONS)
    game_grads = np.zeros((games, N_PLAYERS, N_FEATURES))
    game_rewards = np.zeros((games, N_PLAYERS))
    learns = np.zeros((games, N_PLAYERS), dtype=np.bool_)
    total_result = 0.0
    count = 0
    for g in range(games):
        deal(state, start_food, rng)
        learner = g % 2
        for p in range(N_PLAYERS):
            learns[g, p] = self_play or p == learner
        while not is_terminal(state):
            p = state.meta[M_TO_MOVE]
            if learns[g, p]:
                policy_probabilities(state, p, weights, feats, probs)
                a = sample_from(probs, rng)
                for f in range(N_FEATURES):
                    mean = 0.0
                    for b in range(N_ACTIONS):
                        mean += probs[b] * feats[b, f]
                    game_grads[g, p, f] += feats[a, f] - mean
            else:
                a = model_action(state, p, MODEL_RANDOM, weights, feats, probs, rng)
            step(state, a)
        r = returns(state)
        diff = float(state.player[0, P_SCORE] - state.player[1, P_SCORE])
        for p in range(N_PLAYERS):
            game_rewards[g, p] = r[p] + score_weight * (diff if p == 0 else -diff)
            if learns[g, p]:
                total_result += r[p]
                count += 1
    baseline = 0.0
    for g in range(games):
        for p in range(N_PLAYERS):
            if learns[g, p]:
                baseline += game_rewards[g, p]
    baseline /= count
    grad[:] = 0.0
    for g in range(games):
        for p in range(N_PLAYERS):
            if learns[g, p]:
                adv = game_rewards[g, p] - baseline
                for f in range(N_FEATURES):
                    grad[f] += adv * game_grads[g, p, f] / count
    return total_result / count


@nb.njit(cache=True)
def _evaluate(state, start_food, weights, opponent_model, games, rng):
    feats = np.zeros((N_ACTIONS, N_FEATURES))
    probs = np.zeros(N_ACTIONS)
    models = np.zeros(N_PLAYERS, dtype=np.int64)
    counts = np.zeros(3, dtype=np.int64)
    diff_sum = 0.0
    for g in range(games):
        deal(state, start_food, rng)
        seat = g % 2
        models[seat] = MODEL_POLICY
        models[1 - seat] = opponent_model
        r, diff = play_match(state, weights, models, rng, feats, probs)
        if r[seat] == 1.0:
            counts[0] += 1
        elif r[seat] == 0.5:
            counts[1] += 1
        else:
            counts[2] += 1
        diff_sum += diff if seat == 0 else -diff
    return counts, diff_sum / games


def evaluate_policy(cards, start_food, weights, opponent_model, games, rng):
    """Results of the policy (seat alternating) against ``opponent_model``
    (MODEL_*) over ``games`` games dealt from ``rng``: int64[3] (wins, ties,
    losses) and the policy's mean score difference."""
    return _evaluate(empty_state(np.ascontiguousarray(cards)), int(start_food),
                     np.asarray(weights, dtype=np.float64), int(opponent_model), int(games), rng)


PositiveInt = Annotated[int, Field(ge=1)]


@config_class
class TrainConfig:
    """Hyperparameters of :func:`train_policy` (logged whole to MLflow by the job)."""

    iterations: PositiveInt = 300
    """Gradient steps."""
    games_per_iteration: PositiveInt = 200
    """Games per gradient step (the public project used 100)."""
    learning_rate: Annotated[Real, Field(gt=0, le=10)] = 0.05
    """Adam step size."""
    opponent: Literal["random", "self"] = "random"
    """``random``: the learner plays uniform random moves; ``self``: self-play."""
    score_weight: Annotated[Real, Field(ge=0, le=1)] = 0.02
    """Weight of the score difference added to the 1 / 0.5 / 0 result as reward."""
    eval_every: PositiveInt = 25
    """Evaluate against random every this many iterations (the learning curve)."""
    eval_games: PositiveInt = 400
    """Games per evaluation."""
    seed: int = 0
    """Seed of the training games and evaluations."""
    card_seed: int = 2026
    """Card set (the game's ``card_seed``)."""
    cards_csv: CardsCsv = None
    """A card set file instead of the generated set (the game's ``cards_csv``: columns
    ``points``, ``cost``), e.g. the public project's card list."""
    final_eval_games: PositiveInt = 1000
    """Games of the final evaluation against each kind of random player (flat over the
    legal actions, and action type first), reported with 95% intervals."""
    start_food: int = 3
    """Food each player starts with (the game's ``start_food``)."""


def train_policy(config: TrainConfig, cards: np.ndarray, progress=None):
    """Train the policy; returns ``(weights, curve)`` where ``curve`` is a list of
    ``{"iteration", "train_result", "eval_win_rate", "eval_score_diff",
    "eval_typed_win_rate", "eval_typed_score_diff"}`` rows (evaluation rows, against
    the flat random player and the action-type-first one, every ``eval_every``
    iterations and at the end)."""
    rng = make_rng(np.random.SeedSequence([config.seed, 1]))
    eval_rng = make_rng(np.random.SeedSequence([config.seed, 2]))
    weights = np.zeros(N_FEATURES, dtype=np.float64)
    grad = np.zeros(N_FEATURES, dtype=np.float64)
    state = empty_state(np.ascontiguousarray(cards))
    m = np.zeros(N_FEATURES)
    v = np.zeros(N_FEATURES)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    curve = []
    for it in range(1, config.iterations + 1):
        result = reinforce_batch(state, config.start_food, weights, config.games_per_iteration,
                                 config.opponent == "self", float(config.score_weight), rng, grad)
        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad * grad
        m_hat = m / (1 - beta1 ** it)
        v_hat = v / (1 - beta2 ** it)
        weights += config.learning_rate * m_hat / (np.sqrt(v_hat) + eps)  # gradient ascent
        row = {"iteration": it, "train_result": float(result)}
        if it % config.eval_every == 0 or it == config.iterations:
            counts, diff = evaluate_policy(cards, config.start_food, weights, MODEL_RANDOM,
                                           config.eval_games, eval_rng)
            row["eval_win_rate"] = float(counts[0] / config.eval_games)
            row["eval_score_diff"] = float(diff)
            counts, diff = evaluate_policy(cards, config.start_food, weights, MODEL_TYPED_RANDOM,
                                           config.eval_games, eval_rng)
            row["eval_typed_win_rate"] = float(counts[0] / config.eval_games)
            row["eval_typed_score_diff"] = float(diff)
        curve.append(row)
        if progress is not None:
            progress(row)
    return weights, curve


__all__ = ["BirdsPolicyAgent", "BirdsPolicyConfig", "TrainConfig", "evaluate_policy",
           "play_match", "reinforce_batch", "train_policy", "MODEL_GREEDY", "MODEL_RANDOM",
           "MODEL_POLICY", "MODEL_TYPED_RANDOM"]
