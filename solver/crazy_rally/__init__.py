"""Crazy Rally's exact solver (its CP-SAT model), its reference players and the expert's
game-specific parts."""
