#!/usr/bin/python3
"""Calibration of a Gaussian posterior as bilby users check it: a P-P plot.

    /usr/bin/python3 configs/pe/pp_plot.py POSTERIOR.h5 TRUTH.h5 [--out pp.png] [--json]

POSTERIOR.h5 is what `clustertrain predict` wrote for the parameter-estimation model
(configs/pe/make_model.py): datasets 'mean' and 'log_sigma' [N, P]. TRUTH.h5 is the file it ran
on, with the true parameters ('params' [N, P]). For every credible level q, a calibrated
posterior holds the true value inside its central q interval for a fraction q of the rows: the
P-P curve (fraction against q) lies on the diagonal. Prints, per parameter, the correlation of
the posterior mean with the truth and the fractions inside the 68% and 95% intervals; with
--out, draws the P-P plot (matplotlib); with --json, prints the numbers as one JSON object.
"""
import argparse
import json
import math

import h5py
import numpy as np


def central_levels(z):
    """The smallest central credible level whose interval holds each standardised error z."""
    return np.vectorize(lambda v: math.erf(abs(v) / math.sqrt(2.0)))(z)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("posterior")
    parser.add_argument("truth")
    parser.add_argument("--params", default="params", help="dataset of the true parameters in TRUTH")
    parser.add_argument("--out", help="P-P plot to write (PNG)")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args()
    with h5py.File(args.posterior, "r") as f:
        mean, log_sigma = f["mean"][...].astype(np.float64), f["log_sigma"][...].astype(np.float64)
    with h5py.File(args.truth, "r") as f:
        truth = f[args.params][...].astype(np.float64)
        columns = f.attrs.get("params_columns", b"")
    columns = columns.decode() if isinstance(columns, bytes) else str(columns)
    names = columns.split(",") if columns else [f"p{i}" for i in range(truth.shape[1])]
    if mean.shape != truth.shape:
        raise SystemExit(f"pp_plot: posterior {mean.shape} and truth {truth.shape} differ: give the file predict ran on")
    levels = central_levels((truth - mean) / np.exp(log_sigma))  # [N, P]
    result = {}
    for i, name in enumerate(names):
        result[name] = {
            "r": float(np.corrcoef(mean[:, i], truth[:, i])[0, 1]),
            "inside_68": float(np.mean(levels[:, i] <= 0.6827)),
            "inside_95": float(np.mean(levels[:, i] <= 0.9545)),
        }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{'parameter':<12} {'r(mean, truth)':>15} {'inside 68%':>11} {'inside 95%':>11}   ({len(truth)} rows)")
        for name, v in result.items():
            print(f"{name:<12} {v['r']:>15.3f} {v['inside_68']:>11.3f} {v['inside_95']:>11.3f}")
    if args.out:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        q = np.linspace(0, 1, 101)
        fig, ax = plt.subplots(figsize=(5, 5))
        # The band a calibrated posterior stays in with 95% probability (binomial, N rows).
        band = 1.96 * np.sqrt(q * (1 - q) / len(truth))
        ax.fill_between(q, q - band, q + band, color="0.85", label="95% band, calibrated")
        for i, name in enumerate(names):
            ax.plot(q, [np.mean(levels[:, i] <= x) for x in q], label=f"{name} (r={result[name]['r']:.2f})")
        ax.plot([0, 1], [0, 1], "k--", linewidth=0.8)
        ax.set_xlabel("credible level")
        ax.set_ylabel("fraction of rows whose truth lies inside")
        ax.set_title(f"P-P plot, {len(truth)} held-out rows")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.out, dpi=120)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
