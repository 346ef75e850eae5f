"""ZeroRedundancyOptimizer: each rank keeps the optimizer state of its share of the parameters.

    optimizer = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=optim.Adam, lr=1e-3)
    loss.backward()          # (DDP has averaged the gradients on every rank)
    optimizer.step()         # each rank updates its shard, then broadcasts it to the others

The parameters are dealt out as torch deals them: within each group, largest first, each to
the rank holding the fewest elements so far. Rank r builds `optimizer_class` over its share
only (`self.optim`), so Adam's moments of the other shards never exist on it. After the local
step every rank broadcasts the parameters it owns, and all ranks hold the same, updated
model: the trajectory of the plain optimizer, with 1/world_size of its state per rank.

`param_groups` are the full groups, as in torch (a scheduler changing `lr` there reaches the
local optimizer at the next step). `state_dict()` needs `consolidate_state_dict(to)` on
every rank first, and then works on rank `to`: the whole state, numbered as the plain
optimizer numbers it, so it loads into either.

Not implemented: overlap_with_ddp (it needs DDP communication hooks) raises
NotImplementedError; parameters_as_bucket_view is accepted and changes nothing (the
shards are broadcast through flat buffers anyway).

Read next: `ember/distributed/run.py`, the launcher.
"""
from collections import defaultdict

from ...optim.optimizer import Optimizer
from .. import distributed_c10d as c10d
from ..utils import _broadcast_coalesced

__all__ = ["ZeroRedundancyOptimizer"]


class ZeroRedundancyOptimizer(Optimizer):
    """`optimizer_class` sharded over the ranks of `process_group` (see the module doc)."""

    def __init__(self, params, optimizer_class, process_group=None,
                 parameters_as_bucket_view=False, overlap_with_ddp=False, **defaults):
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer(overlap_with_ddp=True) needs DDP "
                                      "communication hooks, which ember does not have")
        self.initialized = False
        super().__init__(params, defaults)
        self.process_group = process_group if process_group is not None else \
            c10d.group.WORLD
        self.world_size = c10d.get_world_size(self.process_group)
        self.rank = c10d.get_rank(self.process_group)
        self.global_rank = c10d.get_global_rank(self.process_group, self.rank)
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._optim_constructor = optimizer_class
        self._optim_defaults = defaults
        self._all_state_dicts = []
        self._partition()
        self.optim = optimizer_class(self._local_groups(), **defaults)
        self.initialized = True

    # the partition ----------------------------------------------------------------------

    def _partition(self):
        """rank of every parameter: largest first, to the least loaded rank (torch's rule)."""
        self._param_to_rank = {}
        sizes = [0] * self.world_size
        for group in self.param_groups:
            for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                rank = sizes.index(min(sizes))
                self._param_to_rank[p] = rank
                sizes[rank] += p.numel()

    def _local_groups(self, groups=None):
        """This rank's share of each group, with the group's hyperparameters."""
        local = []
        for group in self.param_groups if groups is None else groups:
            mine = {k: v for k, v in group.items() if k not in ("params", "param_names")}
            mine["params"] = [p for p in group["params"]
                              if self._param_to_rank[p] == self.rank]
            local.append(mine)
        return local

    def add_param_group(self, param_group):
        """Add a group; its parameters are dealt out as at construction (the earlier ones
        keep their ranks)."""
        super().add_param_group(param_group)
        if self.initialized:
            self._partition()
            self.optim.add_param_group(self._local_groups([self.param_groups[-1]])[0])

    # stepping -----------------------------------------------------------------------------

    def step(self, closure=None, **kwargs):
        """Update this rank's shard with the local optimizer, then broadcast every shard from
        its owner; returns the closure's loss."""
        _copy_hyperparameters(self.param_groups, self.optim.param_groups)
        loss = self.optim.step(closure=closure, **kwargs) if closure is not None or kwargs \
            else self.optim.step()
        _copy_hyperparameters(self.optim.param_groups, self.param_groups)
        for rank in range(self.world_size):
            owned = [p for group in self.param_groups for p in group["params"]
                     if self._param_to_rank[p] == rank]
            _broadcast_coalesced(self.process_group, owned,
                                 c10d.get_global_rank(self.process_group, rank))
        return loss

    # state ------------------------------------------------------------------------------

    def consolidate_state_dict(self, to=0):
        """Gather every rank's shard of the state on rank `to` (every rank must call it)."""
        gathered = [None] * self.world_size if self.global_rank == to else None
        c10d.gather_object(self.optim.state_dict(), gathered, dst=to,
                           group=self.process_group)
        self._all_state_dicts = gathered or []

    def state_dict(self):
        """The whole optimizer state, numbered as the unsharded optimizer's (on the rank
        that `consolidate_state_dict` gathered it to)."""
        if not self._all_state_dicts:
            raise RuntimeError("Optimizer state has not been consolidated on this rank. Please "
                               "call `consolidate_state_dict(to=...)` on all ranks beforehand "
                               "if you meant to save the global state.")
        self.state = defaultdict(dict)
        for rank, shard in enumerate(self._all_state_dicts):
            local_params = [p for group in self._local_groups_of(rank) for p in group]
            for index, value in shard["state"].items():
                self.state[local_params[index]] = value
        return super().state_dict()

    def _local_groups_of(self, rank):
        return [[p for p in group["params"] if self._param_to_rank[p] == rank]
                for group in self.param_groups]

    def load_state_dict(self, state_dict):
        """Load a whole state (from `state_dict()`, or from the plain optimizer); each rank
        keeps its shard."""
        super().load_state_dict(state_dict)
        local = self._local_groups()
        for group, mine in zip(self.optim.param_groups, local):
            group.update({k: v for k, v in mine.items() if k != "params"})
        self.optim.state = defaultdict(dict, {p: s for p, s in self.state.items()
                                              if self._param_to_rank.get(p) == self.rank})


def _copy_hyperparameters(source_groups, target_groups):
    for source, target in zip(source_groups, target_groups):
        for key, value in source.items():
            if key not in ("params", "param_names"):
                target[key] = value
