"""The proven optimum of a seed, with hindsight, and a witness run that reaches it; the
reference players; the expert that plays without foresight (solver.expert).

One package per game (solver/<game>/: its exact solver, reference players and the
expert's parts) puts them together with its engine in one typed kit (solver.kit), which
one call registers (solver.registry.register, the engine with it): everything generic,
here and in the service, reads the registry. The solver knows the engines, never the
service."""

from solver.core import SolveResult, solve
from solver.kit import SolverError

__all__ = ["SolveResult", "SolverError", "solve"]
