"""Arena plugin example: a pure-Python agent (``bandit``) and a toy game (``tictactoe``),
registered through the entry points in ``pyproject.toml``; Arena itself is not changed."""
