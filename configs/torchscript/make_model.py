#!/usr/bin/python3
"""Bring your own model: a VAE written in PyTorch, scripted with torch.jit.script and saved for
`clustertrain train` (model.kind: torchscript, model.path: the file written here).

    /usr/bin/python3 configs/torchscript/make_model.py --length 1024 --out runs/my_vae.pt

clustertrain calls forward(x) with a batch of input rows x: [B, L] and trains the module's
parameters: broadcast from rank 0, gradients all-reduced in buckets, Adam. forward returns
(recon, mu, logvar); clustertrain's loss is MSE(recon, target) + model.beta * KL. In training
mode the module samples its latent itself (torch.randn_like: clustertrain seeds the generator per
step and rank); in eval mode (validation, `clustertrain predict`) it returns z = mu.
After training, output.dir holds model.pt (its state_dict: load it into this class) and model.ts
(the trained module: torch.jit.load).
"""
import argparse

import torch
from torch import nn


class ResidualVae(nn.Module):
    """An MLP VAE with LayerNorm and residual GELU blocks: not one of clustertrain's built-ins."""

    def __init__(self, length: int, width: int = 256, blocks: int = 2, latent: int = 16):
        super().__init__()
        self.embed = nn.Linear(length, width)
        self.blocks = nn.ModuleList(
            [nn.Sequential(nn.LayerNorm(width), nn.Linear(width, width), nn.GELU()) for _ in range(blocks)])
        self.to_latent = nn.Linear(width, 2 * latent)
        self.decoder = nn.Sequential(nn.Linear(latent, width), nn.GELU(), nn.Linear(width, length))

    def forward(self, x: torch.Tensor):
        h = self.embed(x)
        for block in self.blocks:
            h = h + block(h)
        mu, logvar = self.to_latent(h).chunk(2, dim=-1)
        if self.training:
            z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        else:
            z = mu
        return self.decoder(z), mu, logvar


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--length", type=int, required=True, help="values per input row (L)")
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--blocks", type=int, default=2)
    parser.add_argument("--latent", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0, help="initial weights")
    parser.add_argument("--out", required=True, help="TorchScript file to write")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    model = ResidualVae(args.length, args.width, args.blocks, args.latent)
    torch.jit.script(model).save(args.out)
    print(f"wrote {args.out}: {sum(p.numel() for p in model.parameters())} parameters")


if __name__ == "__main__":
    main()
