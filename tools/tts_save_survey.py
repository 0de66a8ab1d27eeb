"""Survey Tabletop Simulator saves: the figures docs/tts.md rests on, measured on files TTS itself wrote.

    python tools/tts_save_survey.py FOLDER...

reads every `.json` under the folders (saves, Saved Objects, checked-out mods), walks every object
(contained ones too) and prints, per object type: how many, their scales (median, range, how many at 1),
`WidthScale` values, how far snap points reach on tiles and boards (local units, the object's own size
at scale 1), the scales of sideways cards, and the largest `CustomDeck` key. Objects repeated across
files (the same GUID, scale and image) are counted once.
"""
from __future__ import annotations

import json
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterator

TYPES = ("Card", "CardCustom", "Deck", "DeckCustom", "Custom_Tile", "Custom_Token", "Custom_Board")


def objects(node: Any) -> Iterator[dict]:
    """Every saved object in a JSON tree: anything with a Name and a Transform."""
    if isinstance(node, dict):
        if "Name" in node and isinstance(node.get("Transform"), dict):
            yield node
        for value in node.values():
            yield from objects(value)
    elif isinstance(node, list):
        for item in node:
            yield from objects(item)


def survey(folders: list[Path]) -> dict[str, list[dict]]:
    """The distinct objects of the surveyed types in every JSON file under the folders, by type."""
    found: dict[str, list[dict]] = defaultdict(list)
    seen = set()
    for path in sorted(p for folder in folders for p in folder.rglob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"))
        except (OSError, ValueError):
            continue
        for obj in objects(data):
            transform, image = obj["Transform"], obj.get("CustomImage") or {}
            key = (obj.get("GUID"), obj["Name"], transform.get("scaleX"), image.get("ImageURL"), obj.get("CardID"))
            if obj["Name"] in TYPES and key not in seen and isinstance(transform.get("scaleX"), (int, float)):
                seen.add(key)
                found[obj["Name"]].append({**obj, "_file": str(path)})
    return found


def report(found: dict[str, list[dict]]) -> None:
    """Print the figures per object type."""
    for name in TYPES:
        items = found.get(name, [])
        if not items:
            continue
        scales = [o["Transform"]["scaleX"] for o in items]
        print(f"{name}: {len(items)} objects, scale median {statistics.median(scales):.3f}, "
              f"{min(scales):.3f}..{max(scales):.3f}, {sum(abs(s - 1) < 1e-3 for s in scales)} at 1.0")
        if name.startswith("Custom_"):
            widths = Counter(round((o.get("CustomImage") or {}).get("WidthScale") or 0, 3) for o in items)
            print(f"  WidthScale: {widths.most_common(8)}")
            for obj in items:
                snaps = [s.get("Position") or {} for s in obj.get("AttachedSnapPoints") or []]
                if len(snaps) >= 4:
                    reach_x = max(abs(p.get("x", 0)) for p in snaps)
                    reach_z = max(abs(p.get("z", 0)) for p in snaps)
                    print(f"  snap points reach x {reach_x:.2f}, z {reach_z:.2f} at scale 1 "
                          f"({len(snaps)} on '{obj.get('Nickname', '')}', {obj['_file']})")
        sideways = [o["Transform"]["scaleX"] for o in items if o.get("SidewaysCard")]
        if sideways:
            print(f"  SidewaysCard: {len(sideways)}, scales {Counter(round(s, 3) for s in sideways).most_common(5)}")
    keys = [int(k) for items in found.values() for o in items for k in (o.get("CustomDeck") or {}) if k.isdigit()]
    if keys:
        print(f"largest CustomDeck key: {max(keys)}")


if __name__ == "__main__":
    report(survey([Path(arg) for arg in sys.argv[1:]]))
