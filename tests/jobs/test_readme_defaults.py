"""The README's agent parameter lists state the defaults the code has: every default the
README states for an agent parameter is read from its text and compared with the agent's
Config (``agents.registry``), and every agent with parameters is described in the README."""
from __future__ import annotations

import re
from dataclasses import MISSING, fields
from pathlib import Path

import pytest

from agents.registry import agent_class, agent_names

README = Path(__file__).resolve().parents[2] / "README.md"
TEXT = re.sub(r"\s+", " ", README.read_text(encoding="utf-8"))  # line breaks inside sentences

#: Each statement of a default in the README: (agents, a regex over the README's text whose
#: named groups are parameter names, each matching the documented default as written).
CLAIMS = [
    # XCOM: "Parameters `alpha`, `gamma`, `value_weight`, `value_target` (defaults 0.01 / 0.9 / ...)"
    (("xcom_mf_fa",), r"Parameters `alpha`, `gamma`, `value_weight`, `value_target` \(defaults "
                      r"(?P<alpha>[^ ]+) / (?P<gamma>[^ ]+) / (?P<value_weight>[^ ]+) / (?P<value_target>[^;]+);"),
    (("xcom_mcts_td", "xcom_convae_fa"), r"\(defaults [^ ]+ / (?P<gamma>[^ ]+) / (?P<value_weight>[^ ]+) / "
                                         r"(?P<value_target>[^;]+);"),
    (("xcom_mcts_td",), r"defaults [^;]+; alpha (?P<alpha>[^ ]+) for the table"),
    (("xcom_convae_fa",), r"defaults [^;]+; alpha [^ ]+ for the table, (?P<alpha>[^ ]+) for Conv-AE\+FA"),
    (("xcom_mcts_reward",), r"\(defaults [^ ]+ / [^ ]+ / (?P<value_weight>[^ ]+) / "),
    (("xcom_mf_fa", "xcom_mcts_td", "xcom_convae_fa"), r"\(`value_target = (?P<value_target>\"[a-z_]+\")`, the default"),
    # Pommerman
    (("mcts", "rhea", "osla", "femcts"), r"take `profile = \"java\" \| \"arena\" \| \"auto\"` \(default (?P<profile>`[a-z]+`)"),
    (("femcts",), r"`mcts_switches = \"java\"` \(default (?P<mcts_switches>`\"[a-z]+\"`)\)"),
    # Scotland Yard: "The paper's definitions are the defaults" and the trees' default
    (("sy_mcts_seekers",), r"\(`lc_general_n = (?P<lc_general_n>\"[a-z_]+\")`;"),
    (("sy_mcts_seekers",), r"\(`lc_detailed = (?P<lc_detailed>\"[a-z_]+\")`;"),
    (("sy_mcts_seekers",), r"\(`lc_prior = (?P<lc_prior>\"[a-z_]+\")`;"),
    (("sy_mcts_seekers",), r"\(`lc_record = (?P<lc_record>\"[a-z_]+\")`;"),
    (("sy_mcts_seekers",), r"\(`coalition_view = (?P<coalition_view>\"[a-z_]+\")`;"),
    (("sy_mcts_seekers",), r"`trees = (?P<trees>\"[a-z_]+\")` \(one tree shared"),
    # the bird game's MCTS
    (("birds_mcts",), r"`chance_grouping`: what an outcome is: (?P<chance_grouping>`\"[a-z]+\"`) \([^)]*the default\)"),
    (("birds_mcts",), r"`widening_alpha` > 0 adds .{0,120}?; (?P<widening_alpha>[0-9.]+), off, by default\)"),
    (("birds_mcts",), r"`chance_selection`: (?P<chance_selection>`\"[a-z_]+\"`) \([^)]*the default\)"),
    (("birds_mcts",), r"`backup`: (?P<backup>`\"[a-z]+\"`) \([^)]*the default\)"),
    (("birds_mcts",), r"`margin_scale` = (?P<margin_scale>[0-9.]+) points"),
    (("birds_mcts",), r"`opponent`: .{0,80}?(?P<opponent>`\"[a-z]+\"`) \(the default"),
    (("birds_mcts",), r"`closed_loop = true`: .{0,200}?; (?P<closed_loop>false) \(the default\)"),
]


def _defaults(name: str) -> dict:
    return {f.name: f.default for f in fields(agent_class(name).Config) if f.default is not MISSING}


def _as_written(text: str):
    """A default as the README writes it: `"x"`, "x", `x`, 0.5, 5e-4, false."""
    text = text.strip().strip("`").strip('"')
    if text in ("true", "false"):
        return text == "true"
    try:
        return float(text)
    except ValueError:
        return text


@pytest.mark.parametrize("agents, pattern", CLAIMS, ids=[f"{a[0]}:{p[:40]}" for a, p in CLAIMS])
def test_each_default_the_readme_states_is_the_configs(agents, pattern):
    found = re.search(pattern, TEXT)
    assert found, f"README no longer says {pattern!r}: update CLAIMS with the new wording"
    for name in agents:
        defaults = _defaults(name)
        for field, written in found.groupdict().items():
            assert field in defaults, f"{name}.Config has no field {field!r} (README: {written!r})"
            code = defaults[field]
            documented = _as_written(written)
            if isinstance(code, bool) or isinstance(documented, str):
                assert documented == code, f"README: {name} {field} default {written!r}; code: {code!r}"
            else:
                assert documented == pytest.approx(float(code)), \
                    f"README: {name} {field} default {written!r}; code: {code!r}"


def test_every_agent_with_parameters_is_in_the_readme():
    for name in agent_names():
        cls = agent_class(name)
        if cls.__module__.startswith("agents.") and fields(cls.Config):  # not the tests' fake agent
            assert f"`{name}`" in TEXT, f"agent {name!r} (it has parameters) is not described in README.md"
