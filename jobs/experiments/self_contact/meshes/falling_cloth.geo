// A square cloth standing nearly upright above a floor, for the position-based self-collision (issue 53;
// tests/mpi/test_pbd_self_contact.cpp; the experiment generates a finer one): `size` x `size`,
// turned about its bottom edge (the x axis) by `tilt` from the vertical, the bottom edge `lift` above z = 0, so it
// falls onto the floor and folds over itself. Unstructured triangles:
//   gmsh -2 -format msh22 falling_cloth.geo -o falling_cloth.msh
// Physical groups: surface 1, its bottom edge 11.
SetFactory("OpenCASCADE");
If (!Exists(h))
  h = 0.0125;
EndIf
If (!Exists(size))
  size = 0.4;
EndIf
If (!Exists(tilt))
  tilt = 10 * Pi / 180;
EndIf
If (!Exists(lift))
  lift = 0.01;
EndIf
Rectangle(1) = {-size / 2, 0, 0, size, size};
Rotate {{1, 0, 0}, {0, 0, 0}, Pi / 2 - tilt} { Surface{1}; }
Translate {0, 0, lift} { Surface{1}; }
Physical Surface(1) = {1};
Physical Curve(11) = {1};
Mesh.CharacteristicLengthMin = h;
Mesh.CharacteristicLengthMax = h;
