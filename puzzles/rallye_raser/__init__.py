"""Rallye Raser, a solo dice race: its engine, its road cards (data) and track, and the
stakes of each choice (docs/rules/rallye-raser.md)."""
