"""`swap_in_optimizer_params_and_state`: run an optimizer on other parameters and state for a
while (a `with` block), then restore its own.

Read next: lr_scheduler.py.
"""
import contextlib
from collections import defaultdict

__all__ = ["swap_in_optimizer_params_and_state"]


def _checked_groups(optimizer, state_dict):
    if not optimizer.state:
        raise RuntimeError("swap_in_optimizer_params_and_state requires initialized optimizer "
                           "state.")
    if not isinstance(state_dict, dict):
        raise RuntimeError("swap_in_optimizer_params_and_state requires a DCP-style optimizer "
                           "state_dict.")
    groups = state_dict.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(f"swap_in_optimizer_params_and_state requires "
                           f"swapin_optim_state['param_groups'] to be a list of param-group "
                           f"dicts, got {type(groups).__name__}.")
    if len(groups) != len(optimizer.param_groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups "
                           "than the live optimizer.")
    for k, (live, given) in enumerate(zip(optimizer.param_groups, groups)):
        if len(given.get("params", ())) != len(live["params"]):
            raise RuntimeError(f"swapin_optim_state param group {k} has a different number of "
                               "params than the live optimizer param group.")
        if set(given) != set(live):
            raise RuntimeError(f"swap_in_optimizer_params_and_state requires "
                               f"optimizer.state_dict()-style param group keys to exactly "
                               f"match the live optimizer group keys for group {k}. Keys only "
                               f"in swap-in: {[x for x in given if x not in live]}. Keys only "
                               f"in live: {[x for x in live if x not in given]}.")
    return groups


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Inside the block, `optimizer` steps `swapin_parameters` (a dict of tensors in the
    optimizer's parameter order) with the hyperparameters and per-parameter state of
    `swapin_optim_state` (an optimizer.state_dict()-shaped dict); afterwards its own param
    groups and state are back. In-place changes to the given state tensors stay in them."""
    groups = _checked_groups(optimizer, swapin_optim_state)
    given_state = swapin_optim_state.get("state", {})
    params = list(swapin_parameters.values())
    own_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        state = defaultdict(dict)
        offset = 0
        for live, given in zip(optimizer.param_groups, groups):
            ids = given["params"]
            swapped = params[offset:offset + len(ids)]
            if len(swapped) != len(ids):
                raise RuntimeError("swap_in_optimizer_params_and_state requires the explicit "
                                   "parameter state to match optimizer.param_groups ordering.")
            offset += len(ids)
            live.update({k: v for k, v in given.items() if k != "params"})
            live["params"] = swapped
            for p, i in zip(swapped, ids):
                state[p] = dict(given_state.get(i, {}))
        optimizer.state = state
        yield
    finally:
        for live, snapshot in zip(optimizer.param_groups, snapshots):
            live.clear()
            live.update(snapshot)
        optimizer.state = own_state
