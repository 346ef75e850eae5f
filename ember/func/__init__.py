"""torch.func: function transforms.

    grad, grad_and_value   gradients of a scalar function (argnums, has_aux)
    vjp, jvp, linearize    vector-Jacobian and Jacobian-vector products
    jacrev, jacfwd         Jacobians by reverse or forward mode
    hessian                second derivatives (jacfwd of jacrev)
    vmap                   a function over one sample, run on a batch
    functional_call        a module run with parameters and buffers given as tensors
    stack_module_state     the parameters and buffers of several like modules, stacked
    replace_all_batch_norm_modules_   batch norms that keep no running statistics

They compose: `vmap(grad(loss))(params, xs, ys)` gives per-sample gradients. How they work is
in ember/_functorch/ (start at its __init__.py).
"""
from .._functorch.eager_transforms import (  # noqa: F401
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    vjp,
)
from .._functorch.functional_call import (  # noqa: F401
    functional_call,
    replace_all_batch_norm_modules_,
    stack_module_state,
)
from .._functorch.vmap import vmap  # noqa: F401

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian",
           "vmap", "functional_call", "stack_module_state", "replace_all_batch_norm_modules_"]
