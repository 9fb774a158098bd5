// The time-to-solution cantilever: a 10 x 1 x 1 bar, physical tags 1 (volume), 11 (x = 0), 12 (x = 10).
// Generated, not committed:  gmsh -3 -setnumber h 0.07 cantilever.geo -format msh41 -bin -o cantilever_h0.07.msh
// h = 0.07 gives 136,565 tetrahedra (27,116 vertices) with Gmsh 4.8; h = 0.15 (14,576 tetrahedra) and 0.1
// (47,854) the coarser meshes of the preconditioner study.
SetFactory("OpenCASCADE");
If (!Exists(h))
  h = 0.07;
EndIf
Box(1) = {0, 0, 0, 10, 1, 1};
Physical Volume(1) = {1};
eps = 1e-6;
Physical Surface(11) = Surface In BoundingBox{-eps, -eps, -eps, eps, 1 + eps, 1 + eps};
Physical Surface(12) = Surface In BoundingBox{10 - eps, -eps, -eps, 10 + eps, 1 + eps, 1 + eps};
Mesh.CharacteristicLengthMax = h;
