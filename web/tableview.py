"""The service's answers (bummerl.v1 PeopleService messages) as the JSON the browser draws.

`table_json` turns a `Table` (what the person's seat may know, built by the service with the
engine's observer for that seat) into the table page's state: nothing is added that the
service did not send, so the page can show no card its seat may not know. The page draws this
state and nothing else; a click is an intent the server accepts or refuses.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

SUIT_ORDER = "CDHS"
RANK_ORDER = "ATKQJ"
STATES = {1: "running", 2: "finished", 3: "aborted"}
END_REASONS = {1: "played out", 2: "forfeit on time", 3: "forfeit: too many illegal actions",
               4: "aborted by an operator", 5: "resigned"}
PROFILES = {0: "soft", 1: "soft", 2: "sharp"}
HAND_REASONS = {
    "claim": "claimed 66 correctly (R7.2, R8.1)",
    "false_claim": "a false claim by the other seat (R8.2)",
    "closer_claim": "closed and claimed 66 (R8.3)",
    "closer_failed": "the closer failed to reach 66 (R8.4)",
    "last_trick": "took the last trick, no claim (R8.5)",
}


def stamped(state: dict[str, Any]) -> dict[str, Any]:
    """`state` with the server's time (the page counts the clocks down from it)."""
    state["now"] = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return state


def when(stamp: Timestamp, present: bool) -> str | None:
    if not present:
        return None
    text: str = stamp.ToDatetime().isoformat(timespec="milliseconds") + "Z"
    return text


def rating(message: Any, present: bool) -> dict[str, Any] | None:
    if not present:
        return None
    return {"mu": round(message.mu, 2), "sigma": round(message.sigma, 2),
            "ordinal": round(message.ordinal, 2), "games": message.games}


def person_json(person: Any) -> dict[str, Any]:
    return {"person_id": person.person_id, "name": person.name, "guest": person.guest,
            "bot_id": person.bot_id, "display_name": person.display_name,
            "rating": rating(person.rating, person.HasField("rating")),
            "suspended": person.suspended, "suspended_reason": person.suspended_reason}


ACCEPTS = {0: "none", 1: "casual", 2: "rated"}


def opponent_json(o: Any) -> dict[str, Any]:
    return {"bot_id": o.bot_id, "name": o.name, "house": o.house,
            "strategy": o.house_strategy, "rating": rating(o.rating, o.HasField("rating")),
            "accepts": ACCEPTS.get(o.accepts, "none"), "won": o.won, "lost": o.lost}


def card_key(card: str) -> tuple[int, int]:
    return SUIT_ORDER.index(card[1]), RANK_ORDER.index(card[0])


def trick_json(t: Any) -> dict[str, Any]:
    return {"leader": t.leader, "lead": t.lead, "follow": t.follow, "winner": t.winner}


def action_text(a: Any) -> str:
    kind = {1: "play", 2: "exchange", 3: "close", 4: "declare", 5: "claim"}[a.kind]
    if kind == "play":
        return f"play {a.card}"
    if kind == "declare":
        return f"declare {a.suit}"
    return kind


def table_json(table: Any) -> dict[str, Any]:
    """The browser's state of one table (see the module docstring)."""
    m, obs = table.match, table.observation
    seat = table.seat
    state = STATES.get(m.state, "running")
    over = state != "running"
    trump = obs.trump_suit
    marriages = [{"seat": x.seat, "suit": x.suit, "points": 40 if x.suit == trump else 20,
                  "trick": x.trick} for x in obs.marriages]
    hands = []
    for h in table.hands:
        r = h.result
        hands.append({"number": h.number, "dealer": h.dealer, "winner": r.winner,
                      "game_points": r.game_points, "reason": r.reason,
                      "why": HAND_REASONS.get(r.reason, r.reason),
                      "points": list(r.points), "tricks": list(r.tricks)})
    result = None
    if over:
        result = {"winner": m.winner if state == "finished" else None,
                  "schneider": m.schneider,
                  "reason": END_REASONS.get(m.end_reason, "over"),
                  "detail": m.end_detail, "forfeit_seat": (m.forfeit_seat
                                                           if m.end_reason in (2, 3, 5)
                                                           else None)}
    legal = [action_text(a) for a in obs.legal_actions] if not over else []
    return {
        "match_id": m.match_id,
        "seq": table.seq,
        "state": state,
        "seat": seat,
        "names": list(table.names) or list(m.bot_names),
        "profile": PROFILES.get(m.profile, "soft"),
        "rated": table.rated,
        "time_control": {"move_ms": m.time_control.move_ms, "bank_ms": m.time_control.bank_ms},
        "hand_number": obs.hand_number,
        "dealer": obs.dealer,
        "to_act": None if over or obs.to_act < 0 else obs.to_act,
        "hand": sorted(obs.hand, key=card_key),
        "opponent_hand_size": obs.opponent_hand_size,
        "trump_suit": trump,
        "trump_card": obs.trump_card or None,
        "trump_face_up": obs.trump_card_face_up,
        "stock_size": obs.stock_size,
        "closed_by": None if obs.closed_by < 0 else obs.closed_by,
        "leader": obs.leader,
        "lead_card": obs.lead_card or None,
        "tricks": [trick_json(t) for t in obs.tricks],
        "last_trick": trick_json(table.last_trick) if table.HasField("last_trick") else None,
        "marriages": marriages,
        "points": table.points,
        "pending_points": obs.pending_points,
        "tricks_won": obs.tricks_won,
        "opponent_tricks_won": obs.opponent_tricks_won,
        "legal": legal,
        "claim_good": table.claim_good,
        "claim_hint": table.claim_hint,
        "game_points_needed": list(table.game_points_needed) or list(m.counters),
        "bank_left_ms": list(table.bank_left_ms),
        "on_clock": None if over or table.on_clock < 0 else table.on_clock,
        "deadline": when(table.deadline, table.HasField("deadline")) if not over else None,
        "hands": hands,
        "result": result,
        "commitment": table.commitment,
        "seed": str(table.seed) if table.seed_revealed else None,
        "opponent_connected": table.opponent_connected,
        "can_resign": table.can_resign,
    }
