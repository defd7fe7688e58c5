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
    """A PettingZoo AEC environment of a match (`bummerl_kit.envs.aec`: `episode="match"` or
    `"hand"`, `reward="game_points"` or `"match"`, `render_mode`); needs
    `pip install bummerl-kit[pettingzoo]`."""
    try:
        from bummerl_kit.envs.aec import env
    except ImportError as error:
        if (error.name or "").split(".")[0] not in ("pettingzoo", "gymnasium", "numpy"):
            raise
        raise ImportError(f"pettingzoo_env needs the kit's pettingzoo extra (no module "
                          f"{error.name}): pip install 'bummerl-kit[pettingzoo]'",
                          name=error.name) from error

    return env(profile=profile, **kwargs)


__all__ = ["encoding", "pettingzoo_env", "register_openspiel"]
