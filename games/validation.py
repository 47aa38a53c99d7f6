"""The one way Arena validates configs: frozen pydantic dataclasses, strict.

A config is a frozen dataclass whose fields declare their rules (types,
``Annotated[..., Field(ge=..., le=...)]``, ``Literal[...]``); rules that tie
fields together are ``pydantic.model_validator(mode="after")`` methods raising
``ValueError("field: message")``. Decorate it with :func:`config_class`::

    @config_class
    class SearchConfig:
        exploration: Annotated[Real, Field(ge=0, le=100)] = math.sqrt(2)
        \"\"\"UCT exploration constant.\"\"\"
        max_nodes: Annotated[int, Field(ge=2, le=1 << 20)] = 50_000

    SearchConfig(max_nodes=True)  # ValueError: max_nodes: must be an int, got True

Validation is strict: no bool where a number is meant, no string for a number,
unknown keys refused (``Literal[...]`` or :func:`one_of` for a choice of
names); a float field takes an int (use :data:`Real` to keep the
int as given, so ``dataclasses.asdict`` and the hashes built on it do not
change). A tuple field that must accept TOML arrays (lists) says so with
``Annotated[tuple[int, ...], Field(strict=False)]`` (its items stay strict).
The class stays a dataclass: ``dataclasses.fields`` / ``asdict`` / ``replace``
work, defaults are the plain values.

Constructing a config raises a one-line ``ValueError("field: message, got
value")`` (never pydantic's multi-line report); :func:`as_value_error` does
that conversion for any ``ValidationError``, with a dotted prefix
(``lineup[0].params.alpha: ...``), and :func:`build` constructs a config from a
dict with such a prefix.
"""
from __future__ import annotations

import functools
from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, ValidationError, WrapValidator
from pydantic.dataclasses import dataclass as _pydantic_dataclass

__all__ = ["NonBlank", "Real", "as_value_error", "build", "config_class", "error_path", "one_of"]

#: pydantic settings of every config: strict types, unknown keys refused.
CONFIG = ConfigDict(strict=True, extra="forbid")


def _real(value, handler):
    if isinstance(value, bool):
        raise ValueError(f"must be a number, got {value!r}")
    out = handler(value)
    return value if type(value) is int else out


#: A number: an int or a float (never a bool), kept as given (``1`` stays
#: ``1``, as before pydantic, so config hashes do not change). Add bounds with
#: ``Annotated[Real, Field(ge=0, le=1)]``.
Real = Annotated[float, WrapValidator(_real)]


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError(f"must be a non-empty string, got {value!r}")
    return value


#: A string with something in it (a path, a name).
NonBlank = Annotated[str, AfterValidator(_non_blank)]


def one_of(choices) -> AfterValidator:
    """A rule for ``Annotated[str, one_of(CHOICES)]``: the value is one of
    ``choices`` (any iterable: a tuple, or a dict's keys), which stay the one
    list of the names (``Literal`` would repeat them)."""
    allowed = tuple(choices)

    def check(value):
        if value not in allowed:
            raise ValueError(f"must be one of {list(allowed)}, got {value!r}")
        return value

    return AfterValidator(check)


def config_class(cls: type | None = None, /, **settings):
    """Class decorator: ``cls`` becomes a frozen, strictly validating pydantic
    dataclass whose constructor raises a one-line ``ValueError`` naming the
    field. ``settings`` override :data:`CONFIG` (e.g. ``strict=False``).
    A subclass of a config is decorated again (as with ``dataclasses``)."""

    def wrap(klass: type) -> type:
        klass = _pydantic_dataclass(klass, frozen=True, config=ConfigDict(**{**CONFIG, **settings}))
        init = klass.__init__

        @functools.wraps(init)
        def __init__(self, *args, **kwargs):
            try:
                init(self, *args, **kwargs)
            except ValidationError as exc:
                raise as_value_error(exc) from None

        klass.__init__ = __init__
        return klass

    return wrap if cls is None else wrap(cls)


def error_path(loc: tuple, prefix: str = "") -> str:
    """A pydantic error location as Arena writes it: ``("lineup", 0, "params",
    "alpha")`` -> ``lineup[0].params.alpha`` (after ``prefix``, if given)."""
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


_TYPE_WORDS = {
    "int_type": "must be an int",
    "float_type": "must be a number",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "tuple_type": "must be an array",
}

_REWORDED = {
    "missing": "required",
    "missing_keyword_only_argument": "required",
    "unexpected_keyword_argument": "unknown field",
    "extra_forbidden": "unknown field",
}


def as_value_error(exc: ValidationError, prefix: str = "") -> ValueError:
    """The first error of ``exc`` as ``ValueError("prefix.field: message, got
    value")``. A validator's own ``ValueError("field: message")`` (raised where
    the location is the whole object, e.g. a cross-field rule) keeps its text
    and gets the prefix."""
    error = exc.errors(include_url=False)[0]
    kind = error["type"]
    message = error["msg"]
    if kind == "value_error":
        message = message.removeprefix("Value error, ")
    elif kind in _REWORDED:
        message = _REWORDED[kind]
    elif kind in _TYPE_WORDS:
        message = _TYPE_WORDS[kind]
    elif kind == "literal_error":
        message = f"must be one of {error['ctx']['expected']}"
    else:
        message = message.replace("Input should be", "must be", 1)
    loc = tuple(error.get("loc", ()))
    # A validator's message is complete; pydantic's own gets the offending value.
    got = "" if kind == "value_error" or kind in _REWORDED else f", got {error['input']!r}"
    if not loc:  # a rule over the whole object: its message names the field
        return ValueError(f"{prefix}.{message}" if prefix else message)
    return ValueError(f"{error_path(loc, prefix)}: {message}{got}")


def build(cls: type, values: dict[str, Any] | None, prefix: str = "") -> Any:
    """``cls(**values)`` for a :func:`config_class` class, its error (if any)
    naming the field after ``prefix`` (``build(Config, {"alpha": 2},
    "lineup[0].params")`` -> ``ValueError("lineup[0].params.alpha: ...")``)."""
    try:
        return cls(**dict(values or {}))
    except ValueError as exc:
        msg = str(exc)
        if prefix and not msg.startswith(prefix):
            msg = f"{prefix}.{msg}"
        raise ValueError(msg) from None
    except TypeError as exc:  # positional misuse, not a field
        raise ValueError(f"{prefix or cls.__name__}: {exc}") from None
