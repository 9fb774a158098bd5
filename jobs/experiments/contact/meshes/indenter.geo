// The rigid spherical indenter of jobs/experiments/contact/indenter.yaml: a closed triangle surface of radius 0.5
// about (0, 0, 2.01) (its bottom 0.01 above the cylinder's top), written as STL:
//   gmsh -2 -format stl -bin -setnumber h 0.06 indenter.geo -o indenter.stl   (binary STL)
SetFactory("OpenCASCADE");
If (!Exists(h))
  h = 0.06;
EndIf
Sphere(1) = {0, 0, 2.01, 0.5};
Mesh.CharacteristicLengthMin = h;
Mesh.CharacteristicLengthMax = h;
