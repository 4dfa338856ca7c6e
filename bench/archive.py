"""How long a freshly installed `rally serve` takes to have every past daily solved.

It starts `rally serve` (one worker) in a fresh instance folder, under the bench's own
daily key, and reads every daily from the first day to today (`GET /api/v1/daily/{date}`)
every POLL_SECONDS until all are solved, as the archive page would show them. Meanwhile,
ASK_AFTER seconds in, it asks for a practice seed never seen before, as a player would,
to see that it still comes before the archive. It prints when today's dailies were
solved, when the practice seed was, when the last past daily was, the jobs waiting in
each queue along the way, and the load average.

    python -m bench.archive [--seed SEED]
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import date
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
# Run as a script, bench/ would come first on the path (and bench/solver.py shadow the package).
sys.path.insert(0, str(BENCH_DIR.parent))

from bench.first_practice import fresh_service, get_json, load_average  # noqa: E402
from service.domain import daily  # noqa: E402

POLL_SECONDS = 5.0
ASK_AFTER = 20.0
PRACTICE_GAME = "rallye-raser"
AIM_SECONDS = 600.0


def unsolved(base: str, days: list[date]) -> dict[date, int]:
    """The days with dailies not solved yet, and how many."""
    left = {}
    for day in days:
        status, body = get_json(f"{base}/api/v1/daily/{day.isoformat()}")
        assert status == 200, body
        pending = sum(puzzle["status"] == "pending" for puzzle in body["puzzles"])
        if pending:
            left[day] = pending
    return left


def practice_solved(base: str, seed: str) -> bool:
    status, body = get_json(f"{base}/api/v1/puzzles/{PRACTICE_GAME}/{seed}")
    assert status == 200, body
    return body["status"] != "pending"


def watch(base: str, seed: str) -> None:
    today = daily.today()
    past = daily.days_between(daily.FIRST_DAY, today)
    started = time.monotonic()
    seen: dict[str, float] = {}
    asked = False
    while True:
        elapsed = time.monotonic() - started
        if not asked and elapsed >= ASK_AFTER:
            status, body = get_json(f"{base}/api/v1/puzzles/{PRACTICE_GAME}/{seed}", {})
            assert status == 202, body
            asked = True
            seen["practice asked"] = elapsed
        if "today's dailies" not in seen and not unsolved(base, [today]):
            seen["today's dailies"] = elapsed
        if asked and "practice seed" not in seen and practice_solved(base, seed):
            seen["practice seed"] = elapsed
        left = unsolved(base, past)
        queues = get_json(f"{base}/healthz")[1]["checks"]["queue"]["queues"]
        waiting = ", ".join(f"{name} {count}" for name, count in queues.items() if count)
        print(
            f"{elapsed:6.1f} s: {sum(left.values())} of {2 * len(past)} past dailies unsolved; "
            f"waiting: {waiting or 'nothing'}; load {load_average()}",
            flush=True,
        )
        if not left and "practice seed" in seen:
            seen["every past daily"] = elapsed
            break
        assert elapsed < 3 * AIM_SECONDS, "the archive was not solved in time"
        time.sleep(POLL_SECONDS)
    for what, when in seen.items():
        print(f"{what}: {when:.1f} s after the start")
    met = "met" if seen["every past daily"] <= AIM_SECONDS else "missed"
    print(
        f"{len(past)} past days: every past daily solved in {seen['every past daily']:.0f} s "
        f"(aim {AIM_SECONDS:.0f} s: {met})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", default="bench-archive-practice")
    options = parser.parse_args()
    print(f"load average before: {load_average()}")
    with fresh_service() as base:
        watch(base, options.seed)


if __name__ == "__main__":
    main()
