"""``arena games``: every registered game (plugins included) and its options, from the code.

The options are read from each game's ``Config`` class (type and rule, default, the
docstring under the field; :mod:`jobs.commands._parameters`), so what this prints cannot
drift from what a spec's ``[game]`` table accepts. ``games/PARAMETERS.md`` is this
command's ``--markdown --builtin`` output (``tests/jobs/test_parameter_docs.py`` checks it
is current).
"""
from __future__ import annotations

import json
import sys

from . import UsageError

#: The command that writes games/PARAMETERS.md (named in that file and in the test that checks it).
GENERATE = "python -m jobs.cli games --markdown --builtin > games/PARAMETERS.md"


def add_parser(sub) -> None:
    """Register ``arena games`` and its options."""
    p = sub.add_parser(
        "games", help="list the games (plugins included) and their options: type, default, meaning",
        description="Without NAME: one line per registered game (built-in and installed plugins): its "
                    "name, players, number of options and what it is. With NAME: each game's options "
                    "(a spec's [game] table), each with its type and rule, its default and the "
                    "docstring of its Config field, read from the code, and the agents that play it. "
                    "A plugin that does not import is listed with the reason; naming it is an error "
                    "(exit 2).")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="games to describe in full (registry names, plugin names or package.module:Class)")
    p.add_argument("--builtin", action="store_true",
                   help="only Arena's own games (modules under games/), not the installed plugins")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--markdown", action="store_true",
                      help="print a Markdown page with every listed game's option table "
                           "(games/PARAMETERS.md is this with --builtin)")
    form.add_argument("--json", action="store_true", help="print JSON: one object per game")
    p.set_defaults(func=run)


def describe(name: str, builtin_agents: bool = False) -> dict:
    """What ``arena games NAME`` shows: the game's declarations, its options and the agents
    that play it. Raises :class:`games.plugins.PluginError` or ValueError for a game that
    does not load."""
    import agents  # noqa: F401  (registers the built-in agents)
    from agents.registry import agent_class, agent_names
    from games.plugins import PluginError
    from games.registry import has_kernels, make_config, make_game

    from ._parameters import first_paragraph, parameters

    config = make_config(name)  # loads a plugin game; its defaults must make a valid config
    config_cls = type(config)
    game = make_game(name, config)  # the registry keeps the game's class to itself: build one game
    game_cls = type(game)
    module = sys.modules.get(game_cls.__module__)
    kernels = has_kernels(name)
    players = []
    for agent in agent_names():
        try:
            cls = agent_class(agent)
        except (PluginError, ValueError):  # `arena agents` names the plugins that do not load
            continue
        if builtin_agents and not cls.__module__.startswith("agents."):
            continue
        if cls.plays(name):
            players.append(agent)
    return {
        "name": name,
        "class": f"{game_cls.__module__}:{game_cls.__qualname__}",
        "summary": (first_paragraph(getattr(module, "__doc__", None)) or first_paragraph(config_cls.__doc__)
                    or first_paragraph(game_cls.__doc__)),
        "players": int(game.num_players),
        "kernels": kernels,
        "agents": players,
        "parameters": [p.as_dict() for p in parameters(config_cls)],
    }


def _listed(args) -> list[dict]:
    import games  # noqa: F401  (registers the built-in games)
    from games.plugins import PluginError
    from games.registry import game_names

    out = []
    for name in args.names or game_names():
        try:
            game = describe(name, builtin_agents=args.builtin)
        except (PluginError, ValueError) as exc:
            if args.names:
                raise UsageError(str(exc).removeprefix("game: ")) from None
            out.append({"name": name, "error": str(exc)})
            continue
        if args.builtin and not game["class"].startswith("games."):
            continue
        out.append(game)
    return out


def _declarations(game: dict) -> list[str]:
    lines = [f"- players: {game['players']}"]
    lines.append("- agents that play it: " + (", ".join(game["agents"]) or "none registered"))
    if not game["kernels"]:
        lines.append("- no kernels module: agents written for any game (e.g. random) do not play it")
    return lines


def markdown(games_: list[dict], builtin: bool) -> str:
    """The Markdown page of ``games_``: a list, then one section per game."""
    from ._parameters import Parameter, markdown_table

    lines = ["# Game options", "",
             f"Generated from the games' `Config` classes by `{GENERATE.split(' >')[0]}`"
             + ("" if builtin else " (with the plugins installed here)")
             + "; do not edit: change the field's docstring or default in the code and run it again. "
               "`arena games NAME` prints the same in a terminal, plugins included. A spec sets these "
               "in its `[game]` table (`name = \"...\"` and the options).", ""]
    for game in games_:
        if "error" in game:
            lines.append(f"- `{game['name']}`: does not load ({game['error']})")
        else:
            lines.append(f"- [`{game['name']}`](#{game['name']}): {game['summary']}")
    for game in games_:
        if "error" in game:
            continue
        lines += ["", f"## {game['name']}", "", game["summary"], "", f"`{game['class']}`", ""]
        lines += _declarations(game) + [""]
        lines += markdown_table([Parameter(**p) for p in game["parameters"]])
    return "\n".join(lines) + "\n"


def _text(games_: list[dict], full: bool) -> str:
    import textwrap

    from ._parameters import Parameter, text_block

    if not full:
        width = max((len(g["name"]) for g in games_), default=4)
        lines = []
        for game in games_:
            if "error" in game:
                lines.append(f"{game['name']:<{width}}  does not load: {game['error']}")
                continue
            count = len(game["parameters"])
            lines.append(f"{game['name']:<{width}}  {game['players']} players; {count} option{'s' * (count != 1)}")
            lines += textwrap.wrap(game["summary"], 96, initial_indent=" " * (width + 2),
                                   subsequent_indent=" " * (width + 2))
        lines.append("")
        lines.append("`arena games NAME` for a game's options (type, default, meaning) and its agents.")
        return "\n".join(lines) + "\n"
    blocks = []
    for game in games_:
        lines = [f"{game['name']}  ({game['class']})"]
        lines += textwrap.wrap(game["summary"], 96, initial_indent="  ", subsequent_indent="  ")
        lines += ["  " + line for line in _declarations(game)]
        lines.append("  options (a spec's [game] table; `name: type = default`):")
        lines += text_block([Parameter(**p) for p in game["parameters"]], indent="    ")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def run(args) -> int:
    listed = _listed(args)
    if args.json:
        print(json.dumps(listed, indent=2))
    elif args.markdown:
        sys.stdout.write(markdown(listed, args.builtin))
    else:
        sys.stdout.write(_text(listed, full=bool(args.names)))
    return 0
