"""Location Categorization, public for analysis and training programs (e.g.
``jobs/scotland_yard/lc_tables.py``, which learns the tables the seekers' determinization reads).

The functions are the ones the seekers' agent uses (defined in the private
``_common.py``); this module is their public face:

* :func:`categorize`: the categories of the possible locations of Mr X;
* :func:`category_of`: the category of one station;
* :func:`location_weights`: the determinization's weight per possible location (by a
  :class:`Determinization` rule, from :class:`LcTables`);
* :func:`presence_counts`: the paper's presence counts from a detailed table.
"""
from ._common import categorize, category_of, Determinization, LcTables, location_weights, presence_counts

__all__ = ["categorize", "category_of", "Determinization", "LcTables", "location_weights", "presence_counts"]
