"""A variational autoencoder on the UCI handwritten digits (8x8, binarised), with ember.

    python examples/vae.py                  # 30 epochs
    python examples/vae.py --epochs 3       # a quick look

The encoder maps an image to q(z | x) = Normal(mu(x), sigma(x)) over 8 latent dims; the
decoder maps z to Bernoulli pixel probabilities. Training maximises the evidence lower bound

    ELBO(x) = E_q[log p(x | z)] - KL(q(z | x) || N(0, I)),

with the expectation estimated by one reparameterised draw z = q.rsample() (so gradients flow
through the sample into the encoder) and the KL term in closed form (kl_divergence).

The script is plain PyTorch code: replace the line `import ember as torch` by `import torch`
(and the `from ember ...` lines likewise) and it runs unchanged under PyTorch
(tests/test_examples.py checks both).
"""
import argparse
import gzip
import os

import numpy as np

import ember as torch
from ember import nn
from ember.distributions import Bernoulli, Independent, Normal, kl_divergence
from ember.utils.data import DataLoader, TensorDataset

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "digits.csv.gz")
LATENT = 8


def load_digits(path=DATA, test_fraction=0.2, seed=0):
    """(train, test) TensorDatasets of flat binary images (64 pixels: ink above half)."""
    with gzip.open(path, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    pixels = (table[:, :64] > 8).astype(np.float32)
    order = np.random.default_rng(seed).permutation(len(pixels))
    n_test = int(len(pixels) * test_fraction)
    return (TensorDataset(torch.from_numpy(pixels[order[n_test:]].copy())),
            TensorDataset(torch.from_numpy(pixels[order[:n_test]].copy())))


class VAE(nn.Module):
    """64 -> 128 -> (mu, log sigma) of 8 latents; 8 -> 128 -> 64 pixel logits."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 2 * LATENT))
        self.decoder = nn.Sequential(nn.Linear(LATENT, 128), nn.ReLU(), nn.Linear(128, 64))

    def posterior(self, x):
        mu, log_sigma = self.encoder(x).chunk(2, dim=-1)
        return Independent(Normal(mu, log_sigma.exp()), 1)

    def likelihood(self, z):
        return Independent(Bernoulli(logits=self.decoder(z)), 1)

    def elbo(self, x):
        """One-sample ELBO estimate per image (in nats)."""
        q = self.posterior(x)
        z = q.rsample()
        prior = Independent(Normal(torch.zeros_like(z), torch.ones_like(z)), 1)
        return self.likelihood(z).log_prob(x) - kl_divergence(q, prior)


def evaluate(model, loader):
    """Mean ELBO per image."""
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for (x,) in loader:
            total += model.elbo(x).sum().item()
            count += len(x)
    return total / count


def train(epochs=30, batch_size=64, lr=3e-3, seed=0, quiet=False, limit=None):
    """Train a VAE; `limit` keeps only the first batches of each epoch (for quick runs)."""
    torch.manual_seed(seed)
    train_set, test_set = load_digits(seed=seed)
    loader = DataLoader(train_set, batch_size=batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(seed))
    test_loader = DataLoader(test_set, batch_size=256)
    model = VAE()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    history = {"test_elbo": [evaluate(model, test_loader)]}
    for epoch in range(1, epochs + 1):
        model.train()
        for step, (x,) in enumerate(loader):
            if limit is not None and step >= limit:
                break
            loss = -model.elbo(x).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        history["test_elbo"].append(evaluate(model, test_loader))
        if not quiet:
            print(f"epoch {epoch:2d}  test ELBO {history['test_elbo'][-1]:8.3f} nats per image")
    return model, history


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    args = parser.parse_args()
    model, history = train(epochs=args.epochs)
    with torch.no_grad():
        z = torch.randn(4, LATENT)
        samples = model.likelihood(z).base_dist.probs > 0.5
    print(f"test ELBO: {history['test_elbo'][0]:.2f} untrained, {history['test_elbo'][-1]:.2f} "
          "trained (nats per 64-pixel image)")
    for row in range(8):
        print("   ".join("".join("#" if p else "." for p in s[row * 8:(row + 1) * 8])
                         for s in samples.tolist()))


if __name__ == "__main__":
    main()
