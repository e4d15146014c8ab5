"""The card set of *Стартап*, the project's own (no card list of the box is public).

Sized like the box: 29 project cards, 50 opportunity cards and 42 incident cards. Each card
is defined once here, as data; ``docs/startap.md`` lists them card by card (a test checks
that the page and these tuples agree). Work is counted per specialty, in the order of
:data:`SPECIALTIES`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: The specialties of employees and of work, in the order every work vector uses.
SPECIALTIES = ("developer", "designer", "content", "management")
NUM_SPECIALTIES = len(SPECIALTIES)


class Project(NamedTuple):
    name: str  # two cards of one name compete: finishing one pushes the other out
    work: tuple[int, int, int, int]  # units per specialty
    deadline: int  # turns
    bonus: int  # coins once, on completion
    income: int  # coins every turn after completion
    feature_icon: bool  # features may be attached once it is complete
    incident: bool  # completing it reveals an incident


class Opportunity(NamedTuple):
    title: str
    specialty: int  # the employee half: index into SPECIALTIES
    feature_work: tuple[int, int, int, int] | None  # the other half, a feature (None: a situation)
    situation: int  # index into SITUATIONS (-1 for a feature)


class Incident(NamedTuple):
    title: str
    kind: int  # index into INCIDENT_KINDS
    loss: int  # FINES: coins each player loses
    avoid: int  # immediate kinds: the pooled coins that cancel it (0 for long incidents)
    work: tuple[int, int, int, int]  # long kinds: the work that closes it


#: Situations (the game-situation half of an opportunity card) and whom they hit.
SITUATIONS = ("crunch week", "angel investor", "deadline extension", "tax audit", "lost backup")
SITUATION_TARGETS_OTHER = (False, False, False, True, True)
CRUNCH, INVESTOR, EXTENSION, TAX_AUDIT, LOST_BACKUP = range(5)
INVESTOR_COINS = 3
TAX_AUDIT_COINS = 2

#: Incident kinds: two immediate (pooled coins avoid them), three long (work closes them).
INCIDENT_KINDS = ("fines", "data loss", "no profit", "rent hike", "hiring freeze")
FINES, DATA_LOSS, NO_PROFIT, RENT_HIKE, HIRING_FREEZE = range(5)
IMMEDIATE_KINDS = (FINES, DATA_LOSS)
LONG_KINDS = (NO_PROFIT, RENT_HIKE, HIRING_FREEZE)
NUM_LONG = len(LONG_KINDS)

_ = 0
PROJECTS: tuple[Project, ...] = (
    Project("Home page", (_, 1, 1, _), 2, 2, 0, False, False),
    Project("Home page", (1, 1, _, _), 2, 2, 0, False, False),
    Project("Online shop", (2, 1, _, _), 3, 0, 1, True, False),
    Project("Online shop", (1, 1, 1, _), 3, 0, 1, True, False),
    Project("Social network", (2, 1, 1, _), 3, 0, 2, True, True),
    Project("Social network", (3, 1, 1, _), 4, 0, 2, True, True),
    Project("Mobile game", (2, 2, _, _), 2, 0, 2, False, False),
    Project("Mobile game", (2, 2, 1, _), 3, 1, 2, False, False),
    Project("News portal", (_, 1, 2, _), 3, 0, 1, True, False),
    Project("News portal", (1, _, 2, _), 2, 0, 1, True, False),
    Project("Utility", (1, _, _, _), 1, 2, 0, False, False),
    Project("Utility", (2, _, _, _), 2, 3, 0, False, False),
    Project("Blog", (_, _, 2, _), 2, 1, 0, True, False),
    Project("Blog", (_, 1, 1, _), 2, 1, 0, True, False),
    Project("Search engine", (3, 1, _, 1), 4, 0, 3, True, True),
    Project("Dating site", (1, 2, 1, _), 3, 0, 2, False, True),
    Project("Corporate site", (1, 1, 1, _), 2, 4, 0, False, False),
    Project("Landing page", (_, 1, 1, _), 1, 2, 0, False, False),
    Project("Photo editor", (2, 2, _, _), 3, 2, 1, False, False),
    Project("Video hosting", (3, 1, 1, 1), 4, 0, 3, True, True),
    Project("Online school", (1, 1, 2, 1), 4, 1, 2, True, False),
    Project("Messenger", (3, 2, _, _), 4, 0, 2, True, True),
    Project("Forum", (1, _, 1, _), 2, 0, 1, True, False),
    Project("Promo campaign", (_, 1, 2, 1), 2, 5, 0, False, False),
    Project("CRM system", (2, _, _, 2), 3, 2, 1, False, False),
    Project("Travel guide", (_, 1, 2, _), 3, 1, 1, False, False),
    Project("Crowdfunding platform", (2, 1, 1, 1), 3, 0, 2, True, True),
    Project("Browser plugin", (1, 1, _, _), 2, 1, 1, False, False),
    Project("Cloud storage", (3, _, _, 1), 3, 0, 2, True, False),
)

_FEATURES = (  # (title, work): 30 feature halves
    ("Ad banners", (_, 1, _, _)), ("Premium accounts", (1, _, _, _)), ("Newsletter", (_, _, 1, _)),
    ("Mobile version", (1, 1, _, _)), ("User reviews", (_, _, 1, _)), ("Affiliate program", (_, _, _, 1)),
    ("Paid themes", (_, 1, _, _)), ("Online payments", (1, _, _, _)), ("Sponsored posts", (_, _, 1, _)),
    ("API for partners", (2, _, _, _)), ("Gift cards", (_, 1, 1, _)), ("Subscriptions", (1, _, 1, _)),
    ("Loyalty points", (1, _, _, 1)), ("Video ads", (_, 1, 1, _)), ("Merch store", (_, 1, _, 1)),
    ("Ad banners", (_, 1, _, _)), ("Premium accounts", (1, _, _, _)), ("Newsletter", (_, _, 1, _)),
    ("Mobile version", (1, 1, _, _)), ("User reviews", (_, _, 1, _)), ("Affiliate program", (_, _, _, 1)),
    ("Paid themes", (_, 1, _, _)), ("Online payments", (1, _, _, _)), ("Sponsored posts", (_, _, 1, _)),
    ("Data analytics", (1, _, _, 1)), ("Gift cards", (_, 1, 1, _)), ("Subscriptions", (1, _, 1, _)),
    ("Dark mode", (1, 1, _, _)), ("Podcast", (_, _, 2, _)), ("Partner network", (_, _, 1, 1)),
)
_SITUATION_CARDS = (5, 4, 4, 4, 3)  # cards of each situation: 20
_SPECIALTY_CYCLE = (0, 1, 2, 0, 1, 3, 0, 2, 1, 0)  # 20 developers, 15 designers, 10 content, 5 managers


def _opportunities() -> tuple[Opportunity, ...]:
    halves = [(title, work, -1) for title, work in _FEATURES]
    halves += [(SITUATIONS[s].capitalize(), None, s) for s, count in enumerate(_SITUATION_CARDS) for _i in range(count)]
    return tuple(Opportunity(title, _SPECIALTY_CYCLE[i % len(_SPECIALTY_CYCLE)], work, situation)
                 for i, (title, work, situation) in enumerate(halves))


OPPORTUNITIES: tuple[Opportunity, ...] = _opportunities()

_NONE = (0, 0, 0, 0)
INCIDENTS: tuple[Incident, ...] = (
    *[Incident("Late taxes", FINES, 3, 2, _NONE)] * 6,
    *[Incident("Lawsuit", FINES, 4, 3, _NONE)] * 6,
    *[Incident("Licence?", FINES, 5, 3, _NONE)] * 4,
    *[Incident("Court order", FINES, 6, 5, _NONE)] * 4,
    *[Incident("Disk failure", DATA_LOSS, 0, 3, _NONE)] * 5,
    *[Incident("Hacker attack", DATA_LOSS, 0, 4, _NONE)] * 5,
    *[Incident("Projects bring no profit", NO_PROFIT, 0, 0, (_, _, _, 3))] * 5,
    *[Incident("Landlord raises the rent", RENT_HIKE, 0, 0, (2, _, _, _))] * 4,
    *[Incident("Hiring freeze", HIRING_FREEZE, 0, 0, (_, _, 2, _))] * 3,
)

NUM_PROJECTS, NUM_OPPORTUNITIES, NUM_INCIDENTS = len(PROJECTS), len(OPPORTUNITIES), len(INCIDENTS)
assert (NUM_PROJECTS, NUM_OPPORTUNITIES, NUM_INCIDENTS) == (29, 50, 42)

#: Project names, in order of first appearance; PROJECT_NAME[c] indexes it.
NAMES = tuple(dict.fromkeys(p.name for p in PROJECTS))

# The tables the rules read, as arrays (one row per card).
PROJECT_WORK = np.array([p.work for p in PROJECTS], np.int8)  # [29, 4]
PROJECT_DEADLINE = np.array([p.deadline for p in PROJECTS], np.int8)
PROJECT_BONUS = np.array([p.bonus for p in PROJECTS], np.int8)
PROJECT_INCOME = np.array([p.income for p in PROJECTS], np.int8)
PROJECT_ICON = np.array([p.feature_icon for p in PROJECTS], bool)
PROJECT_INCIDENT = np.array([p.incident for p in PROJECTS], bool)
PROJECT_NAME = np.array([NAMES.index(p.name) for p in PROJECTS], np.int8)
OPP_SPECIALTY = np.array([o.specialty for o in OPPORTUNITIES], np.int8)
OPP_SITUATION = np.array([o.situation for o in OPPORTUNITIES], np.int8)  # -1: a feature
OPP_FEATURE_WORK = np.array([o.feature_work or _NONE for o in OPPORTUNITIES], np.int8)  # [50, 4]
INCIDENT_KIND = np.array([i.kind for i in INCIDENTS], np.int8)
INCIDENT_LOSS = np.array([i.loss for i in INCIDENTS], np.int8)
INCIDENT_AVOID = np.array([i.avoid for i in INCIDENTS], np.int8)
INCIDENT_WORK = np.array([i.work for i in INCIDENTS], np.int8)  # [42, 4]


def card_tables_markdown() -> str:
    """The three card tables of docs/startap.md, generated from the data above."""
    lines = ["### Projects (29)", "", "| id | name | work (dev/des/con/mgt) | deadline | bonus | income | feature icon "
             "| incident |", "|---|---|---|---|---|---|---|---|"]
    for c, p in enumerate(PROJECTS):
        lines.append(f"| {c} | {p.name} | {'/'.join(map(str, p.work))} | {p.deadline} | {p.bonus} | {p.income} | "
                     f"{'yes' if p.feature_icon else 'no'} | {'yes' if p.incident else 'no'} |")
    lines += ["", "### Opportunities (50)", "", "| id | employee | other half | feature work (dev/des/con/mgt) |",
              "|---|---|---|---|"]
    for j, o in enumerate(OPPORTUNITIES):
        half = f"feature: {o.title}" if o.situation < 0 else f"situation: {SITUATIONS[o.situation]}"
        work = "/".join(map(str, o.feature_work)) if o.feature_work else "-"
        lines.append(f"| {j} | {SPECIALTIES[o.specialty]} | {half} | {work} |")
    lines += ["", "### Incidents (42)", "", "| id | title | kind | loss | avoid (pooled coins) | "
              "closing work (dev/des/con/mgt) |", "|---|---|---|---|---|---|"]
    for i, inc in enumerate(INCIDENTS):
        lines.append(f"| {i} | {inc.title} | {INCIDENT_KINDS[inc.kind]} | {inc.loss or '-'} | {inc.avoid or '-'} | "
                     f"{'/'.join(map(str, inc.work)) if inc.kind in LONG_KINDS else '-'} |")
    return "\n".join(lines)
