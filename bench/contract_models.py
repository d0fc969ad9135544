#!/usr/bin/python3
"""The demo's VAE (vae_mlp: hidden [512, 256], latent 16, beta 1e-3 on rows of 1024) as TorchScript
modules in the two calling conventions, for bench/model_contract.sh:

    bench/contract_models.py OUT_DIR     -> OUT_DIR/tuple.pt, OUT_DIR/dict.pt

tuple.pt: forward(x) -> (recon, mu, logvar); clustertrain computes the VAE loss.
dict.pt:  forward(batch) -> {"loss", "mse", "kl", "recon", "mu", "logvar"}; the module computes
          the same loss itself (the "any model" contract).
"""
import sys
from typing import Dict

import torch
from torch import nn

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/tests/e2e")
from reference_models import VaeMlp  # noqa: E402


class DictVae(nn.Module):
    def __init__(self, length: int, beta: float):
        super().__init__()
        self.vae = VaeMlp(length, [512, 256], 16)
        self.beta = beta

    def forward(self, batch: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        recon, mu, logvar = self.vae(batch["input"])
        mse = (recon - batch["target"]).pow(2).mean(dim=1)  # [B]
        kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(dim=1)  # [B]
        return {"loss": mse.mean() + self.beta * kl.mean(), "mse": mse.mean(), "kl": kl.mean(),
                "recon": recon, "mu": mu, "logvar": logvar}


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    torch.jit.script(VaeMlp(1024, [512, 256], 16)).save(f"{out}/tuple.pt")
    torch.manual_seed(0)
    torch.jit.script(DictVae(1024, 1e-3)).save(f"{out}/dict.pt")


if __name__ == "__main__":
    main()
