"""Daily seeds derived with the server's secret, and the settings that hold that secret."""

from __future__ import annotations

import os
import stat
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from puzzles import GAMES, validate_seed
from service import daily
from service.config import Config, secure_instance_folder
from service.store import Store

DAY = date(2026, 11, 30)


def test_a_daily_seed_is_a_valid_seed_naming_its_date():
    seed = daily.daily_seed("key", "crazy-rally", DAY)
    assert validate_seed(seed) == seed
    assert seed.startswith("d20261130-")
    assert len(seed) == len("d20261130-") + 16


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


def test_upcoming_days_cover_today_and_the_next_seven():
    days = daily.upcoming_days(DAY)
    assert days[0] == DAY
    assert days[-1] == date(2026, 12, 7)
    assert len(days) == 8


def test_ensure_dailies_records_one_pending_puzzle_per_game(store: Store):
    puzzles = daily.ensure_dailies(store, "key", DAY)
    assert [puzzle.game for puzzle in puzzles] == sorted(GAMES)
    for puzzle in puzzles:
        assert puzzle.seed == daily.daily_seed("key", puzzle.game, DAY)
        assert (puzzle.daily_date, puzzle.number, puzzle.status) == (DAY, 30, "pending")
        assert puzzle.rules_version == GAMES[puzzle.game].rules_version
    assert daily.ensure_dailies(store, "key", DAY) == puzzles
    assert store.daily_puzzles(DAY) == puzzles


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


def test_settings_come_from_the_environment(instance_path: Path):
    config = Config.from_env(
        {
            "RALLY_INSTANCE_PATH": str(instance_path),
            "DATABASE_URL": "postgresql+psycopg://db/rally",
            "REDIS_URL": "redis://cache:6379/0",
            "RALLY_SECRET_KEY": "s" * 32,
            "RALLY_DAILY_KEY": "d" * 32,
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
        "s" * 32,
        "d" * 32,
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
