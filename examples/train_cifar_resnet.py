"""Train a ResNet-18 on CIFAR-shaped images (32 x 32 RGB, 10 classes) with ember.vision.

    python examples/train_cifar_resnet.py --quick        # a few steps, to see it run
    python examples/train_cifar_resnet.py --steps 200    # longer
    python examples/train_cifar_resnet.py --cifar DIR    # the real CIFAR-10 in DIR

The images come from `datasets.FakeData` (random pictures with random labels: the loss
falls as the network memorises them), or from `datasets.CIFAR10` with --cifar. The script is
plain PyTorch + torchvision code: replace the three `ember` import lines by `import torch`,
`from torchvision import datasets, models, transforms` and `from torch.utils.data import
DataLoader`, and it runs unchanged (tests/test_vision_example.py checks both).
"""
import argparse
import time

import ember as torch
from ember.utils.data import DataLoader
from ember.vision import datasets, models, transforms

CIFAR_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR_STD = (0.2470, 0.2435, 0.2616)


def make_loaders(batch_size, train_size, test_size, cifar_root=None):
    """Training (augmented) and test loaders over FakeData, or over CIFAR-10 if a root is
    given."""
    train_tf = transforms.Compose([
        transforms.RandomCrop(32, padding=4),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(CIFAR_MEAN, CIFAR_STD),
    ])
    test_tf = transforms.Compose([transforms.ToTensor(),
                                  transforms.Normalize(CIFAR_MEAN, CIFAR_STD)])
    if cifar_root:
        train_set = datasets.CIFAR10(cifar_root, train=True, transform=train_tf)
        test_set = datasets.CIFAR10(cifar_root, train=False, transform=test_tf)
    else:
        train_set = datasets.FakeData(train_size, (3, 32, 32), 10, transform=train_tf)
        test_set = datasets.FakeData(test_size, (3, 32, 32), 10, transform=test_tf,
                                     random_offset=train_size)
    generator = torch.Generator().manual_seed(0)
    return (DataLoader(train_set, batch_size=batch_size, shuffle=True, generator=generator),
            DataLoader(test_set, batch_size=batch_size))


def evaluate(model, loader):
    """Accuracy (fraction correct) over a loader."""
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for images, labels in loader:
            correct += (model(images).argmax(1) == labels).sum().item()
            total += len(labels)
    return correct / total


def train(steps=100, batch_size=32, lr=0.02, train_size=256, test_size=64, cifar_root=None,
          quiet=False):
    """SGD with momentum on ResNet-18 for `steps` batches; returns (model, losses,
    test accuracy)."""
    torch.manual_seed(0)
    train_loader, test_loader = make_loaders(batch_size, train_size, test_size, cifar_root)
    model = models.resnet18(num_classes=10)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps)
    criterion = torch.nn.CrossEntropyLoss()
    losses, step = [], 0
    while step < steps:
        model.train()
        for images, labels in train_loader:
            loss = criterion(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
            step += 1
            if not quiet and (step % 10 == 0 or step == steps):
                print(f"step {step:4d}/{steps}  loss {loss.item():.4f}")
            if step == steps:
                break
    return model, losses, evaluate(model, test_loader)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.02)
    parser.add_argument("--cifar", default=None, help="a folder holding cifar-10-batches-py")
    parser.add_argument("--quick", action="store_true", help="3 steps of 8 images")
    args = parser.parse_args()
    steps, batch = (3, 8) if args.quick else (args.steps, args.batch_size)
    start = time.perf_counter()
    _, losses, accuracy = train(steps=steps, batch_size=batch, lr=args.lr,
                                train_size=max(4 * batch, 32), test_size=2 * batch,
                                cifar_root=args.cifar)
    seconds = time.perf_counter() - start
    print(f"trained {steps} steps in {seconds:.1f} s: loss {losses[0]:.4f} -> {losses[-1]:.4f}"
          f", test accuracy {accuracy:.2%}")


if __name__ == "__main__":
    main()
