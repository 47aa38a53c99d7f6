"""The Pommerman engine benchmark's timed calls (jobs.bench.pommerman.engine)."""
from jobs.bench.pommerman.engine import games_per_call


class FakeClock:
    """A clock that a fake kernel advances by a fixed time per game."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_games_per_call_doubles_until_a_call_is_long_enough():
    clock = FakeClock()
    calls = []

    def play(games):
        calls.append(games)
        clock.now += games * 1e-4  # 0.1 ms a game

    assert games_per_call(play, seconds=0.02, clock=clock) == 256  # 25.6 ms: the first >= 20
    assert calls == [8, 16, 32, 64, 128, 256]


def test_games_per_call_keeps_the_start_when_one_call_is_long_enough():
    clock = FakeClock()

    def play(games):
        clock.now += 1.0

    assert games_per_call(play, seconds=0.02, clock=clock) == 8


def test_games_per_call_stops_at_the_cap():
    clock = FakeClock()
    calls = []

    def play(games):
        calls.append(games)  # takes no time at all

    assert games_per_call(play, seconds=0.02, cap=64, clock=clock) == 64
    assert calls == [8, 16, 32]
