"""Weight averaging (torch.optim.swa_utils): SWA and EMA models, SWALR, update_bn.

    AveragedModel(model)          a copy of `model` whose parameters (and buffers, with
                                  use_buffers=True) are an average of the model's over the
                                  update_parameters() calls; n_averaged counts them
    SWA (the default average)     avg = avg + (p - avg) / (n + 1)       (the running mean)
    EMA (get_ema_multi_avg_fn)    avg = avg + (1 - decay) * (p - avg)
    SWALR                         anneals each group's lr to its swa_lr over anneal_epochs
    update_bn(loader, model)      recomputes BatchNorm running statistics with one pass

Read next: nothing further in optim; this is the last file of the package.
"""
import itertools
import math
import warnings
from copy import deepcopy

from .. import _creation
from .. import _dtype as dt
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _per_group

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place EMA update of lists of tensors: ema = lerp(ema, current, 1 - decay)."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if ema_param_list[0].is_floating_point():
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.lerp_(p_model, 1 - decay)
        else:  # integer buffers: lerp is for floats; the float result is cast back
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place running-mean update of lists of tensors."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if averaged_param_list[0].is_floating_point():
            weight = 1 / (num_averaged + 1)
            weight = weight.item() if hasattr(weight, "item") else weight
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                p_avg.lerp_(p_model, weight)
            return
        for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
            diff = p_model - p_avg
            if hasattr(num_averaged, "item"):
                p_avg.addcdiv_(diff, num_averaged + 1)
            else:
                p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The EMA of one tensor: decay * ema + (1 - decay) * current (a new tensor)."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The running mean of one tensor after num_averaged earlier values (a new tensor)."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _by_device_and_dtype(averaged, current):
    """Pairs of lists, grouped by the averaged tensor's (device, dtype), in first-seen order:
    a multi-tensor average works on one kind of tensor at a time."""
    groups = {}
    for p_avg, p_model in zip(averaged, current):
        lists = groups.setdefault((p_avg.device, p_avg.dtype), ([], []))
        lists[0].append(p_avg)
        lists[1].append(p_model)
    return groups


class AveragedModel(Module):
    """A deep copy of `model` holding the average of its weights. forward() runs the copy.

    avg_fn(avg, current, n) -> new tensor, or multi_avg_fn(avg_list, current_list, n) in
    place; default: the SWA running mean. With use_buffers=True buffers are averaged too,
    otherwise they are copied from the model on every update."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _creation.tensor(0, dtype=dt.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """Call the averaged copy of the model with the given arguments."""
        return self.module(*args, **kwargs)

    def _averaged_and_current(self, model):
        if self.use_buffers:
            return (itertools.chain(self.module.parameters(), self.module.buffers()),
                    itertools.chain(model.parameters(), model.buffers()))
        return self.parameters(), model.parameters()

    def update_parameters(self, model):
        """Fold `model`'s current weights into the average (the first call copies them)."""
        mine, theirs = self._averaged_and_current(model)
        averaged, current = [], []
        first = bool(self.n_averaged == 0)
        for p_avg, p_model in zip(mine, theirs):
            p_model = p_model.detach().to(p_avg.device)
            averaged.append(p_avg.detach())
            current.append(p_model)
            if first:
                p_avg.detach().copy_(p_model)
        if self.n_averaged > 0:
            self._average(averaged, current)
        if not self.use_buffers:
            for b_avg, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_avg.detach().copy_(b_model.detach().to(b_avg.device))
        self.n_averaged += 1

    def _average(self, averaged, current):
        if self.avg_fn is not None:
            for p_avg, p_model in zip(averaged, current, strict=True):
                n = self.n_averaged.to(p_avg.device)
                p_avg.detach().copy_(self.avg_fn(p_avg.detach(), p_model, n))
            return
        for (device, _), (avg_list, cur_list) in _by_device_and_dtype(averaged, current).items():
            n = self.n_averaged.to(device)
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(avg_list, cur_list, n)
            elif device.type == "cuda":  # torch's multi-tensor (foreach) path
                get_swa_multi_avg_fn()(avg_list, cur_list, n)
            else:
                avg_fn = get_swa_avg_fn()
                for p_avg, p_model in zip(avg_list, cur_list, strict=True):
                    p_avg.copy_(avg_fn(p_avg, p_model, n))


@no_grad()
def update_bn(loader, model, device=None):
    """Recompute the running mean/var of every BatchNorm layer of `model` as the plain
    average over one pass of `loader` (any iterable of batches; a list/tuple batch
    contributes its first element)."""
    try:
        from ..nn.modules.batchnorm import _BatchNorm
    except ImportError:  # no BatchNorm layers exist, so the model has none
        return
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None  # momentum None = cumulative average over the batches
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr from its current value to swa_lr over anneal_epochs
    (cosine or linear), then holds it:

        lr_t = swa_lr * a(t) + lr_0 * (1 - a(t)),   a(t) = anneal(min(1, t / anneal_epochs))

    computed recursively from the group's lr like the other schedulers."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups,
                             strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        """Invert lr = swa_lr * alpha + lr_0 * (1 - alpha) for lr_0."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / span)))
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / span)))
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else \
            self._linear_anneal

    def state_dict(self):
        """The scheduler's attributes without the optimizer and the annealing function (rebuilt from
        `anneal_strategy` on load)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        """Restore the attributes saved by `state_dict` and rebuild the annealing function."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
