"""Rallye Raser, a solo dice race: its engine, its road cards (data) and track, the stakes
of each choice and the types of its states and views (docs/rules/rallye-raser.md)."""
