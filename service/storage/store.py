"""The store: one repository per kind of record over one shared database object.

The service reads and writes its tables (service.storage.models) only through the
store's repositories: `puzzles`, `runs` (and the standings they make), `players` (and
their history), `attempts`, `analyses`, `leagues` and `rally` (its reads). They all
read and write on `database` (service.storage.database), which owns the pool of
connections, its short transactions and DatabaseBusy. The schema is created and changed
only by the migrations; the one other query is /healthz's `SELECT 1`.

Every function returns plain frozen records, never live objects of SQLAlchemy, so
callers hold no connection.
"""

from __future__ import annotations

from service.config import Config
from service.storage.analyses import AnalysisRepository
from service.storage.attempts import AttemptRepository
from service.storage.database import DEFAULT_POOL, Database, PoolSettings
from service.storage.leagues import LeagueRepository
from service.storage.players import PlayerRepository
from service.storage.puzzles import PuzzleRepository
from service.storage.rally import RallyQuery
from service.storage.runs import RunRepository


class Store:
    """Every kind of record of one database, each in its repository."""

    def __init__(self, database_url: str, pool: PoolSettings = DEFAULT_POOL) -> None:
        self.database = Database(database_url, pool)
        self.puzzles = PuzzleRepository(self.database)
        self.players = PlayerRepository(self.database)
        self.runs = RunRepository(self.database, self.players)
        self.attempts = AttemptRepository(self.database, self.players, self.runs)
        self.analyses = AnalysisRepository(self.database)
        self.leagues = LeagueRepository(self.database)
        self.rally = RallyQuery(self.database)

    @classmethod
    def of(cls, config: Config) -> Store:
        """The store of config's database, with config's pool."""
        pool = PoolSettings(config.database_pool_size, config.database_pool_timeout)
        return cls(config.database_url, pool)

    def close(self) -> None:
        self.database.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
