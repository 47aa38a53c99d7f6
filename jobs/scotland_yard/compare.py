"""Run the settings of a Scotland Yard study family and compare them.

Each setting is one study spec in this folder (``<family>_*.toml``); every one
is run on the cluster (resumable: finished games are skipped), then the
seekers' win rates are tabulated with 95% Wilson intervals and every pair of
settings is compared with a two-sided Fisher exact test, Holm-corrected over
the family::

    python -m jobs.scotland_yard.compare determinization      # uniform vs LC general/detailed, offline/online
    python -m jobs.scotland_yard.compare coalition            # r in {0, 0.1, 0.25, 0.5}
    python -m jobs.scotland_yard.compare trees                # one tree vs a tree per determinization
    python -m jobs.scotland_yard.compare mrx                  # Mr X by playout policy vs as tree nodes
    python -m jobs.scotland_yard.compare trees --games 40 --set budget.iterations=300

Beside the win rates the table gives the determinization diagnostic: the mean
probability the seekers' sampling gave Mr X's true station per decision (uniform
vs Location Categorization), which shows LC's effect with far fewer games. Settings
whose runs carry learned state (``series_by = "run"``: the online LC tables) also get
their learning curve: the win rate (and the diagnostic) by game index in a series, in
blocks of 50 games. The report ends with each setting's playing time.

``--games`` / ``--scale`` / ``--set`` apply to every setting; the study ids then get a suffix
(a hash of them) so scaled runs never mix with full ones. The report is printed
and written to ``<results_dir>/sy-compare-<family><suffix>/report.md``.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys
from pathlib import Path

from cluster.stats import Z95

HERE = Path(__file__).resolve().parent
FAMILIES = ("determinization", "coalition", "trees", "mrx")
SEEKERS_SIDE = 1


def family_specs(family: str) -> list[Path]:
    def natural(path: Path):  # r0 < r0.1 < r0.25 < r0.5
        return [float(t) if t[0].isdigit() else t for t in re.findall(r"\d+(?:\.\d+)?|\D+", path.stem)]

    files = sorted(HERE.glob(f"{family}_*.toml"), key=natural)
    if not files:
        raise ValueError(f"family: no {family}_*.toml in {HERE}; known: {list(FAMILIES)}")
    return files


def seeker_record(df) -> tuple[int, int]:
    """(seeker wins, games) from a study's rows (error games excluded)."""
    rows = df[(df["seat"] == SEEKERS_SIDE) & (df["result"] != "error")]
    return int((rows["result"] == "win").sum()), int(len(rows))


#: The seekers' per-game diagnostic columns (``sy_mcts_seekers.game_metrics``).
P_TRUE, P_UNIFORM, P_DECISIONS = "metric.p_true_location", "metric.p_true_uniform", "metric.p_true_decisions"


def seeker_diagnostic(df) -> dict | None:
    """The probability the seekers' sampling gave Mr X's true station, from a
    study's rows: ``p`` the mean over all scored decisions (each game's mean
    weighted by its decisions), ``lo``/``hi`` a 95% normal interval from the
    per-game means (games are the independent units), ``uniform`` the uniform
    sampler's mean at the same decisions, ``ratio`` p / uniform, ``games`` and
    ``decisions``. None when the rows carry no diagnostic (older studies)."""
    import numpy as np

    rows = df[(df["seat"] == SEEKERS_SIDE) & (df["result"] != "error")]
    if P_TRUE not in rows.columns:
        return None
    rows = rows[rows[P_TRUE].notna()]
    if rows.empty:
        return None
    p = rows[P_TRUE].to_numpy(float)
    u = rows[P_UNIFORM].to_numpy(float)
    w = rows[P_DECISIONS].to_numpy(float) if P_DECISIONS in rows.columns else np.ones(len(p))
    mean = float((p * w).sum() / w.sum())
    uniform = float((u * w).sum() / w.sum())
    half = Z95 * float(p.std(ddof=1)) / math.sqrt(len(p)) if len(p) > 1 else math.nan
    return {"p": mean, "lo": mean - half, "hi": mean + half, "uniform": uniform,
            "ratio": mean / uniform if uniform > 0 else math.nan, "games": int(len(p)),
            "decisions": int(w.sum())}


#: Games per block of the online settings' learning curve (win rate by game index).
BLOCK = 50


def learning_curve(df, block: int = BLOCK) -> list[dict]:
    """The seekers' record by game index in a series (``index_in_series``), in blocks
    of ``block`` games: per block ``first``/``last`` index, ``games``, ``wins``, the
    Wilson interval ``lo``/``hi`` and the mean diagnostic ``p_true`` (NaN without it).
    For the online settings, whose tables learn along a series."""
    import numpy as np

    from cluster.stats import wilson_interval

    rows = df[(df["seat"] == SEEKERS_SIDE) & (df["result"] != "error")]
    out = []
    if rows.empty:
        return out
    index = rows["index_in_series"].to_numpy(int)
    for start in range(0, int(index.max()) + 1, block):
        part = rows[(index >= start) & (index < start + block)]
        if part.empty:
            continue
        wins, n = int((part["result"] == "win").sum()), int(len(part))
        lo, hi = wilson_interval(wins, n)
        p = part[P_TRUE].to_numpy(float) if P_TRUE in part.columns else np.array([])
        p = p[~np.isnan(p)]
        out.append({"first": start, "last": start + block - 1, "games": n, "wins": wins,
                    "lo": lo, "hi": hi, "p_true": float(p.mean()) if len(p) else math.nan})
    return out


def curve_table(curve: list[dict]) -> str:
    """:func:`learning_curve` as a markdown table."""
    from cluster.analysis.tables import markdown_table

    rows = [[f"{c['first']}-{c['last']}", c["games"], c["wins"], f"{c['wins'] / c['games']:.3f}",
             f"[{c['lo']:.3f}, {c['hi']:.3f}]", f"{c['p_true']:.4f}"] for c in curve]
    return markdown_table(["games in series", "games", "seekers' wins", "win rate", "95% CI", "P(true)"],
                          rows, ["---", "---:", "---:", "---:", "---", "---:"])


def play_seconds(df) -> float:
    """Wall seconds a study spent playing: the span of its games' ``finished_at``
    stamps, plus one mean game for the first (with one worker, the CPU time of its
    core; a study resumed later includes the pause)."""
    stamps = df["finished_at"].drop_duplicates().sort_values()
    if len(stamps) < 2:
        return math.nan
    span = (stamps.iloc[-1] - stamps.iloc[0]).total_seconds()
    return float(span * len(stamps) / (len(stamps) - 1))


def games_overrides(design, games: int) -> list[str]:
    """``--set`` items that make a study play ``games`` games (about, for runs x rounds)."""
    if games < 1:
        raise ValueError(f"--games: must be >= 1, got {games}")
    if design.runs_design:
        rounds = min(design.rounds, games)
        return [f"design.rounds={rounds}", f"design.runs={math.ceil(games / rounds)}",
                f"design.seeds={rounds}"]
    return [f"design.seeds={math.ceil(games / design.games_per_seed)}"]


def compare(records: dict[str, tuple[int, int]], alpha: float = 0.05,
            diagnostics: dict[str, dict | None] | None = None) -> str:
    """A markdown report: win rates with Wilson intervals and, where the rows carry
    it, the diagnostic of :func:`seeker_diagnostic` (P(true): the mean probability
    the seekers' sampling gave Mr X's true station per decision, its 95% interval
    over games, the uniform sampler's at the same decisions and the ratio), then
    pairwise tests of the win rates."""
    from cluster.analysis.tables import markdown_table
    from cluster.stats import fisher_exact, holm, wilson_interval

    diagnostics = diagnostics or {}
    rows = []
    for name, (wins, n) in records.items():
        lo, hi = wilson_interval(wins, n)
        rate = wins / n if n else float("nan")
        d = diagnostics.get(name)
        extra = ([f"{d['p']:.4f}", f"[{d['lo']:.4f}, {d['hi']:.4f}]", f"{d['uniform']:.4f}", f"{d['ratio']:.3f}",
                  d["decisions"]] if d else ["n/a", "", "", ""])
        rows.append([name, n, wins, f"{rate:.3f}", f"[{lo:.3f}, {hi:.3f}]"] + extra)
    lines = [markdown_table(["setting", "games", "seekers' wins", "win rate", "95% CI", "P(true)", "P(true) 95% CI",
                             "P(true), uniform", "ratio", "decisions"], rows,
                            ["---", "---:", "---:", "---:", "---", "---:", "---", "---:", "---:", "---:"])]
    names = list(records)
    pairs = [(x, y) for i, x in enumerate(names) for y in names[i + 1:]]
    raw = []
    for x, y in pairs:
        (wx, nx), (wy, ny) = records[x], records[y]
        raw.append(fisher_exact(wx, nx - wx, wy, ny - wy))
    adjusted = holm(raw)
    rows = []
    for (x, y), p, q in zip(pairs, raw, adjusted):
        (wx, nx), (wy, ny) = records[x], records[y]
        diff = (wx / nx if nx else math.nan) - (wy / ny if ny else math.nan)
        rows.append([x, y, f"{diff:+.3f}", f"{p:.4f}", f"{q:.4f}", "yes" if q < alpha else "no"])
    lines += ["", "Pairwise two-sided Fisher exact tests, Holm-corrected over "
              f"{len(pairs)} comparison(s) (alpha = {alpha}):", "",
              markdown_table(["A", "B", "rate A - rate B", "p", "p (Holm)", "significant"], rows,
                             ["---", "---", "---:", "---:", "---:", "---"])]
    return "\n".join(lines)


def main(argv=None) -> int:
    from cluster.results.store import ResultStore
    from cluster.run.driver import run_study
    from jobs.spec import SpecError, load_spec

    p = argparse.ArgumentParser(prog="python -m jobs.scotland_yard.compare", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("family", help=f"one of {list(FAMILIES)}, or paths of study specs")
    p.add_argument("more", nargs="*", help="more study spec paths")
    p.add_argument("--scale", type=float, default=None)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--games", type=int, default=None,
                   help="games per setting (seeds design: design.seeds; runs x rounds design: "
                        "rounds capped at this, runs to match)")
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--no-tracking", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--report-only", action="store_true", help="tabulate finished games, run nothing")
    args = p.parse_args(argv)
    if args.family in FAMILIES and not args.more:
        family, files = args.family, family_specs(args.family)
    else:
        family, files = "custom", [Path(f) for f in [args.family, *args.more]]
    suffix = ""
    if args.set or args.scale is not None or args.games is not None:
        blob = json.dumps({"set": args.set, "scale": args.scale, "games": args.games}, sort_keys=True)
        suffix = "-" + hashlib.sha1(blob.encode()).hexdigest()[:6]
    records: dict[str, tuple[int, int]] = {}
    diagnostics: dict[str, dict | None] = {}
    curves: dict[str, list[dict]] = {}
    cpu: dict[str, float] = {}
    results_dir = None
    for path in files:
        try:
            probe = load_spec(path, overrides=args.set, scale=args.scale)
            extra = games_overrides(probe.design, args.games) if args.games else []
            spec = load_spec(path, overrides=[*args.set, *extra, f"study.id={probe.study_id}{suffix}"],
                             scale=args.scale)
        except SpecError as exc:
            print(f"compare: invalid spec {path}: {exc}", file=sys.stderr)
            return 2
        results_dir = spec.results_dir
        if not args.report_only:
            run_study(spec, num_workers=args.workers, progress=not args.no_progress,
                      tracking=not args.no_tracking)
        store = ResultStore(Path(spec.study_dir))
        setting = path.stem.removeprefix(f"{family}_")
        rows = store.read()
        records[setting] = seeker_record(rows)
        diagnostics[setting] = seeker_diagnostic(rows)
        cpu[setting] = play_seconds(rows)
        if spec.design.series_by == "run":  # a run carries learned state: its learning curve
            curves[setting] = learning_curve(rows)
    report = (f"# Scotland Yard: {family}{suffix}\n\nSeekers' win rate against the MCTS Mr X "
              f"(settings: {', '.join(f.name for f in files)}; overrides: {args.set or 'none'}; "
              f"scale: {args.scale or 1}; games per setting: {args.games or 'as specified'}).\n\n"
              + compare(records, diagnostics=diagnostics))
    report += ("\n\nPlaying time (the span of the games' finish stamps; one worker: its core's time): "
               + ", ".join(f"{k} {v / 60:.1f} min" for k, v in cpu.items()) + ".")
    for setting, curve in curves.items():
        report += (f"\n\nLearning curve of {setting} (win rate by game index in a series, blocks of "
                   f"{BLOCK}, all series pooled):\n\n" + curve_table(curve))
    out = Path(results_dir or "arena-studies") / f"sy-compare-{family}{suffix}"
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(report + "\n")
    print(report)
    print(f"\nreport: {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
