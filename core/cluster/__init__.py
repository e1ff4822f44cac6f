"""Several gateway processes on one database (D26): who is alive, and who holds what.

:mod:`core.cluster.identity` names this process, :mod:`core.cluster.processes` keeps the
heartbeat register and :mod:`core.cluster.leases` grants one holder per named resource. On
SQLite there is one process, which holds every lease; the same code runs.
"""

from core.cluster.identity import ProcessIdentity
from core.cluster.leases import LeaseInfo, Leases
from core.cluster.processes import ProcessInfo, ProcessRegister

__all__ = ["LeaseInfo", "Leases", "ProcessIdentity", "ProcessInfo", "ProcessRegister"]
