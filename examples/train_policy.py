"""Train a small policy from your exported games, then play it (docs/kit-envs.md, "Export,
train, play").

    bummerl games export --bot mybot > games.jsonl
    python examples/train_policy.py games.jsonl --bot mybot -o policy.json --play 20
    bummerl-kit examples/train_policy.py:PolicyBot --server HOST:50051 --token TOKEN

It reads the games with `bummerl_kit.records` (one row per decision: the observation tensor,
the legal mask, the action taken, the analyst's values where the record has them), fits a
linear softmax over the legal actions (pure Python, no NumPy) to the action the analyst valued
best where the record carries the analysis, else to the action your bot took (`--imitate
taken`: always the action taken), writes the weights as JSON, and plays matches in-process
through the kit's engine against `examples/random_bot.py` (`--against simple`:
`examples/simple_bot.py`), seats alternating, and says how many it won. `PolicyBot` plays the
saved policy (`$BUMMERL_POLICY`, default `policy.json`) wherever a kit bot plays.
"""

from __future__ import annotations

import argparse
import importlib.util
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


def opponent(name: str, seed: int) -> Bot:
    """examples/random_bot.py's RandomBot or examples/simple_bot.py's SimpleBot, loaded from
    this file's folder (however this file was loaded)."""
    path = Path(__file__).resolve().with_name(f"{name}_bot.py")
    spec = importlib.util.spec_from_file_location(f"{name}_bot", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.RandomBot(seed) if name == "random" else module.SimpleBot()


def play(bots: Sequence[Bot], matches: int, profile: str, seed: int) -> list[int]:
    """Matches between bots[0] and bots[1] through the engine, seats alternating: the wins of
    each."""
    wins = [0, 0]
    for n in range(matches):
        seats = (0, 1) if n % 2 == 0 else (1, 0)  # seats[i]: the seat of bots[i]
        match = engine.Match(seed + n, profile)
        while not match.is_over:
            seat = match.to_act
            assert seat is not None
            answer = bots[seats.index(seat)].act(match.observe(seat))
            if isinstance(answer, str):  # a bot may answer with an action's text
                answer = engine.Action.from_text(answer)
            match.apply(seat, answer)
        assert match.winner is not None
        wins[seats.index(match.winner)] += 1
    return wins


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
                        help="then play N matches against --against in-process")
    parser.add_argument("--against", choices=("random", "simple"), default="random")
    parser.add_argument("--profile", choices=("soft", "sharp"), default="soft")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
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
        name = f"examples/{args.against}_bot.py"
        wins = play([PolicyBot(policy), opponent(args.against, args.seed)], args.play,
                    args.profile, args.seed)
        print(f"the policy won {wins[0]} of {args.play} matches against {name} "
              f"({args.profile}, in-process through the engine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
