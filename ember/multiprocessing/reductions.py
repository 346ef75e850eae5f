"""How a tensor travels to another process: by its shared-memory segment's file descriptor.

`init_reductions()` registers `reduce_tensor` on multiprocessing's ForkingPickler (the pickler
behind every Queue, Pipe and spawned Process) for `Tensor` and `nn.Parameter`:

    sender:   move the tensor's array into a segment of its own (share_memory_, in place),
              then send (dup of the segment's fd, size, offset, shape, strides, dtype, ...)
    receiver: map the fd and build a tensor on it -- writes on either side are seen by both

A view moves its base's memory (and keeps its place in it); only a view of a non-contiguous
base travels as a shared *copy*. GPU tensors travel by value (CuPy arrays are copied, not
mapped). As in torch, a non-leaf tensor
that requires grad is refused: autograd graphs do not cross processes.
"""
from multiprocessing.reduction import DupFd, ForkingPickler

from .. import _dtype as dt
from .. import _shared_memory as shm
from .._tensor import Tensor
from ..serialization import reduce_tensor as _by_value

__all__ = ["init_reductions", "reduce_tensor", "rebuild_tensor"]


def reduce_tensor(t):
    """ForkingPickler's reducer for tensors (see the module docstring)."""
    if t._requires_grad and t._grad_fn is not None:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                           "since autograd does not support crossing process boundaries.  If "
                           "you just want to transfer the data, call detach() on the tensor "
                           "before serializing (e.g., putting it on the queue).")
    if t._device.type != "cpu" or not shm.available:
        return _by_value(t)
    if shm.shared_segment(t._data) is None:
        try:
            t.share_memory_()
        except RuntimeError:  # a view of a non-contiguous base: a shared copy travels
            data = shm.share(t._data)
        else:
            data = t._data
    else:
        data = t._data
    place = shm.shared_segment(data)
    segment, offset = place
    return rebuild_tensor, (type(t), DupFd(segment.fd), segment.size, offset, data.shape,
                            data.strides, t._dtype.name, t._requires_grad)


def rebuild_tensor(cls, fd, size, offset, shape, strides, dtype_name, requires_grad):
    """The receiving side: a tensor of class `cls` on the sent segment."""
    np_dtype = getattr(dt, dtype_name).np
    array = shm.attach(fd.detach(), size, shape, np_dtype, offset, strides)
    return cls._make(array, requires_grad)


def init_reductions():
    """Register the reducers on ForkingPickler (done when ember is imported)."""
    from ..nn.parameter import Buffer, Parameter

    for cls in (Tensor, Parameter, Buffer):
        ForkingPickler.register(cls, reduce_tensor)
