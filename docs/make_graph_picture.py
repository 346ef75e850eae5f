"""Make docs/images/graph.png, the autograd graph picture the README shows.

    python docs/make_graph_picture.py [--matplotlib]

Draws the graph of a small model's loss with `ember.autograd.graph.draw` (module names from
`track_modules`, leaves named after the parameters). The PNG is a headless Chromium screenshot
of the SVG when Chromium is installed; otherwise (or with --matplotlib) matplotlib draws the
same layout -- boxes, arrows and text at the positions ember computed.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import ember  # noqa: E402
from ember.autograd.graph import draw, track_modules  # noqa: E402

OUT = os.path.join(HERE, "images", "graph.png")
SCALE = 2  # pixels per layout unit in the PNG


class Net(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = ember.nn.Linear(4, 8)
        self.fc2 = ember.nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(self.fc1(x).tanh())


def make_drawing():
    ember.manual_seed(0)
    net = Net()
    x = ember.randn(5, 4)
    target = ember.tensor([0, 2, 1, 0, 1])
    with track_modules(net):
        loss = ember.nn.functional.cross_entropy(net(x), target)
    return draw(loss, params=dict(net.named_parameters()))


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"]


def with_chromium(drawing, path):
    browser = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                    if shutil.which(n)), None)
    if browser is None:
        return False
    layout = drawing.layout
    width, height = int(layout.width) + 1, int(layout.height) + 1
    with tempfile.TemporaryDirectory() as tmp:
        flags = CHROMIUM_FLAGS + [f"--user-data-dir={os.path.join(tmp, 'profile')}"]
        # New headless Chromium draws its (invisible) window frame inside --window-size: the
        # page gets fewer rows than asked for. A throwaway page measures how many.
        probe = os.path.join(tmp, "probe.html")
        with open(probe, "w", encoding="utf-8") as f:
            f.write("<body><script>document.body.textContent = 'rows:' + innerHeight</script>")
        result = subprocess.run([browser, *flags, f"--window-size={width},{height}",
                                 "--dump-dom", "file://" + probe], capture_output=True,
                                timeout=120)
        text = result.stdout.decode()
        if result.returncode != 0 or "rows:" not in text:
            return False
        frame = height - int(text.split("rows:")[1].split("<")[0])
        page = os.path.join(tmp, "graph.html")
        with open(page, "w", encoding="utf-8") as f:
            f.write("<!DOCTYPE html><html><body style=\"margin:0\">" + drawing.svg +
                    "</body></html>")
        result = subprocess.run([browser, *flags, f"--force-device-scale-factor={SCALE}",
                                 f"--window-size={width},{height + frame}",
                                 f"--screenshot={os.path.abspath(path)}", "file://" + page],
                                capture_output=True, timeout=120)
    if result.returncode != 0 or not os.path.exists(path):
        return False
    return keep_top_rows(path, height * SCALE)


def keep_top_rows(path, rows):
    """Cut a PNG to its first `rows` rows. Each row's filter only looks at the rows above it,
    so the kept rows decode as before: no pixel needs decoding (8-bit RGB/RGBA only)."""
    with open(path, "rb") as f:
        data = f.read()
    chunks = []
    pos = 8
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunks.append((kind, data[pos + 8:pos + 8 + length]))
        pos += 12 + length
    header = chunks[0][1]
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
    if depth != 8 or color not in (2, 6) or interlace or rows >= height:
        return True  # nothing to cut (or a format this does not handle: keep it whole)
    pixels = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    row = 1 + width * (3 if color == 2 else 4)  # filter byte + pixels
    header = struct.pack(">IIBBBBB", width, rows, depth, color, 0, 0, 0)
    out = [data[:8], _chunk(b"IHDR", header), _chunk(b"IDAT", zlib.compress(pixels[:rows * row],
                                                                        9)),
           _chunk(b"IEND", b"")]
    with open(path, "wb") as f:
        f.write(b"".join(out))
    return True


def _chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def with_matplotlib(drawing, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch, PathPatch, Polygon
    from matplotlib.path import Path

    from ember.autograd._graph_view import _FILL, _HOOK_STROKE, _LINE, _PAD, _STROKE

    layout = drawing.layout
    fig = plt.figure(figsize=(layout.width / 100, layout.height / 100), dpi=100 * SCALE)
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, layout.width)
    ax.set_ylim(layout.height, 0)  # y grows downwards, as in the SVG
    ax.axis("off")
    points_per_unit = 72 / 100  # one layout unit is one CSS pixel: 1/100 inch here
    for points, label, _, _ in layout.arrows:
        verts, codes = [points[0]], [Path.MOVETO]
        for (x0, y0), (x1, y1) in zip(points, points[1:]):
            mid = (y0 + y1) / 2
            verts += [(x0, mid), (x1, mid), (x1, y1)]
            codes += [Path.CURVE4] * 3
        ax.add_patch(PathPatch(Path(verts, codes), fill=False, edgecolor="#555", lw=1.2 *
                               points_per_unit))
        x, y = points[-1]
        ax.add_patch(Polygon([(x, y), (x - 3.5, y - 7), (x + 3.5, y - 7)], color="#555"))
        if label:
            (x0, y0), (x1, y1) = points[-2], points[-1]
            ax.text((x0 + x1) / 2 + 5, (y0 + y1) / 2 + 4, label, fontsize=10 * points_per_unit,
                    color="#666", family="monospace")
    for b in layout.boxes:
        ax.add_patch(FancyBboxPatch((b.x - b.w / 2, b.y - b.h / 2), b.w, b.h,
                                    boxstyle="round,pad=0,rounding_size=6",
                                    facecolor=_FILL[b.kind],
                                    edgecolor=_HOOK_STROKE if b.hooked else _STROKE[b.kind],
                                    lw=points_per_unit))
        top = b.y - b.h / 2 + _PAD + 11
        ax.text(b.x, top, b.title, ha="center", fontsize=13 * points_per_unit,
                weight="bold", family="monospace")
        for k, line in enumerate(b.lines):
            ax.text(b.x, top + _LINE * (k + 1), line, ha="center",
                    fontsize=12 * points_per_unit, family="monospace",
                    style="italic" if line.startswith("module: ") else "normal",
                    color="#555" if line.startswith("module: ") else "black")
    fig.savefig(path, dpi=100 * SCALE, facecolor="white")
    plt.close(fig)
    return True


def main(argv):
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    drawing = make_drawing()
    if "--matplotlib" in argv or not with_chromium(drawing, OUT):
        with_matplotlib(drawing, OUT)
        print(f"wrote {OUT} (matplotlib)")
    else:
        print(f"wrote {OUT} (chromium)")


if __name__ == "__main__":
    main(sys.argv[1:])
