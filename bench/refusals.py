"""How long a refused append takes, by what its actions would have revealed: a timing oracle?

A refused request must tell nothing hidden, its time included. This times, through
the Flask app in-process (SQLite, the embedded Redis), refused appends at one
position of today's daily, grouped by the hidden outcome they probe:

- Crazy Rally, after the setup: [start, drive with card C, something illegal], C one
  of the cards drawn first or not;
- Rallye Raser, at the start: [gear 3, roll, place die i, control +1 x6, something
  illegal], by die i's value (as the seed rolls it).

No revealing action is applied in a refused batch (service/web/api/attempts.py), so the
groups should not differ beyond noise; the actions a refused batch does apply are
the ones before its index, which the answer says anyway.

It prints the median and the 90th percentile of each group, and their ratios.

    python -m bench.refusals [--rounds 400]
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
# Run as a script, bench/ would come first on the path (and bench/solver.py shadow the package).
sys.path.insert(0, str(BENCH_DIR.parent))

from flask.testing import FlaskClient  # noqa: E402

from puzzles import GAMES  # noqa: E402
from puzzles.crazy_rally.cards import ADJUSTMENTS  # noqa: E402
from puzzles.playout import random_playout, seeded_chooser  # noqa: E402
from service.config import Config  # noqa: E402
from service.domain import daily  # noqa: E402
from service.operations.redis_server import EmbeddedRedis  # noqa: E402
from service.storage.migrations import upgrade  # noqa: E402
from service.web.app import create_app  # noqa: E402

ILLEGAL = {"type": "no-such-action"}
Probe = tuple[str, list[Any]]  # the hidden outcome it tests, the batch


def started(client: FlaskClient, game: str, actions: list[Any]) -> dict[str, Any]:
    """A new attempt of today's daily of game with actions (one per request) played."""
    attempt = client.post(f"/api/v1/daily/{daily.today()}/{game}/attempt", json={}).get_json()
    for played, action in enumerate(actions):
        client.post(
            f"/api/v1/attempts/{attempt['attempt']}/actions",
            json={"played": played, "actions": [action]},
        )
    return {**attempt, "played": len(actions)}


def crazy_rally_probes(seed: str) -> tuple[list[Any], list[Probe]]:
    game = GAMES["crazy-rally"]
    setup = random_playout(game, seed, seeded_chooser(seed))[1][:3]
    first = game.apply(game.replay(seed, setup), {"type": "start"})
    drawn = set(first["hand"])
    return setup, [
        (
            "card in the hand" if card in drawn else "card not in the hand",
            [
                {"type": "start"},
                {"type": "drive", "card": card, "mode": "brake", "event": None},
                ILLEGAL,
            ],
        )
        for card in sorted(ADJUSTMENTS)
    ]


def rallye_raser_probes(seed: str) -> list[Probe]:
    game = GAMES["rallye-raser"]
    pool = game.apply(
        game.apply(game.new_game(seed), {"type": "gear", "gear": 3}), {"type": "roll"}
    )
    control = [{"type": "control", "step": 0, "delta": 1}] * 6
    return [
        (
            f"die of {(value + 1) // 2 * 2 - 1} or {(value + 1) // 2 * 2}",
            [
                {"type": "gear", "gear": 3},
                {"type": "roll"},
                {"type": "place", "die": die, "row": 1, "lane": "M"},
                *control,
                ILLEGAL,
            ],
        )
        for die, value in enumerate(pool["pool"])
    ]


def measure(
    client: FlaskClient, attempt: dict[str, Any], probes: list[Probe], rounds: int
) -> dict[str, list[float]]:
    """The time of each probe's refused append, grouped by the outcome it tests; every
    answer checked refused, and the number of distinct answers printed (1: no oracle)."""
    path = f"/api/v1/attempts/{attempt['attempt']}/actions"
    groups: dict[str, list[float]] = {}
    bodies = set()
    for _ in range(rounds // len(probes) + 1):
        for outcome, batch in probes:
            body = {"played": attempt["played"], "actions": batch}
            started_at = time.perf_counter()
            answer = client.post(path, json=body)
            groups.setdefault(outcome, []).append(time.perf_counter() - started_at)
            assert answer.status_code == 422
            bodies.add(answer.get_data())
    print(f"  distinct answers: {len(bodies)}")
    return groups


def report(title: str, groups: dict[str, list[float]]) -> None:
    print(title)
    medians = {name: statistics.median(times) for name, times in groups.items()}
    base = min(medians.values())
    for name, times in sorted(groups.items()):
        p90 = statistics.quantiles(times, n=10)[-1]
        print(
            f"  {name:28} n={len(times):5}  median {medians[name] * 1e3:6.3f} ms"
            f"  p90 {p90 * 1e3:6.3f} ms  ratio {medians[name] / base:5.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=400, help="refused appends per group")
    options = parser.parse_args()
    key = secrets.token_urlsafe(32)
    with tempfile.TemporaryDirectory(prefix="rally-bench-") as folder:
        instance = Path(folder)
        with EmbeddedRedis(instance / "redis.sock", instance) as redis:
            config = Config.from_env(
                {
                    "RALLY_INSTANCE_PATH": str(instance),
                    "REDIS_URL": redis.url,
                    "RALLY_DAILY_KEY": key,
                    "RALLY_SECRET_KEY": secrets.token_urlsafe(32),
                    "RALLY_NEW_PLAYERS_PER_HOUR": "1000",
                }
            )
            upgrade(config.database_url)
            client = create_app(config).test_client()
            today = daily.today()
            crazy_seed = daily.daily_seed(key, "crazy-rally", today)
            raser_seed = daily.daily_seed(key, "rallye-raser", today)
            setup, crazy = crazy_rally_probes(crazy_seed)
            report(
                "Crazy Rally [start, drive C, illegal]:",
                measure(client, started(client, "crazy-rally", setup), crazy, options.rounds),
            )
            raser = started(client, "rallye-raser", [])
            report(
                "Rallye Raser [gear 3, roll, place die i, control x6, illegal]:",
                measure(client, raser, rallye_raser_probes(raser_seed), options.rounds),
            )


if __name__ == "__main__":
    main()
