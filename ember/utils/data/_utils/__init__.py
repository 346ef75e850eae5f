"""The DataLoader's machinery (torch.utils.data._utils): `collate` turns a list of samples
into a batch, `fetch` reads one batch from a dataset, `worker` is the loop a worker process
runs. Read them in that order, then `../dataloader.py`, which drives them."""
from . import collate, fetch, worker  # noqa: F401
