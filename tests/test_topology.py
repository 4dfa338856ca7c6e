"""The scaled-out service whole, as deploy.yml describes it, on loopback without Docker:
nginx with deploy/nginx.conf in front of two `rally web` replicas, two `rally worker`s,
`rally migrate`, a PostgreSQL database and a Redis of the test's own, each started with
the file's command and environment (tests/test_deploy.py, tests/proxy_support.py).

Players play today's dailies through the proxy while a replica, then Redis, then a
worker in the middle of a solve are killed with SIGKILL and started again, as a container
dies and is restarted. Then: no client saw an error that a retry of the same request
did not mend, every acknowledged action is stored, every puzzle waiting at a fault was
solved within a minute of its end, and a minute of bursts of writes, sent while the
killed worker's puzzle waits, gets no 502. Last,
RUSH_PLAYERS play at once with no pause between requests (bench/topology_rush.py runs
that rush for a minute) and see no error a retry does not mend.
"""

from __future__ import annotations

import http.client
import json
import math
import os
import random
import secrets
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml
from rq import Worker
from rq.scheduler import RQScheduler

from bench.proxy_bursts import GAPS, burst
from puzzles import GAMES
from service.config import Config
from service.domain import daily
from service.jobs.queue import solve_job_id, solve_queues
from tests.process_support import (
    free_port,
    kill_everything_under,
    started_under,
    wait_for_http,
)
from tests.proxy_support import nginx
from tests.queue_support import wait_for_planning
from tests.test_deploy import DEPLOY_FILE, local_env, option_replaced, rally_command, stop

# Minutes: the workers' own start-up work first (see STEADY_SECONDS), then the faults, then
# a minute of bursts.
pytestmark = [pytest.mark.processes, pytest.mark.slow, pytest.mark.timeout(1800)]

REPLICAS = 2
WORKERS = 2
PLAYERS = 4
# Every player here comes from 127.0.0.1, where the proxy's clients would come from many
# addresses: the per-address limits on new players and attempts are lifted for them.
PER_ADDRESS_LIMITS = {
    "RALLY_NEW_PLAYERS_PER_HOUR": "100000",
    "RALLY_ATTEMPTS_PER_ADDRESS": "100000",
}
# A client retries a request that failed for this long (a restarting replica, Redis down).
RETRY_SECONDS = 60.0
RETRY_PAUSE_SECONDS = 0.5
# A player's pause between two actions: a fast human's. The players keep requests in flight
# through every fault without making this test a load test (bench/ holds those), which
# would take the cores the rest of the suite runs on.
THINK_SECONDS = 0.1
# The answers a retry of the same request may mend: the proxy's, or a busy service's.
RETRYABLE = {0, 429, 500, 502, 503, 504}
# Every puzzle waiting when a fault ends is solved within this many seconds of its end.
RECOVERY_SECONDS = 60.0
REDIS_DOWN_SECONDS = 5.0
BURST = 16
# Players at once with no pause at all, and for how long (a few seconds here; a minute
# from bench/topology_rush.py, which sets RALLY_TOPOLOGY_RUSH_SECONDS).
RUSH_PLAYERS = 32
RUSH_SECONDS = float(os.environ.get("RALLY_TOPOLOGY_RUSH_SECONDS", "8"))
BURSTS_SECONDS = 60.0
# The game of the solve a worker is killed in: Rallye Raser's take seconds, long enough.
SLOW_SOLVE_GAME = "rallye-raser"
ANSWER_SECONDS = 30.0
STARTUP_SECONDS = 90.0
# The work the workers find as they start (today's and tomorrow's dailies, see process_env,
# each solved and its par computed: a Rallye Raser par alone took 45 s at a load average
# of 15) is done within.
STEADY_SECONDS = 900.0


def call(port: int, method: str, path: str, body: Any = None, cookie: str | None = None):
    """Status (0 when no answer came), JSON body and player cookie of one request made on a
    connection of its own, as a browser's."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=ANSWER_SECONDS)
    headers = {"Content-Type": "application/json"}
    if cookie:
        headers["Cookie"] = cookie
    try:
        data = None if body is None else json.dumps(body).encode()
        connection.request(method, path, data, headers)
        answer = connection.getresponse()
        text = answer.read()
        set_cookie = answer.getheader("Set-Cookie")
        own = set_cookie.split(";", 1)[0] if set_cookie else cookie
        return answer.status, json.loads(text) if text else None, own
    except (OSError, http.client.HTTPException, ValueError):
        return 0, None, cookie
    finally:
        connection.close()


@dataclass
class Client:
    """Sends requests through the proxy as a player's browser does: one that fails in a
    way a retry may mend is sent again, the same, until answered. Every failure is kept."""

    port: int
    errors: list[str] = field(default_factory=list)
    unmended: list[str] = field(default_factory=list)

    def send(self, method: str, path: str, body: Any = None, cookie: str | None = None):
        deadline = time.monotonic() + RETRY_SECONDS
        while True:
            status, answer, own = call(self.port, method, path, body, cookie)
            if 200 <= status < 300:
                return answer, own
            failure = f"{method} {path}: {status} {answer}"
            self.errors.append(failure)
            if status not in RETRYABLE or time.monotonic() > deadline:
                self.unmended.append(failure)
                raise AssertionError(failure)
            time.sleep(RETRY_PAUSE_SECONDS)


@dataclass
class Attempt:
    path: str
    cookie: str
    acknowledged: list[Any]


def play_attempts(
    client: Client,
    games: list[str],
    seed: int,
    stop: threading.Event,
    attempts: list[Attempt],
    think_seconds: float = THINK_SECONDS,
) -> None:
    """Play today's dailies one attempt after another (each a new player) until stop is set,
    one action per request, chosen at random among the legal ones, with think_seconds
    between two; each attempt added to attempts."""
    chooser = random.Random(seed)
    today = daily.today().isoformat()
    while not stop.is_set():
        game = games[len(attempts) % len(games)]
        answer, cookie = client.send("POST", f"/api/v1/daily/{today}/{game}/attempt", {})
        attempt = Attempt(f"/api/v1/attempts/{answer['attempt']}", cookie, [])
        attempts.append(attempt)
        while not answer["over"] and not stop.is_set():
            action = chooser.choice(answer["legal_actions"])
            played = len(attempt.acknowledged)
            body = {"played": played, "actions": [action]}
            answer, _ = client.send("POST", f"{attempt.path}/actions", body, cookie)
            attempt.acknowledged.append(action)
            stop.wait(think_seconds)


class Topology:
    """The processes deploy.yml describes, on loopback, each restartable after a kill."""

    def __init__(
        self, services: dict[str, Any], folder: Path, database_url: str, process_env: dict
    ) -> None:
        self.services = services
        self.folder = folder
        self.redis_port = free_port()
        self.redis_url = f"redis://127.0.0.1:{self.redis_port}/0"
        self.database_url = database_url
        self.process_env = process_env
        self.web_ports = [free_port() for _ in range(REPLICAS)]
        self.redis: subprocess.Popen[bytes] | None = None
        self.webs: list[subprocess.Popen[bytes]] = []
        self.workers: list[subprocess.Popen[bytes]] = []
        self.started = 0

    def env_of(self, name: str) -> dict[str, str]:
        """The service's environment; each process has an instance folder of its own."""
        self.started += 1
        instance = self.folder / f"{name}-{self.started}"
        env = local_env(
            self.services[name], self.process_env, self.database_url, self.redis_url, instance
        )
        return {**env, **PER_ADDRESS_LIMITS}

    def config(self) -> Config:
        return Config.from_env(self.env_of("worker"))

    def launch(self, name: str, command: list[str]) -> subprocess.Popen[bytes]:
        """A process in a session of its own (so it is killed whole, as a container),
        logging to a file of its own."""
        env = self.env_of(name)
        with open(self.folder / f"{name}-{self.started}.log", "wb") as log:
            return subprocess.Popen(
                command, env=env, stdout=log, stderr=log, start_new_session=True
            )

    def start_redis(self) -> None:
        command = option_replaced(self.services["redis"]["command"], "--dir", str(self.folder))
        self.redis = subprocess.Popen(
            [*command, "--port", str(self.redis_port)], stdout=subprocess.DEVNULL
        )
        client = redis.Redis(port=self.redis_port)
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            try:
                client.ping()
                return
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)

    def migrate(self) -> None:
        command = rally_command(self.services["migrate"]["command"])
        assert subprocess.run(command, env=self.env_of("migrate"), timeout=120).returncode == 0

    def start_web(self, index: int) -> None:
        command = option_replaced(
            self.services["web"]["command"], "--port", str(self.web_ports[index])
        )
        process = self.launch("web", rally_command(command))
        if index < len(self.webs):
            self.webs[index] = process
        else:
            self.webs.append(process)
        wait_for_http(f"http://127.0.0.1:{self.web_ports[index]}/healthz", STARTUP_SECONDS)

    def start_worker(self, index: int) -> None:
        process = self.launch("worker", rally_command(self.services["worker"]["command"]))
        if index < len(self.workers):
            self.workers[index] = process
        else:
            self.workers.append(process)

    def stop(self) -> None:
        for process in [*self.webs, *self.workers]:
            if process.poll() is None:
                stop(process)
        if self.redis is not None and self.redis.poll() is None:
            stop(self.redis)

    def worker_logs(self) -> str:
        return "".join(path.read_text() for path in sorted(self.folder.glob("worker-*.log")))


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    return yaml.safe_load(DEPLOY_FILE.read_text())["services"]


@pytest.fixture
def topology(
    services: dict[str, Any], postgres_factory, tmp_path: Path, process_env: dict[str, str]
) -> Iterator[Topology]:
    top = Topology(services, tmp_path, postgres_factory(), process_env)
    try:
        top.start_redis()
        top.migrate()
        for index in range(REPLICAS):
            top.start_web(index)
        for index in range(WORKERS):
            top.start_worker(index)
        wait_for_planning(top.redis_url, top.config(), seconds=STARTUP_SECONDS)
        yield top
    finally:
        top.stop()


@dataclass
class Fault:
    name: str
    ended: float = 0.0
    waiting: list[tuple[str, str]] = field(default_factory=list)  # (game, seed)
    # Seconds from the fault's end until each puzzle waiting was seen solved, by seed.
    solved_after: dict[str, float] = field(default_factory=dict)
    # What the workers' logs must say of it (at the default level, INFO).
    logged: list[str] = field(default_factory=list)


def ask_for_practice(client: Client, game: str) -> tuple[str, str]:
    seed = f"topology-{secrets.token_hex(4)}"
    client.send("POST", f"/api/v1/puzzles/{game}/{seed}", {})
    return game, seed


def kill_a_replica(top: Topology) -> Fault:
    kill_everything_under(top.webs[0])
    time.sleep(2.0)  # players' requests meanwhile go to the other replica
    top.start_web(0)
    return Fault("a web replica killed", time.monotonic())


def busy_worker(connection: redis.Redis, job_id: str, seconds: float) -> int | None:
    """The pid of the worker running job_id, once one does within seconds; None if none."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for worker in Worker.all(connection=connection):
            if worker.get_current_job_id() == job_id:
                return worker.pid
        time.sleep(0.02)
    return None


def kill_a_worker_mid_solve(top: Topology, client: Client) -> Fault:
    """Ask for practice puzzles until a worker is caught solving one; kill it, restart it."""
    connection = redis.Redis(port=top.redis_port)
    rules = GAMES[SLOW_SOLVE_GAME].rules_version
    for _ in range(10):
        game, seed = ask_for_practice(client, SLOW_SOLVE_GAME)
        pid = busy_worker(connection, solve_job_id(game, seed, rules), seconds=20)
        index = next((i for i, w in enumerate(top.workers) if w.pid == pid), None)
        if index is None:
            continue  # solved before it was seen running: another one
        scheduler = scheduler_under(connection, top.workers[index].pid)
        kill_everything_under(top.workers[index])
        top.start_worker(index)
        fault = Fault("a worker killed mid-solve", time.monotonic(), [(game, seed)])
        fault.logged.append(f"job {solve_job_id(game, seed, rules)} was abandoned")
        if scheduler is not None:
            fault.logged.append(f"RQ's scheduler {scheduler} has been silent")
        return fault
    pytest.fail("no worker was caught in the middle of a solve")


def scheduler_under(connection: redis.Redis, worker_pid: int) -> str | None:
    """The name of RQ's scheduler when it runs in a process the worker started, else None."""
    holder = connection.get(RQScheduler.get_locking_key("solve"))
    if holder is None:
        return None
    assert isinstance(holder, bytes)
    pid = connection.hget(f"rq:scheduler:{holder.decode()}", "pid")
    return holder.decode() if pid and int(pid) in started_under(worker_pid) else None


def kill_redis(top: Topology, client: Client) -> Fault:
    assert top.redis is not None
    top.redis.kill()
    top.redis.wait()
    down_at = time.monotonic()
    # Recorded while Redis is down, so not queued: they wait for Redis to be back.
    waiting = [ask_for_practice(client, game) for game in sorted(GAMES)]
    time.sleep(max(0.0, down_at + REDIS_DOWN_SECONDS - time.monotonic()))
    top.start_redis()
    return Fault("Redis killed", time.monotonic(), waiting)


def wait_until_solved(client: Client, fault: Fault) -> Fault:
    """Poll each puzzle waiting at the fault through the proxy until it is solved, noting
    when it was seen solved; one not solved within twice RECOVERY_SECONDS counts infinity."""
    waiting = set(fault.waiting)
    while waiting:
        for game, seed in sorted(waiting):
            answer, _ = client.send("GET", f"/api/v1/puzzles/{game}/{seed}")
            waited = time.monotonic() - fault.ended
            if answer["status"] == "solved" or waited > 2 * RECOVERY_SECONDS:
                fault.solved_after[seed] = waited if answer["status"] == "solved" else math.inf
                waiting.discard((game, seed))
        time.sleep(0.2)
    return fault


def wait_until_idle(connection: redis.Redis, seconds: float) -> None:
    """Until no job waits or runs: the dailies solved (and their pars computed) as the
    workers start, the pars of the practice puzzles of a fault. A worker takes no job
    while it runs one, and RQ's upkeep (finding a dead worker's job) runs between jobs:
    a puzzle is solved within a minute of a fault only while a worker is free for it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        queues = solve_queues(connection)
        busy = [w for w in Worker.all(connection=connection) if w.get_current_job_id()]
        if not busy and not any(queue.count for queue in queues):
            return
        time.sleep(0.5)
    pytest.fail(f"the workers were still busy after {seconds} s")


def with_players(
    client: Client,
    run: Callable[[], list[Fault]],
    players: int = PLAYERS,
    think_seconds: float = THINK_SECONDS,
):
    """run() while players play through the proxy; the faults and every player's attempts."""
    stop = threading.Event()
    attempts: list[list[Attempt]] = [[] for _ in range(players)]
    games = sorted(GAMES)

    def player(index: int) -> None:
        # An error no retry mended ends the player; it is kept in client.unmended.
        with suppress(AssertionError):
            play_attempts(
                client, games[index % 2 :] + games, index, stop, attempts[index], think_seconds
            )

    threads = [threading.Thread(target=player, args=(index,)) for index in range(players)]
    for thread in threads:
        thread.start()
    try:
        faults = run()
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    return faults, [attempt for played in attempts for attempt in played]


def no_fault_for(seconds: float) -> Callable[[], list[Fault]]:
    """A run of with_players that lets the players play for seconds, faultless."""

    def wait() -> list[Fault]:
        time.sleep(seconds)
        return []

    return wait


def assert_stored_as_acknowledged(client: Client, attempts: list[Attempt]) -> None:
    """Every attempt holds the actions its player saw acknowledged, and some were."""
    for attempt in attempts:
        answer, _ = client.send("GET", attempt.path, cookie=attempt.cookie)
        assert answer["actions"] == attempt.acknowledged
    assert sum(len(attempt.acknowledged) for attempt in attempts) > 0


def bursts_for_a_minute(proxy: int, statuses: Counter[int]) -> None:
    """BURSTS_SECONDS of bursts of BURST writes through the proxy, their answers counted
    in statuses."""
    path = f"/api/v1/play/{sorted(GAMES)[0]}/topology-bursts"
    deadline = time.monotonic() + BURSTS_SECONDS
    gaps = iter(GAPS * int(BURSTS_SECONDS))
    while time.monotonic() < deadline:
        time.sleep(next(gaps))
        burst(proxy, path, b'{"actions": []}', BURST, statuses)


def test_the_topology_survives_its_faults_and_bursts(topology: Topology):
    with nginx(topology.folder / "nginx", topology.web_ports, free_port()) as proxy:
        client = Client(proxy)

        def faults() -> list[Fault]:
            time.sleep(2.0)  # the players are under way
            replica = kill_a_replica(topology)
            connection = redis.Redis(port=topology.redis_port)
            wait_until_idle(connection, STEADY_SECONDS)
            redis_down = wait_until_solved(client, kill_redis(topology, client))
            wait_until_idle(connection, STEADY_SECONDS)
            return [replica, redis_down, kill_a_worker_mid_solve(topology, client)]

        happened, attempts = with_players(client, faults)
        # The web tier is whole again: its minute of bursts runs while the killed worker's
        # puzzle waits for RQ to find the job abandoned (half a minute of heartbeats), a
        # wait that uses neither the proxy nor the replicas much.
        statuses: Counter[int] = Counter()
        bursts = threading.Thread(target=bursts_for_a_minute, args=(proxy, statuses))
        bursts.start()
        try:
            wait_until_solved(client, happened[-1])
        finally:
            bursts.join()
        assert client.unmended == []
        assert_stored_as_acknowledged(client, attempts)
        actions = sum(len(attempt.acknowledged) for attempt in attempts)
        print(f"{len(attempts)} attempts, {actions} actions acknowledged and stored;")
        print(f"{len(client.errors)} failed requests, each mended by a retry: {client.errors}")
        for fault in happened:
            print(f"{fault.name}: solved {fault.solved_after} s after it ended")
        for fault in happened:
            late = {seed: s for seed, s in fault.solved_after.items() if s > RECOVERY_SECONDS}
            assert late == {}, fault.name
        logs = topology.worker_logs()
        assert [line for fault in happened for line in fault.logged if line not in logs] == []
        print(f"bursts: {dict(statuses)}")
        assert set(statuses) == {200}, statuses

        rush = Client(proxy)
        _, rushed = with_players(rush, no_fault_for(RUSH_SECONDS), RUSH_PLAYERS, think_seconds=0)
        assert rush.unmended == []
        assert_stored_as_acknowledged(rush, rushed)
        appended = sum(len(attempt.acknowledged) for attempt in rushed)
        print(
            f"rush: {RUSH_PLAYERS} players at once for {RUSH_SECONDS:g} s, {len(rushed)} "
            f"attempts, {appended / RUSH_SECONDS:.0f} appends/s; {len(rush.errors)} failed "
            f"requests, each mended by a retry: {rush.errors[:10]}"
        )
