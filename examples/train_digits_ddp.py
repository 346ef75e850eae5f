"""Train train_digits.py's CNN with DistributedDataParallel on several ranks.

    python -m ember.distributed.run --nproc-per-node 2 examples/train_digits_ddp.py
    mpiexec -n 2 python examples/train_digits_ddp.py --epochs 3     # plain MPI works too

Each rank takes its DistributedSampler share of every epoch in batches of 64 / world size,
so that together the ranks make the steps train_digits.py makes with batch 64; DDP averages
the gradients, so every rank holds the same model. Rank 0 evaluates and saves the
checkpoint. This is plain PyTorch code: with `import torch` for `import ember as torch`
(and torch's module names for ember's) it runs under torchrun unchanged.
"""
import argparse
import os
import time

from train_digits import DigitNet, evaluate, load_digits

import ember as torch
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel
from ember.utils.data import DataLoader, DistributedSampler


def train(epochs, batch_size, lr, rank, world_size):
    torch.manual_seed(0)
    train_set, test_set = load_digits(seed=0)
    sampler = DistributedSampler(train_set, shuffle=True, seed=0)
    loader = DataLoader(train_set, batch_size=batch_size // world_size, sampler=sampler)
    test_loader = DataLoader(test_set, batch_size=256)
    model = DistributedDataParallel(DigitNet())
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    for epoch in range(1, epochs + 1):
        sampler.set_epoch(epoch)  # a new shuffle each epoch, the same on every rank
        model.train()
        totals = torch.zeros(2)   # summed loss and number of images, on this rank
        for images, labels in loader:
            loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()       # the gradients are averaged over the ranks here
            optimizer.step()
            totals += torch.tensor([loss.item() * len(labels), len(labels)])
        dist.all_reduce(totals)   # the epoch's loss over every rank's images
        scheduler.step()
        if rank == 0:
            accuracy, test_loss = evaluate(model.module, test_loader)
            print(f"epoch {epoch:2d}  train loss {totals[0] / totals[1]:.4f}  test loss "
                  f"{test_loss:.4f}  test accuracy {accuracy:.2%}", flush=True)
    return model.module, test_loader


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=64, help="over all ranks together")
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--out", default="runs/digits_ddp", help="folder for the checkpoint")
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    start = time.perf_counter()
    model, test_loader = train(args.epochs, args.batch_size, args.lr, rank, world_size)
    if rank == 0:
        accuracy, _ = evaluate(model, test_loader)
        os.makedirs(args.out, exist_ok=True)
        checkpoint = os.path.join(args.out, "digits_cnn.pt")
        torch.save(model.state_dict(), checkpoint)
        print(f"\ntrained {args.epochs} epochs on {world_size} ranks in "
              f"{time.perf_counter() - start:.1f} s")
        print(f"test accuracy      {accuracy:.2%}  ({len(test_loader.dataset)} held-out images)")
        print(f"checkpoint         {checkpoint}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
