"""libstdc++'s selection and sorting algorithms, step for step, for the one place where their
exact behaviour shows: the order of *tied* values in torch's CPU top-k.

torch's `topk` on the CPU puts (value, index) pairs in a vector and calls `std::partial_sort`
when k * 64 <= n, else `std::nth_element` followed by `std::sort` of the first k - 1, all
comparing values only. For distinct values any correct algorithm gives the same answer; for
ties the answer is whatever these algorithms leave, so `multinomial` without replacement
(top-k of p / Exponential(1)) reproduces torch's picks among zero probabilities only by running
them. The functions follow GCC's `bits/stl_heap.h` and `bits/stl_algo.h` (introselect and
introsort with median-of-three pivots, insertion sort below 16 elements, heap sort at the
depth limit). Pure Python: used only for rows with ties.

Read next: `_random.py` (multinomial is its user).
"""

__all__ = ["top_k_indices"]

_THRESHOLD = 16  # libstdc++'s _S_threshold


def top_k_indices(values, k):
    """The indices torch's CPU topk(largest=True, sorted=True) returns for one row."""
    items = [(v, i) for i, v in enumerate(values)]
    greater = _Greater()
    n = len(items)
    if k * 64 <= n:
        _partial_sort(items, 0, k, n, greater)
    else:
        _nth_element(items, 0, k - 1, n, greater)
        _sort(items, 0, k - 1, greater)
    return [i for _, i in items[:k]]


class _Greater:
    """torch's comparator for largest=True: NaN first, then by value, descending."""

    def __call__(self, x, y):
        a, b = x[0], y[0]
        return (a != a and b == b) or a > b


# -- heaps (stl_heap.h) -------------------------------------------------------------------------


def _push_heap(v, first, hole, top, value, comp):
    parent = (hole - 1) // 2
    while hole > top and comp(v[first + parent], value):
        v[first + hole] = v[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    v[first + hole] = value


def _adjust_heap(v, first, hole, length, value, comp):
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if comp(v[first + child], v[first + child - 1]):
            child -= 1
        v[first + hole] = v[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        v[first + hole] = v[first + child - 1]
        hole = child - 1
    _push_heap(v, first, hole, top, value, comp)


def _make_heap(v, first, last, comp):
    length = last - first
    if length < 2:
        return
    parent = (length - 2) // 2
    while True:
        _adjust_heap(v, first, parent, length, v[first + parent], comp)
        if parent == 0:
            return
        parent -= 1


def _pop_heap(v, first, last, result, comp):
    value = v[result]
    v[result] = v[first]
    _adjust_heap(v, first, 0, last - first, value, comp)


def _heap_select(v, first, middle, last, comp):
    _make_heap(v, first, middle, comp)
    for i in range(middle, last):
        if comp(v[i], v[first]):
            _pop_heap(v, first, middle, i, comp)


def _sort_heap(v, first, last, comp):
    while last - first > 1:
        last -= 1
        _pop_heap(v, first, last, last, comp)


def _partial_sort(v, first, middle, last, comp):
    _heap_select(v, first, middle, last, comp)
    _sort_heap(v, first, middle, comp)


# -- quicksort pieces (stl_algo.h) --------------------------------------------------------------


def _move_median_to_first(v, result, a, b, c, comp):
    if comp(v[a], v[b]):
        if comp(v[b], v[c]):
            pick = b
        elif comp(v[a], v[c]):
            pick = c
        else:
            pick = a
    elif comp(v[a], v[c]):
        pick = a
    elif comp(v[b], v[c]):
        pick = c
    else:
        pick = b
    v[result], v[pick] = v[pick], v[result]


def _unguarded_partition(v, first, last, pivot, comp):
    while True:
        while comp(v[first], v[pivot]):
            first += 1
        last -= 1
        while comp(v[pivot], v[last]):
            last -= 1
        if not first < last:
            return first
        v[first], v[last] = v[last], v[first]
        first += 1


def _partition_pivot(v, first, last, comp):
    mid = first + (last - first) // 2
    _move_median_to_first(v, first, first + 1, mid, last - 1, comp)
    return _unguarded_partition(v, first + 1, last, first, comp)


def _linear_insert(v, last, comp):
    value = v[last]
    prev = last - 1
    while comp(value, v[prev]):
        v[last] = v[prev]
        last = prev
        prev -= 1
    v[last] = value


def _insertion_sort(v, first, last, comp):
    if first == last:
        return
    for i in range(first + 1, last):
        if comp(v[i], v[first]):
            value = v[i]
            v[first + 1:i + 1] = v[first:i]
            v[first] = value
        else:
            _linear_insert(v, i, comp)


def _depth_limit(n):
    return 2 * (n.bit_length() - 1)


def _nth_element(v, first, nth, last, comp):
    depth = _depth_limit(last - first)
    while last - first > 3:
        if depth == 0:
            _heap_select(v, first, nth + 1, last, comp)
            v[first], v[nth] = v[nth], v[first]
            return
        depth -= 1
        cut = _partition_pivot(v, first, last, comp)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(v, first, last, comp)


def _introsort_loop(v, first, last, depth, comp):
    while last - first > _THRESHOLD:
        if depth == 0:
            _partial_sort(v, first, last, last, comp)
            return
        depth -= 1
        cut = _partition_pivot(v, first, last, comp)
        _introsort_loop(v, cut, last, depth, comp)
        last = cut


def _sort(v, first, last, comp):
    if first == last:
        return
    _introsort_loop(v, first, last, _depth_limit(last - first), comp)
    if last - first > _THRESHOLD:
        _insertion_sort(v, first, first + _THRESHOLD, comp)
        for i in range(first + _THRESHOLD, last):
            _linear_insert(v, i, comp)
    else:
        _insertion_sort(v, first, last, comp)
