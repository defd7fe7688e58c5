"""Train a small policy from your exported games, then play it against the house levels
(docs/kit-envs.md, "Export, train, play").

    bummerl games export --bot mybot > games.jsonl
    bummerl-kit analyse games.jsonl -o analysed.jsonl
    python examples/train_policy.py analysed.jsonl --bot mybot -o policy.json --play 20 --vs level-1
    bummerl-kit examples/train_policy.py:PolicyBot --server HOST:50051 --token TOKEN

It reads the games with `bummerl_kit.records` (one row per decision: the observation tensor,
the legal mask, the action taken, the analyst's values where the record has them), fits a
linear softmax over the legal actions (pure Python, no NumPy) to the action the analyst valued
best where the record carries the analysis, else to the action your bot took (`--imitate
taken`: always the action taken), writes the weights as JSON, and with `--play N` plays N
duplicate deals in-process against the house bot `--vs` (a level, `level-1` … `level-5`, or a
house strategy), as `bummerl-kit practice --vs LEVEL -n N` does (`bummerl_kit.offline.practise`),
and prints the same result table. `PolicyBot` plays the saved policy (`$BUMMERL_POLICY`,
default `policy.json`) wherever a kit bot plays.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
from collections.abc import Sequence
from pathlib import Path

from bummerl_kit import Bot, engine, records
from bummerl_kit.envs.encoding import (
    NUM_ACTIONS,
    OBSERVATION_SIZE,
    action_of,
    legal_mask,
    observation_tensor,
)
from bummerl_kit.offline import KitError, house_strategy, practise

Sparse = list[tuple[int, float]]


def sparse(tensor: Sequence[float]) -> Sparse:
    return [(i, x) for i, x in enumerate(tensor) if x]


class LinearPolicy:
    """logits[a] = bias[a] + weights[a] · observation, a softmax over the legal actions."""

    def __init__(self, weights: list[list[float]] | None = None,
                 bias: list[float] | None = None) -> None:
        self.weights = weights or [[0.0] * OBSERVATION_SIZE for _ in range(NUM_ACTIONS)]
        self.bias = bias or [0.0] * NUM_ACTIONS

    def probabilities(self, x: Sparse, mask: Sequence[int]) -> dict[int, float]:
        logits = {a: self.bias[a] + sum(self.weights[a][i] * v for i, v in x)
                  for a in range(NUM_ACTIONS) if mask[a]}
        top = max(logits.values())
        exp = {a: math.exp(z - top) for a, z in logits.items()}
        total = sum(exp.values())
        return {a: e / total for a, e in exp.items()}

    def best(self, tensor: Sequence[float], mask: Sequence[int]) -> int:
        p = self.probabilities(sparse(tensor), mask)
        return max(p, key=lambda a: (p[a], -a))

    def fit(self, data: list[tuple[Sparse, list[int], int]], epochs: int, rate: float,
            seed: int = 0) -> list[float]:
        """Stochastic gradient descent on the cross-entropy; the mean loss of each epoch."""
        rng = random.Random(seed)
        losses = []
        for _ in range(epochs):
            rng.shuffle(data)
            total = 0.0
            for x, mask, target in data:
                p = self.probabilities(x, mask)
                total -= math.log(max(p[target], 1e-12))
                for a, pa in p.items():
                    g = rate * (pa - (1.0 if a == target else 0.0))
                    row = self.weights[a]
                    for i, v in x:
                        row[i] -= g * v
                    self.bias[a] -= g
            losses.append(total / max(len(data), 1))
        return losses

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps({"weights": self.weights, "bias": self.bias}))

    @classmethod
    def load(cls, path: str | Path) -> LinearPolicy:
        data = json.loads(Path(path).read_text())
        return cls(data["weights"], data["bias"])


class PolicyBot(Bot):
    """Plays a saved LinearPolicy: the most likely legal action."""

    def __init__(self, policy: LinearPolicy | None = None) -> None:
        self.policy = policy or LinearPolicy.load(os.environ.get("BUMMERL_POLICY",
                                                                 "policy.json"))

    def act(self, observation: engine.Observation) -> engine.Action:
        return action_of(self.policy.best(observation_tensor(observation),
                                          legal_mask(observation)))


def training_rows(paths: Sequence[str], bot: str | None, imitate: str
                  ) -> list[tuple[Sparse, list[int], int]]:
    data = []
    for row in records.rows_of_files(paths, bot=bot):
        if sum(row.mask) < 2:
            continue  # nothing to learn from a forced move
        target = row.action
        if imitate == "best" and row.best is not None:
            target = row.best
        data.append((sparse(row.observation), row.mask, target))
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", nargs="+", help="match-record files (bummerl games export)")
    parser.add_argument("--bot", help="learn from this bot's seats only (default: both seats)")
    parser.add_argument("--imitate", choices=("best", "taken"), default="best",
                        help="the analyst's best action where the record has it (default), "
                             "or always the action taken")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--rate", type=float, default=0.05, help="the learning rate")
    parser.add_argument("-o", "--output", default="policy.json", help="where the policy goes")
    parser.add_argument("--play", type=int, default=0, metavar="N",
                        help="then play N duplicate deals against --vs in-process")
    parser.add_argument("--vs", default="level-1", metavar="LEVEL",
                        help="the house bot to play: a level (level-1 … level-5) or a house "
                             "strategy (default %(default)s)")
    parser.add_argument("--profile", choices=("soft", "sharp"), default="soft")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        house = f"house-{house_strategy(args.vs)}"
    except KitError as e:
        parser.error(str(e))
    data = training_rows(args.records, args.bot, args.imitate)
    if not data:
        print("error: no decisions to learn from in those records"
              + (f" for --bot {args.bot}" if args.bot else ""), file=sys.stderr)
        return 1
    policy = LinearPolicy()
    losses = policy.fit(data, args.epochs, args.rate, args.seed)
    policy.save(args.output)
    print(f"trained on {len(data)} decisions, {args.epochs} epochs, loss "
          f"{losses[0]:.3f} -> {losses[-1]:.3f}; wrote {args.output}")
    if args.play:
        print(f"practice: policy (A) vs {house} (B), profile {args.profile}, seed {args.seed}")
        lines, problems = practise(PolicyBot(policy), "policy", args.vs, args.play, args.seed,
                                   args.profile)
        print("\n".join(lines))
        return 0 if not problems else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
