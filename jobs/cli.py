"""The ``arena`` command line: run studies and sweeps, play games, check conformance, benchmark.

examples (one per subcommand; `arena <subcommand> --help` for its options):
  arena run jobs/pommerman_ffa_demo.toml --scale 0.25       # 2 boards x 4 seat rotations = 8 games
  arena sweep jobs/sweeps/femcts_ffa.toml --scale 0.4 --check   # validate a Ray Tune sweep, print its size
  arena report arena-studies/pommerman-ffa-demo            # tables and plots from a study's Parquet data
  arena population export arena-studies/femcts-3a-nea2-unseeded --label FEMCTS --out seeds/nea2.npz
  arena ui arena-studies/pommerman-ffa-demo --open          # the study's run in the MLflow UI (127.0.0.1)
  arena play --agents mcts,rhea,osla,random --seed 3 --view-range 2 --show-view 0
  arena replay arena-studies/pommerman-ffa-demo 12 --html   # re-simulate a game, check it, render it
  arena conformance pommerman GOLDEN/pommerman/*.jsonl.gz   # replay recorded reference trajectories
  arena bench pommerman --json                              # engine and search speed as JSON
  arena bench pommerman --quick --against main              # paired: this tree / main, 5 interleaved rounds
  arena bench scotland_yard --json                          # moves and MCTS iterations per second
  arena bench birds --json                                  # random games and MCTS iterations per CPU-second
  arena train-birds --out jobs/birds/policy/birds_policy.npz   # train the bird policy, log it to MLflow
  arena bench xcom --json                                   # XCOM moves per second, decision times
  arena train-encoder --board mini                          # XCOM autoencoder (needs the train extra)
  arena compare arena-studies/xcom-mini-convae-vs-*         # win ratio across studies (plot)
  arena rate arena-studies/pommerman-ffa-* --anchor OSLA    # Bradley-Terry ratings with 95% intervals
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _cmd_conformance(args) -> int:
    """Exit 0: no mismatches; 1: mismatches found; 2: invalid input (unknown game,
    missing file, not a gzip JSONL trajectory file)."""
    if args.game != "pommerman":
        raise UsageError(f"no golden format for game {args.game!r}")
    from games.pommerman.conformance import ConformanceReport, check_files

    missing = [f for f in args.files if not Path(f).is_file()]
    if missing:
        raise UsageError(f"file not found: {missing[0]}")
    report = ConformanceReport()
    for path in args.files:
        try:
            part = check_files([path])
        except (OSError, EOFError, ValueError, KeyError, TypeError, IndexError) as exc:
            raise UsageError(f"{path}: not a readable golden trajectory file "
                             f"(gzip JSONL): {type(exc).__name__}: {exc}") from exc
        report.trajectories += part.trajectories
        report.steps += part.steps
        report.mismatches += part.mismatches
    print(report.summary())
    for mismatch in report.mismatches:
        print(f"  {mismatch}")
    return 1 if report.mismatches else 0


def parse_value(text: str):
    """A TOML scalar (``2``, ``0.5``, ``true``, ``"x"``), else the text itself."""
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _parse_agent_spec(text: str):
    """``name`` or ``name:key=value;key=value`` -> (name, params)."""
    name, _, rest = text.partition(":")
    params = {}
    for item in filter(None, rest.split(";")):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"--agents: expected key=value in {item!r}")
        params[key.strip()] = parse_value(value.strip())
    return name.strip(), params


def _cmd_play(args) -> int:
    import numpy as np

    from agents.api import Budget
    from agents.registry import make_agent
    from games.registry import make_game

    options = {"mode": args.mode, "ruleset": args.ruleset}
    if args.view_range is not None:
        options["view_range"] = args.view_range
    if args.collapse is not None:
        options["collapse"] = args.collapse
    if args.max_steps:
        options["max_steps"] = args.max_steps
    try:
        game = make_game("pommerman", **options)
        budget = Budget(iterations=args.iterations) if args.iterations else Budget(ms=args.ms)
        specs = [_parse_agent_spec(s) for s in args.agents.split(",")]
        if len(specs) != game.num_players:
            raise ValueError(f"--agents: expected {game.num_players} agents, got {len(specs)}")
        agents = [make_agent(name, params, budget, game.config) for name, params in specs]
    except ValueError as exc:
        print(f"arena play: {exc}", file=sys.stderr)
        return 2
    board_seed = np.random.SeedSequence(args.seed, spawn_key=(0,))
    game.reset(board_seed)
    for seat, agent in enumerate(agents):
        agent.begin_game(seat, np.random.SeedSequence(args.seed, spawn_key=(1, seat)))
    cfg = game.config
    header = (f"pommerman {cfg.mode} / {cfg.ruleset}  view range "
              f"{'full' if cfg.view_range is None else cfg.view_range}  collapse "
              f"{'on' if cfg.collapse else 'off'}  max steps {cfg.max_steps}  seed {args.seed}")
    print(header)
    if args.show_view is not None and not 0 <= args.show_view < game.num_players:
        print(f"arena play: --show-view: seat must be 0..{game.num_players - 1}, got {args.show_view}",
              file=sys.stderr)
        return 2

    def show(actions=None) -> None:
        if actions is not None:
            print(f"actions {actions}")
        if args.show:
            print(game.render(), "\n")
        if args.show_view is not None:
            print(f"seat {args.show_view} sees ({specs[args.show_view][0]}):")
            print(game.render(game.observation(args.show_view)), "\n")

    if args.show or args.show_view is not None:
        show()
    from cluster.play import acting_players
    from cluster.replay import GameRecorder, save_record

    recorder = None
    if args.record:
        recorder = GameRecorder("pommerman", game.config, board_seed, [name for name, _ in specs],
                                game.num_actions)
        recorder.start(game)
    while not game.done:
        actions = [0] * len(agents)
        for i in acting_players(game):
            actions[i] = agents[i].act(game.observation(i))
            if recorder is not None:
                recorder.decision(i, agents[i])
        game.step(actions)
        if recorder is not None:
            recorder.step(game, actions)
        if args.show or args.show_view is not None:
            show(actions)
    outcomes = game.outcomes()
    rewards = game.returns()
    print(f"seed {args.seed}  {args.mode} / {args.ruleset}  length {game.step_count}")
    print(f"{'seat':<5}{'agent':<14}{'team':<6}{'result':<8}{'reward':>7}{'it/dec':>9}{'ms/dec':>9}{'invalid':>9}")
    for i, agent in enumerate(agents):
        print(f"{i:<5}{specs[i][0]:<14}{game.teams()[i]:<6}{outcomes[i]:<8}{rewards[i]:>7.0f}"
              f"{agent.mean_iterations:>9.0f}{agent.mean_ms:>9.2f}{int(game.invalid_actions[i]):>9}")
    if recorder is not None:
        path = save_record(args.record, recorder.finish())
        print(f"record: {path}  (arena replay {path} --html)")
    return 0


def _cmd_replay(args) -> int:
    from cluster.replay import RecordError, ReplayMismatch, load_record, record_path, verify
    from cluster.replay_view import write_gif, write_html, write_png

    target = Path(args.target)
    try:
        if target.is_dir():
            if args.game is None:
                raise RecordError(f"{target} is a study directory: name a game index, e.g. arena replay {target} 0")
            path = record_path(target, args.game)
            if not path.is_file():
                raise RecordError(f"{target}: no record of game {args.game} (records/ holds the games "
                                  "this version of Arena played)")
            stem = f"{target.name}-game-{args.game:06d}"
        else:
            if args.game is not None:
                raise RecordError(f"{target}: a record file takes no game index")
            path, stem = target, target.stem
        record = load_record(path)
        out = Path(args.out) if args.out else Path.cwd()
        out.mkdir(parents=True, exist_ok=True)
        suffix = f"-view{args.view}" if args.view is not None else ""
        if args.view is not None and not 0 <= args.view < record.num_players:
            raise RecordError(f"--view: seat must be in [0, {record.num_players - 1}], got {args.view}")
        written = []
        if args.png is not None:
            written.append(write_png(record, args.png, out / f"{stem}{suffix}-step{args.png:04d}.png", args.view))
        if args.gif:
            written.append(write_gif(record, out / f"{stem}{suffix}.gif", args.view))
        if args.html:
            written.append(write_html(record, out / f"{stem}{suffix}.html", args.view))
        if not written:
            verify(record)
    except (RecordError, ValueError) as exc:
        print(f"arena replay: {exc}", file=sys.stderr)
        return 2
    except ReplayMismatch as exc:
        print(f"arena replay: {path}: mismatch at {exc}", file=sys.stderr)
        return 1
    print(f"{path}: {record.length} steps replayed, every step matches the record")
    for item in written:
        print(f"wrote {item} ({item.stat().st_size:,} bytes)")
    return 0


def _cmd_bench_paired(args) -> int:
    """``arena bench GAME --against REV``: the paired speed check (jobs/paired_bench.py)."""
    import subprocess

    from jobs.paired_bench import paired_bench

    probe = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{args.against}^{{commit}}"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        raise UsageError(f"--against: not a git revision of this repository: {args.against!r}")
    if args.rounds < 1:
        raise UsageError(f"--rounds: must be >= 1, got {args.rounds}")
    if args.script is not None:
        if not Path(args.script).is_file():
            raise UsageError(f"--script: file not found: {args.script}")
        bench_args = ["--ruleset", args.ruleset] if args.target == "pommerman" else []
    else:
        bench_args = [args.target, "--seconds", str(args.seconds)]
        if args.target == "pommerman":
            bench_args += ["--ruleset", args.ruleset]
        if args.quick:
            bench_args.append("--quick")
    result = paired_bench(bench_args, args.against, args.rounds, script=args.script,
                          progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(json.dumps(result, indent=None if args.json else 1))
    return 0


def _cmd_bench(args) -> int:
    if args.against is not None:
        return _cmd_bench_paired(args)
    if args.target == "pommerman":
        from games.pommerman.engine_speed import bench_engine, bench_start

        result = {"ruleset": args.ruleset}
        result.update(bench_engine(ruleset=args.ruleset, seconds=args.seconds))
        from agents.pommerman.search_speed import bench_agents

        result.update(bench_agents(games=1 if args.quick else 3,
                                   decisions_per_game=15 if args.quick else 40,
                                   ruleset=args.ruleset))
        if not args.quick:
            result.update(bench_start())
    elif args.target == "scotland_yard":
        from agents.scotland_yard.search_speed import bench_search

        result = bench_search(quick=args.quick)
    elif args.target == "cluster":
        from cluster.scaling_bench import bench_cluster

        result = bench_cluster(quick=args.quick)
    elif args.target == "birds":
        from agents.birds.speed import bench_birds

        result = bench_birds(seconds=args.seconds, quick=args.quick)
    elif args.target == "xcom":
        from agents.xcom.speed import bench_xcom

        result = bench_xcom(quick=args.quick)
    else:  # pragma: no cover - argparse restricts choices
        return 2
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>28}: {value:,.3f}" if isinstance(value, float) else f"{key:>28}: {value}")
    return 0


def _load_spec_or_exit(args):
    from jobs.spec import SpecError, load_spec

    try:
        return load_spec(args.spec, overrides=args.set or (), scale=args.scale)
    except SpecError as exc:
        print(f"arena: invalid spec {args.spec}: {exc}", file=sys.stderr)
        raise SystemExit(2)


def _command_line(args) -> str:
    """The command as a user would type it again (for MLflow's run description)."""
    import shlex

    argv = list(getattr(args, "argv", None) or sys.argv[1:])
    return "arena " + " ".join(shlex.quote(a) for a in argv)


def _cmd_run(args) -> int:
    spec = _load_spec_or_exit(args)
    if args.check:
        design = spec.design
        conditions = design.conditions
        more = f", {len(conditions)} conditions" if design.vary else ""
        print(f"{args.spec}: valid: {design.total_games} games{more}")
        print(f"  per condition: {design.shape(spec.num_players)}")
        if design.stop is not None:
            stop, sprt = design.stop, design.stop.sprt
            cap = min(stop.max_games or design.total_games, design.total_games)
            print(f"  sequential stop: SPRT {stop.between[0]} vs {stop.between[1]}, elo0 = {sprt.elo0:g}, "
                  f"elo1 = {sprt.elo1:g}, alpha = {sprt.alpha:g}, beta = {sprt.beta:g}, scored by "
                  f"{stop.scoring}; at most {cap} games")
        if design.vary:
            for i in range(len(conditions)):
                print(f"  {spec.condition_label(i)}: {design.games_per_condition} games")
        return 0
    from cluster.study import run_study
    from cluster.tracking import RunContext, counts_text

    context = RunContext(command=_command_line(args), overrides=tuple(args.set or ()), scale=args.scale)
    result = run_study(spec, address=args.address, num_workers=args.workers,
                       progress=not args.no_progress, tracking=not args.no_tracking, context=context)
    from cluster.report import to_markdown

    print()
    if result.table is not None:
        print(to_markdown(result.table).rstrip())
    if result.condition_tables:  # e.g. against the view range
        print("\n" + result.condition_tables)
    if result.sequential is not None:
        from cluster.sequential import sequential_markdown

        print("\n" + sequential_markdown(result.sequential).rstrip())
    print(f"\ngames: {counts_text(result.counts)}  ({result.games_done} of {result.games_total} in the store)")
    print(f"results: {result.study_dir}")
    if result.mlflow_run_id:
        print(f"MLflow: run {result.mlflow_run_name!r} ({result.mlflow_run_id}) in experiment "
              f"{spec.tracking.experiment!r} at {spec.tracking.uri}  (browse: arena ui {result.study_dir})")
    return 0


def _channels_arg(text: str) -> tuple[int, int]:
    import argparse

    try:
        c1, c2 = (int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected C1,C2 (two ints), got {text!r}") from None
    return c1, c2


def _cmd_sweep(args) -> int:
    from jobs.spec import SweepError, load_sweep

    try:
        sweep = load_sweep(args.sweep, overrides=args.set or (), scale=args.scale)
    except SweepError as exc:
        print(f"arena: invalid sweep {args.sweep}: {exc}", file=sys.stderr)
        return 2
    board = "run" if sweep.base.get("design", {}).get("rounds") is not None else "board"
    asha = (f" (ASHA grace period {sweep.grace_period} {board}s, reduction factor {sweep.reduction_factor})"
            if sweep.scheduler == "asha" else "")
    print(f"sweep {sweep.name}: {sweep.total_trials} trial(s) x {sweep.games_per_trial} games "
          f"({sweep.boards_per_trial} {board}s of {sweep.games_per_board}), scheduler "
          f"{sweep.scheduler}{asha}, searcher {sweep.searcher}; re-evaluating the top "
          f"{sweep.top_k} on {sweep.reeval_games} games each")
    if args.check:
        return 0
    from cluster.sweep import run_sweep

    result = run_sweep(sweep, address=args.address, resume=args.resume, progress=not args.no_progress,
                       tracking=not args.no_tracking)
    print()
    print(result.markdown)
    print(f"sweep directory: {result.sweep_dir}  ({result.seconds:.0f} s)")
    if result.population is not None:
        print(f"best population: {result.population}  (use as seed_population)")
    if result.parent_run_id:
        print(f"MLflow: parent run {result.parent_run_id} in experiment "
              f"{sweep.tracking['experiment']!r} at {sweep.tracking['uri']}")
    return 0


def _cmd_report(args) -> int:
    from cluster.report import NotAStudyError, report_study

    try:
        text = report_study(Path(args.study), plot=not args.no_plot)
    except NotAStudyError as exc:
        print(f"arena report: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0


def _cmd_population(args) -> int:
    from cluster.populations import PopulationExportError, export_population

    try:
        info = export_population(args.study, args.label, args.out, which=args.which,
                                 series=args.series, game=args.game)
    except (PopulationExportError, ValueError) as exc:
        print(f"arena population export: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {info['out']}: population {tuple(info['shape'])} of {info['label']!r} "
          f"(series {info['series_id']}, after game {info['index_in_series']}, "
          f"longest winning streak {info['best_streak']}, {info['which']})")
    return 0


def _ui_target(args) -> tuple[str, str, str | None]:
    """(tracking URI, experiment id, run id or None) that ``arena ui`` shows."""
    from cluster.tracking import normalize_uri, read_run_records, store_exists

    if args.study:
        study = Path(args.study)
        if not study.is_dir():
            raise UsageError(f"{study}: no such study directory")
        records = read_run_records(study)
        if args.tracking_uri:
            records = [r for r in records if r.get("tracking_uri") == normalize_uri(args.tracking_uri)]
        if not records:
            raise UsageError(f"{study}: no MLflow run recorded here (mlflow_run.json); was the study "
                             f"run with tracking off, or is it not a study directory?")
        record = records[-1]
        uri = record["tracking_uri"]
        if not store_exists(uri):
            raise UsageError(f"the study's MLflow store {uri} does not exist (moved or deleted?)")
        return uri, str(record["experiment_id"]), record["run_id"]
    uri = normalize_uri(args.tracking_uri or "sqlite:///mlflow.db")
    if not store_exists(uri):
        raise UsageError(f"no MLflow store at {uri}: run a study first (arena run SPEC), or pass "
                         f"--tracking-uri, or give a study directory (arena ui arena-studies/NAME)")
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    if args.experiment:
        exp = client.get_experiment_by_name(args.experiment)
        if exp is None:
            names = sorted(e.name for e in client.search_experiments())
            raise UsageError(f"--experiment: no experiment {args.experiment!r} in {uri}; known: {names}")
        return uri, exp.experiment_id, None
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()],
                              order_by=["attributes.start_time DESC"], max_results=1)
    if not runs:
        raise UsageError(f"no runs in the MLflow store {uri}: run a study first (arena run SPEC)")
    return uri, runs[0].info.experiment_id, None


def _cmd_compare(args) -> int:
    """Win ratio (second lineup entry's wins / first's) across studies, table and plot."""
    import pandas as pd

    from cluster.segments import ratio_plot, win_ratio
    from cluster.store import ResultStore

    ratios = []
    for study in args.studies:
        path = Path(study)
        if not (path / "results").is_dir():
            print(f"arena compare: {study}: not a study directory (no results/ inside)", file=sys.stderr)
            return 2
        ratios.append({"study": path.name, **win_ratio(ResultStore(path).read())})
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = pd.DataFrame(ratios)
    table.to_csv(out / "win_ratios.csv", index=False)
    print("| Study | Opponent | Opponent wins | Learner wins | Draws | Ratio |")
    print("|---|---|---:|---:|---:|---:|")
    for r in ratios:
        print(f"| {r['study']} | {r['opponent']} | {r['opponent_wins']} | {r['learner_wins']} | "
              f"{r['draws']} | {r['ratio']:.3f} |")
    plot = ratio_plot(ratios, out / "win_ratios.png",
                      title=f"opponent wins / {ratios[0]['learner']} wins (below 1: {ratios[0]['learner']} stronger)")
    print(f"\nfiles: {out / 'win_ratios.csv'}, {plot}")
    return 0


def _cmd_rate(args) -> int:
    """Ratings of every player (label + config hash) over studies of one game and condition."""
    from cluster.ratings import (RatingError, default_tracking_uri, load_rows, log_ratings, rate,
                                 ratings_markdown, write_ratings)

    try:
        pooled = load_rows(args.studies, condition=args.condition, game=args.game)
        table = rate(pooled.rows, anchor=args.anchor, anchor_rating=args.anchor_rating, seed=args.seed,
                     bootstrap=args.bootstrap, resample=args.resample)
    except RatingError as exc:
        raise UsageError(str(exc)) from None
    games = pooled.rows.drop_duplicates(["study_id", "game_index"]).shape[0]
    print(f"{len(pooled.studies)} stud{'y' if len(pooled.studies) == 1 else 'ies'}, {games} games of "
          f"{pooled.game.get('name')}" + (f" ({pooled.condition})" if pooled.condition else ""))
    print()
    print(ratings_markdown(table).rstrip())
    files = write_ratings(table, args.out, title=f"Ratings: {pooled.game.get('name')}")
    print(f"\nfiles: {', '.join(str(f) for f in files)}")
    if not args.no_tracking:
        uri = args.tracking_uri or default_tracking_uri(pooled.studies)
        run_id, _ = log_ratings(table, files, pooled, uri, args.experiment, command=_command_line(args))
        print(f"MLflow: run {run_id} in experiment {args.experiment!r} at {uri}")
    return 0


def _cmd_train_encoder(args) -> int:
    from jobs.train_encoder import train_encoder_job

    try:
        train_encoder_job(board=args.board, samples=args.samples, epochs=args.epochs, lr=args.lr,
                          batch_size=args.batch_size, seed=args.seed, out=args.out,
                          tracking_uri=None if args.no_tracking else args.tracking_uri,
                          experiment=args.experiment, threads=args.threads, channels=args.channels)
    except (ValueError, RuntimeError) as exc:
        print(f"arena train-encoder: {exc}", file=sys.stderr)
        return 2
    return 0


def _cmd_ui(args) -> int:
    """Print the URL of the study's experiment runs page (or of one study's run), then
    serve the MLflow UI on it (``--open``: also launch a browser, where there is one)."""
    import os
    import subprocess

    from cluster.tracking import is_server, ui_url

    uri, experiment_id, run_id = _ui_target(args)
    if is_server(uri):
        url = ui_url(uri, experiment_id, run_id)
        print(url, flush=True)
        if args.open:
            _open_browser(url)
        return 0
    url = ui_url(f"http://{args.host}:{args.port}", experiment_id, run_id)
    print(url, flush=True)
    if args.url_only:
        if args.open:
            _open_browser(url)
        return 0
    print(f"serving the MLflow UI for {uri} (Ctrl-C to stop)", file=sys.stderr, flush=True)
    cmd = [sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", uri,
           "--host", args.host, "--port", str(args.port), "--workers", str(args.workers)]
    env = dict(os.environ)
    env.setdefault("MLFLOW_SERVER_ENABLE_JOB_EXECUTION", "false")  # no background job runners for browsing
    proc = subprocess.Popen(cmd, env=env)

    def _stop(signum, frame):  # a plain `kill` of arena ui stops the UI server too
        raise KeyboardInterrupt

    import signal

    signal.signal(signal.SIGTERM, _stop)
    if args.open:
        _open_browser(url, wait_for=f"http://{args.host}:{args.port}/health")
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        return 0


def _open_browser(url: str, wait_for: str | None = None, timeout: float = 60.0) -> None:
    """Open ``url`` in a browser once ``wait_for`` answers; say so when there is no browser."""
    import time
    import urllib.request
    import webbrowser

    deadline = time.monotonic() + timeout
    while wait_for and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(wait_for, timeout=2):
                break
        except OSError:
            time.sleep(0.5)
    try:
        opened = webbrowser.open(url)
    except webbrowser.Error:
        opened = False
    if not opened:
        print(f"no browser found here; open {url} yourself", file=sys.stderr, flush=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debug", action="store_true",
                        help="show tracebacks (also ARENA_DEBUG=1; accepted anywhere on the line)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="run a study spec (TOML) on Ray, tracked in MLflow")
    p.add_argument("spec", help="study spec, e.g. jobs/pommerman_ffa_demo.toml")
    p.add_argument("--address", help="Ray cluster address (default: a local embedded Ray)")
    p.add_argument("--workers", type=int, help="game-hosting actors (default: one per CPU)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a spec field, e.g. --set design.seeds=2 (repeatable)")
    p.add_argument("--scale", type=float, metavar="F",
                   help="quick try: play ceil(F x boards) boards (design.seeds, or design.runs in a "
                        "runs x rounds design), at least one; each board keeps all its games and seat "
                        "rotation, each run all its rounds (see --check for the game count)")
    p.add_argument("--check", action="store_true",
                   help="validate the spec, print the games per condition and exit without playing")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-tracking", action="store_true", help="do not log to MLflow")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("sweep", help="hyperparameter sweep (Ray Tune) over a study's agent parameters")
    p.add_argument("sweep", help="sweep spec, e.g. jobs/sweeps/femcts_ffa.toml")
    p.add_argument("--address", help="Ray cluster address (default: a local embedded Ray)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a sweep field, e.g. --set sweep.games_per_trial=8 or "
                        "--set base.budget.ms=10 (repeatable)")
    p.add_argument("--scale", type=float, metavar="F",
                   help="quick try: boards per trial, re-evaluation boards and the ASHA grace period "
                        "scaled as in `arena run --scale` (whole boards, at least one); each grid axis "
                        "keeps its first ceil(n*F) values")
    p.add_argument("--resume", action="store_true",
                   help="resume the sweep's Tune experiment (also automatic when it exists)")
    p.add_argument("--check", action="store_true",
                   help="validate the sweep spec, print its size and exit without running")
    p.add_argument("--no-progress", action="store_true", help="no progress table")
    p.add_argument("--no-tracking", action="store_true", help="do not log to MLflow")
    p.set_defaults(func=_cmd_sweep)

    p = sub.add_parser("report", help="re-print and re-plot a study from its Parquet data")
    p.add_argument("study", help="study directory (it holds results/), e.g. arena-studies/pommerman-ffa-demo")
    p.add_argument("--no-plot", action="store_true",
                   help="print the tables only; do not rewrite the plots and table files in <study>/report/")
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser("population", help="export a learned FEMCTS population as a seed .npz")
    psub = p.add_subparsers(dest="action", required=True)
    e = psub.add_parser("export", help="write a seat's population (default: its longest winning streak's)")
    e.add_argument("study", help="study directory, e.g. arena-studies/femcts-3a-nea2-unseeded")
    e.add_argument("--label", required=True, help="the seat's label in the lineup, e.g. FEMCTS")
    e.add_argument("--out", required=True, help="output .npz (name it as seed_population in a spec)")
    e.add_argument("--which", default="best_streak", choices=["best_streak", "final"],
                   help="best_streak (default): the population in force during the seat's longest "
                        "winning streak; final: the one saved after the last game")
    e.add_argument("--series", type=int, help="only this series (default: every series of the study)")
    e.add_argument("--game", type=int,
                   help="use the state saved after this game (index in its series) of each series: "
                        "with --which final that population, else the best-streak one recorded by then")
    e.set_defaults(func=_cmd_population)

    p = sub.add_parser("compare", help="win ratio of the 2nd lineup entry to the 1st across studies (plot)")
    p.add_argument("studies", nargs="+", help="study directories, e.g. arena-studies/xcom-mini-*")
    p.add_argument("--out", default="arena-studies/compare", help="directory for the table and plot")
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser("rate", help="Bradley-Terry ratings with 95%% bootstrap intervals over studies "
                                    "of one game",
                       description="Rate every player (agent label + config hash) over the finished "
                                   "games of one or more studies of one game and condition: "
                                   "Bradley-Terry with ties (Davidson) by maximum likelihood, an FFA "
                                   "game counted as the pairwise results it implies, 95% intervals "
                                   "from a bootstrap over boards. Prints the table, writes it as "
                                   "Markdown/CSV with a plot, and logs them to MLflow.")
    p.add_argument("studies", nargs="+", metavar="STORE_OR_STUDY",
                   help="study directories, or results folders holding studies (e.g. arena-studies)")
    p.add_argument("--anchor", metavar="LABEL",
                   help="fix this player's rating (a label, or 'label [hash]' when the label has "
                        "several configs); default: the mean rating is fixed")
    p.add_argument("--anchor-rating", type=float, default=0.0, metavar="R",
                   help="the anchor's (or the mean's) rating, e.g. 1500 (default 0)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0): same seed, same table")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (default 1000; 0: no intervals)")
    p.add_argument("--resample", default="boards", choices=["boards", "games"],
                   help="bootstrap unit: boards (a board seed with all its seat rotations, default) or games")
    p.add_argument("--condition", help="with design.vary studies: the condition to rate, e.g. view_range=2")
    p.add_argument("--game", help="only the studies of this game (when a results folder holds several)")
    p.add_argument("--out", default="arena-studies/ratings",
                   help="directory for ratings.md, ratings.csv and ratings.png (default arena-studies/ratings)")
    p.add_argument("--tracking-uri", help="MLflow store (default: the first study's, else sqlite:///mlflow.db)")
    p.add_argument("--experiment", default="arena-ratings", help="MLflow experiment (default arena-ratings)")
    p.add_argument("--no-tracking", action="store_true", help="do not log to MLflow")
    p.set_defaults(func=_cmd_rate)

    p = sub.add_parser("train-encoder", help="train the XCOM Conv-AE encoder (needs the train extra)")
    p.add_argument("--board", default="mini", help="mini, large or a layout file")
    p.add_argument("--samples", type=int, help="dataset size (default 10000 for 6x6, 60000 for 18x18)")
    p.add_argument("--epochs", type=int, default=10, help="training epochs (default 10)")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate")
    p.add_argument("--batch-size", type=int, default=16, help="mini-batch size (default 16)")
    p.add_argument("--seed", type=int, default=0, help="seed of the dataset and the initial weights (default 0)")
    p.add_argument("--out", help="encoder .npz (default arena-encoders/encoder_<n>x<n>.npz)")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--channels", type=_channels_arg, metavar="C1,C2",
                   help="conv channels (default the board's: 8,16 on 6x6, 4,8 on 18x18)")
    p.add_argument("--tracking-uri", default="sqlite:///mlflow.db",
                   help="MLflow store for the loss curve and the encoder (default sqlite:///mlflow.db)")
    p.add_argument("--experiment", default="arena-encoders", help="MLflow experiment (default arena-encoders)")
    p.add_argument("--no-tracking", action="store_true", help="do not log to MLflow")
    p.set_defaults(func=_cmd_train_encoder)

    p = sub.add_parser("ui", help="print the URL of a study's results in the MLflow UI and serve it on 127.0.0.1")
    p.add_argument("study", nargs="?",
                   help="a study directory: show its run (default: the experiment runs page of the "
                        "latest study in the store)")
    p.add_argument("--tracking-uri", help="MLflow store (default: the study's, else sqlite:///mlflow.db)")
    p.add_argument("--experiment", help="show this experiment's runs page")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=5000, help="port (default 5000)")
    p.add_argument("--workers", type=int, default=1, help="MLflow UI server processes (default 1)")
    p.add_argument("--open", action="store_true", help="also open the URL in a browser, where there is one")
    p.add_argument("--url-only", action="store_true", help="print the URL and exit (a UI already runs)")
    p.set_defaults(func=_cmd_ui)

    p = sub.add_parser("play", help="play one Pommerman game between named agents")
    p.add_argument("--agents", default="mcts,rhea,osla,rule_based",
                   help="four agents, comma separated; parameters as name:key=value;key=value "
                        "(default: mcts,rhea,osla,rule_based)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the board and of every agent (default 0); with --iterations a "
                        "game is a pure function of it")
    p.add_argument("--mode", default="ffa", choices=["ffa", "team"],
                   help="ffa: four players each on their own (default); team: seats 0+2 against 1+3")
    p.add_argument("--ruleset", default="canonical", choices=["canonical", "java"],
                   help="canonical: the NeurIPS 2018 rules (default); java: the Java framework's")
    p.add_argument("--collapse", action=argparse.BooleanOptionalAction, default=None,
                   help="java ruleset: board collapse (default: on for java, as in the framework)")
    p.add_argument("--view-range", type=int, choices=[0, 1, 2, 3, 4],
                   help="partial observability: each agent sees the square of this radius around "
                        "itself (0: its own cell); leave it out for full observability")
    p.add_argument("--max-steps", type=int,
                   help="end the game (a tie among the living) after this many ticks "
                        "(default: the game's, 800)")
    p.add_argument("--ms", type=float, default=40.0, help="milliseconds per decision (default 40)")
    p.add_argument("--iterations", type=int, help="iterations per decision (reproducible games)")
    p.add_argument("--show", action="store_true", help="print the true board every step")
    p.add_argument("--show-view", type=int, metavar="SEAT",
                   help="print the board as seat SEAT (0-3) observes it every step ('?' is fog)")
    p.add_argument("--record", metavar="FILE",
                   help="write the game's record (.npz) for `arena replay FILE`")
    p.set_defaults(func=_cmd_play)

    p = sub.add_parser("replay", help="re-simulate a recorded game, check it step by step, render it",
                       description="Re-simulate a recorded game from its record, checking at every "
                                   "step that it reproduces what was recorded, and render it.")
    p.add_argument("target", help="a study directory (then give GAME) or a record file from "
                                  "`arena play --record`")
    p.add_argument("game", type=int, nargs="?", help="game index in the study (the game_index column)")
    p.add_argument("--png", type=int, metavar="STEP", help="write the frame of STEP (0 = initial state)")
    p.add_argument("--gif", action="store_true", help="write an animation (one frame per state)")
    p.add_argument("--html", action="store_true",
                   help="write a self-contained page: step slider, play/pause, per-step details")
    p.add_argument("--view", type=int, metavar="SEAT",
                   help="draw the board as SEAT observes it (fog) instead of the true state")
    p.add_argument("--out", help="output directory (default: the current directory)")
    p.set_defaults(func=_cmd_replay)

    p = sub.add_parser("conformance", help="replay golden trajectories and report mismatches")
    p.add_argument("game", choices=["pommerman"], help="the game whose trajectories these are")
    p.add_argument("files", nargs="+", help="gzip JSONL trajectory files")
    p.set_defaults(func=_cmd_conformance)

    p = sub.add_parser("train-birds", help="train the bird game's linear policy (REINFORCE), log to MLflow")
    from jobs.train_birds import add_arguments, main as train_birds_main
    add_arguments(p)
    p.set_defaults(func=train_birds_main)

    p = sub.add_parser("bench", help="benchmarks (prints JSON with --json)")
    p.add_argument("target", choices=["pommerman", "scotland_yard", "birds", "xcom", "cluster"],
                   help="pommerman: engine and search speed; scotland_yard: moves and MCTS iterations "
                        "per second; birds: random games and MCTS iterations per CPU-second; xcom: "
                        "moves per second and decision times; cluster: scheduling overhead and scaling")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--ruleset", default="canonical", choices=["canonical", "java"],
                   help="pommerman: the ruleset to time (default canonical)")
    p.add_argument("--seconds", type=float, default=3.0, help="engine timing length")
    p.add_argument("--quick", action="store_true", help="shorter runs, no start-up timing")
    p.add_argument("--against", metavar="REV", default=None,
                   help="paired check: run this benchmark for the working tree and for git revision "
                        "REV (e.g. main), each in its own process and tree, interleaved over "
                        "--rounds rounds, and print each figure's ratio tree / REV with its spread "
                        "(JSON; see jobs/paired_bench.py)")
    p.add_argument("--rounds", type=int, default=5, help="--against: paired rounds (default 5)")
    p.add_argument("--script", default=None,
                   help="--against: a probe script (prints one JSON object) run in both trees "
                        "instead of the benchmark, e.g. jobs/probes/pommerman_search_cpu.py")
    p.set_defaults(func=_cmd_bench)
    return parser


class UsageError(Exception):
    """Invalid input found by a subcommand (exit code 2, one line on stderr)."""


#: Exit codes: 0 ok; 1 conformance mismatches found; 2 invalid input (spec, files,
#: paths, stores: anything the user can fix); 3 a run failed; 130 interrupted.
EXIT_INVALID = 2
EXIT_FAILED = 3
EXIT_INTERRUPTED = 130


def _input_errors() -> tuple[type, ...]:
    """The project's error types that mean "fix your input" (exit 2)."""
    import gzip

    from cluster.populations import PopulationExportError
    from cluster.spec import SpecError
    from cluster.store import SpecMismatchError, StoreError

    return (UsageError, SpecError, StoreError, SpecMismatchError, PopulationExportError, gzip.BadGzipFile,
            OSError, ValueError)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename and str(exc.filename) not in text:
        text = f"{exc.filename}: {text}"
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0] + (" (...)" if len(lines) > 1 else "")


def main(argv=None) -> int:
    """``arena``: every user-facing error is one or two lines on stderr and a non-zero exit
    code (see EXIT_*); ``--debug`` (anywhere on the line) or ``ARENA_DEBUG=1`` shows tracebacks."""
    import os

    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or os.environ.get("ARENA_DEBUG", "") not in ("", "0")
    argv = [a for a in argv if a != "--debug"]
    args = build_parser().parse_args(argv)
    args.argv = argv
    if debug:
        import logging

        logging.basicConfig(level=logging.INFO)
        return args.func(args)
    prog = f"arena {args.command}"
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except _input_errors() as exc:
        print(f"{prog}: {_one_line(exc)}", file=sys.stderr)
        return EXIT_INVALID
    except Exception as exc:  # a bug or a failed run: one line, the traceback on request
        print(f"{prog}: failed: {type(exc).__name__}: {_one_line(exc)}\n"
              f"  (run again with --debug or ARENA_DEBUG=1 for the traceback)", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
