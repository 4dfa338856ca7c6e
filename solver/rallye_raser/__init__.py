"""Rallye Raser's exact solver (its round model and bound), its reference players and the
expert's game-specific parts, put together with the engine in its kit (kit.py)."""
