"""The project's own versioned random generator.

Every random thing in a puzzle (deck order, card rotation, every die) is derived
from the seed string through this module, never through Python's `random`, whose
algorithms may change between releases. A seed played today must replay the same
in years and on any machine, so the algorithm is pinned by golden vectors in the
tests and any change to it must bump RNG_VERSION (and with it every game's
rules_version).

Construction: BLAKE2b in counter mode over (version, seed, label, counter) gives
a stream of 64-bit words; integers below n are drawn by rejection sampling so
that every value is exactly equally likely.
"""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import TypeVar

RNG_VERSION = 1
SEED_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")
_WORD_RANGE = 1 << 64
# A 64-byte block read as eight little-endian 64-bit words, the first eight bytes first.
_BLOCK_WORDS = struct.Struct("<8Q")

T = TypeVar("T")


def validate_seed(seed: object) -> str:
    """Return the seed if it is 1..64 characters of [A-Za-z0-9_-], else raise ValueError."""
    if not isinstance(seed, str) or not SEED_PATTERN.fullmatch(seed):
        raise ValueError(
            f"invalid seed {seed!r}: a seed is 1 to 64 characters of letters, digits, '_' or '-'"
        )
    return seed


class Stream:
    """An endless stream of uniform integers for one (seed, label) pair."""

    def __init__(self, seed: str, label: str) -> None:
        self._prefix = f"rally-rng/v{RNG_VERSION}\x00{seed}\x00{label}\x00".encode()
        self._words = self._generate_words()

    def _generate_words(self) -> Iterator[int]:
        counter = 0
        while True:
            block = hashlib.blake2b(self._prefix + str(counter).encode(), digest_size=64).digest()
            yield from _BLOCK_WORDS.unpack(block)
            counter += 1

    def below(self, n: int) -> int:
        """A uniform integer in 0..n-1 (rejection sampling keeps it unbiased)."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = _WORD_RANGE - (_WORD_RANGE % n)
        while True:
            word = next(self._words)
            if word < limit:
                return word % n


@lru_cache(maxsize=4096)
def _permutation(seed: str, label: str, length: int) -> tuple[int, ...]:
    """The positions a Fisher-Yates shuffle of length items takes them from.

    The swaps depend only on (seed, label, length), not on the items, so one
    permutation serves every shuffle of the same size; it is kept because every
    replay of a seed's run starts by shuffling the same decks again.
    """
    stream = Stream(seed, label)
    order = list(range(length))
    for i in range(length - 1, 0, -1):
        j = stream.below(i + 1)
        order[i], order[j] = order[j], order[i]
    return tuple(order)


def shuffled(seed: str, label: str, items: Sequence[T]) -> list[T]:
    """A Fisher-Yates shuffle of items, fixed by (seed, label)."""
    return [items[position] for position in _permutation(seed, label, len(items))]


def coin_flips(seed: str, label: str, count: int) -> list[bool]:
    """count fair coin flips, fixed by (seed, label)."""
    stream = Stream(seed, label)
    return [stream.below(2) == 1 for _ in range(count)]


def dice(seed: str, round_number: int, roll: int, count: int = 3) -> tuple[int, ...]:
    """The values 1..6 shown by the roll-th roll of round round_number.

    Dice are fixed by position, not by how many were drawn before: a roll of n
    dice shows the first n values, whatever happened earlier in the run.
    """
    stream = Stream(seed, f"dice/{round_number}/{roll}")
    return tuple(stream.below(6) + 1 for _ in range(count))
