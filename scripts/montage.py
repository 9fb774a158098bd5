#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Put PNG pictures side by side, each with a caption, into one PNG (matplotlib; Debian's /usr/bin/python3).

    montage.py OUT.png A.png:caption B.png:caption ...

Missing inputs are skipped (with a note)."""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    panels = []
    for arg in sys.argv[2:]:
        path, _, caption = arg.partition(":")
        if os.path.exists(path):
            panels.append((mpimg.imread(path), caption))
        else:
            print(f"montage: {path} missing, skipped", file=sys.stderr)
    if not panels:
        sys.exit("montage: no pictures")
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 2.8), squeeze=False)
    for ax, (image, caption) in zip(axes[0], panels):
        ax.imshow(image)
        ax.set_title(caption, fontsize=10)
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=100)


if __name__ == "__main__":
    main()
