"""The arithmetic of one Crazy Rally turn (rules CR-11 to CR-19), on plain integers.

The engine (puzzles.crazy_rally.engine) and the exact solver both call `resolve_turn`, so
the rules of a turn live in exactly one place.
"""

from __future__ import annotations

from typing import NamedTuple

from puzzles.crazy_rally.cards import AdjustmentCard, TrackCard

SPEED_EVENTS = {"speed_up": 1, "slow_down": -1}


class TurnResult(NamedTuple):
    speed: int  # after the track card: the speed added to the distance
    manoeuvrability: int
    body: int
    clamps: int  # times the speed was cut to the car's maximum (rule CR-13)
    purple_damage: int  # body lost by playing a purple card (rule CR-12)
    too_fast: int  # excess over a white card's value (rule CR-15), else 0
    too_slow: int  # shortfall under a red card's value (rule CR-16), else 0
    manoeuvrability_loss: int
    crashed: bool  # rule CR-17
    crash_damage: int


def clamp_to_maximum(speed: int, max_speed: int) -> tuple[int, int]:
    """Rule CR-13: a speed above the car's maximum becomes the maximum; (speed, clamps)."""
    return (max_speed, 1) if speed > max_speed else (speed, 0)


def speed_after_cards(
    speed: int, card: AdjustmentCard, accelerate: bool, event_effect: str | None, max_speed: int
) -> tuple[int, int]:
    """Rules CR-11, CR-13, CR-14: the speed before the track card, and the clamps it cost.

    The clamp applies after each change, so an adjustment card and a +1 event that
    both push past the maximum cost one body point each.
    """
    speed = speed + card.speed_up if accelerate else max(0, speed - card.braking)
    speed, clamps = clamp_to_maximum(speed, max_speed)
    if event_effect in SPEED_EVENTS:
        speed, more = clamp_to_maximum(max(0, speed + SPEED_EVENTS[event_effect]), max_speed)
        clamps += more
    return speed, clamps


class TrackResult(NamedTuple):
    speed: int
    manoeuvrability: int
    too_fast: int
    too_slow: int
    crashed: bool


def resolve_track(
    speed: int, manoeuvrability: int, car_manoeuvrability: int, track: TrackCard
) -> TrackResult:
    """Rules CR-15, CR-16, CR-17: the speed and manoeuvrability after the track card."""
    too_fast = speed - track.speed if not track.is_minimum and speed > track.speed else 0
    too_slow = track.speed - speed if track.is_minimum and speed < track.speed else 0
    if not (too_fast or too_slow):
        return TrackResult(speed, manoeuvrability, 0, 0, False)
    manoeuvrability -= track.difficulty + too_fast + too_slow
    if manoeuvrability < 0:
        return TrackResult(0, car_manoeuvrability, too_fast, too_slow, True)
    return TrackResult(track.speed, manoeuvrability, too_fast, too_slow, False)


def resolve_turn(
    speed: int,
    manoeuvrability: int,
    body: int,
    car_max_speed: int,
    car_manoeuvrability: int,
    card: AdjustmentCard,
    accelerate: bool,
    event_effect: str | None,
    track: TrackCard,
) -> TurnResult:
    """One turn from the played cards to the distance gained (rules CR-11 to CR-17)."""
    speed, clamps = speed_after_cards(speed, card, accelerate, event_effect, car_max_speed)
    purple_damage = 1 if card.costs_body else 0
    body -= clamps + purple_damage
    after = resolve_track(speed, manoeuvrability, car_manoeuvrability, track)
    crash_damage = track.damage if after.crashed else 0
    return TurnResult(
        speed=after.speed,
        manoeuvrability=after.manoeuvrability,
        body=body - crash_damage,
        clamps=clamps,
        purple_damage=purple_damage,
        too_fast=after.too_fast,
        too_slow=after.too_slow,
        manoeuvrability_loss=track.difficulty + after.too_fast + after.too_slow
        if after.too_fast or after.too_slow
        else 0,
        crashed=after.crashed,
        crash_damage=crash_damage,
    )
