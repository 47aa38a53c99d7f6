"""The parameters of a config class as rows (name, type, default, docstring), read from the code.

Shared by ``arena agents`` and ``arena games``, so that what the docs say about a
parameter is what the code declares: the type and its rule come from the pydantic
field (bounds from ``Field(ge=..., le=...)``, choices from ``Literal`` or
:func:`games.validation.one_of`), the default from the dataclass field, and the
description from the docstring written under the field (inherited fields from the
base class that declares them, e.g. :class:`agents.search.config.SearchConfig`).

The docstrings are read from the source with :mod:`ast` because Python keeps no
attribute docstrings at run time; a class whose source is not available (defined in
an interactive session) gets empty descriptions, never an error.
"""
from __future__ import annotations

import ast
import inspect
import json
import math
import re
import textwrap
import types
import typing
from dataclasses import MISSING, dataclass, fields, is_dataclass
from functools import lru_cache

__all__ = ["Parameter", "parameters", "plain", "first_paragraph", "default_text", "markdown_table", "text_block"]


@dataclass(frozen=True)
class Parameter:
    """One field of a config class as the docs show it."""

    name: str
    """The field's name, as a spec writes it (``params.<name>`` or ``[game] <name>``)."""
    type: str
    """The type and its rule in words, e.g. ``number in [0, 100]``, ``one of "a", "b"``."""
    default: str
    """The default as TOML would write it (``true``, ``"auto"``, ``0.5``), ``absent`` for
    None, ``required`` for a field without one."""
    description: str
    """The docstring under the field, whitespace collapsed ("" if it has none)."""
    alias: str = ""
    """A short name the agent declares for it (``Agent.param_aliases``), or ""."""

    def as_dict(self) -> dict:
        return {"name": self.name, "type": self.type, "default": self.default,
                "description": self.description, "alias": self.alias}


_ROLE = re.compile(r":(?:class|func|mod|meth|attr|data|obj):`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain(text: str) -> str:
    """Docstring text as the docs show it: on one line, reST literals (````x````) and roles
    (``:class:`x```) as Markdown code (```x```)."""
    return _LITERAL.sub(r"`\1`", _ROLE.sub(r"`\1`", " ".join(text.split())))


def first_paragraph(doc: str | None) -> str:
    """The first paragraph of a docstring on one line ("" for none)."""
    if not doc:
        return ""
    return plain(inspect.cleandoc(doc).split("\n\n", 1)[0])


@lru_cache(maxsize=None)
def _own_field_docs(cls: type) -> dict[str, str]:
    """Docstrings of the fields ``cls`` itself declares (an annotated name followed by a
    string literal in the class body)."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    body = next((node.body for node in tree.body if isinstance(node, ast.ClassDef)), [])
    docs = {}
    for node, following in zip(body, body[1:]):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)):
            docs[node.target.id] = plain(inspect.cleandoc(following.value.value))
    return docs


def _field_docs(cls: type) -> dict[str, str]:
    """Docstrings of every field of ``cls``, a subclass's own over its bases'."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is object:
            continue
        docs.update(_own_field_docs(klass))
    return docs


def _number(value) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{value:.1f}"
    return repr(value)


def default_text(value) -> str:
    """A default as a TOML spec would write it."""
    if value is None:
        return "absent"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, float):
        return "inf" if math.isinf(value) else _number(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(default_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {default_text(v)}" for k, v in value.items()) + "}"
    if is_dataclass(value):
        return "{" + ", ".join(f"{f.name} = {default_text(getattr(value, f.name))}" for f in fields(value)) + "}"
    return repr(value)


def _choices(validator) -> tuple | None:
    """The names a :func:`games.validation.one_of` rule allows (read from its closure:
    ``one_of`` keeps them as the one list of the names)."""
    func = getattr(validator, "func", None)
    if func is None or not getattr(func, "__qualname__", "").startswith("one_of."):
        return None
    allowed = inspect.getclosurevars(func).nonlocals.get("allowed")
    return tuple(allowed) if allowed is not None else None


def _rule_words(metadata) -> tuple[str, tuple | None]:
    """Bounds (``in [0, 1]``, ``>= 1``) and choices from a field's pydantic metadata."""
    low = high = None
    choices = None
    flat = []
    for item in metadata:  # a FieldInfo inside Annotated (a union's member) holds its own rules
        flat += [item, *(getattr(item, "metadata", ()) or ())]
    for item in flat:
        for bound in ("ge", "gt"):
            if getattr(item, bound, None) is not None:
                low = (bound, getattr(item, bound))
        for bound in ("le", "lt"):
            if getattr(item, bound, None) is not None:
                high = (bound, getattr(item, bound))
        choices = _choices(item) or choices
    if low and high:
        words = f"in {'[' if low[0] == 'ge' else '('}{_number(low[1])}, {_number(high[1])}{']' if high[0] == 'le' else ')'}"
    elif low:
        words = f"{'>=' if low[0] == 'ge' else '>'} {_number(low[1])}"
    elif high:
        words = f"{'<=' if high[0] == 'le' else '<'} {_number(high[1])}"
    else:
        words = ""
    return words, choices


_NAMES = {int: "int", float: "number", bool: "bool", str: "string", type(None): "absent"}


def _type_words(annotation, metadata=()) -> str:
    """A type annotation (resolved by pydantic) and its rule in words."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        base, *extra = typing.get_args(annotation)
        return _type_words(base, (*metadata, *extra))
    words, choices = _rule_words(metadata)
    if choices is not None:
        return "one of " + ", ".join(default_text(c) for c in choices)
    if origin is typing.Literal:
        return "one of " + ", ".join(default_text(c) for c in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        parts = [_type_words(arg) for arg in typing.get_args(annotation) if arg is not type(None)]
        text = " or ".join(dict.fromkeys(parts))
        if words:
            text = f"{text} {words}"
        return f"{text} or absent" if type(None) in typing.get_args(annotation) else text
    if origin in (tuple, list):
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        text = f"array of {_type_words(args[0])}" if args else "array"
    elif annotation is typing.Any:
        text = "any"
    elif isinstance(annotation, type):
        text = _NAMES.get(annotation, annotation.__name__)
    else:
        text = str(annotation)
    return f"{text} {words}" if words else text


def _pydantic_fields(cls: type) -> dict:
    return getattr(cls, "__pydantic_fields__", None) or {}


def parameters(config_cls: type, aliases: dict[str, str] | None = None) -> list[Parameter]:
    """The fields of ``config_cls`` (a :func:`games.validation.config_class` class, or any
    dataclass) in declaration order."""
    docs = _field_docs(config_cls)
    typed = _pydantic_fields(config_cls)
    aliases = aliases or {}
    rows = []
    for f in fields(config_cls):
        info = typed.get(f.name)
        if info is not None:
            type_text = _type_words(info.annotation, tuple(info.metadata))
        else:
            type_text = f.type if isinstance(f.type, str) else _type_words(f.type)
        if f.default is not MISSING:
            default = default_text(f.default)
        elif f.default_factory is not MISSING:
            default = default_text(f.default_factory())
        else:
            default = "required"
        rows.append(Parameter(f.name, type_text, default, docs.get(f.name, ""), aliases.get(f.name, "")))
    return rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(rows: list[Parameter]) -> list[str]:
    """A Markdown table of parameters (pipes escaped), or a line saying there are none."""
    if not rows:
        return ["No parameters."]
    lines = ["| parameter | type | default | description |", "|---|---|---|---|"]
    for row in rows:
        name = f"`{row.name}`" + (f" (`{row.alias}`)" if row.alias else "")
        lines.append(f"| {name} | {_cell(row.type)} | `{_cell(row.default)}` | {_cell(row.description)} |")
    return lines


def text_block(rows: list[Parameter], width: int = 100, indent: str = "  ") -> list[str]:
    """Parameters for a terminal: ``name (alias): type = default`` and the description
    wrapped under it."""
    if not rows:
        return [f"{indent}no parameters"]
    lines = []
    for row in rows:
        name = row.name + (f" ({row.alias})" if row.alias else "")
        lines.append(f"{indent}{name}: {row.type} = {row.default}")
        if row.description:
            lines += textwrap.wrap(row.description, width=width, initial_indent=indent + "    ",
                                   subsequent_indent=indent + "    ")
    return lines
