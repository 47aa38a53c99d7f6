"""The study driver's stages (cluster.run.driver) and the scheduling policy
(cluster.run.policy), each on its own, without Ray: games are played in-process with
``play_game`` and handed to the driver's ``Recorder`` as a host would."""
from __future__ import annotations

import ray

from cluster.run.driver import Recorder, dispatch, finish, plan_and_resume, study_result
from cluster.run.play import build_agents, play_game
from cluster.run.policy import admission_window, dispatch_policy, order_runs
from cluster.run.scheduler import SeriesRun
from cluster.spec.build import build_spec
from cluster.spec.plan import plan_study

import conftest  # noqa: F401  (registers the ``count`` game and the ``fake`` agent)


def make_spec(tmp_path, design=None):
    return build_spec({
        "study": {"name": "stages", "seed": 7, "results_dir": str(tmp_path / "studies")},
        "game": {"name": "count", "max_steps": 10},
        "budget": {"iterations": 3},
        "design": design or {"seeds": 3, "games_per_seed": 2},
        "lineup": [{"agent": "fake", "label": "A"}, {"agent": "fake", "label": "B"}],
        "tracking": {"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "enabled": False},
    })


def play_run(spec, recorder: Recorder, run: SeriesRun) -> None:
    """Play one series run in-process, handing each game to ``recorder`` as a host would."""
    agents = build_agents(spec)
    for task in run.games:
        rows, learned = play_game(spec, task, agents)
        recorder(run, task, rows, learned, 0.01)


def test_plan_and_resume_finds_what_is_left(tmp_path):
    spec = make_spec(tmp_path)
    fresh = plan_and_resume(spec)
    assert fresh.total == spec.design.total_games == sum(len(s.games) for s in fresh.plan)
    assert fresh.skipped == 0 and fresh.monitor is None
    assert sorted(g.game_index for r in fresh.runs for g in r.games) == list(range(fresh.total))

    recorder = Recorder(spec, fresh.store, fresh.finished)
    play_run(spec, recorder, fresh.runs[0])
    done = {g.game_index for g in fresh.runs[0].games}
    assert recorder.played == len(done) and set(fresh.store.finished_games()) == done

    resumed = plan_and_resume(spec)  # a second invocation
    assert resumed.skipped == len(done) and resumed.finished == done
    left = {g.game_index for r in resumed.runs for g in r.games}
    assert left == set(range(resumed.total)) - done


def test_dispatch_with_nothing_left_starts_no_ray(tmp_path):
    spec = make_spec(tmp_path, design={"seeds": 1, "games_per_seed": 1})
    prepared = plan_and_resume(spec)
    recorder = Recorder(spec, prepared.store, prepared.finished)
    for run in prepared.runs:
        play_run(spec, recorder, run)
    prepared = plan_and_resume(spec)
    assert prepared.runs == []
    was_up = ray.is_initialized()
    dispatch(spec, prepared, recorder)
    assert ray.is_initialized() == was_up and recorder.workers == 0


def test_finish_reports_and_study_result_counts(tmp_path):
    spec = make_spec(tmp_path)
    prepared = plan_and_resume(spec)
    recorder = Recorder(spec, prepared.store, prepared.finished)
    for run in prepared.runs:
        play_run(spec, recorder, run)
    rows, sequential = finish(spec, prepared, recorder, tracker=None)
    assert sequential is None and len(rows) == spec.design.total_games * len(spec.lineup)
    assert (tmp_path / "studies" / "stages" / "report" / "results_table.md").is_file()
    result = study_result(spec, prepared, recorder, None, rows, sequential)
    assert (result.games_total, result.games_done, result.games_played, result.games_skipped) == \
        (spec.design.total_games, spec.design.total_games, spec.design.total_games, 0)
    assert list(result.table.index) == ["A", "B"] and result.table["games"].sum() == 2 * spec.design.total_games


# --- the scheduling policy ----------------------------------------------------------------
class _Monitor:
    """A sequential test stand-in: its frontier and decision set by hand."""

    def __init__(self):
        self.frontier, self.finished = 0, False

    def admits(self, game_index: int, window: int) -> bool:
        return game_index < self.frontier + window


def test_policy_orders_longest_first_or_plan_order_under_a_test(tmp_path):
    plan = plan_study(make_spec(tmp_path, design={"runs": 3, "rounds": 4}))
    runs = [SeriesRun(s.series_id, s.games[k:], None) for s, k in zip(plan, (2, 0, 1))]  # 2, 4, 3 games left
    assert [len(r.games) for r in order_runs(runs, sequential=False)] == [4, 3, 2]
    assert [r.series_id for r in order_runs(runs, sequential=True)] == [0, 1, 2]
    assert admission_window(hosts=2, plan=plan) == 2 * 4  # one whole series per host
    short = plan_study(make_spec(tmp_path, design={"seeds": 3, "games_per_seed": 1}))
    assert admission_window(hosts=2, plan=short) == 2 * 2  # two games per host


def test_policy_admits_by_the_window_and_stops_with_the_test(tmp_path):
    plan = plan_study(make_spec(tmp_path, design={"seeds": 6, "games_per_seed": 1}))
    runs = [SeriesRun(s.series_id, list(s.games), None) for s in plan]
    free = dispatch_policy(runs, plan, hosts=2, max_in_flight=None, monitor=None)
    assert free.stop_when is None and free.admit is None and len(free.runs) == 6

    monitor = _Monitor()
    tested = dispatch_policy(runs, plan, hosts=2, max_in_flight=1, monitor=monitor)
    assert tested.max_in_flight == 1 and [r.series_id for r in tested.runs] == list(range(6))
    window = admission_window(2, plan)
    assert tested.admit(plan[window - 1].games[0]) and not tested.admit(plan[window].games[0])
    monitor.frontier = 1
    assert tested.admit(plan[window].games[0])
    assert not tested.stop_when()
    monitor.finished = True
    assert tested.stop_when()
