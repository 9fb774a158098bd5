// A slender 10 x 1 x 1 beam, unstructured (the issue-47 box as a Gmsh mesh), made with `gmsh -3 beam.geo`.
// Physical tags: 1 volume, 21 the x = 0 end, 22 the x = 10 end, 23 the sides.
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 10, 1, 1};
Physical Volume(1) = {1};
eps = 1e-6;
Physical Surface(21) = Surface In BoundingBox{-eps, -eps, -eps, eps, 1 + eps, 1 + eps};
Physical Surface(22) = Surface In BoundingBox{10 - eps, -eps, -eps, 10 + eps, 1 + eps, 1 + eps};
Physical Surface(23) = {3, 4, 5, 6};
Mesh.CharacteristicLengthMax = 0.25;
Mesh.MshFileVersion = 4.1;
