// An elastic ball of radius 0.5 about (0, 0, 0.7) (its bottom 0.2 above z = 0): the dropped-ball experiment and
// test (jobs/experiments/contact/ball_drop.yaml, tests/mpi/test_contact.cpp). Unstructured tets;
//   gmsh -3 -format msh22 -setnumber h 0.11 ball.geo -o ball.msh   (2,241 tets)
// Physical groups: volume 1, surface 11.
SetFactory("OpenCASCADE");
If (!Exists(h))
  h = 0.11;
EndIf
Sphere(1) = {0, 0, 0.7, 0.5};
Physical Volume(1) = {1};
Physical Surface(11) = {1};
Mesh.CharacteristicLengthMin = h;
Mesh.CharacteristicLengthMax = h;
