"""Leagues in the database: making, joining, leaving, renewing the invite, removing a
member (and letting them back in), and what a league shows its members, read in one
transaction.

A removal sticks: the league keeps the removed player (league_removals), and a join of
that league by them is refused like a link that opens nothing, by whichever of its links,
until the maker readmits them.

The caps and removals hold under concurrent requests on both databases. SQLite's write
transactions queue whole. On PostgreSQL a join locks its player's row (FOR NO KEY
UPDATE: their joins and makes queue, so their count of leagues is exact) and then the
row of the league its token opens (a renewal committed meanwhile leaves no row, and the
join finds the token gone); only then does it read whether the player is a member or
removed and how many members the league has, so a join racing a removal, a renewal or
another join sees what each committed before it. Leaving, renewing, removing and
readmitting lock the league's row first. Every write takes its locks in one order (the
player's row, the league's row, then members' rows), and the key-share locks that
foreign keys take on a player's row (a removal naming them, a league handed to them)
never wait for the join that holds it, so two writes never wait for each other.

It reads and writes through the store's one database object (service.storage.database).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, String, bindparam, delete, func, insert, select, update

from service.storage.database import Database
from service.storage.league_reads import MemberReads, MemberRecord, OfficialResult, aware
from service.storage.models import (
    League,
    LeagueMember,
    LeagueRemoval,
    Player,
    utc_now,
)
from service.storage.store_statements import DriverStatement


class LeagueRefused(Exception):  # noqa: N818 - an outcome, not a failure
    """A league write that was not done: the subclass says why; nothing changed."""


class NoSuchLeague(LeagueRefused):
    """No such league, or the caller is not in it (the two are never told apart)."""


class NoSuchInvite(LeagueRefused):
    """No league's current invite has this token (made up, or renewed since)."""


class LeagueFull(LeagueRefused):
    def __init__(self, cap: int) -> None:
        super().__init__(f"a league has at most {cap} members")
        self.cap = cap


class TooManyLeagues(LeagueRefused):
    def __init__(self, cap: int) -> None:
        super().__init__(f"a player is in at most {cap} leagues")
        self.cap = cap


class NotTheMaker(LeagueRefused):
    """Only the league's maker may do this."""


class NoSuchMember(LeagueRefused):
    """No member of the league has this handle."""


class MakerStays(LeagueRefused):
    """The maker cannot remove themselves (they leave instead)."""


class NoSuchRemoval(LeagueRefused):
    """No player removed from the league had this handle (or they were let back in)."""


@dataclass(frozen=True)
class LeagueRecord:
    id: str
    name: str
    maker_id: str
    invite_salt: str
    members: int
    created_at: datetime


@dataclass(frozen=True)
class Membership:
    """A league as one of its members sees it: the league and their own handle in it."""

    league: LeagueRecord
    member: str


@dataclass(frozen=True)
class RemovedMember:
    """A player removed from a league, as its maker sees them: the handle they had, their
    display name and when they were removed."""

    member: str
    name: str | None
    removed_at: datetime


@dataclass(frozen=True)
class PlayerLeague:
    """One of a player's leagues, as their list shows it."""

    id: str
    name: str
    members: int
    maker: bool


@dataclass(frozen=True)
class LeagueFacts:
    """Everything a league's page shows, read in one transaction: its members, their
    official runs of the puzzles asked for, which of the days' puzzles they started
    (attempted) and which of them ended in a run (ran), and their kept streaks."""

    membership: Membership
    members: list[MemberRecord]
    official: dict[tuple[str, int], OfficialResult]  # (player id, puzzle id)
    attempted: set[tuple[str, int]]
    ran: set[tuple[str, int]]
    streaks: dict[tuple[str, str], tuple[int, int]]  # (player id, game): first, last number
    removed: list[RemovedMember]  # the maker's to see: empty for any other member


_LEAGUE_COLUMNS = (
    League.id,
    League.name,
    League.maker_id,
    League.invite_salt,
    League.members,
    League.created_at,
)


def _league(row: Any) -> LeagueRecord:
    """A league from a row of _LEAGUE_COLUMNS (by column name)."""
    return LeagueRecord(
        id=row["id"],
        name=row["name"],
        maker_id=row["maker_id"],
        invite_salt=row["invite_salt"],
        members=row["members"],
        created_at=aware(row["created_at"]),
    )


class LeagueRepository:
    """The leagues of one database."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self._members = MemberReads(database.dialect)
        # Asked on every view of a league and before every write to one.
        self._membership_of = DriverStatement(
            select(*_LEAGUE_COLUMNS, LeagueMember.member)
            .join(LeagueMember, LeagueMember.league_id == League.id)
            .where(
                League.id == bindparam("league_id", type_=String()),
                LeagueMember.player_id == bindparam("player_id", type_=String()),
            ),
            database.dialect,
        )

    # Reads

    def membership(self, league_id: str, player_id: str | None) -> Membership | None:
        """The league as the player sees it, or None when they are not in it (or it does not
        exist, or there is no player)."""
        if player_id is None:
            return None
        with self._database.read() as connection:
            return self._membership(connection, league_id, player_id)

    def _membership(
        self, connection: Connection, league_id: str, player_id: str
    ) -> Membership | None:
        row = self._membership_of.first(
            connection, {"league_id": league_id, "player_id": player_id}
        )
        return None if row is None else Membership(_league(row), row["member"])

    def player_leagues(self, player_id: str) -> list[PlayerLeague]:
        """The player's leagues, by name."""
        with self._database.read() as connection:
            rows = connection.execute(
                select(League.id, League.name, League.members, League.maker_id == player_id)
                .join(LeagueMember, LeagueMember.league_id == League.id)
                .where(LeagueMember.player_id == player_id)
                .order_by(func.lower(League.name), League.id)
            ).all()
        return [PlayerLeague(*row) for row in rows]

    def facts(
        self,
        league_id: str,
        player_id: str | None,
        puzzles: Iterable[int],
        day_puzzles: Iterable[int],
    ) -> LeagueFacts | None:
        """What the league shows its member player_id (None when they are not one): its
        members, their official runs of puzzles, whether they started (and ended) each of
        day_puzzles, and their streaks."""
        if player_id is None:
            return None
        with self._database.read() as connection:
            membership = self._membership(connection, league_id, player_id)
            if membership is None:
                return None
            reads = self._members
            days = list(day_puzzles)
            return LeagueFacts(
                membership=membership,
                members=reads.members(connection, league_id),
                official=reads.official(connection, league_id, list(puzzles)),
                attempted=reads.attempted(connection, league_id, days),
                ran=reads.ran(connection, league_id, days),
                streaks=reads.streaks(connection, league_id),
                removed=(
                    self._removed(connection, league_id)
                    if membership.league.maker_id == player_id
                    else []
                ),
            )

    @staticmethod
    def _removed(connection: Connection, league_id: str) -> list[RemovedMember]:
        rows = connection.execute(
            select(LeagueRemoval.member, Player.display_name, LeagueRemoval.removed_at)
            .join(Player, Player.id == LeagueRemoval.player_id)
            .where(LeagueRemoval.league_id == league_id)
            .order_by(LeagueRemoval.removed_at, LeagueRemoval.member)
        ).all()
        return [RemovedMember(member, name, aware(at)) for member, name, at in rows]

    # Writes

    def make(
        self,
        *,
        league_id: str,
        name: str,
        maker_id: str,
        member: str,
        invite_salt: str,
        invite_hash: str,
        league_cap: int,
    ) -> LeagueRecord:
        """A new league with the maker as its one member; TooManyLeagues when the maker is
        in league_cap leagues already. The maker must be a stored player."""
        with self._database.write() as connection:
            self._lock_player(connection, maker_id)
            self._check_league_cap(connection, maker_id, league_cap)
            now = utc_now()
            connection.execute(
                insert(League).values(
                    id=league_id,
                    name=name,
                    maker_id=maker_id,
                    invite_salt=invite_salt,
                    invite_hash=invite_hash,
                    members=1,
                    created_at=now,
                )
            )
            self._add_member(connection, league_id, maker_id, member, now)
        return LeagueRecord(league_id, name, maker_id, invite_salt, 1, now)

    def join(
        self,
        *,
        invite_hash: str,
        player_id: str,
        member: str,
        member_cap: int,
        league_cap: int,
    ) -> tuple[Membership, bool]:
        """Join the league whose current invite hashes to invite_hash; True when the player
        joined now, False when they were in it already. NoSuchInvite (a player the maker
        removed from the league too, as if the token opened nothing), LeagueFull or
        TooManyLeagues refuse it. The player must be a stored player."""
        with self._database.write() as connection:
            self._lock_player(connection, player_id)
            query = select(*_LEAGUE_COLUMNS).where(League.invite_hash == invite_hash)
            row = (
                connection.execute(query.with_for_update() if self._database.locks_rows else query)
                .mappings()
                .first()
            )
            if row is None:
                raise NoSuchInvite()
            league = _league(row)
            already = self._membership(connection, league.id, player_id)
            if already is not None:
                return already, False
            if self._is_removed(connection, league.id, player_id):
                raise NoSuchInvite()
            self._check_league_cap(connection, player_id, league_cap)
            if league.members >= member_cap:
                raise LeagueFull(member_cap)
            connection.execute(
                update(League).where(League.id == league.id).values(members=League.members + 1)
            )
            self._add_member(connection, league.id, player_id, member, utc_now())
            joined = self._membership(connection, league.id, player_id)
        assert joined is not None, "a member just added is a member"
        return joined, True

    def leave(self, league_id: str, player_id: str) -> None:
        """Take the player out of the league. When the maker leaves, the member who joined
        first after them becomes its maker; when the last member leaves, the league is
        deleted. NoSuchLeague when they are not in it."""
        with self._database.write() as connection:
            league = self._locked_league(connection, league_id, player_id)
            self._drop_member(connection, league_id, player_id)
            if league.maker_id == player_id:
                self._hand_over(connection, league_id)

    def renew_invite(
        self, league_id: str, player_id: str, invite_salt: str, invite_hash: str
    ) -> LeagueRecord:
        """Give the league a new invite (the old token stops opening it); the maker's only:
        NotTheMaker for another member, NoSuchLeague for anyone else."""
        with self._database.write() as connection:
            league = self._locked_league(connection, league_id, player_id)
            if league.maker_id != player_id:
                raise NotTheMaker()
            connection.execute(
                update(League)
                .where(League.id == league_id)
                .values(invite_salt=invite_salt, invite_hash=invite_hash)
            )
        return LeagueRecord(
            league.id,
            league.name,
            league.maker_id,
            invite_salt,
            league.members,
            league.created_at,
        )

    def remove(self, league_id: str, player_id: str, member: str) -> None:
        """The maker (player_id) takes the member with this handle out of the league, and
        keeps them out: their joins of it are refused until the maker readmits them.
        NotTheMaker for another member, NoSuchLeague for anyone else, NoSuchMember for an
        unknown handle, MakerStays for the maker's own."""
        with self._database.write() as connection:
            league = self._locked_league(connection, league_id, player_id)
            if league.maker_id != player_id:
                raise NotTheMaker()
            removed = connection.scalar(
                select(LeagueMember.player_id).where(
                    LeagueMember.league_id == league_id, LeagueMember.member == member
                )
            )
            if removed is None:
                raise NoSuchMember()
            if removed == player_id:
                raise MakerStays()
            self._drop_member(connection, league_id, removed)
            connection.execute(
                insert(LeagueRemoval).values(
                    league_id=league_id, player_id=removed, member=member, removed_at=utc_now()
                )
            )

    def readmit(self, league_id: str, player_id: str, member: str) -> None:
        """The maker (player_id) lets the player removed under this handle join the league
        again (by its current link, which they need anew): NotTheMaker for another member,
        NoSuchLeague for anyone else, NoSuchRemoval for a handle no removed player had."""
        with self._database.write() as connection:
            league = self._locked_league(connection, league_id, player_id)
            if league.maker_id != player_id:
                raise NotTheMaker()
            lifted = connection.execute(
                delete(LeagueRemoval).where(
                    LeagueRemoval.league_id == league_id, LeagueRemoval.member == member
                )
            )
            if lifted.rowcount != 1:
                raise NoSuchRemoval()

    # Parts of the writes

    def _lock_player(self, connection: Connection, player_id: str) -> None:
        """On PostgreSQL, queue this player's joins and makes behind one another (SQLite's
        write transactions queue whole). FOR NO KEY UPDATE, so that a write holding a
        league's row may still insert a row naming this player (a removal) or hand the
        league to them (foreign keys take a key-share lock on the player's row) rather than
        wait for a join that waits for that league's row."""
        if self._database.locks_rows:
            connection.execute(
                select(Player.id).where(Player.id == player_id).with_for_update(key_share=True)
            )

    @staticmethod
    def _is_removed(connection: Connection, league_id: str, player_id: str) -> bool:
        return (
            connection.scalar(
                select(LeagueRemoval.member).where(
                    LeagueRemoval.league_id == league_id, LeagueRemoval.player_id == player_id
                )
            )
            is not None
        )

    def _locked_league(
        self, connection: Connection, league_id: str, player_id: str
    ) -> LeagueRecord:
        """The league, its row locked till the transaction ends, if player_id is in it;
        else NoSuchLeague."""
        query = select(*_LEAGUE_COLUMNS).where(League.id == league_id)
        row = (
            connection.execute(query.with_for_update() if self._database.locks_rows else query)
            .mappings()
            .first()
        )
        is_member = row is not None and connection.scalar(
            select(LeagueMember.member).where(
                LeagueMember.league_id == league_id, LeagueMember.player_id == player_id
            )
        )
        if not is_member:
            raise NoSuchLeague()
        return _league(row)

    @staticmethod
    def _check_league_cap(connection: Connection, player_id: str, cap: int) -> None:
        leagues = connection.scalar(
            select(func.count())
            .select_from(LeagueMember)
            .where(LeagueMember.player_id == player_id)
        )
        if (leagues or 0) >= cap:
            raise TooManyLeagues(cap)

    @staticmethod
    def _add_member(
        connection: Connection, league_id: str, player_id: str, member: str, now: datetime
    ) -> None:
        connection.execute(
            insert(LeagueMember).values(
                league_id=league_id, player_id=player_id, member=member, joined_at=now
            )
        )

    @staticmethod
    def _drop_member(connection: Connection, league_id: str, player_id: str) -> None:
        connection.execute(
            delete(LeagueMember).where(
                LeagueMember.league_id == league_id, LeagueMember.player_id == player_id
            )
        )
        connection.execute(
            update(League).where(League.id == league_id).values(members=League.members - 1)
        )

    @staticmethod
    def _hand_over(connection: Connection, league_id: str) -> None:
        """The league to its longest-standing member, or deleted when it has none left."""
        heir = connection.scalar(
            select(LeagueMember.player_id)
            .where(LeagueMember.league_id == league_id)
            .order_by(LeagueMember.joined_at, LeagueMember.member)
            .limit(1)
        )
        if heir is None:
            connection.execute(delete(LeagueRemoval).where(LeagueRemoval.league_id == league_id))
            connection.execute(delete(League).where(League.id == league_id))
        else:
            connection.execute(update(League).where(League.id == league_id).values(maker_id=heir))
