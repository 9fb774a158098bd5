// Two cloths for membrane self-contact (issue 53; tests/mpi/test_self_contact.cpp): a lower sheet [0, 1]^2 at z = 0
// (its edges held: a trampoline) and an upper sheet 0.6 x 0.6, turned by 15 degrees about the vertical through
// (0.5, 0.5), `gap` above it. Unstructured triangles;
//   gmsh -2 -format msh22 -setnumber h 0.03 two_sheets.geo -o two_sheets.msh
// Physical groups: surfaces 1 (lower) and 2 (upper), the lower sheet's edges 11.
SetFactory("OpenCASCADE");
If (!Exists(h))
  h = 0.03;
EndIf
If (!Exists(gap))
  gap = 0.02;
EndIf
Rectangle(1) = {0, 0, 0, 1, 1};
Rectangle(2) = {0.2, 0.2, gap, 0.6, 0.6};
Rotate {{0, 0, 1}, {0.5, 0.5, 0}, Pi / 12} { Surface{2}; }
Physical Surface(1) = {1};
Physical Surface(2) = {2};
Physical Curve(11) = {1, 2, 3, 4};
Mesh.CharacteristicLengthMin = h;
Mesh.CharacteristicLengthMax = h;
