#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Render one step of an edgefem run (its solution.pvd) to a PNG, off-screen: the deformed shape (the reference
points moved by `displacement`, times --scale) coloured by a field, with a fixed camera.

    pvpython scripts/render.py out/cantilever/solution.pvd cantilever.png [--field von_mises] [--step -1]
    xvfb-run -a /usr/bin/python3 scripts/render.py ...      (without ParaView: VTK's Python module, python3-vtk9)

Under pvpython it uses paraview.simple (WarpByVector, ColorBy, SaveScreenshot); elsewhere VTK's own pipeline
(vtkXMLPUnstructuredGridReader, vtkWarpVector, vtkDataSetSurfaceFilter), which needs an X display: xvfb-run gives
it one. Debian 12's python3-paraview conflicts with python3-vtk9 (needed by libvtk9-dev), so a build machine
usually has the second. --field: a point array (`displacement` magnitude, `velocity`...) or a cell array
(`von_mises`, `volume_ratio`, `rank`...); a vector is shown by its magnitude. --view: iso (default), x, y or z.
"""
import argparse
import os
import sys
import xml.etree.ElementTree as ET


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("pvd", help="the run's solution.pvd")
    p.add_argument("png", help="the picture to write")
    p.add_argument("--field", default="displacement", help="array to colour by (default: displacement)")
    p.add_argument("--step", type=int, default=-1, help="index into the .pvd's steps (default: -1, the last)")
    p.add_argument("--scale", type=float, default=1.0, help="displacement scale of the deformed shape (default 1)")
    p.add_argument("--size", default="800x450", help="picture size WIDTHxHEIGHT (default 800x450)")
    p.add_argument("--view", default="iso", choices=["iso", "x", "y", "z"], help="camera direction")
    p.add_argument("--edges", action="store_true", help="draw the mesh's edges")
    return p.parse_args()


def dataset_file(pvd, step):
    """The .pvtu of step `step` of the collection, and its time."""
    entries = ET.parse(pvd).getroot().find("Collection").findall("DataSet")
    if not entries:
        sys.exit(f"{pvd}: no steps")
    e = entries[step]
    return os.path.join(os.path.dirname(os.path.abspath(pvd)), e.get("file")), float(e.get("timestep"))


CAMERA = {"iso": ((1, -1.6, 1.1), (0, 0, 1)), "x": ((1, 0, 0), (0, 0, 1)), "y": ((0, -1, 0), (0, 0, 1)),
          "z": ((0, 0, 1), (0, 1, 0))}


def render_paraview(path, args, width, height):
    import paraview.simple as pv

    reader = pv.XMLPartitionedUnstructuredGridReader(FileName=[path])
    warp = pv.WarpByVector(Input=reader, Vectors=["POINTS", "displacement"], ScaleFactor=args.scale)
    view = pv.CreateView("RenderView")
    view.ViewSize = [width, height]
    view.OrientationAxesVisibility = 0
    view.Background = [1, 1, 1]
    display = pv.Show(warp, view)
    display.Representation = "Surface With Edges" if args.edges else "Surface"
    info = reader.GetPointDataInformation().GetArray(args.field)
    association = "POINTS" if info is not None else "CELLS"
    pv.ColorBy(display, (association, args.field, "Magnitude"))
    display.RescaleTransferFunctionToDataRange(True, False)
    display.SetScalarBarVisibility(view, True)
    direction, up = CAMERA[args.view]
    view.CameraPosition = direction
    view.CameraFocalPoint = [0, 0, 0]
    view.CameraViewUp = up
    view.ResetCamera()
    pv.SaveScreenshot(args.png, view, ImageResolution=[width, height])


def render_vtk(path, args, width, height):
    import vtk

    reader = vtk.vtkXMLPUnstructuredGridReader()
    reader.SetFileName(path)
    reader.Update()
    grid = reader.GetOutput()
    grid.GetPointData().SetActiveVectors("displacement")
    warp = vtk.vtkWarpVector()
    warp.SetInputData(grid)
    warp.SetScaleFactor(args.scale)
    surface = vtk.vtkDataSetSurfaceFilter()
    surface.SetInputConnection(warp.GetOutputPort())
    surface.Update()
    data = surface.GetOutput()
    point_array = data.GetPointData().GetArray(args.field)
    array = point_array or data.GetCellData().GetArray(args.field)
    if array is None:
        sys.exit(f"{path}: no array '{args.field}'")
    if array.GetNumberOfComponents() > 1:  # colour by the magnitude
        magnitude = vtk.vtkDoubleArray()
        magnitude.SetName(args.field + " magnitude")
        for i in range(array.GetNumberOfTuples()):
            t = array.GetTuple(i)
            magnitude.InsertNextValue(sum(c * c for c in t) ** 0.5)
        (data.GetPointData() if point_array else data.GetCellData()).AddArray(magnitude)
        array = magnitude
    mapper = vtk.vtkDataSetMapper()
    mapper.SetInputData(data)
    mapper.SetScalarModeToUsePointFieldData() if point_array else mapper.SetScalarModeToUseCellFieldData()
    mapper.SelectColorArray(array.GetName())
    mapper.SetScalarRange(array.GetRange())
    lut = vtk.vtkLookupTable()
    lut.SetHueRange(0.667, 0.0)  # blue to red
    lut.Build()
    mapper.SetLookupTable(lut)
    actor = vtk.vtkActor()
    actor.SetMapper(mapper)
    if args.edges:
        actor.GetProperty().EdgeVisibilityOn()
        actor.GetProperty().SetEdgeColor(0.2, 0.2, 0.2)
    bar = vtk.vtkScalarBarActor()
    bar.SetLookupTable(lut)
    bar.SetTitle(args.field)
    bar.SetNumberOfLabels(4)
    bar.SetLabelFormat("%.3g")
    bar.SetPosition(0.86, 0.12)
    bar.SetWidth(0.1)
    bar.SetHeight(0.7)
    bar.SetVerticalTitleSeparation(8)
    bar.UnconstrainedFontSizeOn()
    for text, size in ((bar.GetTitleTextProperty(), 14), (bar.GetLabelTextProperty(), 12)):
        text.SetColor(0, 0, 0)
        text.SetFontSize(size)
        text.ItalicOff()
        text.ShadowOff()
    renderer = vtk.vtkRenderer()
    renderer.SetBackground(1, 1, 1)
    renderer.AddActor(actor)
    renderer.AddViewProp(bar)
    direction, up = CAMERA[args.view]
    camera = renderer.GetActiveCamera()
    camera.SetPosition(*direction)
    camera.SetFocalPoint(0, 0, 0)
    camera.SetViewUp(*up)
    renderer.ResetCamera()
    camera.Zoom(1.05)
    window = vtk.vtkRenderWindow()
    window.SetOffScreenRendering(1)
    window.SetSize(width, height)
    window.AddRenderer(renderer)
    window.Render()
    image = vtk.vtkWindowToImageFilter()
    image.SetInput(window)
    image.Update()
    writer = vtk.vtkPNGWriter()
    writer.SetFileName(args.png)
    writer.SetInputConnection(image.GetOutputPort())
    writer.Write()


def main():
    args = parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    path, time = dataset_file(args.pvd, args.step)
    try:
        import paraview.simple  # noqa: F401  (pvpython)
        render = render_paraview
    except ImportError:
        render = render_vtk
    render(path, args, width, height)
    print(f"{args.png}: {os.path.basename(path)} (t = {time:g}), field {args.field}, {render.__name__[7:]}")


if __name__ == "__main__":
    main()
