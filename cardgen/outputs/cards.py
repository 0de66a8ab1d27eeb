"""Per-card PNG files and build.json, the record every later output stage reads."""
from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

from cardgen import __version__
from cardgen.storage import place_file, write_json

BUILD_RECORD = "build.json"


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def card_record(plan, rendered: int, cached: int) -> dict:
    """The build record (build.json) of a planned build: game, decks, backs, stats and every card."""
    game = plan.game
    backs = {name: {"image": f"backs/{name}.png", "deck": art.deck, "template": art.rendered.key, "hash": art.key}
             for name, art in plan.backs.items()}
    cards = []
    for card in plan.cards:
        size = game.deck_size(game.spec.decks[card.deck])
        back = plan.card_back[card.id]
        cards.append({
            "id": card.id, "deck": card.deck, "kind": game.spec.decks[card.deck].kind, "name": card.name,
            "copies": card.copies, "face": f"cards/{card.deck}/{card.id}.png",
            "back": backs[back]["image"] if back else None,
            "source": {"file": card.source_file, "row": card.source_row},
            "size_mm": {"width": size.width_mm, "height": size.height_mm}, "bleed_mm": size.bleed_mm,
            "dpi": size.dpi, "pixels": {"width": size.full_width_px, "height": size.full_height_px},
            "hash": plan.faces[card.id].key,
            "text": "\n".join(str(card.fields.get(f) or "") for f in card.text_fields).strip(),
            "fields": {k: _jsonable(v) for k, v in card.fields.items()},
        })
    return {
        "cardgen": __version__,
        "built_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "game": {"name": game.name, "title": game.spec.title, "version": game.spec.version,
                 "description": game.spec.description},
        "decks": {name: _deck_record(game, name) for name in game.spec.decks},
        "backs": backs,
        "stats": {"cards": len(cards), "copies": sum(c["copies"] for c in cards),
                  "rendered": rendered, "cached": cached},
        "cards": cards,
    }


def write_card_files(plan, record: dict, out_dir: Path, keep_svg: bool) -> None:
    """Place cards/<deck>/<id>.png and backs/<name>.png from the cache, then write build.json."""
    arts = [(f"backs/{name}.png", art) for name, art in plan.backs.items()]
    arts += [(f"cards/{card.deck}/{card.id}.png", plan.faces[card.id]) for card in plan.cards]
    for relative_path, art in arts:
        target = out_dir / relative_path
        place_file(art.cache_path, target)
        if keep_svg:
            target.with_suffix(".svg").write_text(art.rendered.svg, encoding="utf-8")
    write_json(out_dir / BUILD_RECORD, record)


def _deck_record(game, name: str) -> dict:
    deck = game.spec.decks[name]
    size = game.deck_size(deck)
    return {"title": deck.title or name.replace("_", " ").title(), "kind": deck.kind, "shape": deck.shape,
            "supply": deck.supply,
            "size_mm": {"width": size.width_mm, "height": size.height_mm},
            "bleed_mm": size.bleed_mm, "safe_mm": size.safe_mm, "dpi": size.dpi,
            "pixels": {"width": size.full_width_px, "height": size.full_height_px}}


def read_previous_record(out_dir: Path) -> dict | None:
    """The build.json of the last finished build, if there is a readable one."""
    try:
        return json.loads((out_dir / BUILD_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def read_build_record(out_dir: Path) -> dict:
    """Load build.json of a built game (for commands run after a build); a clear error when there is none."""
    from cardgen.errors import CardgenError

    record = read_previous_record(out_dir)
    if record is None:
        raise CardgenError(f"no build found at {out_dir / BUILD_RECORD}; run `cardgen build {out_dir.name}` first")
    return record
