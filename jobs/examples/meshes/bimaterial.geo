// A 4 x 1 x 1 bar of two materials: x in [0, 2] is region 1, x in [2, 4] is region 2 (Gmsh physical
// volumes); faces: 11 the x = 0 end, 12 the x = 4 end, 13 the rest of the outside.
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 2, 1, 1};
Box(2) = {2, 0, 0, 2, 1, 1};
BooleanFragments{ Volume{1}; Delete; }{ Volume{2}; Delete; }
Physical Volume(1) = {1};
Physical Volume(2) = {2};
eps = 1e-6;
Physical Surface(11) = Surface In BoundingBox{-eps, -eps, -eps, eps, 1 + eps, 1 + eps};
Physical Surface(12) = Surface In BoundingBox{4 - eps, -eps, -eps, 4 + eps, 1 + eps, 1 + eps};
Mesh.CharacteristicLengthMax = 0.25;
