"""The proven optimum of a seed, with hindsight, and a witness run that reaches it."""

from solver.core import SolveResult, solve
from solver.kit import SolverError

__all__ = ["SolveResult", "SolverError", "solve"]
