"""Benchmark: the champion's strength over duplicate deals, and its time per move.

For each opponent (default `rdeep` and `bully`; `ismcts`, the champion's tree-search variant, and
`champion-v1`, the champion before its per-move table and pruning, get the same budget, clock
and playouts) it plays deals 0 .. n-1 of a seed as duplicate pairs (`bots.batch.play_pair`:
each deal twice, seats swapped), the champion thinking `--ms` milliseconds of wall time per
move. It prints, per pairing, the net game points per deal (champion − opponent, both plays of
a deal, as `bummerl simulate` counts them) with its 95 % interval, the champion's share of the
game points, the hands won, and the champion's median, p99 and maximum time per move beside
the opponent's median time per move (the peer, measured in the same run) and the budget.
Deals are split over `--procs` processes; progress lines come every `--every` deals.

First it prints the house levels with their measured ratings (`events/levels.py`).

`--see-all` gives the champion's search the hand in play itself instead of deals drawn from
what its seat knows (`ChampionBot.deal`): not a fair player but the bound of its search, so the
gap to the fair champion is what the hidden cards cost it. `--see-hand` gives it the opponent's
true hand but not the stock's order (bench/seeing.py): the most that inferring the opponent's
hand from its play could give this search. `--leads` has it weigh its deals by the opponent's
leads (`ChampionBot(leads=True)`, bots/leads.py); `--model` by a learned model of the
opponent's play (`ChampionBot(model=...)`, bots/opponent.py; the shipped model, or the
one at the path given), its log-likelihood multiplied by `--strength`. `--search presumed` has it
value a closed stock by presumed payoff (`ChampionBot(search="presumed")`, bots/presumed.py);
against `--opponents champion` that is the new search against today's on the same deals.

Run: `.venv/bin/python bench/strength.py -n 2000 --procs 2` (the issue's full run: hours on a
small machine), or e.g. `-n 200 --ms 100` for a quicker look.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from seeing import SIGHTS, add_sight_options, give_sight  # noqa: E402

from bots import STRATEGIES, Bot, ChampionBot, make_bot  # noqa: E402
from bots.batch import play_pair  # noqa: E402
from bots.champion import PRESUMED_WORLDS, SEARCHES  # noqa: E402
from bots.opponent import MODEL_FILE, OpponentModel  # noqa: E402
from bots.stats import Totals, summary  # noqa: E402
from engine import Hand, Profile  # noqa: E402
from events.levels import LEVELS, MEASURED_BY  # noqa: E402


class Timed(Bot):
    """Wraps a bot and records the wall time of each of its moves."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.times: list[float] = []  # wall time per move
        self.cpu: list[float] = []  # this process's CPU time per move

    def choose(self, observation, rng, deadline=None):  # type: ignore[no-untyped-def]
        start, cpu = time.monotonic(), time.process_time()
        action = self.bot.choose(observation, rng, deadline)
        self.times.append(time.monotonic() - start)
        self.cpu.append(time.process_time() - cpu)
        return action


def play_some(job: tuple[str, int, list[int], float, str, float, int, str, str, bool,
                         tuple[str, float] | None, str, int]) -> tuple[list, list, list, list]:
    """Play the given deals; (pair results, champion move times, opponent move times,
    champion CPU times per move)."""
    (opponent, seed, deals, ms, profile, epsilon, samples, clock, see, leads, model, search,
     worlds) = job
    searcher = ChampionBot(ms=0 if samples else ms, samples=samples or None, epsilon=epsilon,
                           clock=clock, leads=leads, search=search, presumed_worlds=worlds,
                           model=None if model is None else OpponentModel.load(Path(model[0]),
                                                                               model[1]))
    playing: list[Hand] = []
    watch = None
    if see:  # its search is given the hand in play itself (bench/seeing.py)
        watch = playing.append
        give_sight(searcher, lambda: playing[-1], see)
    champion = Timed(searcher)
    # a searching opponent (the ISMCTS variant) gets the champion's budget, clock and playouts
    same = {"ms": 0 if samples else ms, "samples": samples or None, "epsilon": epsilon,
            "clock": clock} if issubclass(STRATEGIES[opponent], ChampionBot) else {}
    other = Timed(make_bot(opponent, **same))
    pairs = [play_pair(champion, other, seed, deal, Profile(profile), watch) for deal in deals]
    return ([(p.net, p.wins_a, p.points_a, p.points_b) for p in pairs], champion.times,
            other.times, champion.cpu)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(opponent: str, totals: Totals, mine: list[float], theirs: list[float],
           cpu: list[float], ms: float, elapsed: float, final: bool, clock: str,
           me: str = "champion") -> None:
    s = summary(totals)
    lo, hi = s["net_per_deal_ci"]
    interval = "–" if lo is None else f"[{lo:+.3f}, {hi:+.3f}]"
    head = "RESULT" if final else "progress"
    print(f"{head} {me} vs {opponent}: {totals.pairs} deals ({2 * totals.pairs} hands), "
          f"net {s['net_per_deal']:+.3f} game points per deal, 95% {interval}; "
          f"hands won {s['win_rate_a']:.1%}; {elapsed:.0f} s", flush=True)
    both = totals.points_a + totals.points_b
    if both and lo is not None:
        # The champion's share of the game points: 1/2 + net / (2 × game points per hand); the
        # interval maps the net's through the same line (the points per hand taken as fixed).
        per_hand = both / (2 * totals.pairs)
        share = [0.5 + x / (2 * per_hand) for x in (s["net_per_deal"], lo, hi)]
        print(f"  game points {totals.points_a}:{totals.points_b}, champion's share "
              f"{share[0]:.1%}, 95% [{share[1]:.1%}, {share[2]:.1%}]", flush=True)
    if not (final and mine):
        return
    budget = f"budget {ms:.0f} ms" if ms else "no clock"
    print(f"  champion time per move ({len(mine)} moves, {budget}): median "
          f"{statistics.median(mine) * 1000:.1f} ms, p99 {pct(mine, 0.99) * 1000:.1f} ms, "
          f"max {max(mine) * 1000:.1f} ms; peer {opponent} median "
          f"{statistics.median(theirs) * 1000:.2f} ms, ratio "
          f"{statistics.median(mine) / max(statistics.median(theirs), 1e-9):.0f}x", flush=True)
    if ms:
        over = sum(t > 1.1 * ms / 1000 for t in (cpu if clock == "cpu" else mine))
        slowest = max(cpu if clock == "cpu" else mine)
        print(f"  {clock} clock: max / budget {slowest * 1000 / ms:.2f}; moves over budget + 10 %:"
              f" {over} ({over / len(mine):.2%})", flush=True)
    print(f"  champion CPU time per move: median {statistics.median(cpu) * 1000:.1f} ms, p99 "
          f"{pct(cpu, 0.99) * 1000:.1f} ms, max {max(cpu) * 1000:.1f} ms (CPU / wall median "
          f"{statistics.median(cpu) / max(statistics.median(mine), 1e-9):.0%}; the rest is "
          f"waiting for a core on a shared machine)", flush=True)

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--deals", type=int, default=200, help="deals per pairing")
    parser.add_argument("--ms", type=float, default=100.0, help="champion's budget per move")
    parser.add_argument("--procs", type=int, default=2, help="processes")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--profile", default="soft", choices=["soft", "sharp"])
    parser.add_argument("--opponents", default="rdeep,bully",
                        help="comma-separated house strategies, e.g. rdeep,bully,ismcts,"
                             "champion-v1")
    parser.add_argument("--every", type=int, default=50, help="deals between progress lines")
    parser.add_argument("--samples", type=int, default=0,
                        help="instead of --ms: a fixed number of deals per move (no clock: "
                             "deterministic, independent of the machine's load)")
    parser.add_argument("--clock", default="wall", choices=["wall", "cpu"],
                        help="measure --ms in wall time (as in live play) or in the process's "
                             "CPU time (a fair budget on a loaded machine)")
    parser.add_argument("--epsilon", type=float, default=0.25,
                        help="champion's share of random cards in playouts (1: uniform)")
    parser.add_argument("--leads", action="store_true",
                        help="the champion weighs its deals by the opponent's leads: it "
                             "exchanges and declares when it can (bots/leads.py)")
    parser.add_argument("--model", nargs="?", const=str(MODEL_FILE), default=None,
                        help="the champion weighs its deals by how likely this learned model "
                             "of play (default: the shipped one) makes the opponent's play "
                             "(bots/opponent.py)")
    parser.add_argument("--strength", type=float, default=1.0,
                        help="with --model: the model's log-likelihood is multiplied by this")
    parser.add_argument("--search", default="pimc", choices=list(SEARCHES),
                        help="how the champion values a deal: pimc (both seats see every card) "
                             "or presumed (the opponent's next decision with a closed stock "
                             "taken without sight of our cards, bots/presumed.py)")
    parser.add_argument("--presumed-worlds", type=int, default=PRESUMED_WORLDS,
                        help="with --search presumed: the deals the opponent's presumed "
                             "decision is averaged over")
    add_sight_options(parser)
    args = parser.parse_args()
    model = None if args.model is None else (args.model, args.strength)
    budget = f"{args.samples} deals" if args.samples else f"{args.ms:.0f} ms ({args.clock})"
    ms = 0.0 if args.samples else args.ms
    seeing = f", {SIGHTS[args.see]}" if args.see else ""
    seeing += ", weighing deals by the opponent's leads" if args.leads else ""
    seeing += f", weighing deals by {args.model} (strength {args.strength})" if args.model else ""
    if args.search != "pimc":
        seeing += f", search {args.search} ({args.presumed_worlds} worlds)"
    print(f"champion{seeing} at {budget} per move (playout epsilon {args.epsilon}), "
          f"{args.deals} deals per pairing, seed {args.seed}, profile {args.profile}, "
          f"{args.procs} processes", flush=True)
    print(f"house levels, ratings as measured by `{MEASURED_BY}` (events/levels.py):")
    for level in LEVELS:
        print(f"  {level.strategy} {level.name}: Elo {level.rating:+.0f}; {level.description}")
    me = "champion" if args.search == "pimc" else f"champion ({args.search})"
    with multiprocessing.Pool(args.procs) as pool:
        for opponent in args.opponents.split(","):
            start = time.monotonic()
            step = max(1, min(args.every, 10))
            jobs = [(opponent, args.seed, list(range(i, min(i + step, args.deals))), args.ms,
                     args.profile, args.epsilon, args.samples, args.clock, args.see,
                     args.leads, model, args.search, args.presumed_worlds)
                    for i in range(0, args.deals, step)]
            totals = Totals()
            mine: list[float] = []
            theirs: list[float] = []
            cpu: list[float] = []
            reported = 0
            for pairs, m, t, c in pool.imap(play_some, jobs):
                for net, wins, pa, pb in pairs:
                    totals.add_pair(net, wins, pa, pb)
                mine += m
                theirs += t
                cpu += c
                if totals.pairs - reported >= args.every and totals.pairs < args.deals:
                    reported = totals.pairs
                    report(opponent, totals, mine, theirs, cpu, ms,
                           time.monotonic() - start, False, args.clock, me)
            report(opponent, totals, mine, theirs, cpu, ms, time.monotonic() - start, True,
                   args.clock, me)


if __name__ == "__main__":
    main()
