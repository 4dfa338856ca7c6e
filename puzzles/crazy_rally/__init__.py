"""Crazy Rally played solo, a card race: its engine, its card set (data) and turn rules,
and the stakes of each choice (docs/rules/crazy-rally.md)."""
