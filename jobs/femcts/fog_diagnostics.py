"""How FEMCTS and MCTS play under fog: measured per view range (issue 27).

Plays a study spec's games in this process (boards, seats and seeds exactly as
``arena run`` plans them; each series starts from the seats' seed populations
and carries what the agents learn from game to game, as a study does) and
reports per view range, as JSON:

- ``rollouts``: at every ``--sample-every``-th decision of a FEMCTS or MCTS
  seat, ``--rollouts`` rollouts of that agent's own rollout policy from the
  agent's search root (its model of the observation: ``prepare_search``), with
  the population it holds at that moment (FEMCTS: each rollout uses the next
  individual) and a generator of its own (the game is not disturbed), to the
  agent's rollout depth: the share of the agent's own rollout actions that move,
  stop or bomb; the share of moves whose target cell is unseen (FOG in the
  rollout's state); the share of rollouts in which the agent dies; the mean of
  each feature over rollout steps (FEMCTS), and the share of steps where a
  feature's object is absent;
- ``played``: the actions the agents played in the game (move / stop / bomb),
  and the moves into a cell that was FOG in their observation;
- ``deaths``: per agent, deaths by cause: ``collapse`` (its cell turned rigid),
  ``walked_into_flames`` (its move's target held flames before the tick),
  ``own_bomb`` (it would have lived through the tick without its own bombs),
  ``other`` (an enemy's bomb, or a chain that needed both);
- ``results``: W / T / L and games per agent;
- ``death_ticks`` (per agent, the tick of every death) and ``survival`` (the
  share of the agent's games in which it is still alive at ticks 100, 300,
  500, 575, 650, 725; the collapse rings fall at 500, 575, 650, 725);
- ``collapse`` (issue 38): per agent and collapse tick T (500, 575, 650,
  725: rings 0, 1, 2, 3 turn rigid), the games in which it is alive 12 ticks
  before T (one rollout horizon), in which it is then still on a ring that T
  removes (``at_risk``), in which such an agent gets off in time
  (``escaped``), and its collapse deaths at T after a move that bounced off a
  wall or wood it walked at (``died_after_blocked_move``) or not;
- ``decisions`` (issue 38): per FEMCTS or MCTS seat, over all its searched
  decisions: the chosen root child's share of the root's visits, the share of
  decisions in which the chosen child is not the best-mean child (what the root
  recommendation changes), in which every expanded child's mean value is below
  -0.5 (the search sees death whatever it does) and in which the chosen child's
  mean is at least 0.05 (it sees a gain: wood, a kill, a power-up); the mean of
  the chosen child's value;
- ``view`` (issue 38, FEMCTS seats): the features of the agent's own
  observation at every decision (what its population is applied to at the
  root): per feature, the share of decisions in which its object is in view,
  the entries (absent at the previous decision, in view now) and exits per 100
  decisions, the mean value at entry (the jump from the absent value, at the
  view square's edge when the object walks in) and at exit; the population's
  probability of the bomb action at the root (mean over individuals), overall
  and with each feature's object in view or not;
- ``population_drift`` (FEMCTS seats): at the end of each series, the largest
  and the mean absolute change of a weight since the series' start (how far
  evolution moved the population that the series carried).

Rollouts start at the root, not at the tree leaves the search rolls out from
(one to three ticks deeper), so these are the rollout policy's behaviour on
the positions the agent faced, not a replay of its search::

    python -m jobs.femcts.fog_diagnostics jobs/femcts/7_po_ffa.toml --view-range 0,2,4 \\
        --boards 10 --games-per-board 1 [--set lineup.0.params.fog_moves=\\"open\\"] [--out FILE]
    python -m jobs.femcts.fog_diagnostics summary FILE [FILE ...]   # one Markdown table, summed
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict

import numpy as np

MOVE, STOP_, BOMB_ = "move", "stop", "bomb"


def _kind(action: int) -> str:
    return STOP_ if action == 0 else (BOMB_ if action == 5 else MOVE)


class _Counter:
    """Accumulates the rollout statistics of one agent label at one view range."""

    def __init__(self):
        self.actions = defaultdict(int)
        self.moves_into_fog = 0
        self.rollouts = 0
        self.rollout_deaths = 0
        self.steps = 0
        self.feature_sum = None
        self.feature_absent = None
        self.decisions = 0
        self.root_feature_sum = None

    def as_dict(self, feature_names):
        n_act = sum(self.actions.values())
        moves = self.actions[MOVE]
        out = {
            "decisions_sampled": self.decisions,
            "rollouts": self.rollouts,
            "rollout_steps": self.steps,
            "action_share": {k: round(self.actions[k] / max(n_act, 1), 4) for k in (MOVE, STOP_, BOMB_)},
            "moves_into_fog_share_of_moves": round(self.moves_into_fog / max(moves, 1), 4),
            "moves_into_fog_per_rollout": round(self.moves_into_fog / max(self.rollouts, 1), 4),
            "rollout_death_share": round(self.rollout_deaths / max(self.rollouts, 1), 4),
        }
        if self.feature_sum is not None:
            out["feature_mean"] = {n: round(float(v) / max(self.steps, 1), 4)
                                   for n, v in zip(feature_names, self.feature_sum)}
            out["feature_absent_share"] = {n: round(float(v) / max(self.steps, 1), 4)
                                           for n, v in zip(feature_names, self.feature_absent)}
            out["root_feature_mean"] = {n: round(float(v) / max(self.decisions, 1), 4)
                                        for n, v in zip(feature_names, self.root_feature_sum)}
        return out


SURVIVAL_TICKS = (100, 300, 500, 575, 650, 725)
#: Ticks before a collapse at which an agent's ring is looked at (the rollout depth).
COLLAPSE_HORIZON = 12


class _DecisionCounter:
    """Root statistics of one search agent's decisions (issue 38)."""

    def __init__(self):
        self.decisions = 0
        self.visit_share = 0.0
        self.not_best_mean = 0
        self.doomed = 0
        self.gain = 0
        self.chosen_value = 0.0

    def add(self, tree, action: int) -> None:
        """Count the search just made (``tree`` after the decision, ``action`` played)."""
        from agents.search import ROOT_INDEX

        children = np.asarray(tree.children[ROOT_INDEX])
        visits = np.array([tree.node_visits[c] if c >= 0 else 0 for c in children], dtype=np.float64)
        if visits.sum() <= 0 or children[action] < 0:
            return
        means = np.array([tree.node_value_sum[c] / tree.node_visits[c] if c >= 0 and tree.node_visits[c] > 0
                          else np.nan for c in children])
        self.decisions += 1
        self.visit_share += visits[action] / visits.sum()
        chosen = means[action]
        self.not_best_mean += int(chosen < np.nanmax(means) - 1e-12)
        self.doomed += int(np.nanmax(means) < -0.5)
        self.gain += int(chosen >= 0.05)
        self.chosen_value += chosen

    def as_dict(self):
        n = max(self.decisions, 1)
        return {"decisions": self.decisions, "chosen_visit_share": round(self.visit_share / n, 4),
                "not_best_mean_share": round(self.not_best_mean / n, 4),
                "all_children_below_minus_half_share": round(self.doomed / n, 4),
                "chosen_value_at_least_0.05_share": round(self.gain / n, 4),
                "chosen_value_mean": round(self.chosen_value / n, 4)}


class _ViewCounter:
    """A FEMCTS seat's features of its own observation, decision by decision (issue 38)."""

    def __init__(self, names):
        k = len(names)
        self.names = names
        self.decisions = 0
        self.in_view = np.zeros(k)
        self.entries = np.zeros(k)
        self.exits = np.zeros(k)
        self.entry_value = np.zeros(k)
        self.exit_value = np.zeros(k)
        self.p_bomb = 0.0
        self.p_bomb_in_view = np.zeros(k)
        self.p_bomb_not_in_view = np.zeros(k)
        self.previous = None  # (present, values) at the previous decision of this game

    def add(self, agent, observation) -> None:
        from agents.evolution import policy_probabilities
        from agents.pommerman.features import state_features

        index = agent.config.feature_index
        if index.shape[0] == 0:
            return
        raw = np.zeros(8)
        state_features(observation, agent.seat, raw, -1.0)  # -1: the object is not in view
        present = raw[index] >= 0.0
        absent = float(agent.config.absent_closeness)
        values = np.where(present, raw[index], absent)
        closeness = np.isin(index, [2, 3, 4, 5, 6, 7])
        present = present | ~closeness  # bomb strength and kick are always known
        probabilities = np.zeros(agent.population.shape[1])
        scale, offset = agent.config.softmax_scale, agent.config.softmax_offset
        p_bomb = 0.0
        for weights in agent.population:
            policy_probabilities(weights, values, scale, offset, probabilities)
            p_bomb += probabilities[-1]
        p_bomb /= agent.population.shape[0]
        self.decisions += 1
        self.in_view += present
        self.p_bomb += p_bomb
        self.p_bomb_in_view += np.where(present, p_bomb, 0.0)
        self.p_bomb_not_in_view += np.where(present, 0.0, p_bomb)
        if self.previous is not None:
            was, was_values = self.previous
            enter = present & ~was
            leave = was & ~present
            self.entries += enter
            self.exits += leave
            self.entry_value += np.where(enter, values, 0.0)
            self.exit_value += np.where(leave, was_values, 0.0)
        self.previous = (present, values)

    def as_dict(self):
        n = max(self.decisions, 1)
        out = {"decisions": self.decisions, "p_bomb_at_root": round(self.p_bomb / n, 4)}
        for j, name in enumerate(self.names):
            inv = self.in_view[j]
            out[name] = {
                "in_view_share": round(inv / n, 4),
                "entries_per_100": round(100 * self.entries[j] / n, 2),
                "exits_per_100": round(100 * self.exits[j] / n, 2),
                "value_at_entry": round(self.entry_value[j] / max(self.entries[j], 1), 4),
                "value_at_exit": round(self.exit_value[j] / max(self.exits[j], 1), 4),
                "p_bomb_in_view": round(self.p_bomb_in_view[j] / max(inv, 1), 4) if inv else None,
                "p_bomb_not_in_view": round(self.p_bomb_not_in_view[j] / max(n - inv, 1), 4)
                if n - inv else None,
            }
        return out


def sample_rollouts(agent, observation, counter: _Counter, n_rollouts: int, rng) -> None:
    """``n_rollouts`` rollouts of ``agent``'s rollout policy from its model of
    ``observation``, counted into ``counter`` (the agent's state is not changed)."""
    from agents.pommerman.search_model import advance, prepare_search, safe_random_action, search_over
    from agents.pommerman.features import FEATURE_NAMES, new_feature_cache, prepare_feature_cache
    from agents.pommerman.femcts import FEMCTSAgent, policy_action, rollout_features
    from games.pommerman.kernels import (
        A_ALIVE, A_COL, A_ROW, ACTION_DCOL, ACTION_DROW, BOARD_SIZE, FOG, copy_into, copy_state,
    )

    seat = agent.seat
    root = copy_state(observation)
    hidden, joint, n_hidden, _ = prepare_search(root, observation, agent.quirks,
                                                agent.model_max_wood(observation))
    femcts = isinstance(agent, FEMCTSAgent)
    c = agent.config
    depth = int(c.rollout_depth)
    state = copy_state(root)
    if femcts:
        index = agent.config.feature_index
        cache = new_feature_cache()
        if index.shape[0] > 0:
            prepare_feature_cache(cache, root, depth, index)
        all_f = np.zeros(8)
        f = np.zeros(max(index.shape[0], 1))
        probs = np.zeros(agent.population.shape[1])
        absent = float(c.absent_closeness)
        if counter.feature_sum is None:
            counter.feature_sum = np.zeros(len(index))
            counter.feature_absent = np.zeros(len(index))
            counter.root_feature_sum = np.zeros(len(index))
        rollout_features(root, seat, cache, all_f, absent)
        counter.root_feature_sum += all_f[index]
    counter.decisions += 1
    # where an iteration stops: FEMCTS's own switches (mcts_switches), MCTS's profile
    stop_quirks = agent.search_quirks if femcts else agent.quirks
    for k in range(n_rollouts):
        copy_into(state, root)
        steps = 0
        while steps < depth and not search_over(state, seat, stop_quirks):
            if femcts:
                rollout_features(state, seat, cache, all_f, absent)
                vals = all_f[index]
                counter.feature_sum += vals
                # absent: the feature's value is the absent value and no object is at distance
                # giving it (closeness values are < 1 except at d = 0, never equal to 0)
                counter.feature_absent += (vals == absent) & np.isin(index, [2, 3, 4, 5, 6, 7])
                weights = agent.population[k % agent.population.shape[0]]
                action = policy_action(state, seat, weights, agent.rollout_policy, cache, all_f, f, probs, rng)
            else:
                action = safe_random_action(state, seat, rng, agent.quirks)
            kind = _kind(int(action))
            # a dead searcher's draws (with mcts_switches = "off" the rollout plays on) are not counted
            alive = bool(state.agents[seat, A_ALIVE])
            if alive:
                counter.actions[kind] += 1
            if alive and kind == MOVE:
                r = int(state.agents[seat, A_ROW]) + int(ACTION_DROW[action])
                col = int(state.agents[seat, A_COL]) + int(ACTION_DCOL[action])
                if 0 <= r < BOARD_SIZE and 0 <= col < BOARD_SIZE and state.board[r * BOARD_SIZE + col] == FOG:
                    counter.moves_into_fog += 1
            advance(state, seat, int(action), joint, hidden, n_hidden, rng)
            steps += 1
        counter.steps += steps
        counter.rollouts += 1
        if not state.agents[seat, A_ALIVE]:
            counter.rollout_deaths += 1
    counter.feature_names = [FEATURE_NAMES[i] for i in index] if femcts else []


def death_cause(before, actions, seat) -> str:
    """Why ``seat`` died in the tick from state ``before`` with joint ``actions``."""
    from games.pommerman.kernels import (
        A_ALIVE, A_COL, A_ROW, ACTION_DCOL, ACTION_DROW, B_COL, B_OWNER, B_ROW, BOARD_SIZE, BOMB,
        FLAMES, M_N_BOMBS, RIGID, copy_state, step,
    )

    after = copy_state(before)
    step(after, np.asarray(actions, dtype=np.int64))
    r, c = int(before.agents[seat, A_ROW]), int(before.agents[seat, A_COL])
    a = int(actions[seat])
    tr, tc = r + int(ACTION_DROW[a]), c + int(ACTION_DCOL[a])
    if after.board[r * BOARD_SIZE + c] == RIGID or (
            0 <= tr < BOARD_SIZE and 0 <= tc < BOARD_SIZE and after.board[tr * BOARD_SIZE + tc] == RIGID
            and before.board[tr * BOARD_SIZE + tc] != RIGID):
        return "collapse"
    if a != 0 and 0 <= tr < BOARD_SIZE and 0 <= tc < BOARD_SIZE and before.board[tr * BOARD_SIZE + tc] == FLAMES:
        return "walked_into_flames"
    without = copy_state(before)
    keep = [b for b in range(int(before.meta[M_N_BOMBS])) if int(before.bombs[b, B_OWNER]) != seat]
    if len(keep) < int(before.meta[M_N_BOMBS]):
        without.bombs[:len(keep)] = before.bombs[keep]
        without.meta[M_N_BOMBS] = len(keep)
        for b in range(int(before.meta[M_N_BOMBS])):
            if int(before.bombs[b, B_OWNER]) == seat:
                cell = int(before.bombs[b, B_ROW]) * BOARD_SIZE + int(before.bombs[b, B_COL])
                if without.board[cell] == BOMB:
                    without.board[cell] = 0  # PASSAGE
        step(without, np.asarray(actions, dtype=np.int64))
        if without.agents[seat, A_ALIVE]:
            return "own_bomb"
    return "other"


def _rotation_index(plan) -> dict[int, int]:
    """Each game's position among the games of its (condition, board), by game index:
    the seat rotation ``--games-per-board`` counts (whatever the series)."""
    by_board: dict[tuple[int, int], list[int]] = {}
    for series in plan:
        for t in series.games:
            by_board.setdefault((t.condition, t.board_seed), []).append(t.game_index)
    return {g: k for games in by_board.values() for k, g in enumerate(sorted(games))}


def run(spec, view_ranges, boards, games_per_board, sample_every, n_rollouts, seed=0, log=sys.stderr,
        first_board=0):
    """Play the selected games; the per-view-range report (a dict)."""
    from cluster.spec.plan import board_seed_sequence, plan_study, seat_seed_sequence
    from cluster.run.play import build_agents, load_learned
    from cluster.spec.seed_populations import load_populations
    from agents.pommerman.search_model import can_act
    from agents.pommerman.features import FEATURE_NAMES
    from agents.pommerman.femcts import FEMCTSAgent
    from agents.pommerman.mcts import MCTSAgent
    from games.pommerman.kernels import (
        A_ALIVE, A_COL, A_ROW, A_STATUS, ACTION_DCOL, ACTION_DROW, BOARD_SIZE, COLLAPSE_START,
        COLLAPSE_STEP, FOG, M_STEP, STATUS_LOSS,
        STATUS_TIE, STATUS_WIN, copy_state,
    )
    from games.registry import make_game
    from games.rng import make_rng

    names = {STATUS_WIN: "WIN", STATUS_TIE: "TIE", STATUS_LOSS: "LOSS"}
    seeds = load_populations(spec)
    report = {}
    rng = make_rng(np.random.SeedSequence(seed))
    plan = plan_study(spec)
    rotation = _rotation_index(plan)
    for series in plan:
        first = series.games[0]
        vr = spec.design.conditions[first.condition].get("view_range", spec.game_config.view_range)
        if vr not in view_ranges:
            continue
        tasks = [t for t in series.games if first_board <= t.board_seed < first_board + boards
                 and rotation[t.game_index] < games_per_board]
        if not tasks:
            continue
        agents = build_agents(spec, first.condition)
        load_learned(spec, agents, seeds)
        rep = report.setdefault(str(vr), {"games": 0, "rollouts": {}, "played": {}, "deaths": {},
                                          "results": {}, "seconds": 0.0, "death_ticks": {},
                                          "decisions": {}, "view": {}, "population_drift": {},
                                          "collapse": {}})
        # one set of counters per view range, over all its series (one series a range when
        # the population is carried; one a game with --unset design.seeds_per_set)
        counters = rep.setdefault("_rollout_counters", {})
        decision_counters = rep.setdefault("_decision_counters", {})
        view_counters = rep.setdefault("_view_counters", {})
        start_population = {i: a.population.copy() for i, a in enumerate(agents)
                            if isinstance(a, FEMCTSAgent)}
        for task in tasks:
            t0 = time.perf_counter()
            game = make_game(spec.game, spec.game_config_for(task.condition))
            game.reset(board_seed_sequence(spec.seed, task), board_index=task.board_seed)
            seats = [agents[i] for i in task.seat_lineup]
            labels = [spec.lineup[i].label for i in task.seat_lineup]
            for s, agent in enumerate(seats):
                agent.begin_game(s, seat_seed_sequence(spec.seed, task, s))
            for v in view_counters.values():
                v.previous = None
            n = game.num_players
            decision = 0
            risky = {}  # seat -> collapse stages it is on a doomed ring for
            while not game.done:
                actions = [0] * n
                for s in range(n):
                    if not game.is_alive(s):
                        continue
                    obs = game.observation(s)
                    agent = seats[s]
                    if isinstance(agent, (FEMCTSAgent, MCTSAgent)) and decision % sample_every == 0:
                        sample_rollouts(agent, obs, counters.setdefault(labels[s], _Counter()), n_rollouts, rng)
                    a = int(agent.act(obs))
                    actions[s] = a
                    if isinstance(agent, (FEMCTSAgent, MCTSAgent)) and can_act(obs, s):
                        decision_counters.setdefault(labels[s], _DecisionCounter()).add(agent.search_tree, a)
                    if isinstance(agent, FEMCTSAgent) and can_act(obs, s):
                        feature_names = [FEATURE_NAMES[i] for i in agent.config.feature_index]
                        view_counters.setdefault(labels[s], _ViewCounter(feature_names)).add(agent, obs)
                    played = rep["played"].setdefault(labels[s], {MOVE: 0, STOP_: 0, BOMB_: 0, "into_fog": 0})
                    played[_kind(a)] += 1
                    if _kind(a) == MOVE:
                        r = int(obs.agents[s, A_ROW]) + int(ACTION_DROW[a])
                        c = int(obs.agents[s, A_COL]) + int(ACTION_DCOL[a])
                        if 0 <= r < BOARD_SIZE and 0 <= c < BOARD_SIZE and obs.board[r * BOARD_SIZE + c] == FOG:
                            played["into_fog"] += 1
                before = copy_state(game.state)
                tick = int(before.meta[M_STEP])
                for k in range(4):
                    if tick == COLLAPSE_START + k * COLLAPSE_STEP - COLLAPSE_HORIZON:
                        for s in range(n):
                            if before.agents[s, A_ALIVE]:
                                r, c = int(before.agents[s, A_ROW]), int(before.agents[s, A_COL])
                                ring = min(r, c, BOARD_SIZE - 1 - r, BOARD_SIZE - 1 - c)
                                col_k = rep["collapse"].setdefault(labels[s], {}).setdefault(
                                    str(COLLAPSE_START + k * COLLAPSE_STEP),
                                    {"alive_before": 0, "at_risk": 0, "escaped": 0,
                                     "died_after_blocked_move": 0, "died_otherwise": 0})
                                col_k["alive_before"] += 1
                                if ring <= k:
                                    col_k["at_risk"] += 1
                                    risky.setdefault(s, []).append(k)
                game.step(actions)
                for k in range(4):
                    t_k = COLLAPSE_START + k * COLLAPSE_STEP
                    if tick == t_k:  # the step from tick t_k collapses ring k
                        for s in list(risky):
                            if k in risky[s] and game.state.agents[s, A_ALIVE]:
                                rep["collapse"][labels[s]][str(t_k)]["escaped"] += 1
                                risky[s].remove(k)
                for s in range(n):
                    if before.agents[s, A_ALIVE] and not game.state.agents[s, A_ALIVE] and \
                            death_cause(before, actions, s) == "collapse":
                        t_key = str(tick)
                        col_k = rep["collapse"].setdefault(labels[s], {}).setdefault(
                            t_key, {"alive_before": 0, "at_risk": 0, "escaped": 0,
                                    "died_after_blocked_move": 0, "died_otherwise": 0})
                        a = int(actions[s])
                        r = int(before.agents[s, A_ROW]) + int(ACTION_DROW[a])
                        c = int(before.agents[s, A_COL]) + int(ACTION_DCOL[a])
                        blocked = a not in (0, 5) and not (
                            0 <= r < BOARD_SIZE and 0 <= c < BOARD_SIZE
                            and int(game.state.agents[s, A_ROW]) == r and int(game.state.agents[s, A_COL]) == c)
                        col_k["died_after_blocked_move" if blocked else "died_otherwise"] += 1
                for s in range(n):
                    if before.agents[s, A_ALIVE] and not game.state.agents[s, A_ALIVE]:
                        d = rep["deaths"].setdefault(labels[s], defaultdict(int))
                        d[death_cause(before, actions, s)] += 1
                        rep["death_ticks"].setdefault(labels[s], []).append(int(before.meta[M_STEP]))
                decision += 1
            returns = np.asarray(game.returns(), dtype=np.float64)
            for s, agent in enumerate(seats):
                agent.end_game(game.observation(s), returns)
                res = rep["results"].setdefault(labels[s], {"games": 0, "WIN": 0, "TIE": 0, "LOSS": 0, "died": 0})
                res["games"] += 1
                res[names.get(int(game.state.agents[s, A_STATUS]), "LOSS")] += 1
                res["died"] += int(not game.state.agents[s, A_ALIVE])
            rep["games"] += 1
            rep["seconds"] += time.perf_counter() - t0
            print(f"view {vr} board {task.board_seed} game {task.game_index}: "
                  + " ".join(f"{labels[s]}={names.get(int(game.state.agents[s, A_STATUS]), '?')}"
                             for s in range(n)) + f" ({time.perf_counter() - t0:.0f} s)",
                  file=log, flush=True)
        for i, pop in start_population.items():
            change = np.abs(agents[i].population - pop)
            rep["population_drift"].setdefault(spec.lineup[i].label, []).append(
                {"max_abs": float(change.max()), "mean_abs": float(change.mean())})
    for rep in report.values():
        for label, counter in rep.pop("_rollout_counters").items():
            rep["rollouts"][label] = counter.as_dict(getattr(counter, "feature_names", []))
        for label, counter in rep.pop("_decision_counters").items():
            rep["decisions"][label] = counter.as_dict()
        for label, counter in rep.pop("_view_counters").items():
            rep["view"][label] = counter.as_dict()
        rep["deaths"] = {k: dict(v) for k, v in rep["deaths"].items()}
        rep["survival"] = {label: {str(t): round(1.0 - sum(d < t for d in rep["death_ticks"].get(label, []))
                                                / res["games"], 3) for t in SURVIVAL_TICKS}
                           for label, res in rep["results"].items()}
        rep["seconds"] = round(rep["seconds"], 1)
    return report


def _agent_rows(reports):
    """Per (view range, agent label): counts and rates summed over the reports
    (the JSON of :func:`run`, e.g. several board ranges of one setting)."""
    rows = {}
    for report in reports:
        for vr, rep in report["by_view_range"].items():
            for label, res in rep["results"].items():
                row = rows.setdefault((vr, label), defaultdict(float))
                for k in ("games", "WIN", "TIE", "LOSS", "died"):
                    row[k] += res[k]
                for cause, n in rep["deaths"].get(label, {}).items():
                    row["death_" + cause] += n
                row["death_ticks"] = list(row.get("death_ticks", [])) + rep["death_ticks"].get(label, [])
                played = rep["played"].get(label, {})
                row["decisions"] += sum(played.get(k, 0) for k in (MOVE, STOP_, BOMB_))
                row["bombs"] += played.get(BOMB_, 0)
                ro = rep["rollouts"].get(label)
                if ro:
                    row["rollouts"] += ro["rollouts"]
                    row["rollout_bomb"] += ro["action_share"][BOMB_] * ro["rollouts"]
                    row["rollout_move"] += ro["action_share"][MOVE] * ro["rollouts"]
                    row["rollout_deaths"] += ro["rollout_death_share"] * ro["rollouts"]
                de = rep.get("decisions", {}).get(label)
                if de:
                    n = de["decisions"]
                    row["searched"] += n
                    row["gain"] += de["chosen_value_at_least_0.05_share"] * n
                    row["doomed"] += de["all_children_below_minus_half_share"] * n
                    row["not_best_mean"] += de["not_best_mean_share"] * n
                    row["chosen_value"] += de["chosen_value_mean"] * n
                for t, c in rep.get("collapse", {}).get(label, {}).items():
                    for k, v in c.items():
                        row[f"collapse_{t}_{k}"] += v
    return rows


def summary_table(reports) -> str:
    """A Markdown table per view range and agent from :func:`run` reports (summed)."""
    rows = _agent_rows(reports)
    out = ["| range | agent | games | W/T/L | died (collapse) | median death tick | bombs per 100 decisions "
           "| rollout bomb / move share | rollout deaths | chosen value >= 0.05 | chosen mean value "
           "| chosen != best mean | on a doomed ring 12 ticks before a collapse / escaped |",
           "|---|---|---:|---|---|---:|---:|---|---:|---:|---:|---:|---|"]
    for (vr, label), r in sorted(rows.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        ticks = sorted(r["death_ticks"])
        median = ticks[len(ticks) // 2] if ticks else "-"
        n_ro, n_de = max(r["rollouts"], 1), max(r["searched"], 1)
        at_risk = sum(v for k, v in r.items() if k.startswith("collapse_") and k.endswith("_at_risk"))
        escaped = sum(v for k, v in r.items() if k.startswith("collapse_") and k.endswith("_escaped"))
        searched = r["searched"] > 0
        out.append(
            f"| {vr} | {label} | {int(r['games'])} | {int(r['WIN'])}/{int(r['TIE'])}/{int(r['LOSS'])} "
            f"| {int(r['died'])} ({int(r['death_collapse'])}) | {median} "
            f"| {100 * r['bombs'] / max(r['decisions'], 1):.2f} "
            + (f"| {r['rollout_bomb'] / n_ro:.2f} / {r['rollout_move'] / n_ro:.2f} | {r['rollout_deaths'] / n_ro:.2f} "
               if r["rollouts"] else "| - | - ")
            + (f"| {r['gain'] / n_de:.3f} | {r['chosen_value'] / n_de:+.3f} | {r['not_best_mean'] / n_de:.3f} "
               if searched else "| - | - | - ")
            + f"| {int(at_risk)} / {int(escaped)} |")
    return "\n".join(out)


def _ranges(text: str) -> list[int]:
    if ".." in text:
        lo, hi = text.split("..")
        return list(range(int(lo), int(hi) + 1))
    return [int(x) if x.strip().lstrip("-").isdigit() else x.strip() for x in text.split(",")]


def main(argv=None) -> int:
    from jobs.spec import SpecError, load_spec

    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "summary":
        # python -m jobs.femcts.fog_diagnostics summary A.json [B.json ...]: one Markdown table
        reports = []
        for path in argv[1:]:
            try:
                with open(path) as fh:
                    report = json.load(fh)
                summary_table([report])  # a report of this program (else KeyError, TypeError, ...)
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
                print(f"fog_diagnostics summary: {path}: not a report of this program "
                      f"({type(exc).__name__}: {exc})", file=sys.stderr)
                return 2
            reports.append(report)
        print(summary_table(reports))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spec", nargs="?", default="jobs/femcts/7_po_ffa.toml")
    ap.add_argument("--view-range", default="0,2,4",
                    help="e.g. 0,2,4 or 0..4 (conditions of the spec); 'full' with "
                         "--set 'design.vary.view_range=[\"full\"]'")
    ap.add_argument("--boards", type=int, default=10, help="N board seeds from --first-board")
    ap.add_argument("--first-board", type=int, default=0)
    ap.add_argument("--games-per-board", type=int, default=1, help="the first K seat rotations of each board")
    ap.add_argument("--sample-every", type=int, default=10, help="sample rollouts at every k-th tick")
    ap.add_argument("--rollouts", type=int, default=20, help="rollouts per sampled decision")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--unset", dest="unsets", action="append", default=[], metavar="KEY",
                    help="remove a key from the spec, as `arena run --unset` (e.g. "
                         "--unset design.seeds_per_set --set 'design.series_by=\"game\"')")
    ap.add_argument("--out", help="also write the JSON here")
    args = ap.parse_args(argv)
    try:  # bad input: one line naming the field or file, before any game
        try:
            view_ranges = _ranges(args.view_range)
        except ValueError:
            raise ValueError(f"--view-range: expected ranges such as 0,2,4 or 0..4, got {args.view_range!r}") from None
        spec = load_spec(args.spec, args.overrides, unsets=args.unsets)
        if spec.game != "pommerman":
            raise ValueError(f"{args.spec}: game: fog_diagnostics plays Pommerman specs only")
    except ValueError as exc:  # SpecError is a ValueError
        print(f"fog_diagnostics: {exc}", file=sys.stderr)
        return 2
    report = {"spec": args.spec, "overrides": args.overrides, "unsets": args.unsets, "boards": args.boards,
              "first_board": args.first_board,
              "games_per_board": args.games_per_board,
              "by_view_range": run(spec, view_ranges, args.boards, args.games_per_board,
                                   args.sample_every, args.rollouts, first_board=args.first_board)}
    text = json.dumps(report, indent=1)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
