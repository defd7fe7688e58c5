"""The champion house bot: correct choices where the answer is known, sound inferences, its time
budget, determinism with a sample budget, and its place among the house strategies."""

from __future__ import annotations

import gc
import random
import time

import pytest
from endgame_helpers import random_exhausted_hand, random_strict_hand

from bots import STRATEGIES, ChampionBot, make_bot
from bots.batch import play_deals, play_pair
from bots.champion import (
    UNLIKELY,
    open_answers,
    plausibility,
    sample_hand,
    sample_plausible,
)
from bots.endgame import SUIT_MASK, Position, Solver, solve
from engine import ALL_CARDS, Action, ActionKind, Card, Hand, Profile, deck_for, observe
from engine.cards import parse_cards


def fixed(samples: int = 6) -> ChampionBot:
    """A champion with a sample budget and no clock: deterministic given its rng."""
    return ChampionBot(ms=0, samples=samples)


def winning_close_hand() -> Hand:
    """Hearts trump (JH face up); the forehand (seat 1) holds AH TH AC AS AD.

    Closing at once wins 3 game points on every deal: AH and TH draw the opponent's trumps (it
    must follow suit, R3.4; it can hold at most KH and QH), the three aces then win, and the five
    tricks hold at least 54 + 12 card points (the opponent's five lowest possible cards). With the
    stock open the opponent could keep its trumps for the aces (R3.2)."""
    mine = parse_cards("AH TH AC AS AD")
    dealer = parse_cards("KC QC JC KS QS")
    stock = [c for c in ALL_CARDS if c not in mine and c not in dealer and str(c) != "JH"]
    deck = mine[:3] + dealer[:3] + [Card.from_text("JH")] + mine[3:] + dealer[3:] + stock
    return Hand(deck, dealer=0)


def test_a_winning_close_is_found():
    hand = winning_close_hand()
    obs = observe(hand, 1)
    unseen = sorted(obs.unseen_cards())
    rng = random.Random(1)
    for _ in range(150):  # closing is worth 3 whatever the opponent holds
        trial = hand.copy()
        trial._hands[0] = sum(c.bit for c in rng.sample(unseen, 5))
        trial.apply(1, Action.close())
        pos = Position.from_hand(trial)
        assert Solver.for_position(pos).value(pos) == 3
    assert fixed(20).choose(obs, random.Random(2)) is Action.close()


def test_claims_exactly_when_correct_on_random_strict_positions():
    """With the opponent's cards known (stock exhausted) the bot's choice is worth the solved
    value; in particular it claims with 66 (R7.2) and makes no false claim that loses more."""
    rng = random.Random(3)
    bot = fixed()
    claims = 0
    for _ in range(40):
        hand = random_strict_hand(rng, max_cards=5, close_rate=0.0)
        seat = hand.to_act
        obs = observe(hand, seat)
        action = bot.choose(obs, random.Random(0))
        values = solve(Position.from_hand(hand))
        assert values[action] == max(values.values())
        if action.kind is ActionKind.CLAIM:
            claims += 1
            assert hand.points(seat) >= 66 or all(
                v < values[action] for a, v in values.items() if a is not action)
        elif Action.claim() in values and hand.points(seat) >= 66:
            pytest.fail("a correct claim was passed over")
    assert claims >= 1


def test_exhausted_stock_is_solved_exactly():
    rng = random.Random(4)
    for _ in range(10):
        hand = random_exhausted_hand(rng)
        obs = observe(hand, hand.to_act)
        values = solve(Position.from_hand(hand))
        assert values[fixed().choose(obs, random.Random(0))] == max(values.values())


def test_inferences_are_sound_and_samples_respect_them():
    """R3.4 in a closed stock: a seat that did not follow suit has none of it (and no trump if it
    did not trump); every inferred exclusion holds for the real hand, and samples obey it."""
    rng = random.Random(5)
    informative = 0
    for _ in range(150):
        hand = random_strict_hand(rng, max_cards=4, close_rate=0.3)
        seat = hand.to_act
        obs = observe(hand, seat)
        excluded = sum(c.bit for c in obs.ruled_out_cards())
        real = sum(c.bit for c in hand.holding(1 - seat))
        assert real & excluded == 0
        if excluded & sum(c.bit for c in obs.unseen_cards()):
            informative += 1
            for _ in range(5):
                sample = sample_hand(obs, rng, excluded)
                assert sample._hands[1 - seat] & excluded == 0
                assert sample._hands[seat] == sum(c.bit for c in obs.hand)
                known = sum(c.bit for c in obs.known_opponent_cards())
                assert sample._hands[1 - seat] & known == known
    assert informative >= 5


def test_time_budget_is_kept():
    """The slowest move stays near the budget. Generous bounds (the machine is shared): its own
    work (the CPU time of the thread it runs in: the process's also counts threads that earlier
    tests of this process left running; the objects they left are frozen, out of the garbage
    collector's walks) within 3x the budget, its wall time within 20x."""
    bot = ChampionBot(ms=50)
    slowest = slowest_cpu = 0.0

    class Timed:
        def choose(self, observation, rng, deadline=None):
            nonlocal slowest, slowest_cpu
            start, cpu = time.monotonic(), time.thread_time()
            action = bot.choose(observation, rng, deadline)
            slowest = max(slowest, time.monotonic() - start)
            slowest_cpu = max(slowest_cpu, time.thread_time() - cpu)
            return action

    gc.freeze()  # a full collection would also walk what earlier tests of this process left
    try:
        for deal in range(2):
            play_pair(Timed(), make_bot("rdeep", samples=2), seed=11, deal=deal)
    finally:
        gc.unfreeze()
    assert slowest_cpu < 0.15
    assert 0.02 < slowest < 1.0


def test_a_cpu_time_budget_for_benchmarks():
    """clock="cpu" counts this process's CPU time (a fair budget on a loaded machine)."""
    bot = ChampionBot(ms=40, clock="cpu")
    hand = Hand(deck_for(13, 0), 0)
    for _ in range(4):
        obs = observe(hand, hand.to_act)
        start = time.process_time()
        action = bot.choose(obs, random.Random(0))
        assert time.process_time() - start < 0.2
        hand.apply(hand.to_act, action)
    with pytest.raises(ValueError, match="clock"):
        ChampionBot(ms=40, clock="sundial")


def test_a_caller_deadline_is_kept():
    hand = Hand(deck_for(12, 0), 0)
    obs = observe(hand, hand.to_act)
    start = time.monotonic()
    ChampionBot(ms=5000).choose(obs, random.Random(0), deadline=start + 0.05)
    assert time.monotonic() - start < 0.5


@pytest.mark.parametrize("profile", list(Profile))
def test_deterministic_with_a_sample_budget(profile):
    first = [play_pair(fixed(3), make_bot("bully"), seed=21, deal=d, profile=profile)
             for d in range(3)]
    again = [play_pair(fixed(3), make_bot("bully"), seed=21, deal=d, profile=profile)
             for d in range(3)]
    assert first == again


def test_objective_wins_takes_a_winning_action_whenever_there_is_one():
    """With the stock exhausted (the opponent's hand known) `objective="wins"` plays an action
    that wins the hand whenever one does, and the default one the most game points."""
    rng = random.Random("objective")
    wins, points = (ChampionBot(ms=0, samples=1, objective=o) for o in ("wins", "points"))
    winnable = 0
    for _ in range(60):
        hand = random_exhausted_hand(rng)
        if hand.is_over or hand.closed_by is not None:
            continue
        obs = observe(hand, hand.to_act)
        exact = solve(Position.from_hand(hand))
        seat = hand.to_act
        # each action's value on this (the only) deal: game points, or +1/-1
        assert {a: points._value(hand, seat, a, 0, None) for a in exact} == exact
        assert {a: wins._value(hand, seat, a, 0, None) for a in exact} == {
            a: 1 if v > 0 else -1 for a, v in exact.items()}
        best = max(exact.values())
        assert exact[points.choose(obs, random.Random(1))] == best
        if best > 0:
            winnable += 1
            assert exact[wins.choose(obs, random.Random(1))] > 0
    assert winnable >= 10
    with pytest.raises(ValueError, match="objective"):
        ChampionBot(ms=40, objective="glory")


def test_needs_a_budget():
    with pytest.raises(ValueError, match="budget"):
        ChampionBot(ms=0)


def test_a_house_strategy_for_simulations(monkeypatch):
    monkeypatch.setenv("BUMMERL_CHAMPION_MS", "15")
    assert "champion" in STRATEGIES
    bot = make_bot("champion")
    assert isinstance(bot, ChampionBot) and bot.ms == 15
    totals = play_deals("champion", "bully", seed=2, first=0, count=3)
    assert totals.pairs == 3


def test_beats_bully_with_a_small_budget():
    wins = 0
    net = 0
    for deal in range(12):
        pair = play_pair(fixed(4), make_bot("bully"), seed=31, deal=deal)
        net += pair.net
        wins += pair.wins_a
    assert net > 0 and wins > 12



def test_bummerl_simulate_champion_rdeep(tmp_path, monkeypatch):
    """`bummerl simulate champion rdeep` as a person runs it (inline, a small think budget)."""
    from test_batch_cli import bummerl

    monkeypatch.setenv("BUMMERL_CHAMPION_MS", "10")
    out = bummerl(tmp_path, "simulate", "champion", "rdeep", "-n", "2", "--seed", "3",
                  "--inline")
    assert out.returncode == 0, out.stderr
    assert "2 (4 hands)" in out.stdout and "champion" in out.stdout


def test_clearly_worse_actions_are_dropped_and_the_rest_compared_on_more_deals():
    """`prune`: after PRUNE_AFTER deals an action far below the best (on the same deals) is
    no longer evaluated; close ones stay."""
    from bots.champion import PRUNE_AFTER
    best = [3, 2, 3, 3, 2, 3, 3, 2, 3, 3, 2, 3]
    close = [3, 3, 2, 3, 2, 2, 3, 3, 3, 2, 2, 3]
    worse = [-2, -3, -1, -2, -2, -3, -1, -2, -2, -3, -1, -2]
    assert len(best) == PRUNE_AFTER
    values = [best, close, worse]
    assert ChampionBot._contenders(values, [0, 1, 2]) == [0, 1]
    assert ChampionBot._contenders([v[:-1] for v in values], [0, 1, 2]) == [0, 1, 2]


def test_pruning_spends_the_deals_on_the_close_actions():
    """On open-stock decisions of played hands the pruning champion evaluates fewer action-deals
    for the same number of deals, and v1 (`champion-v1`, no pruning) every action on every deal."""
    pruned = ChampionBot(ms=0, samples=24)
    v1 = make_bot("champion-v1", ms=0, samples=24)
    other = make_bot("rdeep", samples=2)
    stopped = 0
    for deal in range(3):
        hand = Hand(deck_for(5, deal), deal % 2)
        rng = random.Random(deal)
        while hand.to_act is not None and not hand.is_strict:
            obs = observe(hand, hand.to_act)
            if len(obs.legal_actions) > 2:
                pruned.choose(obs, random.Random(1))
                v1.choose(obs, random.Random(1))
                assert v1.last_samples == 24
                stopped += pruned.last_samples < 24
            hand.apply(hand.to_act, other.choose(obs, rng))
    assert stopped >= 1  # some decisions were settled before the sample budget



def test_inference_weighs_the_opponents_lost_answers():
    """`infer`: the opponent lost our lead of a non-trump ten while the stock was open, throwing
    a card of a third suit: deals in which it holds that suit's ace or a trump (the playout
    policy would have won with either) are drawn less often."""
    rng = random.Random(4)
    found = 0
    for deal in range(200):
        hand = Hand(deck_for(77, deal), 0)  # seat 1 leads the first trick
        trump = hand.trump_card.index // 5
        ten = next((c.index for c in hand.holding(1) if c.index % 5 == 1 and c.index // 5 != trump),
                   None)
        if ten is None:
            continue
        throws = [c.index for c in hand.holding(0) if c.index // 5 not in (ten // 5, trump)]
        if not throws:
            continue
        hand.apply(1, Action.play(ALL_CARDS[ten]))
        hand.apply(0, Action.play(ALL_CARDS[throws[0]]))
        obs = observe(hand, 1)
        answers = open_answers(obs)
        assert answers == [(ten, throws[0])]
        ace = ten - 1
        tell = 1 << ace | SUIT_MASK[trump]  # cards the policy would have won with
        if not any(c.bit & tell for c in obs.unseen_cards()):
            continue
        assert plausibility(answers, 1 << ace, trump) == UNLIKELY
        assert plausibility(answers, 0, trump) == 1
        weighted = sum(bool(sample_plausible(obs, rng, 0, answers)._hands[0] & tell)
                       for _ in range(300))
        plain = sum(bool(sample_hand(obs, rng)._hands[0] & tell) for _ in range(300))
        assert weighted < plain
        found += 1
        if found == 3:
            break
    assert found == 3


def test_every_deal_the_search_evaluates_comes_from_its_deal_method():
    """`ChampionBot.deal` is the one source of the deals (bench/vu.py --see-all overrides it to
    give the true deal): a bot whose `deal` always gives the true hand chooses as if it saw every
    card, here the open stock's best action on that one deal."""
    hand = Hand(deck_for(7, 0), dealer=0)
    obs = observe(hand, 1)
    calls = []

    class Seeing(ChampionBot):
        def deal(self, obs, rng, excluded, answers):
            calls.append(excluded)
            return hand.copy()

    bot = Seeing(ms=0, samples=5, prune=False)
    choice = bot.choose(obs, random.Random(3))
    assert len(calls) == bot.last_samples == 5
    seed_rng = random.Random(3)
    seeds = [seed_rng.getrandbits(64) for _ in range(5)]
    totals = {a: sum(bot._value(hand, 1, a, s, None) for s in seeds) for a in obs.legal_actions}
    assert totals[choice] == max(totals.values())


def test_a_champion_that_sees_the_hand_in_play_beats_the_fair_one():
    """bench/strength.py --see-all: `play_pair`'s `watch` hands the bench the hand in play, and
    a champion whose `deal` copies it searches the true deal. Knowing every card is worth game
    points over the same deals: the bound the bench measures is above the fair champion."""
    playing: list[Hand] = []
    seeing = ChampionBot(ms=0, samples=8)
    seeing.deal = lambda *_: playing[-1].copy()  # type: ignore[method-assign]
    net = 0
    for deal in range(40):
        pair = play_pair(seeing, fixed(8), 11, deal, watch=playing.append)
        net += pair.net
    assert len(playing) == 80 and all(h.result is not None for h in playing)
    assert net > 0
