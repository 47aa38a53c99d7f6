"""``arena bench pommerman``: the engine (``engine``), the searches (``search``) and the cold start (``cold_start``)."""
