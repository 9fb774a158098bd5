#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The XDMF/HDF5 output (`output: {format: xdmf}`, docs/guide/paraview.md) against the VTU output of the same job.

  check_xdmf.py --mpiexec M --np N --edgefem E --out DIR JOB [--also JOB...]

JOB is a dynamic job with checkpoints (tests/data/xdmf_swing.yaml). Runs it on N ranks with `format: vtu` and
`format: xdmf` and checks, reading the .h5 with h5py, the .xdmf with ElementTree and meshio's XDMF reader, and the
.pvtu pieces with VTK:
  - the .xdmf: a temporal collection with the .pvd's times, every DataItem naming an existing dataset of its
    dimensions; the .h5: the mesh once (/Mesh), one group per step, complete;
  - every point and cell array of every step equals the VTU's (points matched by their reference coordinates, cells
    by their vertices): float32 (output.precision: single, the default) to RTOL_SINGLE = 1e-6 of the array's largest
    value (float32 rounds a value by at most 2^-24 = 6e-8 of itself), `precision: double` to RTOL = 1e-9 (two runs of
    one job differ by ~1e-12); the geometry float64 and bit for bit the .vtu's points;
  - the symmetric tensors (green_strain, stress) as N x 6 "Tensor6" arrays in VTK's order XX, YY, ZZ, XY, YZ, XZ:
    the .vtu's 3 x 3 is symmetric (to 1e-12 of its largest value) and its six components are the stored ones;
  - the partition's order: each rank's cells one slab (the rank field non-decreasing), /Mesh/original_vertex and
    /Mesh/original_cell permutations of the mesh file's numbers; in the mesh file's order (rows sorted by them) the
    geometry and topology are bit for bit those of a 1-rank run and the fields equal to 1e-7 of their largest value
    (1e-6 in float32; the solver's round-off differs with the partition);
  - restart: the run continued from its step-6 checkpoint with an end time of step 9 leaves steps 0, 3, 6 bit for bit
    as they were, step 9 rewritten (equal to the first run's) and step 12 gone, in the .h5 and the .xdmf, the mesh
    reused; continued on 1 rank instead (np > 1), the file gets that partition's mesh as /Mesh_1, which step 9 names
    (in the mesh file's order the same mesh and step 9 equal to the first run's), the earlier steps still /Mesh's;
  - `compression: gzip`: the same values, datasets with the shuffle and gzip filters, a smaller file;
  - `fields: [displacement, von_mises]`: only those;
  - faults: a folder where solution.h5 should be, and a file-size limit (ulimit -f, as a full disk) reached after
    two steps: every rank exits non-zero with a message naming solution.h5, and the .xdmf left lists only whole,
    readable steps equal to the full run's.
--also: more jobs (the other solvers: static, membranes, position-based, frames), each run with both formats and
compared as above. Prints "check_xdmf: XDMF output OK" when all hold.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import h5py
import meshio
import numpy as np
import yaml
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOXML import vtkXMLPUnstructuredGridReader


# Two runs of one job are the same to the solver's round-off, not bit for bit (the order in which MPI messages and
# OpenMP threads add up): a static Gmsh column's reaction forces differed by 2e-12 of their largest value.
RTOL = 1e-9
# float32 keeps 24 bits: a stored value is within 2^-24 (6e-8) of itself, so within 6e-8 of the largest value.
RTOL_SINGLE = 1e-6
# The 6 stored components of a symmetric 3 x 3 (row-major 9) tensor: XX, YY, ZZ, XY, YZ, XZ (VTK's order).
SYMMETRIC = [0, 4, 8, 1, 5, 2]


def fail(message):
    print(f"check_xdmf: FAILED: {message}")
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


class Runner:
    def __init__(self, args, job=None):
        self.args = args
        job = job or args.job
        with open(job) as f:
            self.job = yaml.safe_load(f)
        mesh = self.job["mesh"]
        if "file" in mesh:  # the copies live in --out
            mesh["file"] = os.path.abspath(os.path.join(os.path.dirname(job), mesh["file"]))

    def run(self, name, output=None, analysis=None, np_=None, extra=(), wrapper=(), expect_ok=True, env=None):
        job = yaml.safe_load(yaml.safe_dump(self.job))
        job.setdefault("output", {}).update(output or {})
        if analysis:
            job["analysis"].update(analysis)
        path = os.path.join(self.args.out, name + ".yaml")
        with open(path, "w") as f:
            yaml.safe_dump(job, f)
        out = os.path.join(self.args.out, name)
        command = [self.args.mpiexec, "-n", str(np_ or self.args.np), "--oversubscribe", *wrapper,
                   self.args.edgefem, "run", path, "--output", out, "--quiet", *extra]
        p = subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})
        text = p.stdout + p.stderr
        if expect_ok:
            check(p.returncode == 0, f"{name}: exit status {p.returncode}\n{text[-3000:]}")
        return out, p.returncode, text


# ---- reading ------------------------------------------------------------------------------------------------------

def read_xdmf(directory):
    """[(time, {name: (center, h5 path, dims)}, topology path, geometry path)] of solution.xdmf, all checked."""
    root = ET.parse(os.path.join(directory, "solution.xdmf")).getroot()
    check(root.tag == "Xdmf" and root.get("Version") == "3.0", f"{directory}: root {root.tag} {root.attrib}")
    collection = root.find("Domain/Grid")
    check(collection.get("GridType") == "Collection" and collection.get("CollectionType") == "Temporal",
          f"{directory}: not a temporal collection")
    steps = []
    with h5py.File(os.path.join(directory, "solution.h5"), "r") as h5:
        def item(element, what):
            data = element.find("DataItem")
            check(data is not None and data.get("Format") == "HDF", f"{what}: no HDF DataItem")
            file, at = data.text.strip().split(":", 1)
            check(file == "solution.h5" and at in h5, f"{what}: {data.text} not in the .h5")
            dims = tuple(int(d) for d in data.get("Dimensions").split())
            check(h5[at].shape == dims, f"{what}: Dimensions {dims} but {at} is {h5[at].shape}")
            return at
        for grid in collection.findall("Grid"):
            time = float(grid.find("Time").get("Value"))
            topology = item(grid.find("Topology"), "Topology")
            geometry = item(grid.find("Geometry"), "Geometry")
            fields = {}
            for a in grid.findall("Attribute"):
                at = item(a, a.get("Name"))
                n = h5[at].shape[1] if len(h5[at].shape) == 2 else 1
                check(a.get("AttributeType") == {1: "Scalar", 3: "Vector", 6: "Tensor6", 9: "Tensor"}[n], f"{at}: type")
                data = a.find("DataItem")
                check(int(data.get("Precision")) == h5[at].dtype.itemsize and
                      data.get("NumberType") == ("Int" if h5[at].dtype.kind == "i" else "Float"),
                      f"{at}: DataItem {data.attrib} but the dataset is {h5[at].dtype}")
                group = h5[at.rsplit("/", 1)[0]]
                check(group.attrs["complete"] == 1 and group.attrs["time"] == time, f"{at}: group attributes")
                fields[a.get("Name")] = (a.get("Center"), at)
            steps.append((time, fields, topology, geometry))
    return steps


def check_with_meshio(directory, steps):
    """An XDMF reader of its own (meshio's, Debian's python3-meshio: ParaView's is not installable next to
    libvtk9-dev) reads the series: the .h5's mesh, times and every field."""
    reader = meshio.xdmf.TimeSeriesReader(os.path.join(directory, "solution.xdmf"))
    points, cells = reader.read_points_cells()
    check(np.array_equal(points, h5_values(directory, "/Mesh/geometry")), "meshio: points")
    check(len(cells) == 1 and np.array_equal(cells[0].data, h5_values(directory, "/Mesh/topology")), "meshio: cells")
    check(reader.num_steps == len(steps), f"meshio: {reader.num_steps} steps")
    for k, (time, fields, _, _) in enumerate(steps):
        t, point_data, cell_data = reader.read_data(k)
        check(t == time, f"meshio: time {t} != {time}")
        read = {**point_data, **{name: v[0] for name, v in cell_data.items()}}
        check(sorted(read) == sorted(fields), f"meshio: t = {time}: {sorted(read)}")
        for name, (_, at) in fields.items():
            check(np.array_equal(read[name], h5_values(directory, at)), f"meshio: t = {time}: {name}")


def read_pvd(directory):
    """[(time, .pvtu path)] of solution.pvd."""
    root = ET.parse(os.path.join(directory, "solution.pvd")).getroot()
    return [(float(d.get("timestep")), os.path.join(directory, d.get("file"))) for d in root.iter("DataSet")]


def read_pvtu(path):
    reader = vtkXMLPUnstructuredGridReader()
    reader.SetFileName(path)
    reader.Update()
    grid = reader.GetOutput()
    points = vtk_to_numpy(grid.GetPoints().GetData())
    cells = vtk_to_numpy(grid.GetCells().GetConnectivityArray()).reshape(grid.GetNumberOfCells(), -1)
    arrays = {}
    for data, center in ((grid.GetPointData(), "Node"), (grid.GetCellData(), "Cell")):
        for i in range(data.GetNumberOfArrays()):
            arrays[data.GetArrayName(i)] = (center, vtk_to_numpy(data.GetArray(i)))
    return points, cells, arrays


def h5_values(directory, at):
    with h5py.File(os.path.join(directory, "solution.h5"), "r") as h5:
        return h5[at][...]


def close(a, b, rtol, what):
    """|a - b| <= rtol x the largest |b| (at least 1); a float32 array (the output's default precision) to at least
    RTOL_SINGLE, unless rtol is 0 (bit for bit)."""
    if rtol > 0 and np.float32 in (np.asarray(a).dtype, np.asarray(b).dtype):
        rtol = max(rtol, RTOL_SINGLE)
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    check(a.shape == b.shape, f"{what}: shapes {a.shape} != {b.shape}")
    scale = max(1.0, float(np.max(np.abs(b)))) if b.size else 1.0
    error = float(np.max(np.abs(a - b))) if a.size else 0.0
    check(error <= rtol * scale, f"{what}: differs by {error:.3e} (largest value {scale:.3e}, allowed {rtol:g} x)")


# ---- checks -------------------------------------------------------------------------------------------------------

def compare_with_vtu(xdmf_dir, vtu_dir):
    steps, pvd = read_xdmf(xdmf_dir), read_pvd(vtu_dir)
    check([s[0] for s in steps] == [t for t, _ in pvd], f"times {[s[0] for s in steps]} != .pvd's {[t for t, _ in pvd]}")
    for (time, fields, topology_at, geometry_at), (_, pvtu) in zip(steps, pvd):
        geometry = h5_values(xdmf_dir, geometry_at)
        topology = h5_values(xdmf_dir, topology_at)
        vertex_of = {tuple(p): i for i, p in enumerate(geometry)}
        check(len(vertex_of) == len(geometry), f"duplicate vertices in {geometry_at}")
        cell_of = {tuple(c): i for i, c in enumerate(topology)}
        points, cells, arrays = read_pvtu(pvtu)
        vertex = np.array([vertex_of[tuple(p)] for p in points])
        cell = np.array([cell_of[tuple(vertex[c])] for c in cells])
        check(len(set(cell)) == len(topology), f"t = {time}: the .vtu cells are not the .h5's")
        check(sorted(arrays) == sorted(fields), f"t = {time}: arrays {sorted(arrays)} != {sorted(fields)}")
        for name, (center, values) in arrays.items():
            check(fields[name][0] == center, f"{name}: center {fields[name][0]} != {center}")
            stored = h5_values(xdmf_dir, fields[name][1])
            index = vertex if center == "Node" else cell
            if name in ("green_strain", "stress"):
                check(stored.shape[1:] == (6,), f"t = {time}: {name} stored as {stored.shape}, not N x 6")
                full = values.reshape(-1, 3, 3)
                asymmetry = float(np.max(np.abs(full - full.transpose(0, 2, 1))))
                check(asymmetry <= 1e-12 * max(1.0, float(np.max(np.abs(values)))), f"{name}: not symmetric ({asymmetry})")
                values = values.reshape(-1, 9)[:, SYMMETRIC]
            close(stored[index].reshape(values.shape), values, RTOL, f"t = {time}: {name}")
    return steps


def file_order(directory, mesh="/Mesh"):
    """`mesh`'s rows in the mesh file's order: (geometry, topology in the file's vertex numbers, the vertex rows and
    the cell rows of the .h5 in that order), checking that original_vertex and original_cell are permutations."""
    with h5py.File(os.path.join(directory, "solution.h5"), "r") as h5:
        original_vertex, original_cell = h5[mesh + "/original_vertex"][...], h5[mesh + "/original_cell"][...]
        vertices, cells = np.argsort(original_vertex), np.argsort(original_cell)
        check(np.array_equal(original_vertex[vertices], np.arange(len(vertices))), f"{mesh}/original_vertex")
        check(np.array_equal(original_cell[cells], np.arange(len(cells))), f"{mesh}/original_cell")
        geometry = h5[mesh + "/geometry"][...][vertices]
        topology = original_vertex[h5[mesh + "/topology"][...]][cells]
    return geometry, topology, vertices, cells


def compare_series(a_dir, b_dir, rtol, what, steps=None):
    a, b = read_xdmf(a_dir), read_xdmf(b_dir)
    if steps is not None:
        a, b = [s for s in a if s[0] in steps], [s for s in b if s[0] in steps]
    check([s[0] for s in a] == [s[0] for s in b], f"{what}: times {[s[0] for s in a]} != {[s[0] for s in b]}")
    for (time, fields, _, _), (_, other, _, _) in zip(a, b):
        check(sorted(fields) == sorted(other), f"{what}: t = {time}: fields {sorted(fields)} != {sorted(other)}")
        for name in fields:
            close(h5_values(a_dir, fields[name][1]), h5_values(b_dir, other[name][1]), rtol, f"{what}: t = {time} {name}")


def check_restart(runner, xdmf_dir):
    restart = os.path.join(runner.args.out, "restart")
    shutil.rmtree(restart, ignore_errors=True)
    shutil.copytree(xdmf_dir, restart)
    before = {t: {n: h5_values(restart, at) for n, (_, at) in f.items()} for t, f, _, _ in read_xdmf(restart)}
    dt = runner.job["analysis"]["dt"]
    runner.run("restart", analysis={"end_time": 9 * dt},
               extra=["--restart", os.path.join(restart, "checkpoint_000006.ckpt")])
    after = read_xdmf(restart)
    times = sorted(before)
    check([t for t, _, _, _ in after] == times[:4], f"restart: times {[s[0] for s in after]}, expected {times[:4]}")
    with h5py.File(os.path.join(restart, "solution.h5"), "r") as h5:
        check(sorted(h5["Steps"]) == ["000000", "000003", "000006", "000009"], f"restart: groups {sorted(h5['Steps'])}")
    for t, fields, topology, _ in after:
        check(topology == "/Mesh/topology", f"restart: t = {t} on {topology}, not the first run's mesh")
        for name, (_, at) in fields.items():
            exact = t < times[3]
            close(h5_values(restart, at), before[t][name], 0.0 if exact else 1e-9, f"restart: t = {t} {name}")
    with h5py.File(os.path.join(restart, "solution.h5"), "r") as h5:
        check(sorted(k for k in h5 if k.startswith("Mesh")) == ["Mesh"], f"restart: meshes {sorted(h5)}")


def check_restart_on_one_rank(runner, xdmf_dir):
    """The run continued on 1 rank from its step-6 checkpoint: the series gets the 1-rank partition's mesh as
    /Mesh_1 (the same mesh in the file's order), step 9 on it equal to the first run's, steps 0, 3, 6 as they were."""
    restart = os.path.join(runner.args.out, "restart_1")
    shutil.rmtree(restart, ignore_errors=True)
    shutil.copytree(xdmf_dir, restart)
    before = read_xdmf(restart)
    values = {t: {n: h5_values(restart, at) for n, (_, at) in f.items()} for t, f, _, _ in before}
    dt = runner.job["analysis"]["dt"]
    runner.run("restart_1", analysis={"end_time": 9 * dt}, np_=1,
               extra=["--restart", os.path.join(restart, "checkpoint_000006.ckpt")])
    after = read_xdmf(restart)
    times = [t for t, _, _, _ in before]
    check([t for t, _, _, _ in after] == times[:4], f"restart on 1 rank: times {[s[0] for s in after]}")
    check([s[2] for s in after] == ["/Mesh/topology"] * 3 + ["/Mesh_1/topology"],
          f"restart on 1 rank: meshes {[s[2] for s in after]}")
    first, second = file_order(restart, "/Mesh"), file_order(restart, "/Mesh_1")
    check(np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1]),
          "restart on 1 rank: /Mesh_1 is not /Mesh in the file's order")
    for t, fields, _, _ in after:
        for name, (center, at) in fields.items():
            if t < times[3]:
                close(h5_values(restart, at), values[t][name], 0.0, f"restart on 1 rank: t = {t} {name}")
            elif name != "rank":
                rows, old_rows = (second[2], first[2]) if center == "Node" else (second[3], first[3])
                close(h5_values(restart, at)[rows], values[t][name][old_rows], 1e-7, f"restart on 1 rank: t = {t} {name}")
    print("check_xdmf: restart on 1 rank: step 9 on /Mesh_1, equal to the first run's")


def check_gzip(runner, xdmf_dir):
    gzip_dir, _, _ = runner.run("gzip", output={"compression": "gzip"})
    compare_series(gzip_dir, xdmf_dir, RTOL, "gzip")
    with h5py.File(os.path.join(gzip_dir, "solution.h5"), "r") as h5:
        s = h5["Steps/000012/stress"]
        check(s.compression == "gzip" and s.shuffle and s.chunks is not None, f"gzip: stress filters {s.compression}")
    plain, packed = (os.path.getsize(os.path.join(d, "solution.h5")) for d in (xdmf_dir, gzip_dir))
    check(packed < plain, f"gzip: {packed} bytes, not fewer than {plain}")
    print(f"check_xdmf: gzip {packed} bytes, none {plain} bytes ({packed / plain:.2f})")


def check_precision(runner, xdmf_dir, vtu_dir):
    """The default stores the fields as float32 and the geometry as float64; `precision: double` stores float64
    equal to the VTU's to RTOL, in a larger file."""
    with h5py.File(os.path.join(xdmf_dir, "solution.h5"), "r") as h5:
        check(h5["Mesh/geometry"].dtype == np.float64, f"geometry {h5['Mesh/geometry'].dtype}")
        check(h5["Mesh/topology"].dtype == np.int32, f"topology {h5['Mesh/topology'].dtype}")
        for name in ("displacement", "stress", "von_mises"):
            check(h5["Steps/000012/" + name].dtype == np.float32, f"{name}: {h5['Steps/000012/' + name].dtype}")
    double_dir, _, _ = runner.run("double", output={"precision": "double"})
    with h5py.File(os.path.join(double_dir, "solution.h5"), "r") as h5:
        check(h5["Steps/000012/stress"].dtype == np.float64, f"double: stress {h5['Steps/000012/stress'].dtype}")
    compare_with_vtu(double_dir, vtu_dir)
    single, double = (os.path.getsize(os.path.join(d, "solution.h5")) for d in (xdmf_dir, double_dir))
    check(single < 0.7 * double, f"single {single} bytes, double {double}")
    print(f"check_xdmf: float32 {single} bytes, float64 {double} bytes ({single / double:.2f})")


def check_faults(runner, xdmf_dir):
    blocked = os.path.join(runner.args.out, "blocked")
    shutil.rmtree(blocked, ignore_errors=True)
    os.makedirs(os.path.join(blocked, "solution.h5"))
    _, status, text = runner.run("blocked", expect_ok=False)
    check(status != 0 and "solution.h5" in text and "cannot create the file" in text,
          f"a folder in the way: status {status}\n{text[-2000:]}")
    # A file-size limit that the mesh and about two steps fit under (SIGXFSZ ignored: a write then fails as on a
    # full disk). OpenMPI's shared-memory transport would trip on the limit too: TCP between the ranks.
    size = os.path.getsize(os.path.join(xdmf_dir, "solution.h5"))
    limit_kb = int(size * 0.5 / 1024)
    full, status, text = runner.run("full", expect_ok=False, env={"OMPI_MCA_btl": "self,tcp"},
                                    wrapper=["bash", "-c", f'trap "" XFSZ; ulimit -f {limit_kb}; exec "$@"', "sh"])
    check(status != 0 and "solution.h5" in text and "file-size limit" in text,
          f"file-size limit: status {status}\n{text[-2000:]}")
    left = read_xdmf(full)
    check(1 <= len(left) < len(read_xdmf(xdmf_dir)), f"file-size limit: {len(left)} steps listed")
    compare_series(full, xdmf_dir, RTOL, "file-size limit", steps=[s[0] for s in left])


def check_full_disk(runner, xdmf_dir):
    """A full file system that the output folder's own free space does not show: solution.h5 is a link into a small
    tmpfs (mounted here; root only, else skipped with a message). The step that does not fit is refused before HDF5
    writes it (rank 0 reserves each step's blocks with fallocate): every rank exits non-zero naming solution.h5 and
    the "no space" cause, none waits (the runner's timeout), and the .xdmf lists only whole, readable steps."""
    full = os.path.join(runner.args.out, "disk_full")
    mount = os.path.join(runner.args.out, "tmpfs")
    shutil.rmtree(full, ignore_errors=True)
    os.makedirs(full)
    os.makedirs(mount, exist_ok=True)
    size_kb = int(os.path.getsize(os.path.join(xdmf_dir, "solution.h5")) * 0.5 / 1024)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", mount], capture_output=True, text=True)
    if p.returncode != 0:
        print(f"check_xdmf: the full-disk case skipped (cannot mount a tmpfs: {p.stderr.strip()})")
        return
    try:
        os.symlink(os.path.join(mount, "solution.h5"), os.path.join(full, "solution.h5"))
        _, status, text = runner.run("disk_full", expect_ok=False)
        check(status != 0 and "solution.h5" in text and "no space left" in text,
              f"full disk: status {status}\n{text[-2000:]}")
        left = read_xdmf(full)
        check(1 <= len(left) < len(read_xdmf(xdmf_dir)), f"full disk: {len(left)} steps listed")
        compare_series(full, xdmf_dir, RTOL, "full disk", steps=[s[0] for s in left])
        print(f"check_xdmf: full disk ({size_kb} kB tmpfs): refused after {len(left)} steps")
    finally:
        subprocess.run(["umount", mount], capture_output=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpiexec", default="mpiexec")
    parser.add_argument("--np", type=int, default=1)
    parser.add_argument("--edgefem", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--also", nargs="*", default=[],
                        help="more jobs (other solvers): each run with vtu and xdmf, the series compared")
    parser.add_argument("job")
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    runner = Runner(args)
    vtu_dir, _, _ = runner.run("vtu", output={"format": "vtu"})
    xdmf_dir, _, _ = runner.run("xdmf")
    steps = compare_with_vtu(xdmf_dir, vtu_dir)
    check(len(steps) == 5, f"{len(steps)} steps")
    check_with_meshio(xdmf_dir, steps)
    # summary.json's output_split (where the output's time went): every step written, flushed and listed once.
    with open(os.path.join(xdmf_dir, "summary.json")) as f:
        split = json.load(f)["output_split"]
    check(split["format"] == "xdmf" and split["written_steps"] == len(steps) and split["in_run_wall_s"] > 0 and
          all(split["calls"][k] == len(steps) for k in ("arrays", "h5_flush", "xdmf_rewrite", "writer_fdatasync")),
          f"output_split {split}")
    rank = h5_values(xdmf_dir, steps[-1][1]["rank"][1])
    check(sorted(set(rank)) == list(range(args.np)), f"rank field values {sorted(set(rank))}")
    check(np.all(np.diff(rank) >= 0), "the ranks' cells are not one slab each in rank order")
    mesh = file_order(xdmf_dir)
    if args.np > 1:
        serial_dir, _, _ = runner.run("serial", np_=1)
        serial = file_order(serial_dir)
        check(np.array_equal(mesh[0], serial[0]), "geometry in the file's order differs from 1 rank's")
        check(np.array_equal(mesh[1], serial[1]), "topology in the file's order differs from 1 rank's")
        one = {t: f for t, f, _, _ in read_xdmf(serial_dir)}
        for t, fields, _, _ in read_xdmf(xdmf_dir):
            for name, (center, at) in fields.items():
                if name != "rank":
                    rows, serial_rows = (mesh[2], serial[2]) if center == "Node" else (mesh[3], serial[3])
                    close(h5_values(xdmf_dir, at)[rows], h5_values(serial_dir, one[t][name][1])[serial_rows], 1e-7,
                          f"1 rank: t = {t} {name}")
        check_restart_on_one_rank(runner, xdmf_dir)
    check_restart(runner, xdmf_dir)
    check_gzip(runner, xdmf_dir)
    check_precision(runner, xdmf_dir, vtu_dir)
    fields_dir, _, _ = runner.run("fields", output={"fields": ["displacement", "von_mises"]})
    check(all(sorted(f) == ["displacement", "von_mises"] for _, f, _, _ in read_xdmf(fields_dir)), "fields: not only those")
    check_faults(runner, xdmf_dir)
    check_full_disk(runner, xdmf_dir)
    for job in args.also:
        other = Runner(args, job)
        name = os.path.splitext(os.path.basename(job))[0]
        vtu_dir, _, _ = other.run(name + "_vtu", output={"format": "vtu"})
        xdmf_dir, _, _ = other.run(name + "_xdmf", output={"format": "xdmf"})
        check_with_meshio(xdmf_dir, compare_with_vtu(xdmf_dir, vtu_dir))
        print(f"check_xdmf: {name}: {len(read_xdmf(xdmf_dir))} steps equal to the VTU output")
    print("check_xdmf: XDMF output OK")


if __name__ == "__main__":
    main()
