"""Old path of :mod:`minimcp.client.adapters` (``from minimcp.adapters import ...`` keeps working)."""

from .client.adapters import *  # noqa: F401,F403
from .client.adapters import API_NAME, Caller, Tools  # noqa: F401  (not in its __all__, but importable before)
