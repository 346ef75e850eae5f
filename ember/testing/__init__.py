"""ember.testing (torch.testing): `assert_close` and `make_tensor`, with torch's defaults and
messages. Read _comparison.py, then _creation.py."""
from ._comparison import assert_close
from ._creation import make_tensor

__all__ = ["assert_close", "make_tensor"]
