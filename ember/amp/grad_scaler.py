"""`GradScaler`: loss scaling for float16 training (torch.amp.GradScaler).

    scaler = ember.amp.GradScaler("cuda")
    with ember.autocast("cuda"):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()   # gradients of scale * loss: small ones do not flush to 0
    scaler.unscale_(optimizer)      # optional: grads / scale, e.g. before clip_grad_norm_
    scaler.step(optimizer)          # unscale if not yet done; skip the step on inf/NaN grads
    scaler.update()                 # scale *= backoff after an inf/NaN, *= growth after
                                    # `growth_interval` clean steps

Per optimizer, one iteration moves READY -> UNSCALED -> STEPPED, and `update()` starts the next;
calling things out of order raises torch's errors. The scale and the count of clean steps are
0-d float32 / int32 tensors on the device of the first scaled output, made lazily.

As in torch, a scaler for "cuda" on a machine without a GPU warns and disables itself: every
method is then a pass-through (`scale` returns its input, `step` just steps). Read next:
../cuda/amp.py and ../cpu/amp.py (the deprecated spellings).
"""
import enum
import warnings
from collections import abc, defaultdict

from .. import _dtype as dt
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = ["GradScaler", "OptState"]


class OptState(enum.Enum):
    """Where one optimizer is in the current iteration."""
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


_FIX = ("This may indicate your script did not use scaler.scale(loss or outputs) earlier in "
        "the iteration.")


class GradScaler:
    """Scale losses, unscale gradients, skip steps with inf/NaN gradients, adapt the scale."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            from .. import cuda

            if not cuda.is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not "
                              "available.  Disabling.", stacklevel=2)
                self._enabled = False
        if self._enabled:
            if not growth_factor > 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if not backoff_factor < 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_fresh_state)

    def _lazy_init(self, device):
        from .. import full

        self._scale = full((), self._init_scale, dtype=dt.float32, device=device)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=dt.int32,
                                    device=device)

    def _check_scale(self, funcname):
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + _FIX)
        return self._scale, self._growth_tracker

    def scale(self, outputs):
        """`outputs` (a tensor, or tensors nested in lists/tuples/iterables) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            return outputs * self._scale.to(outputs.device)
        return self._scale_nested(outputs)

    def _scale_nested(self, value):
        if isinstance(value, Tensor):
            if self._scale is None:
                self._lazy_init(value.device)
            return value * self._scale.to(value.device)
        if isinstance(value, abc.Iterable):
            scaled = map(self._scale_nested, value)
            return type(value)(scaled) if isinstance(value, (list, tuple)) else scaled
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer):
        """Divide the gradients of `optimizer`'s parameters by the scale, in place, and note
        whether any is inf/NaN. At most once per optimizer per iteration, before `step`."""
        if not self._enabled:
            return
        self._check_scale("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        state["found_inf_per_device"] = self._unscale_grads(optimizer, inv_scale)
        state["stage"] = OptState.UNSCALED

    def _unscale_grads(self, optimizer, inv_scale, allow_fp16=False):
        """{device: 0-d float32 tensor, 1.0 if some gradient there is not finite}."""
        from .. import zeros

        found = {}
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype is dt.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    flag = found.get(grad.device)
                    if flag is None:
                        flag = found[grad.device] = zeros((), dtype=dt.float32,
                                                          device=grad.device)
                    grad.mul_(inv_scale.to(grad.device))
                    if not bool(grad.isfinite().all()):
                        flag.fill_(1.0)
        return found

    def step(self, optimizer, *args, **kwargs):
        """`optimizer.step(*args, **kwargs)` on unscaled gradients, unless one was inf/NaN
        (then the step is skipped and None returned)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None):
        """End the iteration: set the scale to `new_scale` (a float or a 1-element float32
        tensor), or back it off after inf/NaN gradients, or grow it after `growth_interval`
        clean iterations in a row."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale("update")
        if new_scale is not None:
            self._set_scale(new_scale)
        else:
            found = [flag.to(scale.device) for state in self._per_optimizer_states.values()
                     for flag in state["found_inf_per_device"].values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            self._update_scale(sum(f.item() for f in found) > 0)
        self._per_optimizer_states = defaultdict(_fresh_state)

    def _set_scale(self, new_scale):
        if isinstance(new_scale, float):
            self._scale.fill_(new_scale)
            return
        reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                  "torch.FloatTensor with requires_grad=False.")
        if not (isinstance(new_scale, Tensor) and new_scale.device.type == self._scale.device.type
                and new_scale.numel() == 1 and not new_scale.requires_grad):
            raise AssertionError(reason)
        self._scale.copy_(new_scale.reshape(()))

    def _update_scale(self, found_inf):
        """torch's _amp_update_scale_: back off and restart the count after inf/NaN; grow
        (if the grown scale is finite) when the count of clean steps reaches the interval."""
        scale, tracker = self._scale, self._growth_tracker
        if found_inf:
            scale.mul_(self._backoff_factor)
            tracker.fill_(0)
            return
        clean = int(tracker.item()) + 1
        if clean == self._growth_interval:
            grown = scale.item() * self._growth_factor
            if grown != float("inf"):
                scale.fill_(grown)
            clean = 0
        tracker.fill_(clean)

    # ------------------------------------------------------------------------------------------
    # settings and state

    def get_scale(self):
        """The current scale as a float (the initial one before the first `scale`; 1.0 when
        disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self):
        """The factor the scale grows by after `growth_interval` clean iterations."""
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        """Set the growth factor."""
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        """The factor the scale shrinks by after an inf/NaN gradient."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        """Set the backoff factor."""
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        """How many clean iterations in a row grow the scale."""
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        """Set the growth interval."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None \
            else int(self._growth_tracker.item())

    def is_enabled(self):
        """Whether the scaler does anything (False after disabling itself without CUDA)."""
        return self._enabled

    def state_dict(self):
        """scale, growth_factor, backoff_factor, growth_interval and _growth_tracker ({} when
        disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        """Restore what `state_dict()` returned (nothing happens when disabled)."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the "
                                     "beginning of an iteration, or at the end after "
                                     "scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
            state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self._enabled:
            self._per_optimizer_states = defaultdict(_fresh_state)
