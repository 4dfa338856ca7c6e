"""The preview image of a shared run (its Open Graph and Twitter card image): the title, the
result against the optimum and the strip as coloured tiles, drawn with Pillow.

Images are cached as files in the instance folder, one per run and per what it shows (a
daily solved later, or a new rules version of the drawing, gets a new file), written
atomically, so every web process serves the one drawn first. An image is a few kilobytes:
a palette PNG of flat colours and Pillow's own font (no system font needed).
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from service.domain.share import ShareFacts

WIDTH, HEIGHT = 1200, 630  # the size link previews ask for
MARGIN = 60
TILE, GAP = 56, 10
PAPER, INK, MUTED, ACCENT = "#f5f2e9", "#1d1d1f", "#5b5b63", "#b3122c"
# The tile colour of each mark (its symbol's colour in the share text).
COLOURS = {
    "within_limits": "#2f9c52",
    "clean": "#2f9c52",
    "too_fast": "#c62828",
    "too_slow": "#2d6fd2",
    "crash": "#1d1d1f",
    "gasfuss": "#f2c230",
    "loss_of_control": "#7b3fb0",
    "engine_damage": "#e07b00",
    "finish": "#ffffff",
}
SEPARATOR = " · "  # between the parts of the title and of the result
LINE_HEIGHT = 1.2  # of a line of text, in font sizes
LEGEND_SIZE, LEGEND_BOX, LEGEND_ROW, LEGEND_BOTTOM = 26, 28, 40, 24
# Bumped when the drawing changes, so that cached images are drawn again.
DRAWING_VERSION = "2"


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size)


def _tile(draw: ImageDraw.ImageDraw, x: int, y: int, mark: str) -> None:
    box = (x, y, x + TILE, y + TILE)
    draw.rounded_rectangle(box, radius=8, fill=COLOURS[mark], outline=INK, width=2)
    if mark == "crash":  # a cross, so that the crash differs by more than its colour
        draw.line((x + 14, y + 14, x + TILE - 14, y + TILE - 14), fill="#ffffff", width=5)
        draw.line((x + 14, y + TILE - 14, x + TILE - 14, y + 14), fill="#ffffff", width=5)
    elif mark == "finish":  # a chequered flag: four squares
        half = TILE // 2
        draw.rectangle((x + 8, y + 8, x + half, y + half), fill=INK)
        draw.rectangle((x + half, y + half, x + TILE - 8, y + TILE - 8), fill=INK)


def _lines(pen: ImageDraw.ImageDraw, text: str, size: int) -> list[str]:
    """text in lines that fit between the margins, broken only between its " · " parts
    (one line, "… par 12 in 26 rounds", ran off the image's edge)."""
    font, room = _font(size), WIDTH - 2 * MARGIN
    lines: list[str] = []
    for part in text.split(SEPARATOR):
        longer = f"{lines[-1]}{SEPARATOR}{part}" if lines else part
        if lines and pen.textlength(longer, font=font) <= room:
            lines[-1] = longer
        else:
            lines.append(part)
    return lines


def _write(pen: ImageDraw.ImageDraw, y: int, text: str, size: int, colour: str) -> int:
    """text drawn in lines from y down; the y below its last line."""
    for line in _lines(pen, text, size):
        pen.text((MARGIN, y), line, font=_font(size), fill=colour)
        y += round(size * LINE_HEIGHT)
    return y


def _legend_rows(pen: ImageDraw.ImageDraw, facts: ShareFacts) -> list[list[tuple[int, str, str]]]:
    """The legend's (x, mark, words) entries in rows that fit between the margins."""
    rows: list[list[tuple[int, str, str]]] = [[]]
    x = MARGIN
    for mark, _symbol, words in facts.legend():
        width = LEGEND_BOX + 8 + int(pen.textlength(words, font=_font(LEGEND_SIZE)))
        if rows[-1] and x + width > WIDTH - MARGIN:
            rows.append([])
            x = MARGIN
        rows[-1].append((x, mark, words))
        x += width + 28
    return rows


def _legend(pen: ImageDraw.ImageDraw, facts: ShareFacts) -> None:
    """The legend at the foot of the image, in as many rows as it needs."""
    rows = _legend_rows(pen, facts)
    for number, row in enumerate(rows):
        y = HEIGHT - LEGEND_BOTTOM - (len(rows) - number) * LEGEND_ROW
        for x, mark, words in row:
            pen.rounded_rectangle(
                (x, y, x + LEGEND_BOX, y + LEGEND_BOX), radius=4, fill=COLOURS[mark], outline=INK
            )
            pen.text((x + LEGEND_BOX + 8, y), words, font=_font(LEGEND_SIZE), fill=MUTED)


def draw(facts: ShareFacts) -> bytes:
    """The preview image of facts as PNG bytes."""
    image = Image.new("RGB", (WIDTH, HEIGHT), PAPER)
    pen = ImageDraw.Draw(image)
    pen.rectangle((0, 0, WIDTH, 16), fill=ACCENT)
    below_title = _write(pen, 50, facts.title, 52, INK)
    tiles_top = _write(pen, below_title + 10, facts.result(), 40, ACCENT) + 20
    per_row = (WIDTH - 2 * MARGIN + GAP) // (TILE + GAP)
    for index, mark in enumerate(facts.marks):
        row, column = divmod(index, per_row)
        _tile(pen, MARGIN + column * (TILE + GAP), tiles_top + row * (TILE + GAP), mark)
    _legend(pen, facts)
    out = io.BytesIO()
    # Flat colours: a palette of a few entries compresses to a few kilobytes.
    image.quantize(colors=32).save(out, format="PNG", optimize=True)
    return out.getvalue()


def _cache_name(run_id: str, facts: ShareFacts) -> str:
    shown = repr((DRAWING_VERSION, facts.title, facts.result(), facts.marks))
    return f"{run_id}-{hashlib.sha256(shown.encode()).hexdigest()[:16]}.png"


def preview(folder: Path, run_id: str, facts: ShareFacts) -> bytes:
    """The run's preview image: from folder's cache, else drawn and cached there."""
    path = folder / _cache_name(run_id, facts)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    image = draw(facts)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Written whole under another name, then renamed: no reader sees half an image.
    handle, temporary = tempfile.mkstemp(dir=folder, suffix=".part")
    with os.fdopen(handle, "wb") as file:
        file.write(image)
    os.replace(temporary, path)
    return image
