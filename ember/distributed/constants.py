"""torch.distributed.constants: the default timeouts of a process group's operations."""
from datetime import timedelta

__all__ = ["default_pg_timeout", "default_pg_nccl_timeout"]

default_pg_timeout = timedelta(minutes=30)
default_pg_nccl_timeout = timedelta(minutes=10)  # torch's, for a group of NCCL only
