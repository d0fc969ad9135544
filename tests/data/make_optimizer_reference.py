"""Writes tests/data/optimizer_reference.pt: PyTorch's own optimizers over 100 steps, for
tests/unit/test_flat_adam.cpp and test_flat_sgd.cpp. Three parameters, a gradient for each at
every step, an lr that changes from step to step; the final parameters and states of
torch.optim.Adam (lr only; and with weight_decay 0.1, an L2 term), torch.optim.AdamW
(weight_decay 0.1) and torch.optim.SGD (momentum 0.9; and with weight_decay 0.1). Run with
Debian's python3 (torch 1.13):
    /usr/bin/python3 tests/data/make_optimizer_reference.py
"""
import os
import torch

torch.manual_seed(2024)
shapes = [(5, 7), (7,), (3, 4, 2)]
initial = [torch.randn(s) for s in shapes]
grads = [[torch.randn(s) * (1 + step % 5) for s in shapes] for step in range(100)]
lrs = [1e-2 * (1 + step % 3) / 2 for step in range(100)]


def run(make):
    params = [p.clone().requires_grad_(True) for p in initial]
    opt = make(params)
    for step in range(100):
        for p, g in zip(params, grads[step]):
            p.grad = g.clone()
        for group in opt.param_groups:
            group["lr"] = lrs[step]
        opt.step()
    state = [opt.state[p] for p in params]
    return {"params": [p.detach() for p in params]} | {k: [s[k] for s in state] for k in state[0] if k != "step"}


reference = {
    "initial": initial,
    "grads": grads,
    "lrs": torch.tensor(lrs, dtype=torch.float64),
    "adam": run(lambda ps: torch.optim.Adam(ps, lr=lrs[0], foreach=False)),
    "adamw": run(lambda ps: torch.optim.AdamW(ps, lr=lrs[0], weight_decay=0.1, foreach=False)),
    "adam_l2": run(lambda ps: torch.optim.Adam(ps, lr=lrs[0], weight_decay=0.1, foreach=False)),
    "sgd": run(lambda ps: torch.optim.SGD(ps, lr=lrs[0], momentum=0.9, foreach=False)),
    "sgd_l2": run(lambda ps: torch.optim.SGD(ps, lr=lrs[0], momentum=0.9, weight_decay=0.1, foreach=False)),
    "torch_version": str(torch.__version__),
}
torch.save(reference, os.path.join(os.path.dirname(os.path.abspath(__file__)), "optimizer_reference.pt"))
print("wrote optimizer_reference.pt with torch", torch.__version__)
