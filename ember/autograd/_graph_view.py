"""Drawing the autograd graph: `ember.autograd.graph.draw(loss)`.

    d = draw(loss, params=dict(model.named_parameters()))
    print(d.text)        an indented tree for terminals; a node reached twice is shown once
    d.save("g.html")     a self-contained page with an inline SVG (also .svg, .dot, .txt)
    d                    in Jupyter: the SVG, through `_repr_html_`

Every box is a node of the backward graph: the grad_fn's name, what it saved for backward
(tensors with shape, dtype and the version they were saved at; attributes), its hooks, and the
module whose forward made it (under `track_modules`, see `_instrument.py`). Leaves are their
AccumulateGrad nodes, named after the parameter when `params` is given. Arrows follow the data
forward: from the leaves at the top down to the output, each labelled with the shape that
flows along it (gradients flow back the other way, with the same shapes).

The picture is laid out here, in Python, with no Graphviz and no JavaScript:

    1. layers    each box sits one row above its highest consumer (longest path from the
                 output), so every arrow points down; arrows that skip rows get invisible
                 waypoints, one per row they cross
    2. order     a few barycenter sweeps: each row is sorted by the mean position of its
                 neighbours in the row before, which removes most crossings
    3. place     each box moves towards the mean x of its neighbours; two sweeps that push
                 overlapping boxes apart (left to right, right to left) are averaged
    4. draw      boxes and smooth arrows through the waypoints, as SVG (or DOT, for Graphviz)

Read next: `explain.py`, which follows a backward pass through this graph.
"""
import html
from collections import deque
from functools import cached_property

from .._tensor import Tensor
from ._instrument import track_modules  # noqa: F401  (published beside draw)
from .graph import AccumulateGrad

__all__ = ["draw", "GraphDrawing", "track_modules"]

_FILL = {"op": "#fff4cc", "leaf": "#d6e9ff", "output": "#d9f2d9"}
_STROKE = {"op": "#8a7a3a", "leaf": "#3a5f8a", "output": "#3a7a3a"}
_HOOK_STROKE = "#d9480f"
_CHAR = 7.2          # width of one character of 12px monospace
_TITLE_CHAR = 7.8    # 13px bold
_LINE = 15           # line height
_PAD = 8
_GAP_X = 24
_GAP_Y = 46
_MARGIN = 16


def draw(output, params=None, format="text"):
    """Draw the graph that computed `output` (a tensor or a sequence of tensors).

    params: {name: tensor}, e.g. dict(model.named_parameters()), to name the leaves.
    format: what str() of the result shows ("text", "dot", "svg" or "html")."""
    if format not in ("text", "dot", "svg", "html"):
        raise ValueError(f"draw(): format must be 'text', 'dot', 'svg' or 'html', got {format!r}")
    outputs = (output,) if isinstance(output, Tensor) else tuple(output)
    for t in outputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"draw() expects tensors, got {type(t).__name__}")
    names = {id(t): name for name, t in (params or {}).items()}
    return GraphDrawing(*_collect(outputs, names), format=format)


# ----------------------------------------------------------------------------------------------
# the graph as boxes and arrows


class _Box:
    __slots__ = ("id", "kind", "title", "lines", "hooked", "node", "x", "y", "w", "h", "layer")

    def __init__(self, bid, kind, title, lines, hooked=False, node=None):
        self.id = bid
        self.kind = kind
        self.title = title
        self.lines = lines
        self.hooked = hooked
        self.node = node
        self.x = self.y = 0.0
        self.w = max([len(title) * _TITLE_CHAR] + [len(s) * _CHAR for s in lines]) + 2 * _PAD
        self.h = _LINE * (1 + len(lines)) + 2 * _PAD - 4
        self.layer = 0


def _collect(outputs, names):
    """Boxes in discovery order (breadth first from the outputs) and arrows (src, dst, label,
    uses): from an input's node to the node that consumed it, `uses` times (x * x: twice)."""
    boxes = []
    arrows = {}
    box_of = {}
    queue = deque()

    def box_for(node):
        box = box_of.get(node)
        if box is None:
            box = box_of[node] = _node_box(len(boxes), node, names)
            boxes.append(box)
            queue.append(node)
        return box

    for i, t in enumerate(outputs):
        title = "output" if len(outputs) == 1 else f"output {i}"
        lines = [_tensor_text(t)]
        if t._retains_grad:
            lines.append("retains grad")
        out = _Box(len(boxes), "output", title, lines)
        boxes.append(out)
        node = t._grad_fn
        if node is None and t._requires_grad:
            from .graph import accumulator

            node = accumulator(t)
        if node is not None:
            _add_arrow(arrows, box_for(node).id, out.id, _shape_text(t._data.shape))
    while queue:
        node = queue.popleft()
        dst = box_of[node].id
        for i, (child, _) in enumerate(node.next_functions):
            if child is None:
                continue
            meta = node._meta[i] if i < len(node._meta) else None
            label = _shape_text(meta[0]) if meta is not None else ""
            _add_arrow(arrows, box_for(child).id, dst, label)
    return boxes, [(s, d, label, n) for (s, d), (label, n) in arrows.items()]


def _add_arrow(arrows, src, dst, label):
    old = arrows.get((src, dst))
    arrows[(src, dst)] = (label, 1) if old is None else (old[0], old[1] + 1)


def _node_box(bid, node, names):
    if type(node) is AccumulateGrad:
        var = node.variable
        lines = ["AccumulateGrad", _tensor_text(var)]
        hooks = _hook_lines("hook", var._hooks) + _hook_lines("post-accumulate hook",
                                                               var._post_acc_hooks)
        return _Box(bid, "leaf", names.get(id(var), "leaf"), lines + hooks, bool(hooks), node)
    lines = []
    module = node.metadata.get("module")
    if module is not None:
        lines.append(f"module: {module}")
    lines.extend(_saved_lines(node, names))
    hooks = []
    for nr, hooks_of in sorted((node._tensor_hooks or {}).items()):
        where = f" (output {nr})" if node._num_outputs > 1 else ""
        for hook in hooks_of.values():
            if getattr(hook, "_is_retain_grad", False):
                hooks.append("retains grad" + where)
            else:
                hooks.append(f"tensor hook: {_callable_name(hook)}{where}")
    hooks += _hook_lines("prehook", node._pre_hooks) + _hook_lines("hook", node._post_hooks)
    return _Box(bid, "op", node.name(), lines + hooks, bool(hooks), node)


def _saved_lines(node, names):
    saves = node.op.saves
    saved = node._saved
    if saved is None:
        return ["saved values freed (backward ran)"] if node.op.saves_tensors else []
    if not saves:  # a custom Function: what it gave to save_for_backward
        return [f"saved[{i}] = {_saved_text(v, names)}" for i, v in enumerate(saved)
                if v is not None]
    rule_names = node.op.rule.__code__.co_varnames[1:1 + len(saves)]
    lines = []
    for name, (kind, _), value in zip(rule_names, saves, saved):
        if kind in ("input", "out", "workspace", "inputs"):
            values = value if kind != "input" else (value,)
            for k, v in enumerate(values):
                label = name if len(values) == 1 else f"{name}[{k}]"
                lines.append(f"{label} = {_saved_text(v, names)}")
        elif kind in ("shape", "shapes"):
            lines.append(f"{name} = {_shape_text(value) if kind == 'shape' else value}")
        elif kind == "dtype":
            lines.append(f"{name} = {_dtype_text(value)}")
        elif kind == "needs_input_grad":  # bookkeeping, not a saved value: the edges show it
            continue
        else:
            lines.append(f"{name} = {value!r}")
    return lines


def _saved_text(value, names):
    """A saved value as the graph keeps it (see graph.save_tensor / save_output)."""
    if type(value) is not tuple:
        if hasattr(value, "unpack"):  # packed by a saved-tensor hook
            return f"packed by a saved-tensor hook: {value.packed!r}"
        return repr(value)  # a Python number operand
    if len(value) == 2:     # (tensor, version when saved)
        t, version = value
        name = names.get(id(t))
        text = f"{name + ' ' if name else ''}{_tensor_text(t)} v{version}"
        now = t._vc.value
        return text + (f" (now v{now}: modified in place)" if now != version else "")
    data, vc, version = value[:3]  # an output: its array, version counter, version
    text = f"{_shape_text(data.shape)} {data.dtype.name} v{version}"
    return text + (f" (now v{vc.value}: modified in place)" if vc.value != version else "")


def _hook_lines(kind, hooks):
    return [f"{kind}: {_callable_name(h)}" for h in (hooks or {}).values()]


def _callable_name(fn):
    return getattr(fn, "__qualname__", None) or type(fn).__name__


def _tensor_text(t):
    return f"{_shape_text(t._data.shape)} {_dtype_text(t._dtype)}"


def _shape_text(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _dtype_text(dtype):
    return str(dtype).replace("ember.", "") if dtype is not None else "None"


# ----------------------------------------------------------------------------------------------
# the result


class GraphDrawing:
    """The drawing of one graph in every format; `save(path)` picks one by suffix."""

    def __init__(self, boxes, arrows, format="text"):
        self.boxes = boxes
        self.arrows = arrows
        self.format = format

    @cached_property
    def text(self):
        return _text(self.boxes, self.arrows)

    @cached_property
    def dot(self):
        return _dot(self.boxes, self.arrows)

    @cached_property
    def layout(self):
        """The computed picture: a Layout (boxes placed, arrows routed)."""
        return _layout(self.boxes, self.arrows)

    @cached_property
    def svg(self):
        return _svg(self.layout)

    @cached_property
    def html(self):
        title = " / ".join(b.title for b in self.boxes if b.kind == "output") or "graph"
        return ("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n"
                f"<title>ember autograd graph: {html.escape(title)}</title>\n"
                "<style>body { font-family: sans-serif; margin: 16px; } "
                "p { color: #555; font-size: 13px; }</style>\n</head>\n<body>\n"
                "<p>Autograd graph. Arrows follow the forward pass (gradients flow back along "
                "them); labels are the shapes that flow. Yellow: backward nodes (grad_fn) with "
                "what they saved; blue: leaves (AccumulateGrad); green: outputs; orange "
                "border: hooks.</p>\n"
                f"{self.svg}\n</body>\n</html>\n")

    def _repr_html_(self):
        return self.svg

    def __str__(self):
        return getattr(self, self.format)

    def __repr__(self):
        return f"<GraphDrawing of {len(self.boxes)} nodes>"

    def save(self, path):
        """Write the drawing to `path`: .dot, .html, .svg or .txt."""
        suffix = str(path).rsplit(".", 1)[-1].lower() if "." in str(path) else ""
        formats = {"dot": "dot", "gv": "dot", "html": "html", "htm": "html", "svg": "svg",
                   "txt": "text"}
        if suffix not in formats:
            raise ValueError(f"save(): unknown file type {suffix!r}; use .dot, .html, .svg or "
                             ".txt")
        content = getattr(self, formats[suffix])
        if suffix == "svg":
            content = '<?xml version="1.0" encoding="UTF-8"?>\n' + content
        with open(path, "w", encoding="utf-8") as f:
            f.write(content)


# ----------------------------------------------------------------------------------------------
# text


def _text(boxes, arrows):
    """An indented tree from each output down to the leaves (the direction gradients flow).
    A node reached a second time is printed as a reference `-> #k` to its first appearance;
    an input a node uses several times (x * x) is marked `(2x)`."""
    inputs = {b.id: [] for b in boxes}
    reached = {}
    for src, dst, _, n in arrows:
        inputs[dst].append((src, n))
        reached[src] = reached.get(src, 0) + 1
    tags = {}
    lines = []
    for root in (b for b in boxes if b.kind == "output"):
        stack = [(root.id, 1, "", "")]
        while stack:
            bid, uses, lead, indent = stack.pop()
            box = boxes[bid]
            title = box.title + (f" ({uses}x)" if uses > 1 else "")
            if bid in tags and tags[bid] is not None:
                lines.append(f"{lead}{title} -> #{tags[bid]} (shown above)")
                continue
            tag = ""
            tags[bid] = None
            if reached.get(bid, 0) > 1:
                tags[bid] = sum(1 for t in tags.values() if t is not None) + 1
                tag = f" #{tags[bid]}"
            details = "; ".join(box.lines)
            lines.append(f"{lead}{title}{tag}" + (f"  [{details}]" if details else ""))
            children = inputs[bid]
            for k in range(len(children) - 1, -1, -1):
                last = k == len(children) - 1
                child, n = children[k]
                stack.append((child, n, indent + ("└─ " if last else "├─ "),
                              indent + ("   " if last else "│  ")))
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------
# DOT


def _dot(boxes, arrows):
    out = ["digraph autograd {",
           '  node [shape=box, style="rounded,filled", fontname="monospace", fontsize=11];',
           '  edge [fontname="monospace", fontsize=9];']
    for b in boxes:
        label = "\\n".join(_dot_escape(s) for s in [b.title] + b.lines)
        color = _HOOK_STROKE if b.hooked else _STROKE[b.kind]
        out.append(f'  n{b.id} [label="{label}", fillcolor="{_FILL[b.kind]}", '
                   f'color="{color}"];')
    for src, dst, label, n in arrows:
        label = label if n == 1 else f"{label} ({n}x)"
        out.append(f'  n{src} -> n{dst} [label="{_dot_escape(label)}"];')
    out.append("}")
    return "\n".join(out) + "\n"


def _dot_escape(s):
    return s.replace("\\", "\\\\").replace('"', '\\"')


# ----------------------------------------------------------------------------------------------
# layout


def _layout(boxes, arrows):
    consumers = {b.id: [] for b in boxes}
    for src, dst, _, _ in arrows:
        consumers[src].append(dst)
    _assign_layers(boxes, consumers)
    rows, chains = _rows_with_waypoints(boxes, arrows)
    up, down = _neighbours(chains)
    _order(rows, up, down)
    _place(rows, up, down)
    width, height = _finish(rows)
    starts = _ports(chains, 0, 1)
    ends = _ports(chains, -1, -2)
    routed = []
    for k, ((src, dst, label, n), chain) in enumerate(zip(arrows, chains)):
        label = label if n == 1 else f"{label} ({n}x)"
        points = [(starts[k], chain[0].y + chain[0].h / 2)]
        points += [(p.x, p.y) for p in chain[1:-1]]
        points.append((ends[k], chain[-1].y - chain[-1].h / 2))
        routed.append((points, label, boxes[src], boxes[dst]))
    return Layout(boxes, routed, width, height, rows, down)


class Layout:
    """boxes: with x, y (centre), w, h set; arrows: (points, label, src box, dst box) with the
    points of a smooth path from src's bottom to dst's top; rows: the boxes and waypoints of
    each row, left to right; down: {box or waypoint: what its arrows lead to}."""

    def __init__(self, boxes, arrows, width, height, rows, down):
        self.boxes = boxes
        self.arrows = arrows
        self.width = width
        self.height = height
        self.rows = rows
        self.down = down

    @property
    def crossings(self):
        return _crossings(self.rows, self.down)


def _ports(chains, end, toward):
    """Where each arrow meets its box: arrows sharing a box side are spread along it, in the
    order of where they come from, so they do not all meet in one point."""
    groups = {}
    for k, chain in enumerate(chains):
        groups.setdefault(chain[end], []).append(k)
    x = {}
    for box, members in groups.items():
        members.sort(key=lambda k: chains[k][toward].x)
        step = min(14.0, box.w / (len(members) + 1))
        for i, k in enumerate(members):
            x[k] = box.x + (i - (len(members) - 1) / 2) * step
    return x


def _assign_layers(boxes, consumers):
    """Layer = length of the longest path to an output (outputs are layer 0): Kahn's order on
    the consumer edges, so a box is placed only after all its consumers."""
    waiting = {b.id: len(consumers[b.id]) for b in boxes}
    producers = {b.id: [] for b in boxes}
    for src, dsts in consumers.items():
        for dst in dsts:
            producers[dst].append(src)
    ready = deque(b.id for b in boxes if waiting[b.id] == 0)
    while ready:
        bid = ready.popleft()
        box = boxes[bid]
        box.layer = max((boxes[d].layer + 1 for d in consumers[bid]), default=0)
        for src in producers[bid]:
            waiting[src] -= 1
            if waiting[src] == 0:
                ready.append(src)


class _Waypoint:
    """An invisible point where an arrow crosses a row."""

    __slots__ = ("x", "y", "w", "h", "layer")

    def __init__(self, layer):
        self.layer = layer
        self.x = self.y = 0.0
        self.w = 4.0
        self.h = 0.0


def _rows_with_waypoints(boxes, arrows):
    """Rows from the top (deepest layer) down; each arrow as a chain src, waypoints..., dst."""
    depth = max(b.layer for b in boxes)
    rows = [[] for _ in range(depth + 1)]
    for b in boxes:
        rows[depth - b.layer].append(b)
    chains = []
    for src, dst, _, _ in arrows:
        a, b = boxes[src], boxes[dst]
        chain = [a]
        for layer in range(a.layer - 1, b.layer, -1):
            point = _Waypoint(layer)
            rows[depth - layer].append(point)
            chain.append(point)
        chain.append(b)
        chains.append(chain)
    return rows, chains


def _neighbours(chains):
    up, down = {}, {}
    for chain in chains:
        for a, b in zip(chain, chain[1:]):
            down.setdefault(a, []).append(b)
            up.setdefault(b, []).append(a)
    return up, down


def _order(rows, up, down, sweeps=6):
    """Barycenter heuristic, keeping the order with the fewest crossings."""
    best = [list(r) for r in rows]
    best_crossings = _crossings(rows, down)
    for sweep in range(sweeps):
        going_down = sweep % 2 == 0
        indices = range(1, len(rows)) if going_down else range(len(rows) - 2, -1, -1)
        for i in indices:
            ref = rows[i - 1] if going_down else rows[i + 1]
            pos = {v: k for k, v in enumerate(ref)}
            links = up if going_down else down
            now = {v: k for k, v in enumerate(rows[i])}
            rows[i].sort(key=lambda v: _barycenter(v, links, pos, now[v]))
        crossings = _crossings(rows, down)
        if crossings < best_crossings:
            best, best_crossings = [list(r) for r in rows], crossings
    rows[:] = best


def _barycenter(v, links, pos, fallback):
    near = [pos[n] for n in links.get(v, ()) if n in pos]
    return (sum(near) / len(near), fallback) if near else (float(fallback), fallback)


def _crossings(rows, down):
    total = 0
    for upper, lower in zip(rows, rows[1:]):
        pos = {v: k for k, v in enumerate(lower)}
        ends = [pos[b] for k, a in enumerate(upper) for b in sorted(
            (n for n in down.get(a, ()) if n in pos), key=pos.get)]
        # two arrows cross when their ends are in the opposite order of their starts
        total += sum(1 for i, e in enumerate(ends) for f in ends[i + 1:] if f < e)
    return total


def _place(rows, up, down, rounds=4):
    for row in rows:  # start packed and centred
        x = 0.0
        for v in row:
            v.x = x + v.w / 2
            x += v.w + _GAP_X
        shift = (x - _GAP_X) / 2
        for v in row:
            v.x -= shift
    for _ in range(rounds):
        for i in range(1, len(rows)):
            _settle(rows[i], up)
        for i in range(len(rows) - 2, -1, -1):
            _settle(rows[i], down)


def _settle(row, links):
    """Move each box towards the mean x of its neighbours, then resolve overlaps."""
    want = []
    for v in row:
        near = links.get(v, ())
        want.append(sum(n.x for n in near) / len(near) if near else v.x)
    left = list(want)
    for k in range(1, len(row)):
        left[k] = max(left[k], left[k - 1] + (row[k - 1].w + row[k].w) / 2 + _GAP_X)
    right = list(want)
    for k in range(len(row) - 2, -1, -1):
        right[k] = min(right[k], right[k + 1] - (row[k].w + row[k + 1].w) / 2 - _GAP_X)
    for v, a, b in zip(row, left, right):
        v.x = (a + b) / 2  # both satisfy the spacing constraints, so their mean does too


def _finish(rows):
    """Absolute coordinates: rows stacked from the top, everything shifted inside margins."""
    y = _MARGIN
    for row in rows:
        height = max((v.h for v in row), default=0.0)
        for v in row:
            v.y = y + height / 2
        y += height + _GAP_Y
    everything = [v for row in rows for v in row]
    left = min(v.x - v.w / 2 for v in everything)
    right = max(v.x + v.w / 2 for v in everything)
    for v in everything:
        v.x += _MARGIN - left
    return right - left + 2 * _MARGIN, y - _GAP_Y + _MARGIN


# ----------------------------------------------------------------------------------------------
# SVG


def _svg(layout):
    routed, width, height = layout.arrows, layout.width, layout.height
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
           'fill="#555"/></marker></defs>',
           f'<rect width="{width:.0f}" height="{height:.0f}" fill="white"/>']
    for points, label, _, _ in routed:
        out.append(f'<path d="{_curve(points)}" fill="none" stroke="#555" stroke-width="1.2" '
                   'marker-end="url(#arrow)"/>')
        if label:
            (x0, y0), (x1, y1) = points[-2], points[-1]
            out.append(f'<text x="{(x0 + x1) / 2 + 5:.1f}" y="{(y0 + y1) / 2 + 4:.1f}" '
                       f'font-size="10" fill="#666">{html.escape(label)}</text>')
    for b in layout.boxes:
        out.append(_svg_box(b))
    out.append("</svg>")
    return "\n".join(out)


def _curve(points):
    """A smooth path through the points: vertical tangents at every point."""
    (x, y), rest = points[0], points[1:]
    d = [f"M {x:.1f} {y:.1f}"]
    for nx, ny in rest:
        mid = (y + ny) / 2
        d.append(f"C {x:.1f} {mid:.1f} {nx:.1f} {mid:.1f} {nx:.1f} {ny:.1f}")
        x, y = nx, ny
    return " ".join(d)


def _svg_box(b):
    left, top = b.x - b.w / 2, b.y - b.h / 2
    stroke = _HOOK_STROKE if b.hooked else _STROKE[b.kind]
    width = 2 if b.hooked else 1
    tip = html.escape("\n".join([b.title] + b.lines))
    parts = [f'<g id="node{b.id}"><title>{tip}</title>',
             f'<rect x="{left:.1f}" y="{top:.1f}" width="{b.w:.1f}" height="{b.h:.1f}" rx="6" '
             f'fill="{_FILL[b.kind]}" stroke="{stroke}" stroke-width="{width}"/>',
             f'<text x="{b.x:.1f}" y="{top + _PAD + 11:.1f}" text-anchor="middle" '
             f'font-size="13" font-weight="bold">{html.escape(b.title)}</text>']
    for k, line in enumerate(b.lines):
        y = top + _PAD + 11 + _LINE * (k + 1)
        style = ' font-style="italic" fill="#555"' if line.startswith("module: ") else ""
        parts.append(f'<text x="{b.x:.1f}" y="{y:.1f}" text-anchor="middle" '
                     f'font-size="12"{style}>{html.escape(line)}</text>')
    parts.append("</g>")
    return "".join(parts)
