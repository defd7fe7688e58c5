"""Training environments of the kit (docs/kit.md, "Environments"), over one encoding.

`bummerl_kit.envs.encoding` is the one encoding of a seat's observation and of actions (pure
Python). The environments import their frameworks only when asked for, so the kit's run-time
dependencies stay grpcio and protobuf: `pettingzoo_env()` needs `bummerl-kit[pettingzoo]`.
"""

from __future__ import annotations

from typing import Any

from bummerl_kit.envs import encoding
from bummerl_kit.envs.openspiel_game import register_openspiel  # needs bummerl-kit[openspiel]


def pettingzoo_env(profile: str = "soft", **kwargs: Any) -> Any:
    """A PettingZoo AEC environment of a match (`bummerl_kit.envs.pettingzoo`); needs
    `pip install bummerl-kit[pettingzoo]`."""
    from bummerl_kit.envs.pettingzoo import env

    return env(profile=profile, **kwargs)


__all__ = ["encoding", "pettingzoo_env", "register_openspiel"]
