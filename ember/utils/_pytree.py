"""Nested containers ("pytrees") as a flat list of leaves plus their structure.

    leaves, spec = tree_flatten(({"w": w, "b": b}, [x]))   # leaves: [w, b, x]
    tree_unflatten([2 * v for v in leaves], spec)          # the same nesting, new leaves

Tuples, lists, dicts (keys in insertion order), namedtuples and None (a node without children)
are containers; everything else is a leaf. The function transforms (vmap's in_dims and
outputs, grad's argnums, jacrev's nested results) walk arguments this way, as torch's
`torch.utils._pytree` does for them.

Read next: `ember/_functorch/vmap.py`.
"""
__all__ = ["TreeSpec", "tree_flatten", "tree_unflatten", "tree_map", "tree_leaves"]


class TreeSpec:
    """The structure of a pytree: a container kind, its keys or fields, and child specs.
    A leaf's spec has kind None."""

    __slots__ = ("kind", "context", "children")

    def __init__(self, kind, context, children):
        self.kind = kind
        self.context = context
        self.children = children

    @property
    def num_leaves(self):
        if self.kind is None:
            return 1
        return sum(child.num_leaves for child in self.children)

    def is_leaf(self):
        return self.kind is None

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.kind is other.kind
                and self.context == other.context and self.children == other.children)

    def __repr__(self):
        if self.kind is None:
            return "*"
        inner = ", ".join(map(repr, self.children))
        return f"TreeSpec({self.kind.__name__}, {self.context}, [{inner}])"


_LEAF = TreeSpec(None, None, [])


def _children(tree):
    """(kind, context, children) of a container, or None for a leaf."""
    kind = type(tree)
    if kind is tuple or kind is list:
        return kind, None, list(tree)
    if isinstance(tree, dict):
        return kind, list(tree), list(tree.values())
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return kind, None, list(tree)
    if tree is None:
        return type(None), None, []
    return None


def tree_flatten(tree):
    """(leaves, spec) of a pytree."""
    leaves = []
    spec = _flatten(tree, leaves)
    return leaves, spec


def _flatten(tree, leaves):
    node = _children(tree)
    if node is None:
        leaves.append(tree)
        return _LEAF
    kind, context, children = node
    return TreeSpec(kind, context, [_flatten(child, leaves) for child in children])


def tree_unflatten(leaves, spec):
    """The pytree of structure `spec` with `leaves` in order."""
    leaves = iter(leaves)
    return _build(spec, leaves)


def _build(spec, leaves):
    if spec.kind is None:
        return next(leaves)
    children = [_build(child, leaves) for child in spec.children]
    kind = spec.kind
    if kind is type(None):
        return None
    if spec.context is not None:  # a dict
        return kind(zip(spec.context, children))
    if kind is tuple or kind is list:
        return kind(children)
    return kind(*children)  # a namedtuple


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def tree_map(fn, tree):
    """The same structure with `fn` applied to every leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)


def broadcast_prefix(prefix, tree, error):
    """The leaves of `prefix` repeated over the leaves of `tree` below them: `prefix` is a
    pytree whose structure is a prefix of `tree`'s (an int for a whole subtree). Calls
    `error()` (which raises) when the structures do not match."""
    out = []
    _broadcast(prefix, tree, out, error)
    return out


def _broadcast(prefix, tree, out, error):
    node = _children(prefix) if prefix is not None else None
    if node is None:
        out.extend([prefix] * len(tree_leaves(tree)))
        return
    kind, context, children = node
    tree_node = _children(tree)
    if tree_node is None or len(tree_node[2]) != len(children) or (
            context is not None and tree_node[1] != context) or not isinstance(tree, kind):
        error()
    for p, t in zip(children, tree_node[2]):
        _broadcast(p, t, out, error)
