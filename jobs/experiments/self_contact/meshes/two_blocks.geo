// Two elastic blocks for self-contact between bodies (issue 53; jobs/experiments/self_contact/, tests/mpi/
// test_self_contact.cpp): a lower block [0, 1] x [0, 1] x [0, 0.5] and an upper block 0.6 x 0.6 x 0.4 turned by 15
// degrees about the vertical through (0.5, 0.5), its bottom `gap` above the lower block's top, so that no edge of
// one is parallel to an edge of the other. Unstructured tets;
//   gmsh -3 -format msh22 -setnumber h 0.1 two_blocks.geo -o two_blocks.msh
// Physical groups: volumes 1 (lower) and 2 (upper), the lower block's bottom 11, the upper block's top 12.
SetFactory("OpenCASCADE");
If (!Exists(h))
  h = 0.1;
EndIf
If (!Exists(gap))
  gap = 0.02;
EndIf
Box(1) = {0, 0, 0, 1, 1, 0.5};
Box(2) = {0.2, 0.2, 0.5 + gap, 0.6, 0.6, 0.4};
Rotate {{0, 0, 1}, {0.5, 0.5, 0}, Pi / 12} { Volume{2}; }
Physical Volume(1) = {1};
Physical Volume(2) = {2};
Physical Surface(11) = {5};
Physical Surface(12) = {12};
Mesh.CharacteristicLengthMin = h;
Mesh.CharacteristicLengthMax = h;
