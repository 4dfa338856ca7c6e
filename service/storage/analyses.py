"""The analyses of runs in the database: requested once, then settled once (done or
failed) by the job that computes them."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from sqlalchemy import CursorResult, select, update

from service.storage.database import Database
from service.storage.models import RunAnalysis, utc_now


@dataclass(frozen=True)
class AnalysisRecord:
    """A run's analysis: pending until computed, then done (analysis) or failed (error)."""

    run_id: str
    status: str
    rng_seed: int
    analysis: dict[str, Any] | None
    error: str | None
    seconds: float | None


_RECORDED_COLUMNS = [RunAnalysis.__table__.c[field.name] for field in fields(AnalysisRecord)]


class AnalysisRepository:
    """The analyses of one database."""

    def __init__(self, database: Database) -> None:
        self._database = database

    def get(self, run_id: str) -> AnalysisRecord | None:
        with self._database.read() as connection:
            row = connection.execute(
                select(*_RECORDED_COLUMNS).where(RunAnalysis.run_id == run_id)
            ).first()
            return AnalysisRecord(*row) if row else None

    def request(self, run_id: str, rng_seed: int) -> AnalysisRecord:
        """The run's analysis, first recorded as pending if none is (safe under races: the
        first request's record stays)."""
        with self._database.write() as connection:
            now = utc_now()
            connection.execute(
                self._database.insert(RunAnalysis)
                .values(
                    run_id=run_id,
                    status="pending",
                    rng_seed=rng_seed,
                    created_at=now,
                    updated_at=now,
                )
                .on_conflict_do_nothing(index_elements=["run_id"])
            )
        stored = self.get(run_id)
        assert stored is not None, "an analysis just inserted or found conflicting must exist"
        return stored

    def record(self, run_id: str, analysis: dict[str, Any], seconds: float) -> bool:
        """Store a pending analysis's result; False if it was no longer pending."""
        return self._settle(run_id, status="done", analysis=analysis, seconds=seconds)

    def record_failure(self, run_id: str, error: str) -> bool:
        """Mark a pending analysis failed with the reason; False if it was no longer pending."""
        return self._settle(run_id, status="failed", error=error)

    def _settle(self, run_id: str, **values: Any) -> bool:
        with self._database.write() as connection:
            result: CursorResult[Any] = connection.execute(
                update(RunAnalysis)
                .where(RunAnalysis.run_id == run_id, RunAnalysis.status == "pending")
                .values(**values)
            )
            return result.rowcount == 1
