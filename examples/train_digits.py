"""Train a small CNN on the UCI handwritten digits (8x8 images, 10 classes) with ember.

    python examples/train_digits.py                  # what `make demo` runs
    python examples/train_digits.py --epochs 3       # a quick look

The script is plain PyTorch code: replace the line `import ember as torch` by `import torch`
and it runs unchanged under PyTorch (tests/test_examples.py checks both).
"""
import argparse
import gzip
import os
import time

import numpy as np

import ember as torch
from ember import nn
from ember.utils.data import DataLoader, TensorDataset

try:
    from tqdm import tqdm
except ImportError:  # the progress bar is optional
    def tqdm(iterable, **kwargs):
        return iterable

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "digits.csv.gz")


def load_digits(path=DATA, test_fraction=0.2, seed=0):
    """(train, test) TensorDatasets of (1, 8, 8) float images in [0, 1] and int64 labels."""
    with gzip.open(path, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    images = (table[:, :64] / 16.0).reshape(-1, 1, 8, 8)
    labels = table[:, 64].astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(labels))
    n_test = int(len(labels) * test_fraction)
    test, train = order[:n_test], order[n_test:]

    def dataset(idx):
        return TensorDataset(torch.from_numpy(images[idx].copy()),
                             torch.from_numpy(labels[idx].copy()))
    return dataset(train), dataset(test)


class DigitNet(nn.Module):
    """conv 3x3 (32) -> conv 3x3 (64) -> max-pool 2 -> linear 128 -> dropout -> linear 10."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(64 * 4 * 4, 128), nn.ReLU(), nn.Dropout(0.25),
            nn.Linear(128, 10),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


def evaluate(model, loader):
    """Accuracy (fraction correct) and mean loss over a loader."""
    model.eval()
    correct, total, loss_sum = 0, 0, 0.0
    with torch.no_grad():
        for images, labels in loader:
            logits = model(images)
            loss_sum += nn.functional.cross_entropy(logits, labels, reduction="sum").item()
            correct += (logits.argmax(1) == labels).sum().item()
            total += len(labels)
    return correct / total, loss_sum / total


def train(epochs=15, batch_size=64, lr=2e-3, seed=0, quiet=False):
    torch.manual_seed(seed)
    train_set, test_set = load_digits(seed=seed)
    generator = torch.Generator().manual_seed(seed)
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True,
                              generator=generator)
    test_loader = DataLoader(test_set, batch_size=256)
    model = DigitNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    history = {"train_loss": [], "test_loss": [], "test_accuracy": []}
    for epoch in range(1, epochs + 1):
        model.train()
        running, seen = 0.0, 0
        bar = tqdm(train_loader, desc=f"epoch {epoch:2d}/{epochs}", leave=False,
                   disable=quiet, unit="batch")
        for images, labels in bar:
            loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item() * len(labels)
            seen += len(labels)
            if hasattr(bar, "set_postfix"):
                bar.set_postfix(loss=f"{running / seen:.4f}")
        scheduler.step()
        accuracy, test_loss = evaluate(model, test_loader)
        history["train_loss"].append(running / seen)
        history["test_loss"].append(test_loss)
        history["test_accuracy"].append(accuracy)
        if not quiet:
            print(f"epoch {epoch:2d}  train loss {running / seen:.4f}  test loss "
                  f"{test_loss:.4f}  test accuracy {accuracy:.2%}")
    return model, test_loader, history


def save_plot(history, path):
    """Loss and accuracy curves as a PNG (needs matplotlib; skipped with a note without it)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return None
    epochs = range(1, len(history["train_loss"]) + 1)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(epochs, history["train_loss"], label="train")
    left.plot(epochs, history["test_loss"], label="test")
    left.set(xlabel="epoch", ylabel="cross-entropy", title="Loss")
    left.legend()
    right.plot(epochs, [100 * a for a in history["test_accuracy"]], color="tab:green")
    right.set(xlabel="epoch", ylabel="%", title="Test accuracy")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--out", default="runs/digits", help="folder for checkpoint and plot")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    start = time.perf_counter()
    model, test_loader, history = train(epochs=args.epochs)
    seconds = time.perf_counter() - start
    accuracy, _ = evaluate(model, test_loader)

    checkpoint = os.path.join(args.out, "digits_cnn.pt")
    torch.save(model.state_dict(), checkpoint)
    reloaded = DigitNet()
    reloaded.load_state_dict(torch.load(checkpoint, weights_only=True))
    reloaded_accuracy, _ = evaluate(reloaded, test_loader)
    plot = save_plot(history, os.path.join(args.out, "curves.png"))

    print()
    print(f"trained {args.epochs} epochs in {seconds:.1f} s")
    print(f"test accuracy      {accuracy:.2%}  ({len(test_loader.dataset)} held-out images)")
    print(f"checkpoint         {checkpoint} ({os.path.getsize(checkpoint) / 1024:.0f} KiB), "
          f"reloaded accuracy {reloaded_accuracy:.2%}")
    if plot:
        print(f"curves             {plot}")
    if reloaded_accuracy != accuracy:
        raise SystemExit("the reloaded checkpoint does not reproduce the accuracy")


if __name__ == "__main__":
    main()
