"""`ember.storage` (torch.storage): the storage classes, `UntypedStorage` (bytes) and
`TypedStorage` (bytes read as a dtype), defined in `_storage.py`; the legacy typed storage
types (`FloatStorage`, ...) are in `_legacy.py`.

Read next: `_storage.py`.
"""
from ._storage import TypedStorage, UntypedStorage

__all__ = ["TypedStorage", "UntypedStorage"]
