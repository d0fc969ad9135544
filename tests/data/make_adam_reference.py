"""Writes tests/data/adam_reference.pt: PyTorch's own Adam and AdamW over 100 steps, for
tests/unit/test_flat_adam.cpp. Three parameters, a gradient for each at every step, an lr that
changes from step to step; the final parameters and moments of torch.optim.Adam (lr only) and
torch.optim.AdamW (weight_decay 0.1). Run with Debian's python3 (torch 1.13):
    python3 tests/data/make_adam_reference.py
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
    return {"params": [p.detach() for p in params], "exp_avg": [s["exp_avg"] for s in state],
            "exp_avg_sq": [s["exp_avg_sq"] for s in state]}


reference = {
    "initial": initial,
    "grads": grads,
    "lrs": torch.tensor(lrs, dtype=torch.float64),
    "adam": run(lambda ps: torch.optim.Adam(ps, lr=lrs[0], foreach=False)),
    "adamw": run(lambda ps: torch.optim.AdamW(ps, lr=lrs[0], weight_decay=0.1, foreach=False)),
    "torch_version": str(torch.__version__),
}
torch.save(reference, os.path.join(os.path.dirname(os.path.abspath(__file__)), "adam_reference.pt"))
print("wrote adam_reference.pt with torch", torch.__version__)
