"""Fit the champion's opponent model (`bots/opponent.py`) to self-play records of
`tools/opponent_data.py`, and write its parameters (by default over the shipped
`bots/opponent_model.json`).

The three parts (lead, answer, close) are fitted together by maximum likelihood with an L2
penalty (full-batch Adam, numpy). The last `--holdout` share of the records is kept out of the
fit and the mean log-loss on it is printed beside the uniform guess's (and for the close, the
base rate's), so the figures say how much each part knows.

Run: `.venv/bin/python tools/opponent_fit.py /tmp/opponent.jsonl --l2 3e-4` (the shipped model's
fit, docs/house-bots.md)
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bots.opponent import (  # noqa: E402
    FOLLOW_U,
    MODEL_FILE,
    SIZE,
    close_features,
    follow_features,
    lead_features,
)
from engine.cards import Card  # noqa: E402

WIDTH = 8  # feature indexes per row at most (padded with PAD)
PAD = SIZE  # a parameter kept at 0, for the padding


def pad(features: list[int]) -> list[int]:
    return features + [PAD] * (WIDTH - len(features))


def examples(records: list[dict]) -> tuple[list, list, list, list]:
    """(choice rows, chosen positions, close rows, close labels) of the records."""
    choices, chosen, closes, labels = [], [], [], []
    for r in records:
        hand, trump, lead = r["hand"], r["trump"], r["lead"]
        if len(hand) != 5:
            continue
        action = r["chosen"]
        if lead < 0 and "close" in r["legal"] and (action == "close"
                                                   or action.startswith("play")):
            closes.append(pad(close_features(hand, r["t"], r["points"], trump)))
            labels.append(1.0 if action == "close" else 0.0)
        if not action.startswith("play"):
            continue
        card = Card.from_text(action.split()[1]).index
        plays = [a for a in r["legal"] if a.startswith("play")]
        if len(plays) != len(hand):
            continue  # the lead after a marriage: the king or the queen
        if lead < 0:
            choices.append([pad(lead_features(hand, c, trump, r["t"], r["points"]))
                            for c in hand])
        else:
            choices.append([pad(follow_features(hand, c, lead, trump, r["t"], r["points"]))
                            for c in hand])
        chosen.append(hand.index(card))
    return choices, chosen, closes, labels


def gradient(theta: np.ndarray, choice: np.ndarray, chosen: np.ndarray, close: np.ndarray,
             label: np.ndarray, l2: float) -> np.ndarray:
    """The gradient of the penalized mean negative log-likelihood."""
    grad = np.zeros_like(theta)
    scores = theta[choice].sum(-1)  # (rows, 5)
    scores -= scores.max(1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(1, keepdims=True)
    p[np.arange(len(chosen)), chosen] -= 1.0
    np.add.at(grad, choice, np.repeat(p[:, :, None], WIDTH, axis=2))
    q = 1 / (1 + np.exp(-theta[close].sum(-1)))
    np.add.at(grad, close, np.repeat((q - label)[:, None], WIDTH, axis=1))
    grad /= len(chosen) + len(label)
    grad += l2 * theta
    grad[PAD] = 0.0
    return grad


def fit(choice: np.ndarray, chosen: np.ndarray, close: np.ndarray, label: np.ndarray,
        l2: float, steps: int) -> np.ndarray:
    theta = np.zeros(SIZE + 1)
    m, v = np.zeros_like(theta), np.zeros_like(theta)
    rate, b1, b2 = 0.05, 0.9, 0.999
    for step in range(1, steps + 1):
        grad = gradient(theta, choice, chosen, close, label, l2)
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad * grad
        theta -= rate * (m / (1 - b1 ** step)) / (np.sqrt(v / (1 - b2 ** step)) + 1e-8)
        theta[PAD] = 0.0
    return theta


def report(name: str, theta: np.ndarray, records: list[dict]) -> None:
    choices, chosen, closes, labels = examples(records)
    leading = [r[0][0] < FOLLOW_U for r in choices]  # a lead's first feature is LEAD_U's
    for part, idx in (("lead", [i for i, x in enumerate(leading) if x]),
                      ("answer", [i for i, x in enumerate(leading) if not x])):
        if not idx:
            continue
        c = np.array([choices[i] for i in idx])
        k = np.array([chosen[i] for i in idx])
        s = theta[c].sum(-1)
        s -= s.max(1, keepdims=True)
        logp = s - np.log(np.exp(s).sum(1, keepdims=True))
        loss = -logp[np.arange(len(k)), k].mean()
        hit = (s.argmax(1) == k).mean()
        print(f"{name} {part}: {len(k)} decisions, log-loss {loss:.3f} (uniform "
              f"{math.log(5):.3f}), top choice right {hit:.1%}")
    if closes:
        lab = np.array(labels)
        q = 1 / (1 + np.exp(-theta[np.array(closes)].sum(-1)))
        loss = -(lab * np.log(q + 1e-12) + (1 - lab) * np.log(1 - q + 1e-12)).mean()
        base = lab.mean()
        base_loss = 0.0 if base in (0.0, 1.0) else -(base * math.log(base)
                                                     + (1 - base) * math.log(1 - base))
        print(f"{name} close: {len(lab)} leads, {base:.1%} closed, log-loss {loss:.3f} "
              f"(base rate {base_loss:.3f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", nargs="+", help="JSON lines of tools/opponent_data.py")
    parser.add_argument("-o", "--out", default=str(MODEL_FILE))
    parser.add_argument("--l2", type=float, default=1e-3)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--holdout", type=float, default=0.2)
    parser.add_argument("--about", default="", help="where the records came from (kept in the "
                                                    "model file)")
    args = parser.parse_args()
    records = [json.loads(line) for name in args.records
               for line in Path(name).read_text().splitlines()]
    cut = int(len(records) * (1 - args.holdout))
    choices, chosen, closes, labels = examples(records[:cut])
    if not choices:
        sys.exit(f"no open-stock card choices in {', '.join(args.records)}: nothing to fit")
    theta = fit(np.array(choices, dtype=np.int64), np.array(chosen, dtype=np.int64),
                np.array(closes, dtype=np.int64).reshape(-1, WIDTH),
                np.array(labels, dtype=float), args.l2, args.steps)
    report("fit", theta, records[:cut])
    if cut < len(records):
        report("held out", theta, records[cut:])
    Path(args.out).write_text(json.dumps({
        "about": "the champion's opponent model (bots/opponent.py), fitted by "
                 "tools/opponent_fit.py", "records": args.about, "fitted": cut, "l2": args.l2,
        "theta": [round(float(x), 4) for x in theta[:SIZE]]}) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
