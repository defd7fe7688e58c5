"""The learned model of the opponent's play (`bots.opponent`), the champion's deals
weighed by it (`weighed_deals`), and the tools that fit it (`tools/opponent_data.py`,
`tools/opponent_fit.py`, run as docs/house-bots.md writes them)."""

from __future__ import annotations

import json
import math
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bots import make_bot
from bots.champion import sample_hand, weighed_deals
from bots.opponent import (
    FOLLOW_U,
    SIZE,
    OpponentModel,
    follow_features,
    rel,
    tclass,
)
from engine import Card, Hand, Observation, Profile, deck_for, observe
from engine.cards import SUITS

ROOT = Path(__file__).resolve().parents[2]


def test_the_shipped_model_gives_probabilities():
    model = OpponentModel.load()
    rng = random.Random(3)
    for _ in range(200):
        cards = rng.sample(range(20), 5)
        trump, t, points = rng.randrange(4), rng.randrange(5), rng.randrange(80)
        lead = rng.choice([-1, *(c for c in range(20) if c not in cards)])
        total = sum(math.exp(model.log_choice(cards, c, lead, trump, t, points)) for c in cards)
        assert total == pytest.approx(1.0)
        both = [math.exp(model.log_close(cards, t, points, trump, closed))
                for closed in (True, False)]
        assert sum(both) == pytest.approx(1.0)


def test_a_model_of_the_wrong_size_is_refused(tmp_path):
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"theta": [0.0] * (SIZE - 1)}))
    with pytest.raises(ValueError, match=f"{SIZE - 1} parameters, the model has {SIZE}"):
        OpponentModel.load(path)


def self_play(deals: int, seed: int = 17):
    """(true hand, seat to act, its observation) at each decision of small champions' hands."""
    bot = make_bot("champion-v1", ms=0, samples=4)
    for deal in range(deals):
        hand = Hand(deck_for(seed, deal), deal % 2, Profile.SOFT)
        rng = random.Random(deal)
        while hand.to_act is not None:
            seat = hand.to_act
            obs = observe(hand, seat)
            yield hand, seat, obs
            hand.apply(seat, bot.choose(obs, rng))


def test_the_likelihood_of_real_play_is_a_probability_of_the_decisions_made():
    model = OpponentModel.load()
    rng = random.Random(5)
    weighed = 0
    for hand, seat, obs in self_play(12):
        held = [c.index for c in hand.holding(1 - seat)]
        value = model.log_likelihood(obs, held, rng)
        assert value <= 0.0
        if value < 0.0:
            weighed += 1
        if not obs.tricks and obs.lead_card is None:
            assert value == 0.0  # nothing played yet: nothing to weigh
    assert weighed > 50


def answered_low(deals: int) -> Observation:
    """A seat on lead at trick 1 whose opponent answered a non-trump lead at trick 0 with a
    non-trump card, without exchanging (random play)."""
    bot = make_bot("random")
    for deal in range(deals):
        hand = Hand(deck_for(23, deal), deal % 2, Profile.SOFT)
        rng = random.Random(deal)
        while hand.to_act is not None:
            seat = hand.to_act
            obs = observe(hand, seat)
            if len(obs.tricks) == 1 and obs.lead_card is None and not obs.exchanges:
                trick = obs.tricks[0]
                if (trick.leader == seat and trick.lead.suit != obs.trump_suit
                        and trick.follow.suit != obs.trump_suit and obs.stock_size > 2):
                    return obs
                break
            hand.apply(seat, bot.choose(obs, rng))
    raise AssertionError("no such position")


def trumps_held(deal: Hand, obs: Observation) -> int:
    return sum(c.suit == obs.trump_suit for c in deal.holding(1 - obs.seat))


def test_deals_are_resampled_by_how_likely_the_model_makes_the_opponents_play():
    """A model under which a seat always answers with a trump when it holds one: after the
    opponent answered a non-trump lead with a non-trump, it held no trump then, so at most the
    card it drew since can be one: deals giving it two or more trumps all but vanish."""
    theta = [0.0] * SIZE
    for lead_class in range(10):
        for rank in range(5):
            theta[FOLLOW_U + lead_class * 15 + 5 + rank] = 12.0  # rel 5..9: a trump
    model = OpponentModel(theta)
    obs = answered_low(2000)
    uniform = [sample_hand(obs, random.Random(k)) for k in range(400)]
    weighed = weighed_deals(obs, random.Random(1), 0, model, 400)
    assert sum(trumps_held(d, obs) >= 2 for d in uniform) > 40
    assert sum(trumps_held(d, obs) >= 2 for d in weighed) <= 4
    assert all(observe(d, obs.seat) == obs for d in weighed)  # every one still agrees with it


def test_features_read_cards_relative_to_the_trump_and_the_lead():
    trump = SUITS.index(Card.from_text("AH").suit)
    ah, kh, ts, qs, jc = (Card.from_text(t).index for t in ("AH", "KH", "TS", "QS", "JC"))
    assert tclass(ah, trump) == 0 and tclass(ts, trump) == 5 + 1
    assert rel(qs, ts, trump) == 3  # the suit led, a queen
    assert rel(kh, ts, trump) == 5 + 2  # a trump, a king
    assert rel(jc, ts, trump) == 10 + 4  # another suit, a jack
    features = follow_features([ah, kh, qs, jc, ts], ah, ts, trump, 2, 30)
    assert features[0] == FOLLOW_U + tclass(ts, trump) * 15 + rel(ah, ts, trump)
    assert len(features) == 3 + 4  # the answer's three, one for each other card


def test_the_documented_fit_learns_a_preference_and_writes_a_model(tmp_path):
    """tools/opponent_data.py as docs/house-bots.md runs it (two hands instead of 5,000), then
    tools/opponent_fit.py on its records with the documented flags; and the fit on records in
    which the seat always answers with its highest card (one of each rank held) learns that
    preference, and reports closes that never happen (a base rate of 0)."""
    records = tmp_path / "opponent.jsonl"
    done = subprocess.run(
        [sys.executable, "tools/opponent_data.py", "-n", "2", "--ms", "50", "--procs", "2",
         "-o", str(records)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert lines and all({"hand", "trump", "lead", "t", "points", "legal", "chosen"} <= set(r)
                         for r in lines)
    rng = random.Random(9)
    made = []
    for _ in range(3000):
        hand = [rng.randrange(4) * 5 + rank for rank in range(5)]  # one card of each rank
        rng.shuffle(hand)
        lead = rng.choice([c for c in range(20) if c not in hand])
        best = min(hand, key=lambda c: c % 5)  # rank 0 is the ace
        made.append({"hand": hand, "trump": rng.randrange(4), "lead": lead, "t": 1,
                     "points": 10, "legal": [f"play {Card.from_index(c)}" for c in hand],
                     "chosen": f"play {Card.from_index(best)}"})
    for r in made[:200]:  # leads where it could close and never did (a base rate of 0)
        made.append({**r, "lead": -1, "legal": [*r["legal"], "close"]})
    synthetic = tmp_path / "synthetic.jsonl"
    synthetic.write_text("".join(json.dumps(r) + "\n" for r in lines + made))
    out = tmp_path / "model.json"
    done = subprocess.run(
        [sys.executable, "tools/opponent_fit.py", str(synthetic), "--l2", "3e-4", "-o", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "held out answer" in done.stdout, done.stdout
    assert re.search(r"held out close: \d+ leads, 0.0% closed", done.stdout), done.stdout
    model = OpponentModel.load(out)
    right = 0
    for r in made[:300]:
        probs = [model.log_choice(r["hand"], c, r["lead"], r["trump"], 1, 10) for c in r["hand"]]
        right += r["chosen"] == f"play {Card.from_index(r['hand'][probs.index(max(probs))])}"
    assert right >= 240, right
