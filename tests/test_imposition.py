"""Print sheet geometry (cardgen.outputs.imposition): pure data, no PDF."""
from __future__ import annotations

from collections import Counter
from dataclasses import replace as dataclass_replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardgen.core.units import parse_offset, parse_paper
from cardgen.options.pdf import PrintSpec
from cardgen.outputs.imposition import (
    EDGE_MM,
    Item,
    Page,
    Rect,
    bounds,
    impose,
    items_from_cards,
    plan_layout,
)
from cardgen.record.record import CardEntry

POKER = (63.5, 88.9)
BLEED = 3.175
QUARTER_INCH = 6.35


def card(card_id: str, copies: int, deck: str = "main", size: tuple[float, float] = POKER, back: str | None = "b.png",
         bleed: float = BLEED) -> CardEntry:
    """A build record card entry (what imposition reads, plus placeholders for the rest)."""
    return CardEntry.model_validate({
        "id": card_id, "name": card_id, "deck": deck, "copies": copies, "face": f"cards/{deck}/{card_id}.png",
        "back": back, "size_mm": {"width": size[0], "height": size[1]}, "bleed_mm": bleed, "kind": "card",
        "source": {"file": "cards.csv"}, "dpi": 300, "pixels": {"width": 1, "height": 1}, "hash": card_id})


def items(*cards: CardEntry) -> list[Item]:
    return items_from_cards(list(cards))


def fronts(pages: list[Page]) -> list[Page]:
    return [p for p in pages if p.side == "front"]


def check_page(page: Page, margin: float = QUARTER_INCH) -> None:
    """Cards inside the margins and not overlapping; marks outside every card and 3 mm from the edge."""
    paper = Rect(0, 0, page.width, page.height)
    inner = paper.grow(-margin + 1e-6)
    edge = paper.grow(-EDGE_MM + 1e-6)
    shown = [s.clip for s in page.slots]
    for i, rect in enumerate(shown):
        assert inner.contains(rect), (rect, page.width, page.height)
        assert not any(rect.overlaps(other) for other in shown[i + 1:])
    for mark in page.marks:
        assert edge.contains(mark.box())
        assert not any(mark.box().overlaps(rect.grow(0.5)) for rect in shown)
    if page.footer:
        assert edge.contains(page.footer.rect)
        assert not any(page.footer.rect.overlaps(rect) for rect in shown)
        assert not any(page.footer.rect.overlaps(m.box().grow(0.5)) for m in page.marks)


@pytest.mark.parametrize("paper, size", [("letter", (215.9, 279.4)), ("a4", (210.0, 297.0))])
def test_nine_poker_cards_on_a_portrait_page_centred(paper, size):
    layout = plan_layout(*POKER, BLEED, PrintSpec(paper=paper))
    assert layout.capacity == 9
    assert (layout.width, layout.height) == size
    frame = layout.frame
    assert frame.x == pytest.approx(size[0] - frame.right)
    assert frame.y == pytest.approx(size[1] - frame.top)
    assert min(frame.x, frame.y) >= QUARTER_INCH - 1e-9


def test_full_letter_sheet_leaves_a_quarter_inch_so_top_and_bottom_marks_are_short():
    imposition = impose(items(card("a", 9)), PrintSpec(paper="letter"))
    page = imposition.pages[0]
    assert min(s.trim.y for s in page.slots) == pytest.approx(QUARTER_INCH)
    vertical = [m for m in page.marks if m.x1 == m.x2]
    assert vertical and all(m.box().h <= QUARTER_INCH - EDGE_MM - 1 + 1e-6 for m in vertical)
    check_page(page)


def test_every_copy_appears_once_grouped_by_deck_in_data_order():
    cards = [card("a", 8), card("b", 3), card("c", 2, deck="other"), card("d", 1)]
    imposition = impose(items(*cards), PrintSpec())
    placed = [(s.card_id, s.copy) for p in fronts(imposition.pages) for s in p.slots]
    assert Counter(placed) == Counter((c.id, n) for c in cards for n in range(1, c.copies + 1))
    assert [p.deck for p in fronts(imposition.pages)] == ["main", "main", "other", "main"]
    assert [len(p.slots) for p in fronts(imposition.pages)] == [9, 2, 2, 1]


def test_decks_of_different_sizes_never_share_a_page():
    cards = [card("a", 5, deck="big"), card("m", 5, deck="small", size=(44.45, 63.5))]
    for page in impose(items(*cards), PrintSpec()).pages:
        assert len({(s.trim.w, s.trim.h) for s in page.slots}) == 1


def _pairs(imposition):
    pages = imposition.pages
    return [(pages[i], pages[i + 1]) for i in range(0, len(pages), 2)]


@pytest.mark.parametrize("offset", [(0.0, 0.0), (1.5, -0.75)])
def test_long_edge_backs_mirror_each_row_left_to_right_and_take_the_offset(offset):
    imposition = impose(items(card("a", 4), card("b", 3)), PrintSpec(duplex="long-edge", back_offset=offset))
    for front, back in _pairs(imposition):
        assert (front.side, back.side) == ("front", "back")
        at = {(s.card_id, s.copy): s.trim for s in back.slots}
        for slot in front.slots:
            expected = Rect(front.width - slot.trim.right + offset[0], slot.trim.y + offset[1], slot.trim.w,
                            slot.trim.h)
            assert at[(slot.card_id, slot.copy)] == pytest.approx(expected)
        assert {s.image for s in back.slots} == {"b.png"}


def test_short_edge_backs_reverse_the_row_order():
    imposition = impose(items(card("a", 7)), PrintSpec(duplex="short-edge"))
    front, back = imposition.pages
    at = {(s.card_id, s.copy): s.trim for s in back.slots}
    for slot in front.slots:
        assert at[(slot.card_id, slot.copy)] == pytest.approx(
            Rect(slot.trim.x, front.height - slot.trim.top, slot.trim.w, slot.trim.h))
    rows = sorted({round(s.trim.y, 3) for s in back.slots})
    assert len(rows) == 3  # 7 cards: the partly filled last row of the front is the top row of the back


def test_landscape_long_edge_turns_over_the_long_edge():
    options = PrintSpec(orientation="landscape", duplex="long-edge")
    front, back = impose(items(card("a", 2)), options).pages
    assert front.width > front.height
    for f, b in zip(front.slots, back.slots):
        assert b.trim.x == pytest.approx(f.trim.x)
        assert b.trim.y == pytest.approx(front.height - f.trim.top)


def test_duplex_none_puts_backs_in_their_own_pages():
    imposition = impose(items(card("a", 12)), PrintSpec(duplex="none"))
    assert [p.side for p in imposition.pages] == ["front", "front"]
    assert [p.side for p in imposition.back_pages] == ["back", "back"]


def check_pairs(imposition) -> None:
    """Duplex: fronts and backs alternate, and each back holds the backs of its own front's pieces."""
    pages = imposition.pages
    assert imposition.paired and len(pages) % 2 == 0
    for front, back in zip(pages[::2], pages[1::2]):
        assert (front.side, back.side) == ("front", "back") and front.deck == back.deck
        assert {(s.card_id, s.copy) for s in back.slots} <= {(s.card_id, s.copy) for s in front.slots}


@pytest.mark.parametrize("duplex", ["long-edge", "short-edge"])
def test_every_front_page_is_followed_by_its_back_page_blank_where_there_is_none(duplex):
    token = card("t", 40, deck="tokens", size=(22.0, 22.0), back=None, bleed=1.0)
    double_token = card("d", 5, deck="markers", size=(22.0, 22.0), back="marker-back.png", bleed=1.0)
    board = card("mat", 1, deck="mat", size=(400.0, 300.0), back=None, bleed=0.0)
    cards = [card("a", 10), token, card("n", 4, deck="plain", back=None), double_token, board, card("z", 2)]
    imposition = impose(items(*cards), PrintSpec(duplex=duplex))
    check_pairs(imposition)
    pages = imposition.pages
    assert [p.deck for p in pages[::2]] == ["main", "main", "tokens", "plain", "markers"] + ["mat"] * 4 + ["main"]
    blank = [p for p in pages[1::2] if not p.slots]
    assert [p.deck for p in blank] == ["tokens", "plain"] + ["mat"] * 4
    assert all("blank" in p.note and p.footer for p in blank)
    (markers,) = [p for p in pages[1::2] if p.deck == "markers"]
    assert [s.image for s in markers.slots] == ["marker-back.png"] * 5


def test_duplex_none_backs_line_up_with_their_fronts_page_for_page():
    cards = [card("a", 10), card("n", 4, deck="plain", back=None), card("z", 2)]
    imposition = impose(items(*cards), PrintSpec(duplex="none"))
    assert len(imposition.pages) == len(imposition.back_pages) == 4
    assert [len(p.slots) for p in imposition.back_pages] == [9, 1, 0, 2]
    assert not impose(items(card("n", 4, back=None)), PrintSpec(duplex="none")).back_pages


def test_gap_spacing_keeps_each_bleed_and_picks_the_orientation_holding_most():
    options = PrintSpec(spacing="gap", gap=2.0)
    page = impose(items(card("a", 6)), options).pages[0]
    assert page.width > page.height and len(page.slots) == 6  # landscape holds 6, portrait 4
    for slot in page.slots:
        assert slot.clip == slot.image_rect
    xs = sorted({round(s.image_rect.x, 6) for s in page.slots})
    assert xs[1] - xs[0] == pytest.approx(POKER[0] + 2 * BLEED + 2.0)
    check_page(page)


def test_touching_spacing_shares_cuts_and_clips_the_bleed():
    page = impose(items(card("a", 9)), PrintSpec(cut_lines=True)).pages[0]
    xs = sorted({round(s.trim.x, 6) for s in page.slots})
    assert xs[1] - xs[0] == pytest.approx(POKER[0])
    assert all(s.clip == s.trim for s in page.slots)
    vertical_cuts = {line.x1 for line in page.cut_lines if line.x1 == line.x2}
    assert len(vertical_cuts) == 4  # 3 columns share 4 cut lines


def test_fold_layout_puts_mirrored_backs_on_the_other_half():
    page = impose(items(card("a", 4)), PrintSpec(duplex="fold")).pages[0]
    assert page.side == "fold" and page.fold is not None
    faces = [s for s in page.slots if s.image != "b.png"]
    backs = [s for s in page.slots if s.image == "b.png"]
    assert len(faces) == len(backs) == 4
    fold_x = page.fold.x1
    assert page.fold.x1 == page.fold.x2 == pytest.approx(page.width / 2)
    assert all(s.trim.right < fold_x for s in faces) and all(s.trim.x > fold_x for s in backs)
    at = {(s.card_id, s.copy): s.trim for s in backs}
    for slot in faces:
        assert at[(slot.card_id, slot.copy)].x == pytest.approx(2 * fold_x - slot.trim.right)
    check_page(page)


def test_marks_can_be_left_off_back_pages():
    front, back = impose(items(card("a", 2)), PrintSpec(back_marks=False)).pages
    assert front.marks and not back.marks


def test_a_board_larger_than_the_paper_is_printed_in_overlapping_tiles():
    board = card("map", 1, deck="board", size=(500.0, 400.0), back=None)
    imposition = impose(items(card("a", 1), board), PrintSpec(cut_lines=False))
    tiles = [p for p in fronts(imposition.pages) if p.deck == "board"]
    assert len(tiles) == 6  # 3 x 2 tiles of a Letter page
    # The poker card's marks on Letter (cut_lines: false, else its page has cut lines instead), not the tiles'.
    assert [w.split(" lie ")[0] for w in imposition.warnings] == ["crop marks"]
    covered = []
    for page in tiles:
        check_page(page)
        (slot,) = page.slots
        assert slot.image == "cards/board/map.png" and "tile" in page.note
        image = slot.image_rect
        # The shown part, in image coordinates from the image's top-left corner.
        covered.append(Rect(slot.clip.x - image.x, image.top - slot.clip.top, slot.clip.w, slot.clip.h))
    whole = bounds(covered)
    assert (whole.x, whole.y, whole.w, whole.h) == pytest.approx((0, 0, 500 + 2 * BLEED, 400 + 2 * BLEED))
    lefts = sorted({round(r.x, 6) for r in covered})
    assert lefts[1] < covered[0].right - 9.99  # neighbours overlap by 10 mm


def test_the_tiles_of_a_board_whose_crop_marks_fall_in_the_band_get_cut_lines_along_the_board_edges_they_show():
    # Battle Builder's 400 x 200 mm score board on Letter: two tiles 7.95 mm from the top and bottom edges, so
    # their marks there lie in the band. Before: no cut lines on tiles, and the warning on every build.
    board = card("score", 1, deck="board", size=(400.0, 200.0), back="b.png", bleed=0.0)
    imposition = impose(items(board), PrintSpec())
    assert imposition.warnings == [] and len(imposition.pages) == 4
    for page in imposition.pages:
        (slot,) = page.slots
        shown = slot.clip
        across = sorted(line.y1 for line in page.cut_lines if line.y1 == line.y2)
        down = [line.x1 for line in page.cut_lines if line.x1 == line.x2]
        assert across == pytest.approx([slot.trim.y, slot.trim.top])  # the board's top and bottom edges
        assert len(down) == 1 and down[0] in (pytest.approx(slot.trim.x), pytest.approx(slot.trim.right))
        assert all(shown.x - 1e-6 <= x <= shown.right + 1e-6 for x in down)  # only the edge this tile shows
    assert [w.split(" lie ")[0] for w in impose(items(board), PrintSpec(cut_lines=False)).warnings] == ["crop marks"]


def test_a_tiled_board_with_a_back_gets_the_back_of_each_tile_behind_it():
    imposition = impose(items(card("map", 1, deck="board", size=(500.0, 400.0))), PrintSpec())
    check_pairs(imposition)
    assert not imposition.warnings and len(imposition.pages) == 12
    for front, back in zip(imposition.pages[::2], imposition.pages[1::2]):
        (face,), (rear,) = front.slots, back.slots
        assert rear.image == "b.png" and "back of tile" in back.note
        # Turned over the long edge of a portrait page: the same board region, mirrored left to right.
        assert rear.clip == pytest.approx(face.clip.mirror("x", front.width, front.height))
        assert rear.trim == pytest.approx(face.trim.mirror("x", front.width, front.height))
        check_page(back)


def test_a_board_with_a_back_in_fold_mode_says_the_back_is_left_out():
    imposition = impose(items(card("map", 1, deck="board", size=(150.0, 200.0))), PrintSpec(duplex="fold"))
    assert "without its back" in imposition.warnings[0] and [p.side for p in imposition.pages] == ["front"]


def test_subset_of_cards():
    cards = [card("a", 8), card("b", 3)]
    imposition = impose(items(cards[1]), PrintSpec())
    assert [(s.card_id, s.copy) for s in imposition.pages[0].slots] == [("b", 1), ("b", 2), ("b", 3)]


def test_papers_and_offsets_parse_or_say_why_not():
    assert parse_paper("A4") == (210.0, 297.0)
    assert parse_paper("8.5x11in") == pytest.approx((215.9, 279.4))
    assert parse_paper("300x200") == (300.0, 200.0)
    assert parse_offset("0.5,-1") == (0.5, -1.0)
    assert parse_offset([1, 2]) == (1.0, 2.0)
    with pytest.raises(ValueError, match="unknown paper"):
        parse_paper("napkin")
    with pytest.raises(ValueError, match="X,Y"):
        parse_offset("1")
    assert PrintSpec(paper="210x297mm").paper_name == "210x297mm"


@settings(max_examples=60, deadline=None)
@given(width=st.floats(20, 150), height=st.floats(20, 150), bleed=st.sampled_from([0.0, 3.0, 3.175]),
       paper=st.sampled_from(["letter", "a4", "a3"]), spacing=st.sampled_from(["touching", "gap"]),
       duplex=st.sampled_from(["long-edge", "short-edge", "fold", "none"]), copies=st.integers(1, 30))
def test_any_size_stays_inside_the_margins_without_overlap(width, height, bleed, paper, spacing, duplex, copies):
    options = PrintSpec(paper=paper, spacing=spacing, duplex=duplex)
    imposition = impose(items(card("x", copies, size=(width, height), bleed=bleed)), options)
    placed = Counter()
    for page in imposition.pages + imposition.back_pages:
        check_page(page)
        placed.update((s.card_id, s.copy, s.image) for s in page.slots)
    assert sorted(placed.values()) == [1] * len(placed)
    assert sum(1 for key in placed if key[2] != "b.png") == copies


# ---------------------------------------------------------------- the designer's grid, margins and the printer's band

NINTH_OF_A4 = (70.0, 99.0)


def test_a_grid_with_no_margin_puts_nine_ninths_of_a4_on_a_page_touching_at_the_trim():
    cards = items(card("a", 76, size=NINTH_OF_A4))
    assert len(fronts(impose(cards, PrintSpec(paper="a4")).pages)) == 19  # 4 a page: the 38 pages
    imposition = impose(cards, PrintSpec(paper="a4", grid="3x3", margin=0.0, cut_lines=True))
    pages = fronts(imposition.pages)
    assert len(pages) == 9 and len(imposition.pages) == 18 and [len(p.slots) for p in pages] == [9] * 8 + [4]
    trims = [s.trim for s in pages[0].slots]
    assert {(round(t.x, 6), round(t.y, 6)) for t in trims} == {(x, y) for x in (0, 70, 140) for y in (0, 99, 198)}
    assert all(s.clip == s.trim for s in pages[0].slots)  # touching: the bleed is cut off, cuts are shared
    assert {(line.x1, line.x2) for line in pages[0].cut_lines if line.x1 == line.x2} == {(x, x) for x in
                                                                                        (0, 70, 140, 210)}
    assert pages[0].marks == [] and pages[0].footer is None  # no margin: nothing is printed over the cards
    assert imposition.warnings == ["cards come to 0.0 mm from the edge of the a4 paper: a printer that cannot print "
                                   "the outer 6.35 mm leaves up to 6.35 mm of them blank (set print: unprintable: to "
                                   "what your printer cannot print, 0 for borderless)"]
    assert impose(cards, PrintSpec(paper="a4", grid="3x3", margin=0.0, unprintable=0)).warnings == []


def test_a_grid_that_does_not_fit_is_laid_out_to_fit_with_a_warning_and_tokens_keep_filling_the_page():
    tokens = [dataclass_replace(i, kind="token") for i in items(card("t", 100, deck="tokens", size=(22.0, 22.0)))]
    imposition = impose(items(card("a", 9, size=NINTH_OF_A4)) + tokens, PrintSpec(paper="a4", grid="3x3"))
    pages = fronts(imposition.pages)
    assert [len(p.slots) for p in pages] == [4, 4, 1, 96, 4]
    assert imposition.warnings[0] == ("deck 'main': a 3 x 3 grid of 70 x 99 mm cards does not fit a4 paper within "
                                      "margins of 6.35 mm; laid out to fit instead (a smaller margin:, down to 0, or "
                                      "another paper may hold it)")


@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_crop_marks_stay_out_of_the_band_a_home_printer_cannot_print_when_there_is_room(paper: str):
    imposition = impose(items(card("a", 9)), PrintSpec(paper=paper, cut_lines=False))
    page = imposition.pages[0]
    reach = sorted(min(x, y, page.width - x, page.height - y) for m in page.marks
                   for x, y in ((m.x1, m.y1), (m.x2, m.y2)))
    if paper == "a4":  # 15.15 mm above and below the cards, 9.75 mm beside them: room outside the band
        assert reach[0] >= QUARTER_INCH - 1e-9 and imposition.warnings == []
    else:  # Letter: 9 poker cards reach 6.35 mm from top and bottom, the marks there cannot stay out
        assert reach[0] == pytest.approx(EDGE_MM) and imposition.warnings == [
            "crop marks lie 3.0-5.4 mm from the edge of the letter paper, inside the outer 6.35 mm a printer may not "
            "print: the cards leave no room for them outside it (cut_lines: auto or true draws the cuts on the cards; "
            "print: unprintable: says what your printer cannot print)"]


@pytest.mark.parametrize(("paper", "size", "margin", "cut"), [("a4", POKER, 6.35, False), ("letter", POKER, 6.35, True),
                                                              ("a4", NINTH_OF_A4, 0.0, True)])
def test_cut_lines_auto_draws_them_where_the_crop_marks_cannot_stay_out_of_the_band(
        paper: str, size: tuple[float, float], margin: float, cut: bool):
    # Before: cut_lines was false by default, and nine poker cards on Letter warned on every build.
    imposition = impose(items(card("a", 9, size=size)), PrintSpec(paper=paper, margin=margin, grid="3x3"))
    front, back = imposition.pages[:2]
    assert bool(front.cut_lines) is cut and bool(back.cut_lines) is cut
    assert not [w for w in imposition.warnings if w.startswith("crop marks")]
    if cut:  # every trim line of the 3 x 3 grid is drawn on the sheet
        assert len({line.x1 for line in front.cut_lines if line.x1 == line.x2}) == 4


def test_cut_lines_auto_follows_the_crop_marks_asked_for():
    imposition = impose(items(card("a", 9)), PrintSpec(crop_marks=False, back_marks=False))
    assert imposition.pages[0].cut_lines == [] and imposition.warnings == []
    no_back_marks = impose(items(card("a", 9)), PrintSpec(back_marks=False)).pages
    assert no_back_marks[0].cut_lines and no_back_marks[1].cut_lines == [] and no_back_marks[1].marks == []


def test_a_margin_that_leaves_a_little_room_keeps_the_marks_out_of_the_band():
    # 9.35 mm of margin: a mark from 8.35 mm (1 mm clear of the cards) to the band's 6.35 mm; before, to 3.35 mm.
    page = impose(items(card("a", 9)), PrintSpec(paper="a4", margin=9.35, orientation="portrait")).pages[0]
    sides = [m for m in page.marks if m.y1 == m.y2]  # beside the cards, 9.75 mm from the edge: room
    assert sides and all(min(m.x1, m.x2, page.width - m.x1, page.width - m.x2) >= QUARTER_INCH - 1e-9 for m in sides)


def test_pages_of_one_layout_get_the_same_marks_and_footer_each_in_lists_of_its_own():
    """Full pages of a deck share their geometry (worked out once per process): each page gets what a page of its
    own would, and changing one page's marks leaves the others' as they were."""
    from cardgen.outputs.imposition import _page_geometry

    _page_geometry.cache_clear()
    first, second = fronts(impose(items(card("a", 18)), PrintSpec(cut_lines=True)).pages)[:2]
    assert _page_geometry.cache_info().hits >= 1
    _page_geometry.cache_clear()
    alone = fronts(impose(items(card("b", 9)), PrintSpec(cut_lines=True)).pages)[0]
    for page in (first, second):
        assert (page.marks, page.cut_lines, page.footer) == (alone.marks, alone.cut_lines, alone.footer)
        assert page.marks and page.cut_lines and page.footer is not None
    first.marks.clear()
    first.cut_lines.clear()
    assert second.marks == alone.marks and second.cut_lines == alone.cut_lines
