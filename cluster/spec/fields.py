"""The field rules of study and sweep specs, declared once on :mod:`games.validation`.

A section of a spec (``[design]``, ``[sweep]``, ``[scheduler]`` ...) is a
:func:`games.validation.config_class` dataclass whose fields carry these types;
:func:`section` turns a raw TOML table into it, every error one line naming the
field (``design.seeds: must be a positive int, got 0``,
``study.bogus: unknown key; known: [...]``, ``budget: must be a table, got int 7``).

    >>> @config_class
    ... class Demo:
    ...     seeds: PositiveInt
    ...     kind: one_of("asha", "fifo") = "asha"
    >>> section(Demo, {"seeds": 2}, "demo")
    Demo(seeds=2, kind='asha')
    >>> try:
    ...     section(Demo, {"seeds": True}, "demo")
    ... except SpecError as exc:
    ...     print(exc)
    demo.seeds: must be a positive int, got True
"""
from __future__ import annotations

import math
from dataclasses import MISSING, fields
from typing import Annotated, Any, Mapping

from pydantic import BeforeValidator

from games import validation
from games.validation import config_class

__all__ = ["SpecError", "SweepError", "PositiveInt", "NonNegativeInt", "Flag", "Text", "Number", "Name", "Label",
           "one_of", "is_int", "is_name", "is_label", "rule", "table", "section", "config_class"]

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
#: Characters allowed in a study or sweep name / id (it names a directory and an MLflow run):
#: letters, digits, ``.``, ``_`` and ``-``, the first a letter or a digit (so never ``.``,
#: ``..`` or a hidden directory), at most :data:`NAME_MAX` of them.
NAME_CHARS = frozenset(_ALNUM + "._-")
NAME_MAX = 100
#: Characters allowed in a lineup label (it names rows, MLflow metrics and parameters,
#: learned-state files and report cells): letters, digits, spaces and ``. _ - + = : , ( )
#: @ #``, neither first nor last a space, at most :data:`LABEL_MAX` of them. No ``/``, ``\\``,
#: quotes, ``<``, ``>``, ``&``, ``|`` or control characters.
LABEL_CHARS = frozenset(_ALNUM + " ._-+=:,()@#")
LABEL_MAX = 64


class SpecError(ValueError):
    """An invalid study spec; the message starts with the dotted field name."""


class SweepError(SpecError):
    """An invalid sweep spec; the message starts with the dotted field name."""


def is_int(value) -> bool:
    """An int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def rule(check, message: str):
    """A pydantic ``BeforeValidator`` raising ``ValueError(f"{message}, got {value!r}")``
    unless ``check(value)``."""
    def validate(value):
        if not check(value):
            raise ValueError(f"{message}, got {value!r}")
        return value
    return BeforeValidator(validate)


PositiveInt = Annotated[Any, rule(lambda v: is_int(v) and v >= 1, "must be a positive int")]
NonNegativeInt = Annotated[Any, rule(lambda v: is_int(v) and v >= 0, "must be a non-negative int")]
Flag = Annotated[Any, rule(lambda v: isinstance(v, bool), "must be true or false")]
#: A non-empty string (:data:`games.validation.NonBlank`).
Text = validation.NonBlank


def is_name(value) -> bool:
    """A study or sweep name / id: :data:`NAME_CHARS`, starting with a letter or a digit."""
    return (isinstance(value, str) and 0 < len(value) <= NAME_MAX and set(value) <= NAME_CHARS
            and value[0].isalnum())


def is_label(value) -> bool:
    """A lineup label: :data:`LABEL_CHARS`, no space at either end."""
    return (isinstance(value, str) and 0 < len(value) <= LABEL_MAX and set(value) <= LABEL_CHARS
            and value == value.strip())


Name = Annotated[Any, rule(is_name, f"use letters, digits, '.', '_' and '-', starting with a letter or a "
                                    f"digit, at most {NAME_MAX} characters (it names a directory)")]
#: What :data:`Label` says of a label it refuses.
LABEL_RULE = (f"use letters, digits, spaces and . _ - + = : , ( ) @ #, at most {LABEL_MAX} characters, no space "
              f"at either end")
Label = Annotated[Any, rule(is_label, LABEL_RULE)]


def _finite(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


Number = Annotated[Any, rule(_finite, "must be a finite number")]


def one_of(*choices: str):
    """A field taking one of ``choices`` (``must be one of ['a', 'b'], got 'c'``), on
    :func:`games.validation.one_of`."""
    return Annotated[str, validation.one_of(choices)]


def table(where: str, value, error: type[SpecError] = SpecError) -> dict:
    """``value`` as a dict, or ``error("<where>: must be a table, got ...")``."""
    if not isinstance(value, Mapping):
        raise error(f"{where}: must be a table, got {type(value).__name__} {value!r}")
    return dict(value)


def section(cls: type, raw, where: str, error: type[SpecError] = SpecError,
            required: Mapping[str, str] | None = None, **values):
    """Build the :func:`config_class` ``cls`` from the TOML table ``raw`` (plus
    ``values``, already built), raising ``error`` with the dotted field name:
    not a table, an unknown key, a missing field (with the hint in ``required``,
    ``{"seeds": "number of board seeds"}``) or a rule of a field. A rule over several
    fields writes its own full name (``design.rounds: ...``), or a message about the
    whole table (``give exactly one of ...``: ``<where>: give exactly one of ...``)."""
    data = table(where, raw, error)
    names = [f.name for f in fields(cls)]
    for key in data:
        if key not in names:
            raise error(f"{where}.{key}: unknown key; known: {sorted(names)}")
    data.update(values)
    for f in fields(cls):
        if f.name not in data and f.default is MISSING and f.default_factory is MISSING:
            hint = (required or {}).get(f.name)
            raise error(f"{where}.{f.name}: required" + (f" ({hint})" if hint else ""))
    try:
        return cls(**data)
    except error:
        raise
    except ValueError as exc:
        msg = str(exc)
        if msg.startswith(where):  # a rule over several fields, named in full
            raise error(msg) from None
        field_name = msg.split(":", 1)[0].split(".")[0].split("[")[0]
        raise error(f"{where}.{msg}" if field_name in names else f"{where}: {msg}") from None
