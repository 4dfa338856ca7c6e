"""The proven optimum of a seed, with hindsight, and a witness run that reaches it."""

from solver.core import SolverError, SolveResult, solve

__all__ = ["SolveResult", "SolverError", "solve"]
