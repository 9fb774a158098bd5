// A 1 x 1 x 3 cuboid for the twist experiment (Kikuuwe Fig. 9, mesh M_C: 441 vertices, 1200 tets).
// Physical tags: 1 volume, 21 bottom (z = 0), 22 top (z = 3), 23 the sides.
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 1, 1, 3};
Physical Volume(1) = {1};
eps = 1e-6;
Physical Surface(21) = Surface In BoundingBox{-eps, -eps, -eps, 1 + eps, 1 + eps, eps};
Physical Surface(22) = Surface In BoundingBox{-eps, -eps, 3 - eps, 1 + eps, 1 + eps, 3 + eps};
Physical Surface(23) = {1, 2, 3, 4};
Mesh.CharacteristicLengthMax = 0.24;
