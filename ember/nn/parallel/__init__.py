"""ember.nn.parallel: DistributedDataParallel (one process per rank) and DataParallel.

Reading order: _reducer.py (buckets and hooks), distributed.py (DistributedDataParallel),
data_parallel.py (DataParallel).
"""
from .data_parallel import DataParallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401
