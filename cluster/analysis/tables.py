"""Markdown tables: the one writer every report of the cluster uses.

A leaf of ``cluster.analysis`` (imports nothing of the project), so that the
study report, segments, ratings, board pairs and sweep results format tables
one way without importing each other.
"""
from __future__ import annotations

import html
from typing import Iterable, Sequence

__all__ = ["markdown_table", "markdown_cell"]


def markdown_table(header: Sequence[str], rows: Iterable[Sequence], align: Sequence[str] | str = "---:") -> str:
    """The one Markdown table writer (GitHub style, no ``tabulate`` needed): ``header``,
    the alignment row (``align``: one marker per column, or one for all, e.g. ``"---:"``
    right-aligned) and one line per row, cells as ``str``; no trailing newline.

    >>> print(markdown_table(["Player", "Games"], [["A", 4]], ["---", "---:"]))
    | Player | Games |
    |---|---:|
    | A | 4 |
    """
    header = [markdown_cell(h) for h in header]
    marks = [align] * len(header) if isinstance(align, str) else list(align)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(marks) + "|"]
    lines += ["| " + " | ".join(markdown_cell(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown_cell(value) -> str:
    """``str(value)`` for a Markdown table cell: ``&``, ``<``, ``>`` as HTML entities (a
    renderer such as MLflow's run description shows them as written, never as markup) and
    ``|`` escaped (it would end the cell).

    >>> print(markdown_cell("a|<b>"))
    a\\|&lt;b&gt;
    """
    return html.escape(str(value), quote=False).replace("|", "\\|")
