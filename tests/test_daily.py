"""Daily seeds derived with the server's secret, and the settings that hold that secret."""

from __future__ import annotations

import os
import re
import secrets
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime
from pathlib import Path
from threading import Barrier

import pytest

from puzzles import GAMES, validate_seed
from service import config as settings
from service.config import Config, ConfigError, secure_instance_folder
from service.domain import daily
from service.storage.store import Store
from tests.api_support import DAILY_KEY, SECRET_KEY

DAY = date(2026, 11, 30)
# A valid daily key, so that only the secret key is read from the instance folder.
DAILY_ONLY = {"RALLY_DAILY_KEY": DAILY_KEY}


def test_a_daily_seed_is_a_valid_seed_naming_its_date_with_128_secret_bits():
    seed = daily.daily_seed("key", "crazy-rally", DAY)
    assert validate_seed(seed) == seed
    assert re.fullmatch(r"d20261130-[0-9a-f]{32}", seed)
    legacy = daily.legacy_daily_seed("key", "crazy-rally", DAY)
    assert re.fullmatch(r"d20261130-[0-9a-f]{16}", legacy)
    assert not seed.startswith(legacy), "the two forms share no secret digits"
    for form in (seed, legacy):
        assert daily.daily_date_of("key", "crazy-rally", form) == DAY
        assert daily.daily_date_of("other-key", "crazy-rally", form) is None
        assert daily.daily_date_of("key", "rallye-raser", form) is None


def test_a_daily_recorded_with_a_64_bit_seed_keeps_it_under_any_rules(store: Store):
    """Dailies recorded (and committed to) before seeds had 128 bits keep their seeds: a
    day already in the database, today's or a coming one, is never given another."""
    legacy = daily.legacy_daily_seed("key", "crazy-rally", DAY)
    old = store.puzzles.ensure("crazy-rally", legacy, "cr-1", daily_date=DAY, number=30)
    again = daily.ensure_daily(store, "key", "crazy-rally", DAY)
    assert again.seed == legacy and again.rules_version == GAMES["crazy-rally"].rules_version
    assert again.id != old.id
    assert {p.seed for p in store.puzzles.dailies(DAY) if p.game == "crazy-rally"} == {legacy}
    fresh = daily.ensure_daily(store, "key", "rallye-raser", DAY)
    assert fresh.seed == daily.daily_seed("key", "rallye-raser", DAY)


def test_daily_seeds_differ_by_key_game_and_date():
    seeds = {
        daily.daily_seed(key, game, day)
        for key in ("key-a", "key-b")
        for game in ("crazy-rally", "rallye-raser")
        for day in (DAY, date(2026, 12, 1))
    }
    assert len(seeds) == 8
    assert daily.daily_seed("key-a", "crazy-rally", DAY) == daily.daily_seed(
        "key-a", "crazy-rally", DAY
    )


def test_puzzle_numbers_count_days_from_the_first_daily():
    assert daily.puzzle_number(date(2026, 11, 1)) == 1
    assert daily.puzzle_number(DAY) == 30
    assert daily.puzzle_number(date(2027, 1, 1)) == 62


def test_today_is_the_utc_date():
    before = datetime.now(UTC).date()
    today = daily.today()
    assert today in {before, datetime.now(UTC).date()}


def test_upcoming_days_cover_today_and_the_days_ahead():
    days = daily.upcoming_days(DAY, 7)
    assert days[0] == DAY
    assert days[-1] == date(2026, 12, 7)
    assert len(days) == 8


@pytest.mark.parametrize(("value", "days_ahead"), [("", 7), ("1", 1), ("14", 14)])
def test_the_days_ahead_are_read_from_the_environment_a_week_by_default(
    value: str, days_ahead: int, instance_path: Path
):
    env = {"RALLY_INSTANCE_PATH": str(instance_path), "RALLY_DAYS_AHEAD": value}
    assert Config.from_env(env).days_ahead == days_ahead


def test_no_fewer_than_one_day_ahead_is_accepted(instance_path: Path):
    """Tomorrow's commitment must be published before tomorrow starts."""
    env = {"RALLY_INSTANCE_PATH": str(instance_path), "RALLY_DAYS_AHEAD": "0"}
    with pytest.raises(ConfigError, match="RALLY_DAYS_AHEAD must be at least 1, not 0"):
        Config.from_env(env)


def test_ensure_dailies_records_one_pending_puzzle_per_game(store: Store):
    puzzles = daily.ensure_dailies(store, "key", DAY)
    assert [puzzle.game for puzzle in puzzles] == sorted(GAMES)
    for puzzle in puzzles:
        assert puzzle.seed == daily.daily_seed("key", puzzle.game, DAY)
        assert (puzzle.daily_date, puzzle.number, puzzle.status) == (DAY, 30, "pending")
        assert puzzle.rules_version == GAMES[puzzle.game].rules_version
    assert daily.ensure_dailies(store, "key", DAY) == puzzles
    assert store.puzzles.dailies(DAY) == puzzles


def test_defaults_keep_everything_in_the_instance_folder(instance_path: Path):
    config = Config.from_env({"RALLY_INSTANCE_PATH": str(instance_path)})
    assert config.database_url == f"sqlite:///{instance_path}/rally.sqlite3"
    assert config.embedded_redis
    assert config.redis_url == f"unix://{instance_path}/redis.sock"


def test_secrets_are_generated_once_with_mode_0600(instance_path: Path):
    first = Config.from_env({"RALLY_INSTANCE_PATH": str(instance_path)})
    again = Config.from_env({"RALLY_INSTANCE_PATH": str(instance_path)})
    assert (again.secret_key, again.daily_key) == (first.secret_key, first.daily_key)
    assert first.secret_key != first.daily_key
    assert len(first.daily_key) >= 40
    for name in ("secret_key", "daily_key"):
        assert stat.S_IMODE((instance_path / name).stat().st_mode) == 0o600


KEY_NAMES = {"RALLY_SECRET_KEY": "secret_key", "RALLY_DAILY_KEY": "daily_key"}
ROOT = Path(__file__).resolve().parent.parent
WEAK_KEYS = {
    "1 byte": "k",
    "7 bytes": "7-bytes",
    "31 bytes": "x" * 31,
    "32 identical letters": "a" * 32,
    "32 spaces": " " * 32,
    "two letters repeated": "ab" * 16,
    "a word repeated": "password" * 4,
    "one letter changed": "a" * 31 + "b",
    "a key printed in the repository": "api-test-daily-key-of-at-least-32-bytes",
    "a printed key and a space": "api-test-daily-key-of-at-least-32-bytes ",
    "a word repeated and one more letter": "password" * 4 + "1",
    "a sequence": "abcdefghijklmnopqrstuvwxyz012345",
    "the command that makes a key": settings.MAKE_A_KEY,
    "128 bits in hex: short text of a small alphabet": "9f86d081884c7d659a2feaa0c55ad015",
}


@pytest.mark.parametrize("key", WEAK_KEYS.values(), ids=WEAK_KEYS.keys())
@pytest.mark.parametrize("name", KEY_NAMES)
def test_a_weak_key_is_refused_from_the_environment_and_from_the_instance_folder_alike(
    name: str, key: str, instance_path: Path
):
    with pytest.raises(ConfigError, match=f"{name} \\(from the environment\\) .*Refusing"):
        Config.from_env({"RALLY_INSTANCE_PATH": str(instance_path), name: key})
    instance_path.mkdir(exist_ok=True)
    stored = instance_path / KEY_NAMES[name]
    stored.write_text(key)
    with pytest.raises(ConfigError, match=f"{name} \\(read from {stored}\\) .*Refusing"):
        Config.from_env({"RALLY_INSTANCE_PATH": str(instance_path)})
    assert stored.read_text() == key  # refused, never replaced


@pytest.mark.parametrize("name", KEY_NAMES)
def test_an_empty_key_file_is_refused_and_kept(name: str, instance_path: Path):
    instance_path.mkdir()
    (instance_path / KEY_NAMES[name]).write_text("")
    with pytest.raises(ConfigError, match="is 0 bytes long"):
        Config.from_env({"RALLY_INSTANCE_PATH": str(instance_path)})
    assert (instance_path / KEY_NAMES[name]).read_text() == ""


GENERATED = pytest.mark.parametrize(
    "generated",
    [lambda: secrets.token_urlsafe(32), lambda: secrets.token_hex(32)],
    ids=["256 bits in base64url (as generated)", "256 bits in hex"],
)


@GENERATED
def test_random_keys_are_accepted(generated, instance_path: Path):
    for _ in range(200):
        key = generated()
        config = Config.from_env(
            {"RALLY_INSTANCE_PATH": str(instance_path), "RALLY_SECRET_KEY": key, **DAILY_ONLY}
        )
        assert config.secret_key == key


@GENERATED
def test_every_generated_key_passes(generated):
    """A key made as the service and the README make one is never refused: 20,000 of them."""
    refused = [key for key in (generated() for _ in range(20_000)) if settings.key_weakness(key)]
    assert refused == []


@pytest.mark.parametrize("name", KEY_NAMES)
def test_a_key_from_the_environment_is_stripped_as_one_from_its_file(
    name: str, instance_path: Path
):
    key = secrets.token_urlsafe(32)
    env = {"RALLY_INSTANCE_PATH": str(instance_path), **DAILY_ONLY, **{name: f" {key}\n"}}
    config = Config.from_env(env)
    assert (config.secret_key if name == "RALLY_SECRET_KEY" else config.daily_key) == key


# Every value given to a key setting in the repository: in Python, shell, YAML or Markdown.
KEY_SETTINGS = re.compile(
    r"""(?:RALLY_(?:SECRET|DAILY)_KEY|\b\w*KEY)\b["']?\s*[:=]\s*["']([^"'\s]+)["']"""
    r"""|RALLY_(?:SECRET|DAILY)_KEY=([^\s"'`]+)"""
    r"""|RALLY_(?:SECRET|DAILY)_KEY:[ \t]*([^\s"'$][^\s]*)"""
)


def keys_in_the_repository() -> set[str]:
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, text=True
    ).stdout.split("\0")
    found = set()
    for name in filter(None, tracked):
        path = ROOT / name
        if path.suffix in (".py", ".md", ".yml", ".yaml", ".conf", ".toml", ".sh", "") and (
            path.is_file()
        ):
            for match in KEY_SETTINGS.finditer(path.read_text(errors="replace")):
                found.add(next(group for group in match.groups() if group))
    return found


def test_no_key_printed_in_the_repository_is_accepted():
    """Keys in examples, docs and old tests are public: each is refused (the tests' own
    keys are random, made anew for each session)."""
    found = keys_in_the_repository() | settings.PUBLISHED_KEYS
    assert {"...", *settings.PUBLISHED_KEYS} <= found
    accepted = {key for key in found if settings.key_weakness(key) is None}
    assert accepted == set()


def test_concurrent_first_starts_agree_on_one_whole_key(tmp_path: Path):
    """Of two (or many) processes starting at once, none reads a key file half written:
    each creates its key in a file of its own and links it into place."""
    pairs, width = 300, 2
    barrier = Barrier(width)

    def start(folder: Path) -> str:
        barrier.wait()
        return Config.from_env({"RALLY_INSTANCE_PATH": str(folder), **DAILY_ONLY}).secret_key

    with ThreadPoolExecutor(width) as pool:
        for pair in range(pairs):
            folder = tmp_path / str(pair)
            keys = list(pool.map(start, [folder] * width))
            assert keys[0] == keys[1] and len(keys[0]) >= 40, keys
            assert [p.name for p in folder.iterdir()] == ["secret_key"]  # no file left behind


@pytest.mark.processes
def test_many_processes_starting_at_once_agree_on_one_whole_key(tmp_path: Path, process_env):
    folder = tmp_path / "i"
    read = "from service.config import Config; print(Config.from_env().daily_key)"
    env = {**process_env, "RALLY_INSTANCE_PATH": str(folder), "RALLY_SECRET_KEY": SECRET_KEY}
    starts = [
        subprocess.Popen([sys.executable, "-c", read], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(12)
    ]
    keys = {start.communicate(timeout=60)[0].strip() for start in starts}
    assert keys == {(folder / "daily_key").read_text()}
    assert len(keys.pop()) >= 40


@pytest.mark.processes
def test_rally_refuses_to_start_with_a_weak_key_file_and_keeps_it(tmp_path: Path, process_env):
    folder = tmp_path / "i"
    folder.mkdir()
    (folder / "daily_key").write_text("k")
    answer = subprocess.run(
        [sys.executable, "-m", "service.operations.cli", "migrate"],
        env={**process_env, "RALLY_INSTANCE_PATH": str(folder)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert answer.returncode != 0
    assert f"RALLY_DAILY_KEY (read from {folder / 'daily_key'}) is 1 bytes long" in answer.stderr
    assert "Traceback" not in answer.stderr
    assert (folder / "daily_key").read_text() == "k"


def test_settings_come_from_the_environment(instance_path: Path):
    config = Config.from_env(
        {
            "RALLY_INSTANCE_PATH": str(instance_path),
            "DATABASE_URL": "postgresql+psycopg://db/rally",
            "REDIS_URL": "redis://cache:6379/0",
            "RALLY_SECRET_KEY": SECRET_KEY,
            "RALLY_DAILY_KEY": DAILY_KEY,
            "RALLY_MAX_BODY_BYTES": "1000",
            "RALLY_PUBLIC_URL": "https://rally.example.org/",
        }
    )
    assert (config.database_url, config.redis_url) == (
        "postgresql+psycopg://db/rally",
        "redis://cache:6379/0",
    )
    assert not config.embedded_redis
    assert (config.secret_key, config.daily_key, config.max_body_bytes) == (
        SECRET_KEY,
        DAILY_KEY,
        1000,
    )
    assert config.public_url == "https://rally.example.org"
    assert not instance_path.exists()


@pytest.mark.parametrize("value", ["many", "0", "-5"])
def test_a_bad_number_setting_is_refused_by_name(instance_path: Path, value: str):
    env = {"RALLY_INSTANCE_PATH": str(instance_path), "RALLY_WRITES_PER_MINUTE": value}
    with pytest.raises(ValueError, match="RALLY_WRITES_PER_MINUTE"):
        Config.from_env(env)


def test_an_instance_path_too_long_for_the_redis_socket_is_refused(tmp_path: Path):
    with pytest.raises(ValueError, match="too long"):
        Config.from_env({"RALLY_INSTANCE_PATH": str(tmp_path / ("x" * 120))})


def test_an_instance_folder_made_before_is_made_private(tmp_path: Path):
    instance = tmp_path / "i"
    (instance / "redis").mkdir(parents=True)
    for path in (instance / "rally.sqlite3", instance / "redis" / "a.aof"):
        path.write_text("data")
        path.chmod(0o644)
    instance.chmod(0o755)
    previous = os.umask(0o022)
    try:
        secure_instance_folder(instance)
        created = instance / "created-after"
        created.write_text("data")
        assert stat.S_IMODE(created.stat().st_mode) == 0o600
    finally:
        os.umask(previous)
    assert stat.S_IMODE(instance.stat().st_mode) == 0o700
    assert stat.S_IMODE((instance / "redis").stat().st_mode) == 0o700
    for path in (instance / "rally.sqlite3", instance / "redis" / "a.aof"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
