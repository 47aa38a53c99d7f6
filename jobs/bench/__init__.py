"""The bench wing: every benchmark of Arena, behind ``arena bench`` (see README.md here)."""
