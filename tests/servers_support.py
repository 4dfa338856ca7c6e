"""The test session's own servers: a throwaway PostgreSQL cluster, and Redis URLs by number.

The cluster lives in a temporary folder and listens only on a unix socket there
(no TCP port), so any number of them run side by side, beside the machine's own
servers, without meeting. It keeps nothing: no fsync, removed when stopped. It
is Debian's PostgreSQL (`make test` installs the `postgresql` package where
missing): `initdb` on PATH, else the newest under /usr/lib/postgresql.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg

STARTUP_SECONDS = 60.0
SHUTDOWN_SECONDS = 30.0
SUPERUSER = "postgres"
# PostgreSQL refuses to run as root: root runs it as the account Debian's package made.
SERVICE_ACCOUNT = "postgres"
# A cluster that is thrown away needs no durability: skipping it makes each commit cheap.
THROWAWAY = {
    "listen_addresses": "",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "200",
}


def redis_database_url(server_url: str, number: int) -> str:
    """The URL of database number on the Redis server at server_url (TCP or unix socket)."""
    parts = urlsplit(server_url)
    if parts.scheme == "unix":
        query = urlencode({**dict(parse_qsl(parts.query)), "db": str(number)})
        return f"unix://{parts.path}?{query}"  # urlunsplit would drop the empty host's //
    return urlunsplit(parts._replace(path=f"/{number}"))


def postgres_bin() -> Path:
    """The folder of PostgreSQL's server programs (initdb, postgres)."""
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).resolve().parent
    installed = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda initdb: int(initdb.parent.parent.name),
    )
    if not installed:
        raise RuntimeError("no PostgreSQL server: `make test` installs Debian's `postgresql`")
    return installed[-1].parent


def _as_child(command: list[str]) -> list[str]:
    """command run as the PostgreSQL account when this is root, and stopped if this process
    dies (setpriv sets both, then execs command in its place)."""
    account = []
    if os.geteuid() == 0:
        account = [f"--reuid={SERVICE_ACCOUNT}", f"--regid={SERVICE_ACCOUNT}", "--init-groups"]
    return ["setpriv", *account, "--pdeathsig", "TERM", *command]


class ThrowawayPostgres:
    """A PostgreSQL cluster in a temporary folder, on a unix socket there, trust auth."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="rally-test-pg-"))
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The SQLAlchemy URL of the cluster's maintenance database, as its superuser."""
        return f"postgresql+psycopg://{SUPERUSER}@/postgres?host={self.folder}"

    def start(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.folder, SERVICE_ACCOUNT, SERVICE_ACCOUNT)
        data = self.folder / "data"
        initdb = [
            str(postgres_bin() / "initdb"),
            *("-D", str(data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8", "--locale=C"),
            *("--no-sync", "--no-instructions"),
        ]
        made = subprocess.run(_as_child(initdb), cwd=self.folder, capture_output=True)
        if made.returncode != 0:
            raise RuntimeError(f"initdb failed:\n{made.stderr.decode(errors='replace')}")
        server = [str(postgres_bin() / "postgres"), "-D", str(data), "-k", str(self.folder)]
        settings = [f"--{name.replace('_', '-')}={value}" for name, value in THROWAWAY.items()]
        with open(self.folder / "postgres.log", "wb") as log:
            # A session of its own: the terminal's Ctrl-C reaches the tests, which stop it.
            self.process = subprocess.Popen(
                _as_child([*server, *settings]),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        self._wait_until_ready()

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + STARTUP_SECONDS
        conninfo = f"host={self.folder} user={SUPERUSER} dbname=postgres connect_timeout=2"
        while True:
            try:
                psycopg.connect(conninfo).close()
                return
            except psycopg.OperationalError:
                assert self.process is not None
                if self.process.poll() is not None or time.monotonic() > deadline:
                    log = (self.folder / "postgres.log").read_text(errors="replace")
                    self.stop()
                    raise RuntimeError(f"PostgreSQL did not start:\n{log}") from None
                time.sleep(0.05)

    def stop(self) -> None:
        """Stop the server (a fast shutdown: its clients are cut off) and remove its folder."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(SHUTDOWN_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> ThrowawayPostgres:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()
