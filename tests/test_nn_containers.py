"""Containers vs torch: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict --
indexing, slicing, mutation with torch's renumbering, operators, errors and repr."""
from collections import OrderedDict

from .test_nn_module import cases_of, outcome, register, same

CONTAINERS = {}
case = register(CONTAINERS)


def L(m, a=2, b=3, bias=True):
    return m.nn.Linear(a, b, bias=bias)


def _seq(m):
    return m.nn.Sequential(L(m), L(m, 3, 4), m.nn.Identity(), L(m, 4, 1))


def layout(container):
    """Keys, and what sits under each (class and in_features)."""
    return list(container._modules), [type(x).__name__ + str(getattr(x, "in_features", ""))
                                      for x in container._modules.values()]


# ----------------------------------------------------------------------------------------------
# Sequential


@case
def sequential_indexing(m):
    s = _seq(m)
    return (type(s[0]).__name__, s[-1].in_features, s[1].in_features, len(s),
            [type(x).__name__ for x in s], outcome(m, lambda m: s[4]),
            outcome(m, lambda m: s[-5]), outcome(m, lambda m: s["0"]))


@case
def sequential_slicing_keeps_keys(m):
    s = _seq(m)
    return (layout(s[1:3]), type(s[1:]).__name__, layout(s[::-2]), s[1:3][0] is s[1],
            layout(s[5:]))


@case
def sequential_setitem(m):
    s = _seq(m)
    s[-1] = L(m, 7, 1)
    s[0] = L(m, 8, 8)
    return layout(s), outcome(m, lambda m: s.__setitem__(0, 3)), \
        outcome(m, lambda m: s.__setitem__(9, L(m)))


@case
def sequential_delitem_renumbers(m):
    results = []
    for index in [1, -1, slice(None, None, 2), slice(1, 3)]:
        s = _seq(m)
        del s[index]
        results.append(layout(s))
    return results


@case
def sequential_append_insert_extend_pop(m):
    s = _seq(m)
    returned = [s.append(L(m, 9, 9)) is s]
    s.insert(1, L(m, 8, 8))
    s.insert(-1, L(m, 7, 7))
    s.insert(len(s), L(m, 6, 6))
    s.extend([L(m, 5, 5)])
    popped = s.pop(1)
    return (returned, layout(s), popped.in_features, outcome(m, lambda m: s.insert(99, L(m))),
            outcome(m, lambda m: s.insert(0, 3)))


@case
def sequential_operators(m):
    a = m.nn.Sequential(L(m), L(m, 3, 3))
    b = m.nn.Sequential(L(m, 5, 5))
    added = a + b
    a2 = m.nn.Sequential(L(m))
    a2 += b
    doubled = a * 2
    tripled = m.nn.Sequential(L(m), L(m, 3, 3))
    tripled *= 3
    return (layout(added), added[0] is a[0], layout(a2), layout(doubled), doubled[0] is doubled[2],
            layout(2 * m.nn.Sequential(L(m))), layout(tripled),
            outcome(m, lambda m: a + 3), outcome(m, lambda m: a * 0),
            outcome(m, lambda m: a * 1.5))


@case
def sequential_from_ordered_dict(m):
    s = m.nn.Sequential(OrderedDict([("fc", L(m)), ("out", L(m, 3, 1))]))
    keys = (layout(s), s.fc.in_features, repr(s), layout(s[1:]))
    del s[0]
    return keys, layout(s), list(s.state_dict())


@case
def sequential_forward_and_dir(m):
    s = m.nn.Sequential(m.nn.Identity(), m.nn.Identity())
    return s(m.ones(2)), [k for k in dir(_seq(m)) if k[0].isdigit()]


@case
def sequential_repr(m):
    return repr(_seq(m)), repr(m.nn.Sequential()), repr(m.nn.Sequential(m.nn.Sequential()))


# ----------------------------------------------------------------------------------------------
# ModuleList


@case
def module_list_building(m):
    ml = m.nn.ModuleList([L(m), L(m, 3, 3)])
    ml.append(L(m, 4, 4))
    ml.extend([L(m, 5, 5)])
    ml += [L(m, 6, 6)]
    ml.insert(1, L(m, 7, 7))
    return (layout(ml), ml[-1].in_features, layout(ml[1:3]), type(ml[1:3]).__name__,
            [k for k, _ in ml.named_parameters()][:4], len(ml))


@case
def module_list_deletion_and_pop(m):
    ml = m.nn.ModuleList([L(m, i + 1, 1) for i in range(6)])
    del ml[1]
    first = layout(ml)
    del ml[::2]
    second = layout(ml)
    popped = m.nn.ModuleList([L(m, i + 1, 1) for i in range(5)])
    x = popped.pop(-2)
    return first, second, x.in_features, layout(popped)


@case
def module_list_setitem_and_errors(m):
    ml = m.nn.ModuleList([L(m, i + 1, 1) for i in range(3)])
    ml[-1] = L(m, 9, 9)
    return (layout(ml), outcome(m, lambda m: ml[3]), outcome(m, lambda m: ml[-4]),
            outcome(m, lambda m: ml.extend(3)), outcome(m, lambda m: ml.append(3)),
            outcome(m, lambda m: m.nn.ModuleList(3)))


@case
def module_list_add(m):
    joined = m.nn.ModuleList([L(m)]) + m.nn.ModuleList([L(m, 3, 3)])
    return layout(joined), type(joined).__name__


@case
def module_list_repr_groups_repeats(m):
    ml = m.nn.ModuleList([L(m), L(m), L(m), L(m, 3, 3), L(m),
                          m.nn.Sequential(L(m), L(m)), m.nn.Sequential(L(m), L(m))])
    return repr(ml), repr(m.nn.ModuleList()), repr(m.nn.ModuleList([L(m)]))


# ----------------------------------------------------------------------------------------------
# ModuleDict


@case
def module_dict_updates_and_order(m):
    d = m.nn.ModuleDict({"b": L(m), "a": L(m, 3, 3)})
    d.update([("c", L(m, 4, 4))])
    d["d"] = L(m, 5, 5)
    d.update(OrderedDict([("a", L(m, 6, 6))]))
    d.update(m.nn.ModuleDict({"z": L(m), "y": L(m)}))
    return (list(d.keys()), list(d), "a" in d, len(d), d["a"].in_features, layout(d),
            [k for k, _ in d.named_parameters()], [type(v).__name__ for v in d.values()],
            [k for k, _ in d.items()])


@case
def module_dict_removal(m):
    d = m.nn.ModuleDict({"b": L(m), "a": L(m, 3, 3)})
    x = d.pop("b")
    after_pop = list(d)
    del d["a"]
    after_del = list(d)
    d["q"] = L(m)
    d.clear()
    return x.in_features, after_pop, after_del, list(d), outcome(m, lambda m: d["zz"])


@case
def module_dict_errors(m):
    return [outcome(m, lambda m: m.nn.ModuleDict(3)),
            outcome(m, lambda m: m.nn.ModuleDict([3])),
            outcome(m, lambda m: m.nn.ModuleDict([("a", L(m), 3)])),
            outcome(m, lambda m: m.nn.ModuleDict({"a.b": L(m)})),
            outcome(m, lambda m: m.nn.ModuleDict({"a": 3}))]


@case
def module_dict_repr(m):
    return repr(m.nn.ModuleDict({"act": m.nn.Identity(), "fc": L(m)})), repr(m.nn.ModuleDict())


# ----------------------------------------------------------------------------------------------
# ParameterList / ParameterDict


@case
def parameter_list(m):
    p = m.nn.ParameterList([m.ones(2), m.nn.Parameter(m.zeros(3)), 5])
    p.append(m.ones(1, 2))
    p.extend([m.ones(4)])
    p += [m.ones(5, dtype=m.float64)]
    return ([type(x).__name__ for x in p], len(p), [k for k, _ in p.named_parameters()],
            repr(p), type(p[1:3]).__name__, len(p[1:3]), type(p[-1]).__name__,
            [x.requires_grad for x in p.parameters()])


@case
def parameter_list_setitem_and_errors(m):
    p = m.nn.ParameterList([m.ones(2)])
    p[0] = m.zeros(3)
    return (type(p[0]).__name__, p[0].shape, repr(m.nn.ParameterList([m.ones(2)])),
            outcome(m, lambda m: p[2]), outcome(m, lambda m: p.extend(m.ones(2))),
            outcome(m, lambda m: p(1)), outcome(m, lambda m: p.extend(3)))


@case
def parameter_dict(m):
    d = m.nn.ParameterDict({"b": m.ones(2), "a": m.nn.Parameter(m.zeros(3)), "c": "str"})
    d.update([("z", m.ones(1))])
    d["y"] = m.ones(2, 2, dtype=m.float64)
    return (list(d), list(d.keys()), [type(v).__name__ for v in d.values()],
            [k for k, _ in d.named_parameters()], repr(d), "a" in d, d.get("q", 1),
            list(m.nn.ParameterDict(OrderedDict([("b", m.ones(2)), ("a", m.ones(1))]))))


@case
def parameter_dict_operations(m):
    d = m.nn.ParameterDict({"b": m.ones(2), "a": m.ones(1)})
    key, _ = d.popitem()
    d.setdefault("s", m.ones(3))
    copied = d.copy()
    merged = d | m.nn.ParameterDict({"q": m.ones(1)})
    d |= {"w": m.ones(1)}
    keys = list(d)
    d.clear()
    return (key, keys, list(copied), list(merged), list(reversed(copied)),
            list(copied.fromkeys(["x", "y"])), len(d), list(d.parameters()),
            outcome(m, lambda m: d[1]), outcome(m, lambda m: d(1)),
            outcome(m, lambda m: m.nn.ParameterDict([(1,)])),
            outcome(m, lambda m: m.nn.ParameterDict(3)))


@cases_of(CONTAINERS)
def test_containers_like_torch(fn):
    same(fn)
