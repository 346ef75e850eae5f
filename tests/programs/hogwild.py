"""Hogwild training: several processes update one shared model at the same time, without
locks, in the style of the classic MNIST-Hogwild example -- model.share_memory(), one
torch.multiprocessing.Process per worker, each with its own optimizer and DataLoader, then
the parent evaluates the weights they trained together. Synthetic data: a fixed random
linear rule labels 2-d points of a Gaussian blob."""
import argparse

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from _report import report
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def make_dataset(n, seed):
    g = torch.Generator().manual_seed(seed)
    rule = torch.randn(8, 4, generator=torch.Generator().manual_seed(123))
    x = torch.randn(n, 8, generator=g)
    return TensorDataset(x, (x @ rule).argmax(dim=1))


def train(rank, args, model, dataset, queue):
    torch.manual_seed(args.seed + rank)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True)
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    model.train()
    for epoch in range(args.epochs):
        for data, target in loader:
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
    queue.put((rank, loss.item(), model.fc1.weight.is_shared()))


def test(model, dataset):
    model.eval()
    with torch.no_grad():
        x, y = dataset.tensors
        output = model(x)
        return F.nll_loss(output, y).item(), (output.argmax(1) == y).float().mean().item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-processes", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--momentum", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    mp.set_start_method("spawn", force=True)
    model = Net()
    model.share_memory()
    train_set, test_set = make_dataset(512, 1), make_dataset(256, 2)
    before, _ = test(model, test_set)
    queue = mp.Queue()
    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=train, args=(rank, args, model, train_set, queue))
        p.start()
        processes.append(p)
    results = sorted(queue.get() for _ in processes)
    for p in processes:
        p.join()
    after, accuracy = test(model, test_set)
    print(f"test loss {before:.4f} -> {after:.4f}, accuracy {accuracy:.3f}")
    report(model, [before, after], workers_saw_shared=all(r[2] for r in results),
           exit_codes=[p.exitcode for p in processes], accuracy_above_half=accuracy > 0.5)


if __name__ == "__main__":
    main()
