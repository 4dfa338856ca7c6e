"""A run submission's own work in the web process, in process: for cProfile and callgrind.

Sends the request bench.load sends (a finished Crazy Rally run of its practice seed)
through Flask's test client, with gevent's monkey patching as in the web workers, on
SQLite in a fresh instance folder or on the database --database names (migrated here),
and the embedded Redis there. After 20 submissions of each kind as a warm-up it sends
--submissions more of one kind: cookieless (`new`, each a new player) or with the
cookie of the player of the first run (`returning`); with --profile, cProfile's top
entries of each kind instead.

Under callgrind, the instructions of a submission are the difference between a run
with --submissions 60 and one with --submissions 0, divided by 60; the machine's
load does not move them, which makes them comparable between two versions of the code:

    valgrind --tool=callgrind python -m bench.submission_cpu --kind new --submissions 60
    python -m bench.submission_cpu --profile --submissions 300 [--database URL]
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import cProfile  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import pstats  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

from bench.load import GAME, PRACTICE_SEED, finished_actions  # noqa: E402
from service.operations.redis_server import EmbeddedRedis  # noqa: E402

WARM_UP = 20
RUNS = f"/api/v1/puzzles/{GAME}/{PRACTICE_SEED}/runs"
NO_LIMITS = ("WRITES_PER_MINUTE", "NEW_SEEDS_PER_HOUR", "ATTEMPTS_PER_ADDRESS")


def service_environment(instance: Path, database: str | None) -> None:
    """The service's settings for instance, as bench.load gives its gunicorn, and its
    database migrated."""
    os.environ.update(
        {
            "RALLY_INSTANCE_PATH": str(instance),
            "REDIS_URL": f"unix://{instance / 'redis.sock'}",
            **{f"RALLY_{name}": str(10**9) for name in (*NO_LIMITS, "NEW_PLAYERS_PER_HOUR")},
            **({"DATABASE_URL": database} if database else {}),
        }
    )
    migrate = [sys.executable, "-m", "service.operations.cli", "migrate"]
    subprocess.run(migrate, check=True, capture_output=True)


def submitters() -> dict[str, Callable[[], None]]:
    """A cookieless and a returning player's submission, each checked to be stored."""
    from service.web.app import create_app  # after the environment is set

    client = create_app().test_client(use_cookies=False)  # each cookie sent as asked
    body = json.dumps({"actions": finished_actions(PRACTICE_SEED)})
    headers = {"Content-Type": "application/json"}
    first = client.post(RUNS, data=body, headers=headers)
    assert first.status_code == 201, first.get_json()
    cookie = first.headers["Set-Cookie"].split(";", 1)[0]

    def submit(extra: dict[str, str]) -> None:
        answer = client.post(RUNS, data=body, headers={**headers, **extra})
        assert answer.status_code == 201, answer.get_json()

    return {"new": lambda: submit({}), "returning": lambda: submit({"Cookie": cookie})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", help="a database URL (default: SQLite)")
    parser.add_argument("--kind", choices=["new", "returning"], default="new")
    parser.add_argument("--submissions", type=int, default=60)
    parser.add_argument("--profile", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rally-submission-cpu-") as folder:
        instance = Path(folder)
        with EmbeddedRedis(instance / "redis.sock", instance):
            service_environment(instance, options.database)
            kinds = submitters()
            for _ in range(WARM_UP):
                kinds["new"]()
                kinds["returning"]()
            for kind in kinds if options.profile else [options.kind]:
                profile = cProfile.Profile() if options.profile else None
                if profile is not None:
                    profile.enable()
                for _ in range(options.submissions):
                    kinds[kind]()
                if profile is not None:
                    profile.disable()
                    print(f"{kind} player, {options.submissions} submissions:")
                    pstats.Stats(profile).sort_stats("tottime").print_stats(20)


if __name__ == "__main__":
    main()
