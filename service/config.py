"""Every setting of the service, read from the environment (listed in the README), but
the web's worker processes: RALLY_WEB_WORKERS is the `--workers` option's default
(service.operations.processes).

Nothing has to be set: the defaults run the whole service from one instance
folder (SQLite, a private Redis on a unix socket, generated secrets). Setting
DATABASE_URL and REDIS_URL points the same code at shared servers.
"""

from __future__ import annotations

import math
import os
import secrets
import string
import tempfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

# A unix socket path must fit in sockaddr_un.sun_path (108 bytes with the NUL on Linux).
MAX_SOCKET_PATH = 107
REDIS_SOCKET_NAME = "redis.sock"
# Shortest key accepted: a short key can be found by brute force from one revealed daily
# seed, and with it every coming seed.
MIN_KEY_BYTES = 32
# What a key must carry by each estimate below: what 32 random bytes carry. A generated key
# (32 random bytes in base64url: 43 characters) always does.
MIN_KEY_BITS = 256
# Printable text shorter than a generated key must draw on a large enough alphabet.
GENERATED_KEY_CHARS = 43
# Keys printed in this project's repository, its history included (examples and the keys
# of earlier tests): anyone can read them, so none may sign cookies or derive seeds.
PUBLISHED_KEYS = frozenset(
    {
        "api-test-daily-key-of-at-least-32-bytes",
        "api-test-secret-key-of-at-least-32-bytes",
        "bench-daily-key-0123456789abcdef0123456789",
        "browser-test-daily-key-of-at-least-32-bytes",
        "browser-test-secret-key-of-at-least-32-bytes",
        "deploy-test-daily-key-of-at-least-32-bytes",
        "deploy-test-secret-key-of-at-least-32-bytes",
        "live-test-key-of-at-least-thirty-two-bytes",
        "worker-log-test-key-of-at-least-32-bytes",
    }
)
MAKE_A_KEY = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
# Where `rally serve` listens by default, and so the default public address of share URLs.
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


class ConfigError(ValueError):
    """A setting that the service refuses to start with; the message says which and why."""


def _int_setting(env: Mapping[str, str], name: str, default: int, minimum: int = 1) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, not {raw!r}") from None
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, not {value}")
    return value


def _public_url(env: Mapping[str, str]) -> str:
    """The address players reach the site at (share URLs are built on it), without a
    trailing slash; never taken from a request's Host header."""
    raw = env.get("RALLY_PUBLIC_URL") or f"http://{DEFAULT_HOST}:{DEFAULT_PORT}"
    parsed = urlsplit(raw)
    if parsed.scheme not in ("http", "https") or not parsed.netloc or parsed.query:
        raise ConfigError(
            f"RALLY_PUBLIC_URL must be an http(s) address like "
            f"https://rally.example.org, not {raw!r}"
        )
    return raw.rstrip("/")


# What people paste or type as a key, which a compressor primed with it finds short: this
# project's own command that makes a key and its published keys, sequences and keyboard rows.
PASTED_TEXT = " ".join(
    [
        MAKE_A_KEY,
        *sorted(PUBLISHED_KEYS),
        string.ascii_lowercase,
        string.ascii_uppercase,
        string.digits,
        "0123456789abcdef qwertyuiop asdfghjkl zxcvbnm password secret key",
    ]
).encode()
# The classes of printable ASCII characters a key may draw on, and the size of each.
CHARACTER_CLASSES = (
    string.ascii_lowercase,
    string.ascii_uppercase,
    string.digits,
    string.punctuation + " ",
)


def compressed_bits(key: str) -> int:
    """The bits of key compressed (raw DEFLATE primed with PASTED_TEXT): random bytes do not
    compress; a repeat, a sequence, or text of this project (its command to make a key
    pasted as the key) compresses well."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15, zdict=PASTED_TEXT)
    return 8 * len(compressor.compress(key.encode()) + compressor.flush())


def alphabet_bits(key: str) -> float:
    """What printable text could carry at most: its length times log2 of the number of
    characters of the classes it draws on (lowercase, uppercase, digits, the rest)."""
    size = sum(len(chars) for chars in CHARACTER_CLASSES if any(c in chars for c in key))
    return len(key) * math.log2(size) if size > 1 else 0.0


def is_printable_text(key: str) -> bool:
    return all(" " <= char <= "~" for char in key)


def key_weakness(key: str) -> str | None:
    """What makes key too weak to derive seeds or sign cookies with, or None."""
    size = len(key.encode())
    if size < MIN_KEY_BYTES:
        return f"is {size} bytes long: use at least {MIN_KEY_BYTES} random bytes"
    if key in PUBLISHED_KEYS:
        return "is printed in this project's repository, where anyone can read it"
    if compressed_bits(key) < MIN_KEY_BITS:
        return (
            "compresses well (a repeat, a sequence, words, or this project's own command "
            "pasted as the key): use random bytes"
        )
    short_text = is_printable_text(key) and len(key) < GENERATED_KEY_CHARS
    if short_text and alphabet_bits(key) < MIN_KEY_BITS:
        return (
            f"is text of {len(key)} characters from too small an alphabet to hold "
            f"{MIN_KEY_BITS} bits: use random bytes"
        )
    return None


def _checked_key(name: str, key: str, where: str, remedy: str) -> str:
    """key, or ConfigError saying what is wrong with it, where it came from and what to do."""
    weakness = key_weakness(key)
    if weakness is not None:
        raise ConfigError(
            f"{name} ({where}) {weakness}. Refusing to start with a weak key: {remedy} (make "
            f"one with {MAKE_A_KEY}). A new daily key changes every coming daily's seed"
        )
    return key


def _new_secret_file(path: Path) -> None:
    """Store a new random secret at path, unless a file is there already.

    The secret is written whole to a temporary file first and then linked into place,
    which fails if the name exists: concurrent first starts (web and worker at once)
    agree on the first one linked, and nobody ever reads a file half written.
    """
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(descriptor, "w") as file:
            file.write(secrets.token_urlsafe(32))
            file.flush()
            os.fsync(file.fileno())
        os.link(temporary, path)
    except FileExistsError:
        pass  # another process linked its secret first: that one is everyone's
    finally:
        os.unlink(temporary)


def _secret_from_file(name: str, path: Path) -> str:
    """The secret stored at path, created (mode 0600) on first use and checked like a key
    from the environment. A weak or empty one is refused, never replaced: a new daily key
    would change every coming daily's seed."""
    if not path.exists():
        _new_secret_file(path)
    remedy = f"write a new one into {path}, or delete the file to have one generated"
    return _checked_key(name, path.read_text().strip(), f"read from {path}", remedy)


def _secret(env: Mapping[str, str], name: str, instance_path: Path, file_name: str) -> str:
    value = env.get(name)
    if value:
        # Stripped as a file's is: a key pasted with a trailing space or newline is that key.
        remedy = f"set {name} to a new one, or unset it to have one generated"
        return _checked_key(name, value.strip(), "from the environment", remedy)
    instance_path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return _secret_from_file(name, instance_path / file_name)


def secure_instance_folder(instance_path: Path) -> None:
    """Create the instance folder readable by its owner only, and make an existing one so;
    files created later by this process and its children are owner-only too (umask 077).

    It holds the database, the Redis files and the generated keys: nobody else on
    the machine may read them (the keys give every coming daily's seed).
    """
    os.umask(0o077)
    instance_path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if instance_path.stat().st_uid == os.getuid():
        instance_path.chmod(0o700)
        for path in instance_path.rglob("*"):
            if not path.is_symlink() and path.stat().st_uid == os.getuid():
                path.chmod(0o700 if path.is_dir() else 0o600)


# A week of dailies is committed to and solved ahead of its days.
DEFAULT_DAYS_AHEAD = 7


# The database connections a process opens, in all (its pool never overflows), and the
# seconds a request waits for one when all are taken (docs/deploy.md says how to size them).
DEFAULT_POOL_SIZE = 16
DEFAULT_POOL_TIMEOUT_SECONDS = 5


@dataclass(frozen=True)
class Config:
    """The service's settings; `Config.from_env()` reads them."""

    instance_path: Path
    database_url: str
    # None: the embedded private Redis on `redis_socket` (started by `rally serve`).
    external_redis_url: str | None
    secret_key: str
    daily_key: str
    # `rally serve` restarts a dead child after this many seconds, doubling up to the longest.
    restart_delay: int
    restart_max_delay: int
    # /healthz reports the queues failing once a job waits longer than this with no worker busy.
    health_max_job_age: int
    # The service's own log lines from this level; RQ's only from WARNING unless DEBUG.
    log_level: str
    max_body_bytes: int
    writes_per_minute: int
    new_seeds_per_hour: int
    # Attempts one client address may start on one daily (a household or an office shares one).
    attempts_per_address: int
    new_players_per_hour: int
    # The site's address as players reach it, without a trailing slash: share URLs start with it.
    public_url: str
    solve_timeout: int
    solve_retries: int
    # Seconds before a failed job's first retry; later retries wait 6 and 30 times longer.
    retry_delay: int
    # Seconds between planning runs (today's and the next days' dailies, the pending sweep).
    plan_interval: int
    # Seconds between a worker's heartbeats; a worker silent for 3 heartbeats counts as dead.
    heartbeat: int
    # Memory (MiB of address space) a solve may take on top of its worker's; over it the
    # solve fails and is retried later.
    solve_memory_mb: int
    # Solves of practice seeds and past dailies that may wait at once: in all, and per client.
    max_pending_solves: int
    max_pending_solves_per_client: int
    # Seconds the expert's own run of a seed (its par) may take, and memory as for a solve.
    par_timeout: int
    # Seconds the analysis of one run may take.
    analysis_timeout: int
    # Analyses of runs that may wait at once: in all, and per player asking.
    max_pending_analyses: int
    max_pending_analyses_per_player: int
    # Reverse proxies in front of the web app whose X-Forwarded-For/-Proto are trusted.
    trusted_proxies: int
    # Past days whose dailies the service solves of its own accord, back from yesterday;
    # None: every day since the first daily.
    archive_days: int | None
    # Days after today whose dailies are recorded, committed to and solved in advance: at
    # least one, so that tomorrow's commitment is published before its day starts.
    days_ahead: int
    # The database connections each process opens (its pool, never overflowed), and the
    # seconds a request waits for one when all are taken before a 503 (docs/deploy.md).
    database_pool_size: int
    database_pool_timeout: int

    @property
    def redis_socket(self) -> Path:
        return self.instance_path / REDIS_SOCKET_NAME

    @property
    def redis_url(self) -> str:
        if self.external_redis_url:
            return self.external_redis_url
        return f"unix://{self.redis_socket}"

    @property
    def embedded_redis(self) -> bool:
        return not self.external_redis_url

    def __post_init__(self) -> None:
        levels = ("DEBUG", "INFO", "WARNING", "ERROR")
        if self.log_level not in levels:
            raise ConfigError(
                f"RALLY_LOG_LEVEL must be one of {', '.join(levels)}, not {self.log_level!r}"
            )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Config:
        env = os.environ if env is None else env
        instance_path = Path(env.get("RALLY_INSTANCE_PATH") or "instance").resolve()
        external_redis_url = env.get("REDIS_URL") or None
        socket = instance_path / REDIS_SOCKET_NAME
        if not external_redis_url and len(str(socket)) > MAX_SOCKET_PATH:
            raise ConfigError(
                f"the Redis socket path {socket} is too long for a unix socket: "
                "use a shorter RALLY_INSTANCE_PATH or set REDIS_URL"
            )
        return cls(
            instance_path=instance_path,
            database_url=env.get("DATABASE_URL") or f"sqlite:///{instance_path / 'rally.sqlite3'}",
            external_redis_url=external_redis_url,
            secret_key=_secret(env, "RALLY_SECRET_KEY", instance_path, "secret_key"),
            daily_key=_secret(env, "RALLY_DAILY_KEY", instance_path, "daily_key"),
            restart_delay=_int_setting(env, "RALLY_RESTART_DELAY", 1, minimum=0),
            restart_max_delay=_int_setting(env, "RALLY_RESTART_MAX_DELAY", 60),
            health_max_job_age=_int_setting(env, "RALLY_HEALTH_MAX_JOB_AGE", 900),
            log_level=(env.get("RALLY_LOG_LEVEL") or "INFO").upper(),
            max_body_bytes=_int_setting(env, "RALLY_MAX_BODY_BYTES", 64 * 1024),
            writes_per_minute=_int_setting(env, "RALLY_WRITES_PER_MINUTE", 120),
            new_seeds_per_hour=_int_setting(env, "RALLY_NEW_SEEDS_PER_HOUR", 60),
            attempts_per_address=_int_setting(env, "RALLY_ATTEMPTS_PER_ADDRESS", 10),
            new_players_per_hour=_int_setting(env, "RALLY_NEW_PLAYERS_PER_HOUR", 30),
            public_url=_public_url(env),
            solve_timeout=_int_setting(env, "RALLY_SOLVE_TIMEOUT", 600),
            solve_retries=_int_setting(env, "RALLY_SOLVE_RETRIES", 3),
            retry_delay=_int_setting(env, "RALLY_RETRY_DELAY", 10, minimum=0),
            plan_interval=_int_setting(env, "RALLY_PLAN_INTERVAL", 3600),
            heartbeat=_int_setting(env, "RALLY_HEARTBEAT", 10),
            solve_memory_mb=_int_setting(env, "RALLY_SOLVE_MEMORY_MB", 2048),
            max_pending_solves=_int_setting(env, "RALLY_MAX_PENDING_SOLVES", 100),
            max_pending_solves_per_client=_int_setting(
                env, "RALLY_MAX_PENDING_SOLVES_PER_CLIENT", 6
            ),
            par_timeout=_int_setting(env, "RALLY_PAR_TIMEOUT", 300),
            analysis_timeout=_int_setting(env, "RALLY_ANALYSIS_TIMEOUT", 180),
            max_pending_analyses=_int_setting(env, "RALLY_MAX_PENDING_ANALYSES", 200),
            max_pending_analyses_per_player=_int_setting(
                env, "RALLY_MAX_PENDING_ANALYSES_PER_PLAYER", 2
            ),
            trusted_proxies=_int_setting(env, "RALLY_TRUSTED_PROXIES", 0, minimum=0),
            archive_days=(
                _int_setting(env, "RALLY_ARCHIVE_DAYS", 0, minimum=0)
                if env.get("RALLY_ARCHIVE_DAYS")
                else None
            ),
            days_ahead=_int_setting(env, "RALLY_DAYS_AHEAD", DEFAULT_DAYS_AHEAD),
            database_pool_size=_int_setting(env, "RALLY_DATABASE_POOL_SIZE", DEFAULT_POOL_SIZE),
            database_pool_timeout=_int_setting(
                env, "RALLY_DATABASE_POOL_TIMEOUT", DEFAULT_POOL_TIMEOUT_SECONDS
            ),
        )
