"""What must never reach a spectator: the hidden cards of a match's hand in play, at a seq."""

from __future__ import annotations

import re

import engine
from db.models import RUNNING, ActionLog, Hand, Match


def hidden_cards(sessions, match_id: int, seq: int) -> set[str]:
    """The cards no spectator may see after `seq` actions of match `match_id`: both seats'
    cards and the face-down stock of the hand in play (empty once that hand is over), minus the
    ones made public (the face-up trump card, a card taken by an exchange)."""
    with sessions() as s:
        m = s.get(Match, match_id)
        hand_row = (s.query(Hand).filter(Hand.match_id == match_id, Hand.first_seq <= seq)
                    .order_by(Hand.first_seq.desc()).first())
        actions = [(a.seat, a.action) for a in s.query(ActionLog).filter(
            ActionLog.match_id == match_id, ActionLog.seq >= hand_row.first_seq,
            ActionLog.seq < seq).order_by(ActionLog.seq)]
        seed, profile = m.seed, m.profile
    hand = engine.Hand(engine.deck_for(seed, hand_row.number), hand_row.dealer, profile)
    for seat, text in actions:
        hand.apply(seat, engine.Action.from_text(text))
    if hand.is_over:
        return set()
    hidden = {str(c) for seat in (0, 1) for c in hand.holding(seat)}
    hidden |= {str(c) for c in hand.stock_cards()}
    obs = engine.observe(hand, 0)
    if obs.trump_card_face_up or obs.stock_size == 0:
        hidden.discard(str(obs.trump_card))
    hidden -= {str(e.taken) for e in obs.exchanges}
    return hidden


def shown_cards(text: str) -> set[str]:
    """Every card a page or payload shows: `data-card` attributes and engine texts in JSON."""
    found = set(re.findall(r'data-card=\\?"([AKQJT][CDHS])\\?"', text))
    found |= set(re.findall(r'"([AKQJT][CDHS])"', text))
    found |= set(re.findall(r"\b(?:play|exchange) ([AKQJT][CDHS])\b", text))
    return found


def seq_of(text: str) -> int:
    """The seq a live match part was rendered at (`data-seq`)."""
    match = re.search(r'data-seq=\\?"(\d+)\\?"', text)
    assert match, "no data-seq in the match's live part"
    return int(match.group(1))


def is_running(sessions, match_id: int) -> bool:
    with sessions() as s:
        return s.get(Match, match_id).state == RUNNING


def in_play_part(html: str) -> str:
    """The part of a match page (or its live part) about the hand in play: the table, the
    refused actions and the log of the last hand (earlier hands are over: all public)."""
    parts = re.findall(r'<section class="felt".*?</section>', html, re.S)
    parts += re.findall(r'<table class="refusals">.*?</table>', html, re.S)
    numbers = [int(n) for n in re.findall(r'<h3 id="hand-(\d+)"', html)]
    if numbers:
        last = max(numbers)
        parts += re.findall(rf'<h3 id="hand-{last}".*?</ol>', html, re.S)
    return "\n".join(parts)


def in_play_json(data: dict) -> str:
    """The JSON of a match (api) about the hand in play (see `in_play_part`)."""
    import json

    return json.dumps({k: v for k, v in data.items() if k != "hands"}) + json.dumps(
        data["hands"][-1:] if data.get("hands") else [])
