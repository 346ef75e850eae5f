"""A variational autoencoder trained with Adam on the reparameterised ELBO (binary cross
entropy + KL divergence), in the style of the classic VAE example, on synthetic binary
"images" made of a few random strokes."""
import argparse

import torch
import torch.utils.data
from _report import report
from torch import nn, optim
from torch.nn import functional as F


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()
        self.fc1 = nn.Linear(196, 64)
        self.fc21 = nn.Linear(64, 8)
        self.fc22 = nn.Linear(64, 8)
        self.fc3 = nn.Linear(8, 64)
        self.fc4 = nn.Linear(64, 196)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 196))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 196), reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


def strokes(n, generator):
    images = torch.zeros(n, 1, 14, 14)
    rows = torch.randint(0, 14, (n, 2), generator=generator)
    cols = torch.randint(0, 14, (n, 2), generator=generator)
    for i in range(n):
        images[i, 0, rows[i, 0], :] = 1.0
        images[i, 0, :, cols[i, 1]] = 1.0
    return images


def main():
    parser = argparse.ArgumentParser(description="VAE example")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = strokes(512, torch.Generator().manual_seed(0))
    train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data),
                                               batch_size=args.batch_size, shuffle=True)
    model = VAE().to(device)
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        train_loss = 0
        for batch_idx, (data,) in enumerate(train_loader):
            data = data.to(device)
            optimizer.zero_grad()
            recon_batch, mu, logvar = model(data)
            loss = loss_function(recon_batch, data, mu, logvar)
            loss.backward()
            train_loss += loss.item()
            optimizer.step()
            losses.append(loss.item() / len(data))
        print(f"====> Epoch: {epoch} Average loss: {train_loss / len(train_loader.dataset):.4f}")
    with torch.no_grad():
        sample = torch.randn(16, 8).to(device)
        sample = model.decode(sample).cpu()
    report(model, losses, sample_shape=list(sample.view(16, 1, 14, 14).shape))


if __name__ == "__main__":
    main()
