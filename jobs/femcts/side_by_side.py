"""Arena next to the Java framework on the same boards: W/T/L and deaths per agent.

Plays a study spec's games in this process (plan, seats and seeds exactly as
``arena run`` would) and records, per seat, the framework-style result (the
java ruleset's per-agent status: WIN / TIE / LOSS), the tick the agent died
(if it did) and the bombs it laid; then prints them per agent with 95% Wilson
intervals next to a CSV measured with the framework (columns ``agent``,
``result``, ``died_at``, ``bombs``; one row per seat and game)::

    python -m jobs.femcts.side_by_side jobs/femcts/framework_side_by_side.toml \\
        --set game.view_range=0 --set game.boards_file=BOARDS.jsonl.gz \\
        --framework FRAMEWORK.csv [--out ARENA.csv]

Only for java-ruleset Pommerman specs.
"""
from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict

def play_side(spec) -> list[dict]:
    """Every game of ``spec``: one dict per seat (agent label, result, died_at, bombs, ...).

    The games are played by the cluster's game loop (:func:`cluster.run.play.play_recorded_game`:
    the acting players, the observations and seeds a study uses) and re-simulated from
    their records (:func:`cluster.replay.replay`) to count the bombs each seat laid."""
    from cluster.replay import replay
    from cluster.run.play import build_agents, play_recorded_game
    from cluster.spec.plan import plan_study
    from games.pommerman.kernels import (A_ALIVE, A_STATUS, B_LIFE, B_OWNER, M_N_BOMBS, M_STEP, STATUS_LOSS,
                                         STATUS_TIE, STATUS_WIN)

    names = {STATUS_WIN: "WIN", STATUS_TIE: "TIE", STATUS_LOSS: "LOSS"}
    agents = build_agents(spec)
    rows = []
    for series in plan_study(spec):
        for task in series.games:
            game_rows, _, record = play_recorded_game(spec, task, agents)
            if record is None:
                raise RuntimeError(f"game {task.game_index} failed: {game_rows[0]['error']}")
            n = record.num_players
            died = [None] * n
            bombs = [0] * n
            for step, game in replay(record):
                if step == 0:
                    continue
                st = game.state
                for b in range(int(st.meta[M_N_BOMBS])):
                    if st.bombs[b, B_LIFE] == 9 and st.bombs[b, B_OWNER] >= 0:
                        bombs[int(st.bombs[b, B_OWNER])] += 1
                for p in range(n):
                    if died[p] is None and not st.agents[p, A_ALIVE]:
                        died[p] = int(st.meta[M_STEP])
            st = game.state
            for seat in range(n):
                lineup = spec.lineup[task.seat_lineup[seat]]
                rows.append({
                    "board": task.board_seed, "game_index": task.game_index, "seat": seat,
                    "agent": lineup.label, "result": names.get(int(st.agents[seat, A_STATUS]), "INCOMPLETE"),
                    "died_at": "" if died[seat] is None else died[seat], "bombs": bombs[seat],
                    "ticks": int(st.meta[M_STEP]),
                    "profile": game_rows[seat].get("profile") or "",
                })
            print(f"game {task.game_index}: " + " ".join(
                f"{r['agent']}={r['result']}" for r in rows[-n:]), file=sys.stderr, flush=True)
    return rows


def summarise(rows) -> dict[str, dict]:
    """Per agent: games, W/T/L, deaths, bombs."""
    out: dict[str, dict] = defaultdict(lambda: {"n": 0, "WIN": 0, "TIE": 0, "LOSS": 0, "died": 0, "bombs": 0})
    for r in rows:
        s = out[str(r["agent"]).lower()]
        s["n"] += 1
        s[str(r["result"])] = s.get(str(r["result"]), 0) + 1
        s["died"] += str(r["died_at"]) != ""
        s["bombs"] += int(r["bombs"])
    return dict(out)


def _cell(k, n):
    from cluster.stats import wilson_interval

    lo, hi = wilson_interval(k, n) if n else (0.0, 1.0)
    return f"{k} [{100 * lo:.0f}-{100 * hi:.0f}%]"


def table(framework: dict, arena: dict) -> str:
    """Markdown table: per agent, framework vs Arena (counts with 95% Wilson intervals)."""
    from cluster.analysis.tables import markdown_table

    empty = {"n": 0, "WIN": 0, "TIE": 0, "LOSS": 0, "died": 0, "bombs": 0}
    rows = []
    for agent in sorted(set(framework) | set(arena)):
        f, a = framework.get(agent, empty), arena.get(agent, empty)
        rows.append([agent, f"{f['n']} / {a['n']}"]
                    + [_cell(side[key], side["n"]) for key in ("WIN", "TIE", "LOSS", "died") for side in (f, a)]
                    + [f"{f['bombs'] / max(f['n'], 1):.1f} / {a['bombs'] / max(a['n'], 1):.1f}"])
    header = ["agent", "games (fw / arena)", "wins fw", "wins arena", "ties fw", "ties arena", "losses fw",
              "losses arena", "deaths fw", "deaths arena", "bombs/game fw / arena"]
    return markdown_table(header, rows, "---")


FRAMEWORK_COLUMNS = ("agent", "result", "died_at", "bombs")


def read_framework(path) -> dict[str, dict]:
    """The framework's CSV (:data:`FRAMEWORK_COLUMNS`, one row per seat and game),
    summarised per agent; ValueError naming the file and the row for anything else."""
    try:
        with open(path, newline="") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in FRAMEWORK_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise ValueError(f"{path}: no column {', '.join(missing)} (needs {', '.join(FRAMEWORK_COLUMNS)})")
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{path}: cannot read the framework's CSV ({exc})") from None
    for n, row in enumerate(rows, 2):
        if row["result"] not in ("WIN", "TIE", "LOSS") or not row["bombs"].strip().isdigit() \
                or not (row["died_at"] or "").strip().isdigit() and (row["died_at"] or "").strip():
            raise ValueError(f"{path}: line {n}: result must be WIN, TIE or LOSS and bombs and died_at "
                             f"non-negative integers (died_at may be empty), got {dict(row)}")
    return summarise(rows)


def main(argv=None) -> int:
    from jobs.spec import load_spec

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spec")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--framework", help="CSV measured with the framework (agent, result, died_at, bombs)")
    ap.add_argument("--out", help="write Arena's rows here (CSV)")
    args = ap.parse_args(argv)
    try:  # bad input: one line naming the field or file, before any game
        framework = read_framework(args.framework) if args.framework else {}
        spec = load_spec(args.spec, args.overrides)
        if spec.game != "pommerman":
            raise ValueError(f"{args.spec}: game: side_by_side plays Pommerman specs only")
    except ValueError as exc:  # SpecError is a ValueError
        print(f"side_by_side: {exc}", file=sys.stderr)
        return 2
    rows = play_side(spec)
    if args.out:
        with open(args.out, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    print(table(framework, summarise(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
