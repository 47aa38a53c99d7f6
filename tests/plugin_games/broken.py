"""Games that break one clause of the game contract each, for ``arena check-game``'s tests."""
from __future__ import annotations

from .connect_four import ConnectFour


class NamesAPlayerAfterTheEnd(ConnectFour):
    """Connect four whose ``acting_players()`` still names the last mover's opponent at the end."""

    def acting_players(self):
        return [int(self.state.meta[0])]
