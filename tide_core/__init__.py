"""TIDE ETL's engine: recognition, anonymization, release assurance (no Dagster here).

Importing the package sets one process-wide default before any model runtime loads:
``OMP_WAIT_POLICY=PASSIVE`` unless the operator set ``OMP_WAIT_POLICY`` already.  torch's
OpenMP threads otherwise spin (up to ``GOMP_SPINCOUNT`` = 300,000 turns) at every barrier while
they wait for each other, burning CPU that neighbouring workers could use; on quiet cores passive
waiting costs TIDE's own rate nothing (docs/results/speed.md, "Idle and contended cores").
The OpenMP runtime reads the variable once, when torch is first imported, so it has to be set
here, before any TIDE module can load torch; Ray workers and child processes inherit it.
"""

import os

__version__ = "0.1.0"

#: The OpenMP wait policy TIDE asks for unless the environment names one (docs/ray.md, "Threads").
OMP_WAIT_POLICY_DEFAULT = "PASSIVE"
os.environ.setdefault("OMP_WAIT_POLICY", OMP_WAIT_POLICY_DEFAULT)
