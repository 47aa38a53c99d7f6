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
- ``results``: W / T / L and games per agent.

Rollouts start at the root, not at the tree leaves the search rolls out from
(one to three ticks deeper), so these are the rollout policy's behaviour on
the positions the agent faced, not a replay of its search::

    python -m jobs.tools.fog_diagnostics jobs/femcts/7_po_ffa.toml --view-range 0,2,4 \\
        --boards 10 --games-per-board 1 [--set lineup.0.params.fog_moves=\\"open\\"] [--out FILE]
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
        index = agent._feature_index
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
                action = policy_action(state, seat, weights, index, agent._scale, agent._offset,
                                       int(c.n_effective), cache, all_f, f, probs, rng,
                                       agent._fog_blocks, absent)
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
    counter.feature_names = [FEATURE_NAMES[i] for i in agent._feature_index] if femcts else []


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


def run(spec, view_ranges, boards, games_per_board, sample_every, n_rollouts, seed=0, log=sys.stderr,
        first_board=0):
    """Play the selected games; the per-view-range report (a dict)."""
    from cluster.spec.plan import board_seed_sequence, plan_study, seat_seed_sequence
    from cluster.run.play import build_agents, load_learned
    from cluster.spec.seed_populations import load_populations
    from agents.pommerman.femcts import FEMCTSAgent
    from agents.pommerman.mcts import MCTSAgent
    from games.pommerman.kernels import (
        A_ALIVE, A_COL, A_ROW, A_STATUS, ACTION_DCOL, ACTION_DROW, BOARD_SIZE, FOG, STATUS_LOSS,
        STATUS_TIE, STATUS_WIN, copy_state,
    )
    from games.registry import make_game
    from games.rng import make_rng

    names = {STATUS_WIN: "WIN", STATUS_TIE: "TIE", STATUS_LOSS: "LOSS"}
    seeds = load_populations(spec)
    report = {}
    rng = make_rng(np.random.SeedSequence(seed))
    for series in plan_study(spec):
        first = series.games[0]
        vr = spec.design.conditions[first.condition].get("view_range", spec.game_config.view_range)
        if vr not in view_ranges:
            continue
        tasks = [t for t in series.games if first_board <= t.board_seed < first_board + boards
                 and t.index_in_series % spec.design.games_per_seed < games_per_board]
        if not tasks:
            continue
        agents = build_agents(spec)
        load_learned(spec, agents, seeds)
        rep = report.setdefault(str(vr), {"games": 0, "rollouts": {}, "played": {}, "deaths": {},
                                          "results": {}, "seconds": 0.0})
        counters = {}
        for task in tasks:
            t0 = time.perf_counter()
            game = make_game(spec.game, spec.game_config_for(task.condition))
            game.reset(board_seed_sequence(spec.seed, task))
            seats = [agents[i] for i in task.seat_lineup]
            labels = [spec.lineup[i].label for i in task.seat_lineup]
            for s, agent in enumerate(seats):
                agent.begin_game(s, seat_seed_sequence(spec.seed, task, s))
            n = game.num_players
            decision = 0
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
                    played = rep["played"].setdefault(labels[s], {MOVE: 0, STOP_: 0, BOMB_: 0, "into_fog": 0})
                    played[_kind(a)] += 1
                    if _kind(a) == MOVE:
                        r = int(obs.agents[s, A_ROW]) + int(ACTION_DROW[a])
                        c = int(obs.agents[s, A_COL]) + int(ACTION_DCOL[a])
                        if 0 <= r < BOARD_SIZE and 0 <= c < BOARD_SIZE and obs.board[r * BOARD_SIZE + c] == FOG:
                            played["into_fog"] += 1
                before = copy_state(game.state)
                game.step(actions)
                for s in range(n):
                    if before.agents[s, A_ALIVE] and not game.state.agents[s, A_ALIVE]:
                        d = rep["deaths"].setdefault(labels[s], defaultdict(int))
                        d[death_cause(before, actions, s)] += 1
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
        for label, counter in counters.items():
            prev = rep["rollouts"].get(label)
            rep["rollouts"][label] = counter.as_dict(getattr(counter, "feature_names", []))
            assert prev is None
    for rep in report.values():
        rep["deaths"] = {k: dict(v) for k, v in rep["deaths"].items()}
        rep["seconds"] = round(rep["seconds"], 1)
    return report


def _ranges(text: str) -> list[int]:
    if ".." in text:
        lo, hi = text.split("..")
        return list(range(int(lo), int(hi) + 1))
    return [int(x) if x.strip().lstrip("-").isdigit() else x.strip() for x in text.split(",")]


def main(argv=None) -> int:
    from jobs.spec import load_spec

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
    ap.add_argument("--out", help="also write the JSON here")
    args = ap.parse_args(argv)
    spec = load_spec(args.spec, args.overrides)
    report = {"spec": args.spec, "overrides": args.overrides, "boards": args.boards,
              "first_board": args.first_board,
              "games_per_board": args.games_per_board,
              "by_view_range": run(spec, _ranges(args.view_range), args.boards, args.games_per_board,
                                   args.sample_every, args.rollouts, first_board=args.first_board)}
    text = json.dumps(report, indent=1)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
