#!/usr/bin/python3
"""Parameter estimation: a network that maps noisy strain to a Gaussian posterior over the
parameters that made the chirp (neural posterior estimation in its simplest form, as DINGO and
VItamin do it with richer posteriors), scripted with torch.jit.script for `clustertrain train`.

    /usr/bin/python3 configs/pe/make_model.py --data data/pe_train.h5 --out runs/pe_model.pt

clustertrain calls forward(batch) with a dict of the batch fields that data.fields names
(configs/pe/pe.yaml: strain <- dataset 'input', params <- dataset 'params'), [B, ...] each. The
module returns a dict: 'loss' (the Gaussian negative log-likelihood of the true parameters, per
row summed over parameters, the batch mean), one metric per parameter ('mae_<name>': the mean
absolute error of the posterior mean, in the parameter's units), and two outputs that
`clustertrain predict` writes: 'mean' and 'log_sigma' [B, P], the posterior's per-parameter mean
and log standard deviation. Predict on rows without 'params' returns the outputs alone.

The parameters are standardised with their mean and standard deviation over --data's rows (kept
in the module as buffers), so the loss of the prior -- a Gaussian fitted to those rows -- is
P * (1 + log 2 pi) / 2 = 1.419 P nats: a model that learns ends well below it.
"""
import argparse
import math
from typing import Dict, List

import h5py
import torch
from torch import nn


class GaussianPosterior(nn.Module):
    def __init__(self, length: int, names: List[str], mean: torch.Tensor, std: torch.Tensor, width: int = 128,
                 depth: int = 3):
        super().__init__()
        self.names = names
        self.register_buffer("param_mean", mean)
        self.register_buffer("param_std", std)
        layers: List[nn.Module] = [nn.Linear(length, width), nn.GELU()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.GELU()]
        layers.append(nn.Linear(width, 2 * len(names)))
        self.net = nn.Sequential(*layers)

    def forward(self, batch: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        # strain: [B, L]; params: [B, P] in physical units
        out = self.net(batch["strain"])
        z_mean, z_log_sigma = out.chunk(2, dim=-1)
        z_log_sigma = z_log_sigma.clamp(-8.0, 4.0)  # keeps exp() finite early in training
        result = {"mean": z_mean * self.param_std + self.param_mean,
                  "log_sigma": z_log_sigma + self.param_std.log()}
        if "params" in batch:
            z = (batch["params"] - self.param_mean) / self.param_std
            nll = 0.5 * ((z - z_mean) * torch.exp(-z_log_sigma)) ** 2 + z_log_sigma + 0.5 * math.log(2 * math.pi)
            result["loss"] = nll.sum(dim=1).mean()
            error = (result["mean"] - batch["params"]).abs().mean(dim=0)
            for i, name in enumerate(self.names):
                result["mae_" + name] = error[i]
        return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="training file written by `clustertrain make-data`")
    parser.add_argument("--strain", default="input", help="its dataset of strain rows")
    parser.add_argument("--params", default="params", help="its dataset of parameters")
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0, help="initial weights")
    parser.add_argument("--out", required=True, help="TorchScript file to write")
    args = parser.parse_args()
    with h5py.File(args.data, "r") as f:
        length = f[args.strain].shape[1]
        params = torch.from_numpy(f[args.params][...]).double()
        columns = f.attrs.get("params_columns", b"")
        columns = columns.decode() if isinstance(columns, bytes) else str(columns)
    names = columns.split(",") if columns else [f"p{i}" for i in range(params.shape[1])]
    torch.manual_seed(args.seed)
    model = GaussianPosterior(length, names, params.mean(0).float(), params.std(0).float(), args.width, args.depth)
    torch.jit.script(model).save(args.out)
    print(f"wrote {args.out}: {sum(p.numel() for p in model.parameters())} parameters, strain rows of {length}, "
          f"parameters {', '.join(names)}")


if __name__ == "__main__":
    main()
