"""A two-layer network trained by hand-written backpropagation on raw tensors, in the style of
the early "learning PyTorch with examples" tutorials: legacy typed tensors as dtypes and
constructors (torch.FloatTensor, torch.LongTensor), `.type(...)` conversions, and results
written into preallocated tensors with `out=`."""
import torch
from _report import report


def main():
    torch.manual_seed(0)
    dtype = torch.FloatTensor
    N, D_in, H, D_out = 64, 100, 50, 10
    x = torch.randn(N, D_in).type(dtype)
    y = torch.randn(N, D_out).type(dtype)
    w1 = torch.randn(D_in, H).type(dtype)
    w2 = torch.randn(H, D_out).type(dtype)
    h = torch.FloatTensor(N, H)
    y_pred = torch.FloatTensor(N, D_out)
    grad_w1 = torch.zeros(D_in, H).type(dtype)
    learning_rate = 1e-6
    losses = []
    for t in range(60):
        torch.mm(x, w1, out=h)
        h_relu = h.clamp(min=0)
        torch.mm(h_relu, w2, out=y_pred)
        loss = (y_pred - y).pow(2).sum()
        if t % 6 == 0:
            losses.append(loss.item())
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h_relu = grad_y_pred.mm(w2.t())
        grad_h = grad_h_relu.clone()
        grad_h[h < 0] = 0
        torch.mm(x.t(), grad_h, out=grad_w1)
        w1 -= learning_rate * grad_w1
        w2 -= learning_rate * grad_w2
    labels = torch.LongTensor([0, 2, 1, 3])
    picked = torch.zeros(4, D_out)
    torch.index_select(y_pred, 0, labels, out=picked)
    as_double = w1.type(torch.DoubleTensor)
    report([w1, w2], losses, labels_dtype=str(labels.dtype).split(".")[-1],
           labels_are_long=isinstance(labels, torch.LongTensor),
           double_type=as_double.type().split(".")[-1], is_tensor=torch.is_tensor(as_double),
           picked_sum_finite=bool(torch.isfinite(picked).all()))


if __name__ == "__main__":
    main()
