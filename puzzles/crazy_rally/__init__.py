"""Crazy Rally played solo, a card race: its engine, its card set (data) and turn rules,
the stakes of each choice and the types of its states and views (docs/rules/crazy-rally.md)."""
