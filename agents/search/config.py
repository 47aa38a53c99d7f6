"""The parameters every tree-search agent shares, declared once.

A search family's config inherits :class:`SearchConfig` (decorated again with
:func:`games.validation.config_class`) and redeclares a field only to change
its default or bounds (XCOM's trees are wide, so its ``max_nodes`` is smaller).
Scotland Yard's searches use the field types only: their ``epsilon`` is the
playouts' randomness, another parameter under the same (published) name.
"""
from __future__ import annotations

import math
from typing import Annotated

from pydantic import Field

from games.validation import Real, config_class

#: The UCB1 exploration constant's rule (all families).
Exploration = Annotated[Real, Field(ge=0, le=100)]
#: Tie-breaking noise: a small positive number.
Epsilon = Annotated[Real, Field(gt=0, lt=0.01)]
#: Tree capacity (nodes).
MaxNodes = Annotated[int, Field(ge=2, le=1 << 24)]


@config_class
class SearchConfig:
    """Exploration, tie-breaking and tree capacity of a UCT search."""

    exploration: Exploration = math.sqrt(2)
    """UCB1 constant K (on values normalised to each node's observed range)."""
    epsilon: Epsilon = 1e-6
    """Tie-breaking noise and the guard added to visit counts."""
    max_nodes: MaxNodes = 1 << 17
    """Tree capacity under a time budget (an iteration budget of n uses n + 1).
    When the tree is full, iterations go on without expanding."""
