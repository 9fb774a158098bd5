#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes a MSH 4.1 binary file whose headers announce N nodes and M tetrahedra while the data between them is a
hole (a sparse file: it takes a few kilobytes of disk whatever its size). Only the memory plan made from the headers
(run/memory_budget.hpp) may look at it: reading its data would find zeros.

  sparse_msh.py FILE NODES TETS
"""
import struct
import sys


def write(path, nodes, tets):
    with open(path, "wb") as f:
        f.write(b"$MeshFormat\n4.1 1 8\n" + struct.pack("<i", 1) + b"\n$EndMeshFormat\n")
        # One volume entity (tag 1, physical tag 1), no points, curves or surfaces.
        f.write(b"$Entities\n" + struct.pack("<4Q", 0, 0, 0, 1))
        f.write(struct.pack("<i6dQiQ", 1, 0, 0, 0, 1, 1, 1, 1, 1, 0) + b"\n$EndEntities\n")
        f.write(b"$Nodes\n" + struct.pack("<4Q", 1, nodes, 1, nodes) + struct.pack("<3iQ", 3, 1, 0, nodes))
        f.seek(nodes * (8 + 24), 1)
        f.write(b"\n$EndNodes\n$Elements\n" + struct.pack("<4Q", 1, tets, 1, tets) + struct.pack("<3iQ", 3, 1, 4, tets))
        f.seek(tets * 8 * 5, 1)
        f.write(b"\n$EndElements\n")


if __name__ == "__main__":
    write(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
