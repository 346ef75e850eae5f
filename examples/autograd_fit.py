"""Fit a small two-layer network to a noisy sine with ember's autograd alone (no nn, no optim).

    python examples/autograd_fit.py

Swap the import for `import torch` and the script runs unchanged under PyTorch.
"""
import math

import ember as torch

torch.manual_seed(0)
x = torch.linspace(-math.pi, math.pi, 256).reshape(-1, 1)
y = torch.sin(x) if hasattr(torch, "sin") else (x - x ** 3 / 6)
y = y + 0.05 * torch.randn(256, 1)

hidden = 32
w1 = (torch.randn(1, hidden) * 1.0).requires_grad_()
b1 = torch.zeros(hidden, requires_grad=True)
w2 = (torch.randn(hidden, 1) / math.sqrt(hidden)).requires_grad_()
b2 = torch.zeros(1, requires_grad=True)
params = [w1, b1, w2, b2]

lr = 0.05
for step in range(1, 2001):
    prediction = torch.tanh(x @ w1 + b1) @ w2 + b2
    loss = ((prediction - y) ** 2).mean()
    for p in params:
        p.grad = None
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
    if step == 1 or step % 250 == 0:
        print(f"step {step:5d}   loss {loss.item():.5f}")
print("done: the loss fell from the first line to the last")
