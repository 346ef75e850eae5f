"""`RemovableHandle`: what every `register_*_hook` returns (torch.utils.hooks)."""
import itertools

__all__ = ["RemovableHandle"]

_ids = itertools.count()


class RemovableHandle:
    """Adds `hook` to the dict `hooks_dict` under a fresh id; `.remove()` takes it out again.

    Also a context manager: `with t.register_hook(f): ...` removes the hook on exit."""

    def __init__(self, hooks_dict, hook=None, *, extra_dict=None):
        self.hooks_dict = hooks_dict
        self.id = next(_ids)
        self.extra_dict = extra_dict
        if hook is not None:
            hooks_dict[self.id] = hook

    def remove(self):
        """Unregister the hook (and its entries in the extra dicts); calling it again does nothing.
        """
        self.hooks_dict.pop(self.id, None)
        extras = self.extra_dict if isinstance(self.extra_dict, (list, tuple)) else \
            [self.extra_dict]
        for extra in extras:  # one dict or several, as torch's handle
            if extra is not None:
                extra.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
