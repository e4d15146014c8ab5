"""docs/startap.md agrees with the package: the card tables are the data's, the action
table's ranges are the encoding's."""

from __future__ import annotations

import pathlib
import re

from startups_env.startap import rules as R
from startups_env.startap.cards import card_tables_markdown

PAGE = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "startap.md").read_text()


def test_the_card_tables_are_generated_from_the_data():
    assert card_tables_markdown() in PAGE


def test_the_action_table_matches_the_encoding():
    starts = [int(m.group(1)) for m in re.finditer(r"^\| (\d+)(?:-\d+)? \|", PAGE.split("## Actions")[1].split("## The cards")[0], re.M)]
    assert starts == [R.PASS, R.TAKE, R.COMMIT_BASE, R.PRICE_BASE, R.TARGET_BASE, R.DONE, R.SELL_BASE,
                      R.PLAY_PROJECT_BASE, R.HIRE_BASE, R.FRONT_BASE, R.FIRE_BASE, R.WORK_BASE, R.OFFER_BASE, R.ATTACH_BASE]
    assert f"{R.OFFER_BASE}-{R.ATTACH_BASE - 1} |" in PAGE and f"{R.ATTACH_BASE}-{R.NUM_ACTIONS - 1} |" in PAGE and f"One fixed space of {R.NUM_ACTIONS} ids" in PAGE
