"""Crazy Rally's exact solver (a longest path found by OR-Tools' min-cost flow), its
reference players and the expert's game-specific parts, put together with the engine in
its kit (kit.py)."""
