"""Tables of batch simulations (owned by workers/): a simulation and its chunks.

The database is the truth about a simulation: which chunks are done and their exact integer
totals. A chunk's totals are written in the same transaction that marks it done, and only if it
was not done yet, so a chunk run twice (a crash, a duplicate message) is counted once.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from db.base import Base, utcnow

# Simulation states.
SIM_RUNNING = "running"
SIM_DONE = "done"  # every chunk played
SIM_STOPPED = "stopped"  # the SPRT decided early; the remaining chunks were cancelled

# Chunk states.
CHUNK_PENDING = "pending"
CHUNK_DONE = "done"
CHUNK_CANCELLED = "cancelled"


class Simulation(Base):
    """Strategy A against strategy B over `deals` duplicate deals from `seed`."""

    __tablename__ = "simulations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    strategy_a: Mapped[str] = mapped_column(String(40))
    strategy_b: Mapped[str] = mapped_column(String(40))
    profile: Mapped[str] = mapped_column(String(10), default="soft")
    seed: Mapped[int] = mapped_column(BigInteger)
    deals: Mapped[int] = mapped_column(Integer)  # distinct deals; each is played twice
    chunk_deals: Mapped[int] = mapped_column(Integer)
    # SPRT (None: play every deal).
    sprt_elo0: Mapped[float | None] = mapped_column(Float)
    sprt_elo1: Mapped[float | None] = mapped_column(Float)
    sprt_alpha: Mapped[float | None] = mapped_column(Float)
    sprt_beta: Mapped[float | None] = mapped_column(Float)
    decision: Mapped[str | None] = mapped_column(String(4))  # "H0" / "H1" when the SPRT decided
    state: Mapped[str] = mapped_column(String(10), default=SIM_RUNNING)
    deals_done: Mapped[int] = mapped_column(Integer, default=0)  # progress
    result: Mapped[str | None] = mapped_column(Text)  # JSON summary when finished
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    progress_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class SimulationChunk(Base):
    """Deals `first_deal` .. `first_deal + deals - 1` of a simulation, and their totals."""

    __tablename__ = "simulation_chunks"
    __table_args__ = (UniqueConstraint("simulation_id", "number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    simulation_id: Mapped[int] = mapped_column(ForeignKey("simulations.id", ondelete="CASCADE"),
                                               index=True)
    number: Mapped[int] = mapped_column(Integer)
    first_deal: Mapped[int] = mapped_column(Integer)
    deals: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(10), default=CHUNK_PENDING)
    enqueued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    attempts: Mapped[int] = mapped_column(Integer, default=0)  # times a worker started it
    done_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Exact totals (bots.stats.Totals), set when done.
    pairs: Mapped[int] = mapped_column(Integer, default=0)
    net: Mapped[int] = mapped_column(BigInteger, default=0)
    net_sq: Mapped[int] = mapped_column(BigInteger, default=0)
    wins_a: Mapped[int] = mapped_column(Integer, default=0)
    wins_sq: Mapped[int] = mapped_column(Integer, default=0)
    points_a: Mapped[int] = mapped_column(Integer, default=0)
    points_b: Mapped[int] = mapped_column(Integer, default=0)
