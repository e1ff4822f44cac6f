"""Several gateway processes on one database (D26): who is alive, and who holds what.

:mod:`core.engine.cluster.identity` names this process, :mod:`core.engine.cluster.processes` keeps
the heartbeat register and :mod:`core.engine.cluster.leases` grants one holder per named resource.
On SQLite there is one process, which holds every lease; the same code runs.
"""

from core.engine.cluster.identity import ProcessIdentity
from core.engine.cluster.leases import LeaseInfo, Leases
from core.engine.cluster.processes import ProcessInfo, ProcessRegister

__all__ = ["LeaseInfo", "Leases", "ProcessIdentity", "ProcessInfo", "ProcessRegister"]
