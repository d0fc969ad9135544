#!/usr/bin/python3
"""Write a file in the seed's one-group-per-sample layout (sample{i}/input, sample{i}/target), as
the Python pipeline that clustertrain replaces stored its waveforms, from a contiguous file.

    make_seed_layout.py CONTIGUOUS.h5 SEED.h5 [--dtype float64] [--rows N]

Used by the converter's tests and by `bench/io.sh` to measure the seed layout's read speed.
"""
import argparse

import h5py
import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("contiguous")
    parser.add_argument("seed")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--rows", type=int, default=0, help="first N rows only (0: all)")
    args = parser.parse_args()
    with h5py.File(args.contiguous, "r") as src, h5py.File(args.seed, "w") as dst:
        n = src["input"].shape[0] if args.rows == 0 else min(args.rows, src["input"].shape[0])
        for start in range(0, n, 4096):
            x = src["input"][start:start + 4096].astype(args.dtype)
            y = src["target"][start:start + 4096].astype(args.dtype)
            for i in range(len(x)):
                group = dst.create_group(f"sample{start + i}")
                group["input"] = x[i]
                group["target"] = y[i]
        dst.attrs["layout"] = np.bytes_("one group per sample")


if __name__ == "__main__":
    main()
