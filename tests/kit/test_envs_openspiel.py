"""The kit's OpenSpiel game, `python_schnapsen` (bummerl_kit.envs.openspiel_game, issue 45):
OpenSpiel's own checks in both profiles, the engine's legal actions and results (R8), no leak
of what a seat may not know (R10.2), resampling from an information state, and OpenSpiel's
IS-MCTS playing hands to their end with it."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from bummerl.v1 import match_pb2
from envkit import twins
from servicekit import OPERATOR, auth, fresh_database, play_in_threads, running_service

from bummerl_kit.envs import encoding, register_openspiel
from engine import Hand, IllegalActionError, Profile, deck_for, observe
from engine.cards import ALL_CARDS
from examples.random_bot import RandomBot

pyspiel = pytest.importorskip("pyspiel")
ismcts = pytest.importorskip("open_spiel.python.algorithms.ismcts")
mcts = pytest.importorskip("open_spiel.python.algorithms.mcts")
from bummerl_kit.envs.openspiel_game import (  # noqa: E402
    OpenSpielBot,
    ismcts_bot,
    state_from_observation,
)

register_openspiel()
PROFILES = ("soft", "sharp")


def game(profile: str = "soft"):
    return pyspiel.load_game("python_schnapsen", {"profile": profile})


def dealt(profile: str, rng: random.Random):
    """A state after the deal (random chance outcomes)."""
    state = game(profile).new_initial_state()
    while state.is_chance_node():
        outcomes, _ = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(rng.choice(outcomes))
    return state


def state_of(hand: Hand, stop: int | None = None):
    """The game's state with `hand`'s dealer, deck and first `stop` actions."""
    state = game(hand.profile.value).new_initial_state()
    state.apply_action(hand.dealer)
    for card in hand.deck[:19]:
        state.apply_action(card.index)
    for _, action in hand.history[:stop]:
        state.apply_action(encoding.action_index(action))
    return state


def random_states(profile: str, count: int, seed: int):
    """States at random decision points of random hands."""
    rng = random.Random(seed)
    for _ in range(count):
        state = dealt(profile, rng)
        for _ in range(rng.randrange(0, 24)):
            if state.is_terminal():
                break
            state.apply_action(rng.choice(state.legal_actions()))
        if not state.is_terminal():
            yield state


@pytest.mark.parametrize("profile", PROFILES)
def test_openspiel_random_sim_test_passes(profile):
    """OpenSpiel's own checks of a game (legal actions, chance outcomes, clones, observation
    and information-state strings and tensors of both players, returns) on many hands."""
    pyspiel.random_sim_test(game(profile), num_sims=150, serialize=False, verbose=False)
    pyspiel.random_sim_test(game(profile), num_sims=10, serialize=True, verbose=False)


def test_the_game_is_one_zero_sum_hand_with_the_profile_as_a_parameter():
    soft, sharp = game("soft"), pyspiel.load_game("python_schnapsen(profile=sharp)")
    assert soft.profile is Profile.SOFT and sharp.profile is Profile.SHARP
    assert pyspiel.load_game("python_schnapsen").profile is Profile.SOFT
    kind = soft.get_type()
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert soft.num_distinct_actions() == encoding.NUM_ACTIONS == 27
    assert (soft.min_utility(), soft.max_utility()) == (-3, 3)  # R8: 1, 2 or 3 game points
    assert soft.observation_tensor_shape() == [encoding.OBSERVATION_SIZE]
    assert soft.information_state_tensor_shape() == [encoding.OBSERVATION_SIZE + 20 + 100
                                                     + 27 * 29]
    with pytest.raises(ValueError, match="profile must be 'soft' or 'sharp'.*'hard'"):
        pyspiel.load_game("python_schnapsen(profile=hard)")
    register_openspiel()  # again: nothing happens


def test_the_docs_lines_run_as_written():
    """docs/kit.md's example, as written."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "kit.md").read_text()
    section = text.split("## The OpenSpiel game", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None and "python_schnapsen" in code.group(1)
    scope: dict = {}
    exec(code.group(1), scope)
    assert scope["game"].profile is Profile.SHARP


def test_the_kit_imports_its_environments_without_open_spiel():
    code = ("import sys; sys.modules['pyspiel'] = None; sys.modules['numpy'] = None\n"
            "import bummerl_kit.envs as envs\n"
            "try:\n    envs.register_openspiel()\n"
            "except ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "pip install 'bummerl-kit[openspiel]'" in out


def test_the_deal_is_chance_and_the_engine_deals_it():
    state = game().new_initial_state()
    assert state.is_chance_node() and state.chance_outcomes() == [(0, 0.5), (1, 0.5)]
    state.apply_action(1)  # seat 1 deals (R2.1)
    assert state.chance_outcomes() == [(i, 1 / 20) for i in range(20)]
    order = [19, 0, 7, 12, 3, 5, 1, 18, 2, 4, 6, 8, 9, 10, 11, 13, 14, 15, 16]
    for n, card in enumerate(order):
        assert len(state.chance_outcomes()) == 20 - n
        assert state.action_to_string(card) == f"deal {ALL_CARDS[card]}"
        state.apply_action(card)
    deck = [ALL_CARDS[i] for i in [*order, 17]]
    hand = Hand(deck, dealer=1)
    assert not state.is_chance_node() and state.current_player() == 0  # forehand leads
    for seat in (0, 1):
        assert tuple(sorted(state.hand.holding(seat))) == tuple(sorted(hand.holding(seat)))
    assert state.hand.stock_cards() == hand.stock_cards()


@pytest.mark.parametrize("profile", PROFILES)
def test_legal_actions_and_returns_are_the_engines(profile):
    """Hands played at random: the legal actions are the engine's (in the kit's encoding) at
    every turn, and the returns are the engine's result, the winner's game points (R8)."""
    rng = random.Random(45)
    for _ in range(60):
        state = game(profile).new_initial_state()
        outcomes = []
        while state.is_chance_node():
            outcome = rng.choice([a for a, _ in state.chance_outcomes()])
            outcomes.append(outcome)
            state.apply_action(outcome)
        rest = sorted(set(range(20)) - set(outcomes[1:]))
        hand = Hand([ALL_CARDS[i] for i in [*outcomes[1:], *rest]], outcomes[0], profile)
        while not hand.is_over:
            assert state.current_player() == hand.to_act
            assert state.legal_actions() == sorted(encoding.action_index(a)
                                                   for a in hand.legal_actions())
            action = rng.choice(hand.legal_actions())
            state.apply_action(encoding.action_index(action))
            hand.apply(hand.to_act, action)
        assert state.is_terminal()
        result = hand.result
        assert result is not None
        returns = state.returns()
        assert returns[result.winner] == result.game_points == -returns[1 - result.winner]


def test_an_illegal_action_is_refused_by_the_engine():
    state = dealt("soft", random.Random(3))
    illegal = next(i for i in range(27) if i not in state.legal_actions())
    before = str(state)
    with pytest.raises(Exception, match=r"R\d"):
        state.apply_action(illegal)
    assert str(state) == before


def test_no_leak_deals_a_seat_cannot_tell_apart_look_the_same_to_it():
    """Two deals that differ only in the opponent's cards or the stock's order (tests/envkit:
    the same own cards and public history) give the seat the same information-state string
    and tensor and the same observation; the opponent, who can tell them apart, differs."""
    checked = 0
    for hand, twin, seat in twins(120, seed=45):
        one, two = state_of(hand), state_of(twin)
        assert str(one) != str(two)  # the deals differ
        assert one.information_state_string(seat) == two.information_state_string(seat)
        assert one.information_state_tensor(seat) == two.information_state_tensor(seat)
        assert one.observation_string(seat) == two.observation_string(seat)
        assert one.observation_tensor(seat) == two.observation_tensor(seat)
        if hand.holding(1 - seat) != twin.holding(1 - seat):
            assert (one.information_state_string(1 - seat)
                    != two.information_state_string(1 - seat))
            assert one.observation_tensor(1 - seat) != two.observation_tensor(1 - seat)
        checked += 1
    assert checked > 100


def test_the_information_state_holds_what_the_seat_drew_and_when():
    """Perfect recall: the seat's information state says which card it drew after which
    trick, which its observation (R10.1: its hand now) forgets."""
    for state in random_states("soft", 300, seed=7):
        hand = state.hand
        if not 2 <= len(hand.tricks) <= 4 or hand.closed_by is not None:
            continue
        seat = state.current_player()
        dealt_cards, drawn, _ = state.information_state(seat)
        first, second = drawn[0], drawn[1]
        if first not in hand.holding(seat) or second not in hand.holding(seat):
            continue
        # The same hand with the seat's first two draws swapped: same observation now.
        deck = list(state.deck)
        a, b = deck.index(first), deck.index(second)
        deck[a], deck[b] = deck[b], deck[a]
        twin = Hand(deck, hand.dealer, hand.profile)
        try:
            for actor, action in state.actions:
                twin.apply(actor, encoding.action_of(action))
        except IllegalActionError:  # a swapped card was needed earlier (a marriage, R5.1)
            continue
        other = state_of(twin)
        assert observe(other.hand, seat) == observe(hand, seat)
        assert other.observation_string(seat) == state.observation_string(seat)
        assert other.information_state_string(seat) != state.information_state_string(seat)
        assert other.information_state_tensor(seat) != state.information_state_tensor(seat)
        return
    pytest.fail("no state with two draws still held was found")


@pytest.mark.parametrize("profile", PROFILES)
def test_resampling_keeps_the_information_state_and_varies_the_hidden_cards(profile):
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    open_stock = 0
    for state in random_states(profile, 160, seed=11):
        player = state.current_player()
        key = state.information_state_string(player)
        tensor = state.information_state_tensor(player)
        worlds = set()
        for _ in range(8):
            world = state.resample_from_infostate(player, sampler)
            assert world.information_state_string(player) == key
            assert world.information_state_tensor(player) == tensor
            assert world.observation_string(player) == state.observation_string(player)
            assert world.legal_actions() == state.legal_actions()
            # A real state: its history replays to it.
            again = game(profile).new_initial_state()
            for action in world.history():
                again.apply_action(action)
            assert str(again) == str(world)
            worlds.add((world.hand.holding(1 - player), world.hand.stock_cards()))
        if state.hand.closed_by is None and state.hand.stock_size >= 2:
            # Unseen cards in the opponent's hand and under the stock: they move.
            assert len(worlds) > 1, str(state)
            open_stock += 1
    assert open_stock > 20


def test_resampling_is_uniform_over_the_unseen_cards_at_the_first_lead():
    """At the first lead the opponent holds 5 of the 14 cards the seat has not seen (its
    5, the trump card): each of them is the opponent's in about 5/14 of the worlds."""
    state = dealt("soft", random.Random(5))
    player = state.current_player()
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    counts: Counter = Counter()
    draws = 1400
    for _ in range(draws):
        counts.update(state.resample_from_infostate(player, sampler).hand.holding(1 - player))
    unseen = observe(state.hand, player).unseen_cards()
    assert set(counts) == unseen and len(unseen) == 14
    for card in unseen:
        assert abs(counts[card] / draws - 5 / 14) < 0.06, (card, counts[card])


@pytest.mark.parametrize("profile", PROFILES)
def test_openspiel_ismcts_finishes_hands_with_resampling(profile):
    """OpenSpiel's IS-MCTS (Python) plays both seats to the end of hands, resampling its
    worlds from the information state at every search."""
    this = game(profile)
    calls = Counter()

    def resampler(state, player):
        calls[player] += 1
        return state.resample_from_infostate(player, pyspiel.UniformProbabilitySampler(0., 1.))

    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(1))
    bots = [ismcts.ISMCTSBot(this, evaluator, 2.0, 25, random_state=np.random.RandomState(s))
            for s in (2, 3)]
    for bot in bots:
        bot.set_resampler(resampler)
    rng = np.random.RandomState(4)
    for _ in range(2):
        state = this.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(outcomes, p=probabilities)))
                continue
            action = bots[state.current_player()].step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
        returns = state.returns()
        assert sum(returns) == 0 and abs(returns[0]) in (1, 2, 3)
    assert calls[0] > 0 and calls[1] > 0


def test_a_state_made_from_a_kit_observation_observes_as_it():
    """What an OpenSpiel bot playing through the kit starts from: a state made from the
    observation alone, which the seat observes exactly as the observation (both profiles,
    every point of random hands, exchanges, marriages and closes included)."""
    rng = random.Random(45)
    made = 0
    for n in range(1200):
        profile = Profile.SHARP if n % 2 else Profile.SOFT
        hand = Hand(deck_for(n, 0), (n // 2) % 2, profile)
        stop = rng.randrange(0, 26)
        while not hand.is_over and len(hand.history) < stop:
            hand.apply(hand.to_act, rng.choice(hand.legal_actions()))
        if hand.is_over:
            continue
        seat = rng.randrange(2)
        obs = observe(hand, seat)
        state = state_from_observation(game(profile.value), obs, rng)
        assert observe(state.hand, seat) == obs
        assert state.legal_actions(seat) == [i for i, m in enumerate(encoding.legal_mask(obs))
                                             if m]
        made += 1
    assert made > 300
    over = Hand(deck_for(1, 0), 0)
    while not over.is_over:
        over.apply(over.to_act, over.legal_actions()[0])
    with pytest.raises(ValueError, match="the hand is over"):
        state_from_observation(game(), observe(over, 0))
    with pytest.raises(ValueError, match="a soft observation for a sharp game"):
        state_from_observation(game("sharp"), observe(Hand(deck_for(1, 0), 0), 1))


def test_an_openspiel_ismcts_bot_plays_a_match_through_the_kit_on_a_real_service(tmp_path,
                                                                                 request):
    """OpenSpiel's IS-MCTS as a kit bot (`OpenSpielBot`) plays a whole match on a real service
    (gRPC, database) against the README's random bot, with no refused action."""
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as service:
        a_id, a_token = service.register("spiel")
        b_id, b_token = service.register("randy")
        created = service.matches.CreateMatch(
            match_pb2.CreateMatchRequest(bot_ids=[a_id, b_id], seed=45), metadata=auth(OPERATOR))
        bot = OpenSpielBot(lambda g: ismcts_bot(g, simulations=20, seed=1), seed=2)
        runners = play_in_threads(service, [(bot, a_token), (RandomBot(3), b_token)],
                                  matches=1, timeout=240)
        stats = runners[0].stats
        assert stats.rejected == 0 and stats.exceptions == 0 and stats.turns > 10
        got = service.matches.GetMatch(
            match_pb2.GetMatchRequest(match_id=created.match.match_id)).match
        assert got.state == match_pb2.MATCH_STATE_FINISHED
        assert got.end_reason == match_pb2.END_REASON_PLAYED
