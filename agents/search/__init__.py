"""Decision-time search over worlds sampled from a seat's knowledge (:mod:`pcr_env.worlds`).

``agent`` (spec ``search:SPEC``: rollouts of a base policy in every sampled world), ``pimc``
(spec ``pimc``: double-dummy solutions of sampled worlds) and ``phase_mix`` (spec ``mix:SPEC``:
another agent takes some phases).
"""

from agents.search.agent import SearchAgent
from agents.search.phase_mix import PhaseMix
from agents.search.pimc import PIMCAgent

__all__ = ["PIMCAgent", "PhaseMix", "SearchAgent"]
