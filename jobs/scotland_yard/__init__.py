"""The Scotland Yard studies: their specs (``*.toml``), the offline LC tables (``tables/``)
and the programs that serve them.

* ``lc_tables``: learning the location-categorization tables offline, with their held-out
  log score (``python -m jobs.scotland_yard.lc_tables``);
* ``compare``: a family of specs played and compared with Fisher's exact tests
  (``python -m jobs.scotland_yard.compare FAMILY``).
"""
