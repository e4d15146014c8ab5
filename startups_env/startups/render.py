"""Pictures of one game of a :class:`~startups_env.startups.state.State` batch: a text table and an
RGB image.

* :func:`table_text` -- a compact text table: the market (cards per company, the coins on
  them and on the richest card), every portfolio by company, the anti-monopoly chip
  holders, coins, pile size, whose turn and which phase, and the viewer's hand (other
  seats show their hand size and the cards publicly known to be in it). Once the game is
  over: the final scoring company by company (who holds the majority, who pays what),
  scores and ranks.
* :func:`table_rgb` -- the same table drawn with Pillow into a fixed-size
  ``uint8[RGB_HEIGHT, RGB_WIDTH, 3]`` array (for ``render_mode="rgb_array"``, GIFs and
  notebooks).

``viewer`` is a seat (only that seat's hand is shown) or None for a spectator who sees
every hand (replays, debugging). Both functions take a ``State`` or anything with a
``.state`` attribute (a :class:`~startups_env.startups.simulator.Simulator`).

The renderer only reads the state; the final payout it explains comes from
:func:`startups_env.startups.numpy_backend.company_payouts`, the function the simulator scores with, and the
totals are checked against the scores the simulator recorded.
"""

from __future__ import annotations

import functools

import numpy as np

from startups_env.checks import is_int
from startups_env.startups import queries
from startups_env.startups.numpy_backend import company_payouts, round_scores
from startups_env.startups.queries import SLOTS
from startups_env.startups.rules import COMPANY_NAMES, COMPANY_SIZES, NUM_COMPANIES, PHASE_NAMES, options_of_bits
from startups_env.startups.state import State

C = NUM_COMPANIES
RGB_HEIGHT, RGB_WIDTH = 560, 880

# One colour per company (giraffe yellow, bowwow brown, flamingo pink, octo purple,
# hippo blue, elephant red), chosen to stay distinct in a 256-colour GIF palette.
COMPANY_COLORS = (
    (236, 186, 40),
    (160, 108, 64),
    (238, 120, 168),
    (128, 92, 204),
    (72, 150, 206),
    (214, 76, 58),
)


# ---------------------------------------------------------------------------- helpers
def _as_state(state) -> State:
    s = getattr(state, "state", state)
    if not isinstance(s, State):
        raise ValueError(f"expected a startups_env State or Simulator, got {type(state).__name__}")
    return s


def _check(state, game, viewer) -> tuple[State, int, int | None]:
    s = _as_state(state)
    if not is_int(game) or not 0 <= game < s.batch_size:
        raise ValueError(f"game must be an int in [0, {s.batch_size}), got {game!r}")
    game = int(game)
    n = int(s.num_players[game])
    if viewer is not None:
        if not is_int(viewer) or not 0 <= viewer < n:
            raise ValueError(f"viewer must be None or a seat in [0, {n}), got {viewer!r}")
        viewer = int(viewer)
    return s, game, viewer


def market_cards(state, game: int = 0) -> list[list[int]]:
    """Coins on each market card, per company, oldest (richest) card first."""
    s, game, _ = _check(state, game, None)
    out = []
    for c in range(C):
        head, paid = int(s.market_head[c, game]), int(s.market_paid[c, game])
        out.append(
            [queries.card_coins(paid, int(s.market_stamp[c, (head + i) % SLOTS, game]))
             for i in range(int(s.market_count[c, game]))]
        )
    return out


def _hand_list(counts) -> str:
    parts = [COMPANY_NAMES[c] + (f" x{int(k)}" if k > 1 else "") for c, k in enumerate(counts) if k > 0]
    return ", ".join(parts) if parts else "(empty)"


def _ordinal(rank: int) -> str:
    return {0: "1st", 1: "2nd", 2: "3rd"}.get(rank, f"{rank + 1}th")


def final_scoring(state, game: int = 0) -> dict:
    """The final payout of a finished game, company by company.

    Returns a dict of lists indexed by seat (length num_players) and company:
    ``holdings[seat][c]`` (portfolio + hand), ``paid[seat][c]``, ``received[seat][c]``
    (3-point coins), ``coins`` (1-point balance before the payout), ``scores``,
    ``threes``, ``ranks`` (0 = best) and ``majority[c]`` (the seat that collects for
    company c, or None on a tie / no cards).
    """
    s, game, _ = _check(state, game, None)
    if not s.done[game]:
        raise ValueError(f"game {game} is not over yet")
    n = int(s.num_players[game])
    holdings = (s.hand[:n, :, game].astype(np.int16) + s.portfolio[:n, :, game])[:, :, None]
    paid, received = (x[:, :, 0] for x in company_payouts(holdings))
    coins = s.coins[:n, game].astype(np.int64)
    scores, threes = (x[:, 0].astype(np.int64) for x in round_scores(holdings, coins[:, None], int(s.options[game])))
    # The simulator scored with the same function; a mismatch means a corrupted state.
    if scores.tolist() != s.scores[:n, game].tolist() or threes.tolist() != s.threes[:n, game].tolist():
        raise ValueError(
            f"game {game}: recorded scores {s.scores[:n, game].tolist()} do not match its holdings and coins"
        )
    majority = [int(np.argmax(received[:, c])) if received[:, c].any() else None for c in range(C)]
    return {
        "holdings": holdings[:, :, 0].tolist(),
        "paid": paid.tolist(),
        "received": received.tolist(),
        "coins": coins.tolist(),
        "scores": scores.tolist(),
        "threes": threes.tolist(),
        "ranks": s.ranks[:n, game].tolist(),
        "majority": majority,
    }


def _round_game(s: State, game: int, n: int) -> bool:
    """Whether game ``game`` is a round game past its first round (a State does not record
    the rules: before any round ends, a round game looks like a standard one)."""
    return bool(int(s.round[game]) > 0 or s.round_points[:n, game].any())


def _status(s: State, game: int, viewer: int | None) -> str:
    n, cur = int(s.num_players[game]), int(s.current[game])
    parts = [f"Startups | {n} players | turn {int(s.turn[game])} | pile {queries.pile_left(int(s.pile_pos[game]))}"]
    if _round_game(s, game, n):
        parts.append(f"round {min(int(s.round[game]) + 1, 4)}")
    if s.terminated[game]:
        parts.append("GAME OVER")
    elif s.truncated[game]:
        parts.append("GAME OVER (turn cap: scored as it stood)")
    else:
        who = f"P{cur}" + (" (you)" if viewer == cur else "")
        if s.phase[game] == 0:
            parts.append(f"{who} to take (draw or take a market card)")
        else:
            barred = int(s.barred[game])
            extra = f"; may not market {COMPANY_NAMES[barred]}" if barred >= 0 else ""
            parts.append(f"{who} to {PHASE_NAMES[1]} a card down{extra}")
    return " | ".join(parts)


# ---------------------------------------------------------------------------- text
def _legend(s: State, game: int, viewer: int | None) -> str:
    """The key to the table's marks, for a reader who has not seen one before."""
    marks = [] if s.done[game] else [f">P{int(s.current[game])} to act"]
    if viewer is not None:
        marks.append(f"P{viewer}* you")
    first, size = COMPANY_NAMES[0], COMPANY_SIZES[0]
    return "key: " + ", ".join(marks) + ("; " if marks else "") + (
        f"'{first} {size}' = {size} {first} cards in the game; seat columns = portfolio cards")


def table_text(state, game: int = 0, viewer: int | None = None) -> str:
    """A text table of game ``game`` as seen by seat ``viewer`` (None: every hand shown)."""
    s, game, viewer = _check(state, game, viewer)
    n, cur = int(s.num_players[game]), int(s.current[game])
    done = bool(s.done[game])
    col = 5
    seat_labels = "".join(
        f"{('>' if (i == cur and not done) else '') + f'P{i}' + ('*' if i == viewer else ''):>{col}}" for i in range(n)
    )
    lines = [_status(s, game, viewer)]
    if viewer is not None:
        lines[0] += f" | you are P{viewer}"
    lines.append(f"{'company':<13}{'market: cards [coins on each]':<30}{'chip':>5} |{seat_labels}")
    cards = market_cards(s, game)
    for c in range(C):
        coins = cards[c]
        if coins:
            shown = " ".join(str(x) for x in coins[:6]) + (" .." if len(coins) > 6 else "")
            market = f"{len(coins)}: [{shown}] = {sum(coins)}c"
        else:
            market = "-"
        holder = int(s.chip[c, game])
        chip = f"P{holder}" if holder >= 0 else "-"
        row = "".join(f"{int(s.portfolio[i, c, game]) or '.':>{col}}" for i in range(n))
        lines.append(f"{COMPANY_NAMES[c]:<9}{COMPANY_SIZES[c]:>2}  {market:<30}{chip:>5} |{row}")
    lines.append(f"{'coins':<48} |" + "".join(f"{int(s.coins[i, game]):>{col}}" for i in range(n)))
    lines.append(f"{'hand size':<48} |" + "".join(f"{int(s.hand[i, :, game].sum()):>{col}}" for i in range(n)))
    lines.append(_legend(s, game, viewer))
    if _round_game(s, game, n):
        lines.append(f"{'round points':<48} |" + "".join(f"{int(s.round_points[i, game]):>{col}}" for i in range(n)))
    if viewer is None:
        for i in range(n):
            lines.append(f"hand P{i}: {_hand_list(s.hand[i, :, game])}")
    else:
        lines.append(f"your hand (P{viewer}): {_hand_list(s.hand[viewer, :, game])}")
        known = [
            f"P{i} {_hand_list(s.known[i, :, game])}" for i in range(n) if i != viewer and s.known[i, :, game].any()
        ]
        if known:
            lines.append("known in hands (taken from the market): " + "; ".join(known))
    if done:
        lines.append("")
        lines.extend(_scoring_lines(s, game, n, col))
    return "\n".join(lines)


def _scoring_lines(s: State, game: int, n: int, col: int) -> list[str]:
    try:
        f = final_scoring(s, game)
    except ValueError:  # e.g. a public_state copy: hidden hands are blanked, so only the totals are known
        return [
            f"{'score':<12}|" + "".join(f"{int(s.scores[i, game]):>{col}}" for i in range(n)),
            f"{'rank':<12}|" + "".join(f"{_ordinal(int(s.ranks[i, game])):>{col}}" for i in range(n)),
        ]
    seats = "".join(f"{f'P{i}':>{col}}" for i in range(n))
    out = [
        "Final scoring: hands join portfolios; per company, a sole majority collects 1 coin per card",
        f"{'holdings':<12}|{seats} | payout",
    ]
    options = [name for name, on in options_of_bits(int(s.options[game])).items() if on]
    if options:  # (docs/rules.md, "Other rulesets")
        out.insert(1, "Options of play: " + ", ".join(options) + " (payouts in points: 3 a share; tripled coins: "
                      "a majority holder's coins count 3)")
    for c in range(C):
        held = [f["holdings"][i][c] for i in range(n)]
        row = "".join(f"{h or '.':>{col}}" for h in held)
        winner = f["majority"][c]
        if winner is not None:
            payers = [f"P{i} {f['paid'][i][c]}" for i in range(n) if f["paid"][i][c] > 0]
            what = f"P{winner} collects {f['received'][winner][c]} (x3) from " + ", ".join(payers)
        elif max(held) == 0:
            what = "nobody holds any"
        elif sum(1 for h in held if h == max(held)) > 1:
            what = f"tie at {max(held)}: nobody pays"
        else:  # sole holder and nobody else holds any: nothing to collect
            what = f"P{held.index(max(held))} alone: nobody pays"
        out.append(f"{COMPANY_NAMES[c]:<12}|{row} | {what}")

    def total_row(label, values, fmt="{}"):
        return f"{label:<12}|" + "".join(f"{fmt.format(v):>{col}}" for v in values)

    out.append(total_row("coins", f["coins"]))
    out.append(total_row("paid", [-sum(p) if sum(p) else 0 for p in f["paid"]]))
    out.append(total_row("received", f["threes"]) + "  (x3 points each)")
    out.append(total_row("score", f["scores"]))
    round_game = _round_game(s, game, n)
    out.append(total_row("final rank" if round_game else "rank", [_ordinal(r) for r in f["ranks"]]))
    winner = f["ranks"].index(0)
    note = (
        f" ({int(s.round_points[winner, game])} round points)" if round_game else f" with {f['scores'][winner]} points"
    )
    out.append(f"Winner: P{winner}{note}")
    return out


# ---------------------------------------------------------------------------- image
CAPTION_HEIGHT = 28  # pixels of the band with_caption adds under a picture


def with_caption(picture: np.ndarray, caption: str) -> np.ndarray:
    """``picture`` (uint8[H, W, 3], e.g. from :func:`table_rgb`) with ``caption`` written
    in a dark band of ``CAPTION_HEIGHT`` pixels beneath it: uint8[H + CAPTION_HEIGHT, W, 3].
    Replays caption each frame with the move just played."""
    from PIL import Image

    picture = np.asarray(picture)
    if picture.dtype != np.uint8 or picture.ndim != 3 or picture.shape[2] != 3:
        raise ValueError(f"picture must be uint8[H, W, 3], got {picture.dtype}{list(picture.shape)}")
    if not isinstance(caption, str):
        raise ValueError(f"caption must be a string, got {caption!r}")
    h, w, _ = picture.shape
    img = Image.new("RGB", (w, h + CAPTION_HEIGHT), (40, 48, 64))
    img.paste(Image.fromarray(picture), (0, 0))
    _text(img, (10, h + 6), caption, (255, 255, 255), 15)
    return np.asarray(img, dtype=np.uint8)


@functools.lru_cache(maxsize=8)
def _font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)  # Pillow >= 10.1 with FreeType
    except TypeError:  # older Pillow: fixed bitmap font
        return ImageFont.load_default()


@functools.lru_cache(maxsize=4096)
def _text_mask(text: str, size: int):
    """The antialiased glyphs of ``text`` as an "L" mask (cached: most labels repeat from
    frame to frame, and rasterising text dominates the drawing time)."""
    from PIL import Image, ImageDraw

    font = _font(size)
    _, _, right, bottom = font.getbbox(text)  # anchored at (0, 0) like ImageDraw.text
    mask = Image.new("L", (max(right, 1), max(bottom, 1)), 0)
    ImageDraw.Draw(mask).text((0, 0), text, fill=255, font=font)
    return mask


def _text(img, xy, text: str, fill, size: int) -> None:
    """Draw ``text`` with its top-left at ``xy`` (as ``ImageDraw.text`` would)."""
    mask = _text_mask(text, size)
    img.paste(fill, (int(xy[0]), int(xy[1])), mask)


def _text_on(color) -> tuple[int, int, int]:
    """Black or white, whichever reads better on ``color``."""
    r, g, b = color
    return (0, 0, 0) if 0.299 * r + 0.587 * g + 0.114 * b > 140 else (255, 255, 255)


# The picture's layout, in pixels. Font sizes:
_SMALL, _MID, _BIG = 12, 14, 17
# The market: one column per company below the title bar, at most _MAX_SHOWN cards drawn
# in each (a "+N more" line says how many are not).
_MARKET_TOP, _COLUMN_W, _CARD_H, _MAX_SHOWN = 38, RGB_WIDTH // C, 15, 8
# A seat's row: label | coins | hand | one portfolio cell per company | result.
_LABEL_W, _COINS_W, _HAND_W, _CELL_W = 70, 70, 220, 62
_HAND_X = _LABEL_W + _COINS_W
_PORTFOLIO_X = _HAND_X + _HAND_W
_RESULT_X = _PORTFOLIO_X + C * _CELL_W + 8


def table_rgb(state, game: int = 0, viewer: int | None = None) -> np.ndarray:
    """The table of game ``game`` as an image: ``uint8[RGB_HEIGHT, RGB_WIDTH, 3]``.

    Top: the market, one column per company (its cards, each labelled with its coins,
    richest first, and the chip holder). Below: one row per seat with coins, hand size
    (or the hand itself where the viewer may see it), portfolio cards per company with
    the chips held; the seat to act is highlighted. Finished games show scores and ranks;
    the round game shows the round points (from round 2 on, as :func:`table_text`).
    """
    try:
        from PIL import Image, ImageDraw
    except ImportError as e:  # Pillow is an optional dependency of the library
        raise ImportError("table_rgb needs Pillow: pip install pillow") from e
    s, game, viewer = _check(state, game, viewer)
    img = Image.new("RGB", (RGB_WIDTH, RGB_HEIGHT), (246, 244, 238))
    d = ImageDraw.Draw(img)
    d.rectangle([0, 0, RGB_WIDTH, 30], fill=(40, 48, 64))
    title = _status(s, game, viewer) + (f" | you are P{viewer}" if viewer is not None else "")
    _text(img, (10, 7), title, (255, 255, 255), _MID)
    market_bottom = _draw_market(img, d, s, game)
    _draw_seats(img, d, s, game, viewer, market_bottom)
    return np.asarray(img, dtype=np.uint8)


def _draw_market(img, d, s: State, game: int) -> int:
    """Draw the market's columns and the key line under them on ``img`` (``d`` draws on
    it); returns the y of the rule that ends the market, where the seats' rows begin."""
    cards = market_cards(s, game)
    for c in range(C):
        _draw_market_column(img, d, c, cards[c], int(s.chip[c, game]))
    # The bottom is fixed, as if every column showed its most cards and a "+N more"
    # line: the seats' rows stay in place from frame to frame of a replay.
    market_bottom = _MARKET_TOP + 38 + (_MAX_SHOWN + 1) * (_CARD_H + 3) + 2
    d.line([0, market_bottom, RGB_WIDTH, market_bottom], fill=(180, 180, 180), width=1)
    _text(
        img,
        (10, market_bottom - 16),
        "market cards carry coins (richest first) | M: anti-monopoly chip | highlighted row: seat to act",
        (110, 110, 110),
        _SMALL,
    )
    return market_bottom


def _draw_market_column(img, d, c: int, coins_on_cards: list[int], holder: int) -> None:
    """Company c's column of the market: its name and size, who holds its chip (``holder``,
    or -1 for no one), and its market cards with the coins on each, richest first."""
    x, top = c * _COLUMN_W + 18, _MARKET_TOP
    color, card_w = COMPANY_COLORS[c], _COLUMN_W - 36
    _text(img, (x, top), f"{COMPANY_NAMES[c]} ({COMPANY_SIZES[c]})", (20, 20, 20), _MID)
    _text(img, (x, top + 18), "chip: " + (f"P{holder}" if holder >= 0 else "-"), (70, 70, 70), _SMALL)
    for i, coins in enumerate(coins_on_cards[:_MAX_SHOWN]):
        y = top + 38 + i * (_CARD_H + 3)
        d.rounded_rectangle([x, y, x + card_w, y + _CARD_H], radius=3, fill=color, outline=(30, 30, 30))
        _text(img, (x + 6, y + 1), f"{coins} coin" + ("s" if coins != 1 else ""), _text_on(color), _SMALL)
    if len(coins_on_cards) > _MAX_SHOWN:
        _text(img, (x, top + 38 + _MAX_SHOWN * (_CARD_H + 3)), f"+{len(coins_on_cards) - _MAX_SHOWN} more",
              (20, 20, 20), _SMALL)
    if not coins_on_cards:
        _text(img, (x, top + 40), "market empty", (150, 150, 150), _SMALL)


def _draw_seats(img, d, s: State, game: int, viewer: int | None, market_bottom: int) -> None:
    """The companies' heading of the portfolio cells, then one row per seat below
    ``market_bottom``: label, coins, hand, portfolio and result. The seat to act is
    highlighted while the game runs."""
    n, cur, done = int(s.num_players[game]), int(s.current[game]), bool(s.done[game])
    round_game = _round_game(s, game, n)
    row_h = (RGB_HEIGHT - market_bottom - 8) // 7  # the height of 7 seats, whatever the table's size
    for c in range(C):
        _text(img, (_PORTFOLIO_X + c * _CELL_W + 4, market_bottom + 3), COMPANY_NAMES[c][:8], (90, 90, 90), _SMALL)
    for i in range(n):
        y = market_bottom + 20 + i * row_h
        if i == cur and not done:
            d.rectangle([0, y - 2, RGB_WIDTH, y + row_h - 4], fill=(255, 236, 180))
        label = f"P{i}" + (" you" if i == viewer else "")
        _text(img, (8, y + 6), label, (0, 0, 0), _BIG)
        _text(img, (_LABEL_W, y + 8), f"{int(s.coins[i, game])} coins", (40, 40, 40), _MID)
        _draw_hand(img, d, s, game, i, y, shown=viewer is None or viewer == i)
        _draw_portfolio(img, d, s, game, i, y)
        _draw_result(img, s, game, i, y, done, round_game)


def _draw_hand(img, d, s: State, game: int, seat: int, y: int, shown: bool) -> None:
    """Seat ``seat``'s hand in its row at ``y``: one small card per card, as many as fit
    before the portfolio, where ``shown`` (the viewer may see it); otherwise only its size
    and how many of its cards are publicly known."""
    hand = s.hand[seat, :, game]
    if not shown:
        known = int(s.known[seat, :, game].sum())
        _text(img, (_HAND_X, y + 8), f"{int(hand.sum())} cards" + (f", {known} known" if known else ""),
              (60, 60, 60), _MID)
        return
    hx = _HAND_X
    for c in range(C):
        for _ in range(int(hand[c])):
            if hx + 14 > _PORTFOLIO_X - 6:
                break
            d.rounded_rectangle([hx, y + 2, hx + 14, y + 26], radius=2, fill=COMPANY_COLORS[c], outline=(30, 30, 30))
            _text(img, (hx + 3, y + 7), COMPANY_NAMES[c][0].upper(), _text_on(COMPANY_COLORS[c]), _SMALL)
            hx += 17


def _draw_portfolio(img, d, s: State, game: int, seat: int, y: int) -> None:
    """Seat ``seat``'s portfolio in its row at ``y``: per company, a card with the count
    it holds (none drawn for 0) and an "M" disc where it holds the anti-monopoly chip."""
    for c in range(C):
        x = _PORTFOLIO_X + c * _CELL_W
        count = int(s.portfolio[seat, c, game])
        if count:
            color = COMPANY_COLORS[c]
            d.rounded_rectangle([x + 2, y + 1, x + 40, y + 27], radius=4, fill=color, outline=(30, 30, 30))
            _text(img, (x + 9, y + 5), str(count), _text_on(color), _BIG)
        if int(s.chip[c, game]) == seat:
            d.ellipse([x + 43, y + 6, x + 59, y + 22], fill=(250, 250, 250), outline=(0, 0, 0), width=2)
            _text(img, (x + 47, y + 7), "M", (0, 0, 0), _SMALL)


def _draw_result(img, s: State, game: int, seat: int, y: int, done: bool, round_game: bool) -> None:
    """The end of seat ``seat``'s row at ``y``: once the game is over, its score (a round
    game's round points, and its last round's score below) and rank, the winner's in red;
    while a round game runs, its round points; nothing while a one-round game runs."""
    points, score = int(s.round_points[seat, game]), int(s.scores[seat, game])
    if done:
        rank = int(s.ranks[seat, game])
        # A round game is ranked by its round points, not by the last round's score.
        result = f"{points} round pts" if round_game else f"{score} pts"
        color = (160, 20, 20) if rank == 0 else (20, 20, 20)
        _text(img, (_RESULT_X, y + (3 if round_game else 7)), f"{result} {_ordinal(rank)}", color, _MID)
        if round_game:  # (two lines that fit the 7-player table's last row)
            _text(img, (_RESULT_X, y + 20), f"last round {score} pts", (90, 90, 90), _SMALL)
    elif round_game:
        _text(img, (_RESULT_X, y + 8), f"{points} round pts", (40, 40, 40), _MID)
