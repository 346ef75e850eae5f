"""The machinery of function transforms: vmap and the torch.func transforms built on it and on
forward-mode AD. The public names live at torch's paths (`ember.func`, `ember.vmap`,
`ember.autograd.forward_ad`); this package is how they work.

    levels.py            the stack of active transforms; the hook that hands each op to one
    vmap.py              BatchedTensor, vmap, the per-sample fallback
    batch_rules.py       the batching rules shared by many ops (pointwise, dim-shifting, ...)
    eager_transforms.py  grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd, hessian
    functional_call.py   functional_call, stack_module_state, replace_all_batch_norm_modules_

Read `levels.py` first, then `autograd/forward_ad.py` (the other kind of level), then `vmap.py`.
"""
