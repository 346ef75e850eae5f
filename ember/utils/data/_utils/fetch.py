"""Fetchers: read one batch (or one sample) from a dataset and collate it
(torch.utils.data._utils.fetch). The single-process loader and every worker process use
the same fetchers, which is why both give the same batches.

A map-style fetcher gets a list of indices (auto-batching) or one index. An iterable fetcher
ignores what the index is and only counts: it pulls that many samples from its own iterator
over the dataset, and raises StopIteration once the iterator is exhausted.

Read next: worker.py.
"""


class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        # a dataset may read a whole batch at once (Subset, StackDataset, user datasets)
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems:
            samples = getitems(index)
        else:
            samples = [self.dataset[i] for i in index]
        return self.collate_fn(samples)


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        samples = []
        for _ in index:
            try:
                samples.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not samples or (self.drop_last and len(samples) < len(index)):
            raise StopIteration
        return self.collate_fn(samples)


def create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    """The fetcher for an iterable-style (`iterable=True`) or map-style dataset."""
    kind = _IterableDatasetFetcher if iterable else _MapDatasetFetcher
    return kind(dataset, auto_collation, collate_fn, drop_last)
