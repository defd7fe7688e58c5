"""The analyst: every decision of a finished match valued from the deciding seat's knowledge.

Pure computation over the engine and the endgame solver (no I/O): `analyse` values one
decision from an observation, `analyse_record` a whole match record. What is exact and what is
estimated, the budget and the output's form: docs/analysis.md.
"""

from analysis.decision import ENUMERATE, KINDS, SAMPLES, analyse
from analysis.match import ANALYSIS_VERSION, analyse_record, count_actions, summarise

__all__ = ["ANALYSIS_VERSION", "ENUMERATE", "KINDS", "SAMPLES", "analyse", "analyse_record",
           "count_actions", "summarise"]
