"""DDP's reducer: gradients gathered into buckets and averaged over the ranks during backward.

    parameters (module order)  w1 b1 w2 b2 w3 b3
    buckets (reverse order)    [b3 w3 b2 w2] [b1 w1]       first bucket 1 MiB, then 25 MiB

Each parameter that requires grad has a post-accumulate-grad hook. When backward has put a
parameter's gradient in `.grad`, the hook copies it into its slot of the bucket's flat
buffer; when a bucket's last slot is filled, the bucket is divided by the world size and a
non-blocking all-reduce (SUM) is launched -- buckets strictly in order, so that every rank
issues the same collectives in the same order even if gradients become ready in a different
one. Backward goes on computing the earlier layers' gradients while MPI sums the bucket.
The first hook of a pass queues `_finalize` with the autograd engine (`queue_callback`): at
the end of backward it waits for the all-reduces and writes the averages back into `.grad`
(with gradient_as_bucket_view, `.grad` *is* the slot, and nothing is copied).

With find_unused_parameters, the parameters that the forward's outputs do not reach are
found by walking the graph after forward; their slots are filled with zeros at the first
hook, and a small all-reduce of "used here" flags tells which were used on no rank at all:
their `.grad` is left untouched (None stays None), as in torch. Without it, a parameter
that gets no gradient leaves its bucket unlaunched, and the next forward raises torch's
"Expected to have finished reduction in the prior iteration" error.

torch rebuilds its buckets after the first iteration in the order gradients arrived; ember
keeps the reverse parameter order.

Read next: `distributed.py` (the module wrapper that drives this).
"""
from ... import distributed as dist
from ..._backend import namespace
from ..._tensor import Tensor
from ...autograd.engine import queue_callback
from ...autograd.graph import AccumulateGrad

__all__ = ["Reducer", "assign_buckets"]

MB = 1024 * 1024
FIRST_BUCKET_BYTES = 1 * MB  # torch's dist._DEFAULT_FIRST_BUCKET_BYTES


def assign_buckets(params, caps):
    """Lists of parameter indices, one per bucket: parameters taken in reverse order, one
    open bucket per (dtype, device), closed once it holds `caps[k]` bytes (the k-th of its
    kind; the last cap after that). Buckets come out in the order they fill up."""
    open_buckets, closed = {}, []
    for i in reversed(range(len(params))):
        p = params[i]
        key = (p.dtype, p.device)
        indices, size, count = open_buckets.get(key, ([], 0, 0))
        indices.append(i)
        size += p.numel() * p.element_size()
        if size >= caps[min(count, len(caps) - 1)]:
            closed.append(indices)
            open_buckets[key] = ([], 0, count + 1)
        else:
            open_buckets[key] = (indices, size, count)
    closed += [indices for indices, _, _ in open_buckets.values() if indices]
    return sorted(closed, key=lambda indices: -indices[0])


class _Bucket:
    """Some parameters' gradients in one flat buffer, all-reduced together."""

    def __init__(self, params):
        first = params[0]
        xp = namespace(first.device)
        self.params = params
        self.buffer = xp.zeros(sum(p.numel() for p in params), first._data.dtype)
        self.tensor = Tensor._make(self.buffer, device=first.device)
        self.views, start = [], 0
        for p in params:
            view = self.buffer[start:start + p.numel()].reshape(p._data.shape)
            self.views.append(Tensor._make(view, device=p.device))
            start += p.numel()
        self.pending = len(params)
        self.work = None


class Reducer:
    """Buckets, hooks and the per-iteration state of one DDP module."""

    def __init__(self, params, group, caps, gradient_as_bucket_view, find_unused):
        self.params = params
        self.group = group
        self.world_size = dist.get_world_size(group)
        self.as_view = gradient_as_bucket_view
        self.find_unused = find_unused
        self.buckets = [_Bucket([params[i] for i in indices])
                        for indices in assign_buckets(params, caps)]
        self.slot = {}  # id(param) -> (bucket, position in it)
        for bucket in self.buckets:
            for position, p in enumerate(bucket.params):
                self.slot[id(p)] = (bucket, position)
        self.index = {id(p): i for i, p in enumerate(params)}
        for p in params:
            p.register_post_accumulate_grad_hook(self._grad_ready)
        self.armed = False       # a synchronized backward is expected (set by forward)
        self.unfinished = None   # indices of parameters that got no gradient last time
        self._reset()

    def _reset(self):
        for bucket in self.buckets:
            bucket.pending = len(bucket.params)
            bucket.work = None
        self.next_bucket = 0
        self.ready = set()
        self.started = False
        self.unused = []
        self.used_map = None

    # forward --------------------------------------------------------------------------

    def prepare_for_backward(self, outputs):
        """Called by DDP's forward when the backward that follows must synchronize."""
        self.check_prior_reduction_finished()
        self._reset()
        self.armed = True
        if self.find_unused:
            reached = _reachable_leaves(outputs)
            self.unused = [i for i, p in enumerate(self.params) if id(p) not in reached]
            used = namespace(self.params[0].device).ones(len(self.params), "int32")
            used[self.unused] = 0
            self.used_map = Tensor._make(used, device=self.params[0].device)
            self.used_work = dist.all_reduce(self.used_map, dist.ReduceOp.MAX, self.group,
                                             async_op=True)

    def check_prior_reduction_finished(self):
        """torch's error when the last backward left some bucket unreduced."""
        if self.unfinished:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a "
                "new one. This error indicates that your module has parameters that were not "
                "used in producing loss. You can enable unused parameter detection by passing "
                "the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` "
                "function outputs participate in calculating loss. Parameter indices which did "
                f"not receive grad for rank {dist.get_rank(self.group)}: "
                f"{' '.join(map(str, self.unfinished))}")

    # backward -------------------------------------------------------------------------

    def _grad_ready(self, param):
        """The post-accumulate-grad hook of every parameter."""
        if not self.armed:
            return
        if not self.started:
            self.started = True
            queue_callback(self._finalize)
            for i in self.unused:
                self._mark_ready(self.params[i])
        self._mark_ready(param)

    def _mark_ready(self, param):
        index = self.index[id(param)]
        if index in self.ready:
            raise RuntimeError(f"Expected to mark a variable ready only once. Parameter at index "
                               f"{index} has been marked as ready twice: it was used in more "
                               "than one backward pass (or reentrant backward) of one iteration")
        self.ready.add(index)
        bucket, position = self.slot[id(param)]
        view = bucket.views[position]
        if param.grad is None:
            view._data[...] = 0
        elif param.grad is not view:
            view._data[...] = param.grad._data
            if self.as_view:
                param.grad = view
        bucket.pending -= 1
        self._launch_ready_buckets()

    def _launch_ready_buckets(self):
        while self.next_bucket < len(self.buckets) and \
                self.buckets[self.next_bucket].pending == 0:
            bucket = self.buckets[self.next_bucket]
            bucket.buffer /= self.world_size
            bucket.work = dist.all_reduce(bucket.tensor, group=self.group, async_op=True)
            self.next_bucket += 1

    def _finalize(self):
        """At the end of backward: wait for the all-reduces, write the averages to `.grad`."""
        self.armed = False
        for bucket in self.buckets[:self.next_bucket]:
            bucket.work.wait()
        if self.next_bucket < len(self.buckets):
            self.unfinished = sorted(set(range(len(self.params))) - self.ready)
            return
        used = None
        if self.used_map is not None:
            self.used_work.wait()
            used = self.used_map._data.tolist()
        for bucket in self.buckets:
            for p, view in zip(bucket.params, bucket.views):
                if used is not None and not used[self.index[id(p)]]:
                    continue  # used on no rank: .grad stays as it was
                self._write_back(p, view)

    def _write_back(self, param, view):
        if param.grad is view:
            return
        if param.grad is None:
            param.grad = view if self.as_view else Tensor._make(view._data.copy(),
                                                                device=view.device)
        else:
            param.grad._data[...] = view._data


def _reachable_leaves(outputs):
    """ids of the leaf tensors whose AccumulateGrad nodes the outputs' graph reaches."""
    stack = [t.grad_fn for t in _tensors_in(outputs) if t.grad_fn is not None]
    seen, leaves = set(), set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node) is AccumulateGrad:
            leaves.add(id(node.variable))
        stack.extend(child for child, _ in node.next_functions)
    return leaves


def _tensors_in(value):
    """The tensors in a forward's output: nested tuples, lists, dicts and dataclasses."""
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors_in(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors_in(item)]
    if hasattr(value, "__dataclass_fields__"):
        return [t for name in value.__dataclass_fields__ for t in
                _tensors_in(getattr(value, name))]
    return []
