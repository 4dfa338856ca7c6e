"""The analysis of a run: its graded decisions, computed once, when first asked for.

The expert (solver.expert.analyse) grades each of the run's decisions from what the
player saw at that moment, never from the seed's hidden future, so the analysis shows
nothing of the run that its actions do not: it follows the run's actions' rule (a run
of a daily whose day is not over: its own player only). The first request records the
analysis as pending and queues it behind every solve, within the analysis caps
(service.jobs.queue.analysis_refusal); the answer is a 202 until it is stored, then a 200.
"""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify

from puzzles import GAMES
from service.jobs.queue import analysis_refusal, request_analysis
from service.storage.analyses import AnalysisRecord
from service.storage.puzzles import PuzzleRecord
from service.storage.runs import RunRecord
from service.web import players
from service.web.api.common import (
    SECRET_SEED,
    TOKEN_ID,
    api,
    check_line_open,
    puzzle_by_id,
    puzzle_json,
    services,
    tiebreak_field,
)
from service.web.api.puzzles import refused_solve
from service.web.api.runs import shows_actions
from service.web.errors import ApiError
from service.web.openapi import Answer
from service.web.ratelimit import client_key

# The seed of the expert's sampling of the unseen: one per service, so that an analysis
# is reproducible with `rally analyse`.
ANALYSIS_RNG_SEED = 0

# An expected amount lost (or gained) in points and in tie-break, each with its error: the
# half-width of a 95% interval.
ESTIMATE = {
    "type": "object",
    "required": ["points", "points_error", "tiebreak", "tiebreak_error"],
    "properties": {
        "points": {"type": "number"},
        "points_error": {"type": "number", "minimum": 0},
        "tiebreak": tiebreak_field(
            {"type": "number"}, "The tie-break lost: positive when the run's is the lower"
        ),
        "tiebreak_error": {"type": "number", "minimum": 0},
    },
}
GRADED_DECISIONS = {
    "type": ["object", "null"],
    "description": "The graded decisions (the shape of `rally analyse --json`); null unless done",
    "required": ["result", "optimum", "gap", "decision_loss", "luck", "decisions", "samples"],
    "properties": {
        "seed": {**SECRET_SEED},
        "result": {"type": "object", "description": "The run's points, tie-break, finished"},
        "optimum": {"type": "object", "description": "The optimum's points and tie-break"},
        "gap": {"type": "object", "description": "Optimum less result, points and tie-break"},
        "decision_loss": {**ESTIMATE, "description": "What the run's decisions lost in all"},
        "luck": {**ESTIMATE, "description": "The gap less the decision loss"},
        "decisions": {
            "type": "array",
            "description": "Each move with more than one distinct choice",
            "items": {
                "type": "object",
                "required": ["index", "action", "expert", "loss"],
                "properties": {
                    "index": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "Its action's place in the run: the board before it "
                        "is the run's step `index`",
                    },
                    "action": {"type": "object", "description": "The player's action"},
                    "expert": {"type": "object", "description": "The expert's choice"},
                    "loss": {**ESTIMATE, "description": "The expected loss of the player's"},
                },
            },
        },
        "samples": {
            "type": "integer",
            "minimum": 0,
            "description": "Sampled futures per decision; 0 where each decision is valued "
            "exactly (the errors are then 0)",
        },
    },
}
ANALYSIS = api.schema(
    "Analysis",
    {
        "type": "object",
        "required": ["run_id", "status", "rng_seed", "analysis", "error", "seconds"],
        "properties": {
            "run_id": TOKEN_ID,
            "status": {
                "enum": ["pending", "done", "failed"],
                "description": "pending until computed; failed when the analysis broke a "
                "bound (error says which)",
            },
            "rng_seed": {"type": "integer", "description": "The seed of its sampling"},
            "analysis": GRADED_DECISIONS,
            "error": {"type": ["string", "null"]},
            "seconds": {"type": ["number", "null"], "description": "How long it took"},
        },
    },
)


def _analysis_json(record: AnalysisRecord, puzzle: PuzzleRecord) -> dict[str, Any]:
    """The stored analysis as the contract shows it: the seed it names is the puzzle's as
    shown (null for a daily whose day is not over, as everywhere)."""
    analysis = record.analysis
    if analysis is not None and "seed" in analysis:
        analysis = {**analysis, "seed": puzzle_json(puzzle)["seed"]}
    return {
        "run_id": record.run_id,
        "status": record.status,
        "rng_seed": record.rng_seed,
        "analysis": analysis,
        "error": record.error,
        "seconds": record.seconds,
    }


def _analysable_run(run_id: str) -> tuple[RunRecord, PuzzleRecord]:
    """The run, if the caller may see its analysis: 404 for no run, 403 while the line is
    hidden from the caller, 422 for a run of older rules than the expert plays."""
    run = services().store.runs.get(run_id)
    if run is None:
        raise ApiError(404, f"no run {run_id!r}")
    puzzle = puzzle_by_id(run.puzzle_id)
    if not shows_actions(run, puzzle, players.current_player_id()):
        check_line_open(puzzle, "this run's analysis opens")
    current = GAMES[puzzle.game].rules_version
    if puzzle.rules_version != current:
        raise ApiError(
            422,
            f"this run was played under rules {puzzle.rules_version}; the expert plays "
            f"{current} only",
        )
    return run, puzzle


def _ask(run_id: str, stored: AnalysisRecord | None) -> AnalysisRecord:
    """Record the analysis pending (if new) and make sure it is queued; a new one over a cap
    is refused (503 or 429) with nothing recorded."""
    requester = players.current_player_id() or client_key()
    config = services().config
    refusal = analysis_refusal(run_id, requester, config)
    if refusal is not None:
        if stored is None:
            raise refused_solve(refusal)
        return stored  # recorded already: it is queued again at a later request
    record = stored or services().store.analyses.request(run_id, ANALYSIS_RNG_SEED)
    request_analysis(run_id, requester, config)
    return record


@api.route(
    "/runs/<run_id>/analysis",
    "GET",
    summary="The graded decisions of a run",
    responses={
        200: Answer("The analysis, done (or failed, with the reason)", ANALYSIS),
        202: Answer("Being computed: poll again in a few seconds", ANALYSIS),
    },
    errors=[403, 404, 422, 429],
)
def get_run_analysis(run_id: str) -> tuple[Response, int]:
    """Each decision of the run graded by the expert (the expected loss against its best
    choice, with its error) and the run's gap to the optimum split into what decisions
    lost and luck. Computed once per run, when first asked, behind every solve: 202 until
    it is stored. Refused while too many analyses wait (503) or the caller has their share
    waiting (429). A run of a daily whose day is not over: its own player only."""
    _run, puzzle = _analysable_run(run_id)
    stored = services().store.analyses.get(run_id)
    if stored is None or stored.status == "pending":
        stored = _ask(run_id, stored)
    response = jsonify(_analysis_json(stored, puzzle))
    response.cache_control.no_store = True
    return response, 202 if stored.status == "pending" else 200
