"""ember.backends.opt_einsum (torch.backends.opt_einsum): ember's einsum contracts in NumPy's
order and does not use the opt_einsum package, so `is_available()` is False and `enabled`
False, `strategy` None, as torch has them without the package (settable, with no effect)."""
__all__ = ["is_available", "get_opt_einsum", "enabled", "strategy"]

enabled = False
strategy = None


def is_available():
    """False: ember does not use opt_einsum."""
    return False


def get_opt_einsum():
    """None, as torch returns without the package."""
    return None
