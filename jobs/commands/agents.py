"""``arena agents``: every registered agent (plugins included) and its parameters, from the code.

The parameters are read from each agent's ``Config`` class (type and rule, default, the
docstring under the field; :mod:`jobs.commands._parameters`), so what this prints cannot
drift from what a spec's ``params`` accepts. ``agents/PARAMETERS.md`` is this command's
``--markdown --builtin`` output (``tests/jobs/test_parameter_docs.py`` checks it is current).
"""
from __future__ import annotations

import json
import sys

from . import UsageError

#: The command that writes agents/PARAMETERS.md (named in that file and in the test that checks it).
GENERATE = "python -m jobs.cli agents --markdown --builtin > agents/PARAMETERS.md"


def add_parser(sub) -> None:
    """Register ``arena agents`` and its options."""
    p = sub.add_parser(
        "agents", help="list the agents (plugins included) and their parameters: type, default, meaning",
        description="Without NAME: one line per registered agent (built-in and installed plugins): its "
                    "name, the games it plays, its number of parameters and what it is. With NAME: each "
                    "agent's parameters (a spec's [[lineup]] params), each with its type and rule, its "
                    "default and the docstring of its Config field, read from the code. A plugin that "
                    "does not import is listed with the reason; naming it is an error (exit 2).")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="agents to describe in full (registry names, plugin names or package.module:Class)")
    p.add_argument("--game", metavar="GAME",
                   help="only the agents that play GAME (declared in Agent.games, or by Agent.plays_game)")
    p.add_argument("--builtin", action="store_true",
                   help="only Arena's own agents (modules under agents/), not the installed plugins")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--markdown", action="store_true",
                      help="print a Markdown page with every listed agent's parameter table "
                           "(agents/PARAMETERS.md is this with --builtin)")
    form.add_argument("--json", action="store_true", help="print JSON: one object per agent")
    p.set_defaults(func=run)


def _summary(cls) -> str:
    from ._parameters import first_paragraph

    return first_paragraph(cls.__doc__) or first_paragraph(cls.Config.__doc__)


def describe(name: str) -> dict:
    """What ``arena agents NAME`` shows: the agent's declarations and its parameters.
    Raises :class:`games.plugins.PluginError` or ValueError for an agent that does not load."""
    from agents.registry import agent_class

    from ._parameters import parameters

    cls = agent_class(name)
    try:
        learns = bool(cls.learns(cls.Config()))
    except (TypeError, ValueError):  # a Config with required fields: no default instance
        learns = None
    return {
        "name": name,
        "class": f"{cls.__module__}:{cls.__qualname__}",
        "summary": _summary(cls),
        "games": list(cls.games),
        "plays_any": cls.plays_any_description,
        "seats": list(cls.plays_seats),
        "iteration_budget": bool(cls.supports_iteration_budget),
        "learns": learns,
        "parameters": [p.as_dict() for p in parameters(cls.Config, dict(cls.param_aliases))],
    }


def _plays(agent: dict, game: str) -> bool:
    from agents.registry import agent_class

    return agent_class(agent["name"]).plays(game)


def _listed(args) -> list[dict]:
    """Every agent to show, in name order: the named ones (each must load) or all registered
    ones (a plugin that does not load becomes ``{"name", "error"}``)."""
    import agents  # noqa: F401  (registers the built-in agents)
    from agents.registry import agent_names
    from games.plugins import PluginError

    if args.game is not None:
        from games.registry import check_game

        try:
            check_game(args.game)
        except ValueError as exc:
            raise UsageError(f"--game: {exc}") from None
    out = []
    for name in args.names or agent_names():
        try:
            agent = describe(name)
        except (PluginError, ValueError) as exc:
            if args.names:
                raise UsageError(str(exc).removeprefix("agent: ")) from None
            out.append({"name": name, "error": str(exc)})
            continue
        if args.builtin and not agent["class"].startswith("agents."):
            continue
        if args.game is not None and not _plays(agent, args.game):
            continue
        out.append(agent)
    return out


def _games_text(agent: dict) -> str:
    return ", ".join(agent["games"]) if agent["games"] else agent["plays_any"]


def _declarations(agent: dict) -> list[str]:
    lines = [f"- plays: {_games_text(agent)}"
             + (f" (seats {', '.join(map(str, agent['seats']))} only)" if agent["seats"] else "")]
    if not agent["iteration_budget"]:
        lines.append("- stops on the clock only: an iteration budget is refused")
    if agent["learns"]:
        lines.append("- carries learned state from game to game (with its default parameters)")
    return lines


def markdown(agents_: list[dict], builtin: bool) -> str:
    """The Markdown page of ``agents_``: a list, then one section per agent."""
    from ._parameters import Parameter, markdown_table

    lines = ["# Agent parameters", "",
             f"Generated from the agents' `Config` classes by `{GENERATE.split(' >')[0]}`"
             + ("" if builtin else " (with the plugins installed here)")
             + "; do not edit: change the field's docstring or default in the code and run it again. "
               "`arena agents NAME` prints the same in a terminal, plugins included.", ""]
    for agent in agents_:
        if "error" in agent:
            lines.append(f"- `{agent['name']}`: does not load ({agent['error']})")
        else:
            lines.append(f"- [`{agent['name']}`](#{agent['name']}): {agent['summary']}")
    for agent in agents_:
        if "error" in agent:
            continue
        lines += ["", f"## {agent['name']}", "", agent["summary"], "", f"`{agent['class']}`", ""]
        lines += _declarations(agent) + [""]
        lines += markdown_table([Parameter(**p) for p in agent["parameters"]])
    return "\n".join(lines) + "\n"


def _text(agents_: list[dict], full: bool) -> str:
    import textwrap

    from ._parameters import Parameter, text_block

    if not full:
        width = max((len(a["name"]) for a in agents_), default=4)
        lines = []
        for agent in agents_:
            if "error" in agent:
                lines.append(f"{agent['name']:<{width}}  does not load: {agent['error']}")
                continue
            count = len(agent["parameters"])
            head = f"{agent['name']:<{width}}  {_games_text(agent)}; {count} parameter{'s' * (count != 1)}"
            lines.append(head)
            lines += textwrap.wrap(agent["summary"], 96, initial_indent=" " * (width + 2),
                                   subsequent_indent=" " * (width + 2))
        lines.append("")
        lines.append("`arena agents NAME` for an agent's parameters (type, default, meaning).")
        return "\n".join(lines) + "\n"
    blocks = []
    for agent in agents_:
        lines = [f"{agent['name']}  ({agent['class']})"]
        lines += textwrap.wrap(agent["summary"], 96, initial_indent="  ", subsequent_indent="  ")
        lines += ["  " + line for line in _declarations(agent)]
        lines.append("  parameters (a spec's [[lineup]] params; `name (alias): type = default`):")
        lines += text_block([Parameter(**p) for p in agent["parameters"]], indent="    ")
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
