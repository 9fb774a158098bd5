// The soft cylinder of jobs/experiments/contact/indenter.yaml: radius 0.5, from z = 0 to z = 1.5, unstructured tets
// finer near the top's centre, where the indenter presses:
//   gmsh -3 -format msh22 -setnumber h 0.1 -setnumber hc 0.035 cylinder.geo -o cylinder.msh
// Physical groups: volume 1, bottom 11, side 12, top 13.
SetFactory("OpenCASCADE");
If (!Exists(h))
  h = 0.1;
EndIf
If (!Exists(hc))
  hc = 0.035;
EndIf
Cylinder(1) = {0, 0, 0, 0, 0, 1.5, 0.5};
Physical Volume(1) = {1};
Physical Surface(11) = {3};
Physical Surface(12) = {1};
Physical Surface(13) = {2};
Field[1] = MathEval;
Field[1].F = Sprintf("%g + (%g - %g) * Min(1, Sqrt(x * x + y * y + (z - 1.5) * (z - 1.5)) / 0.4)", hc, h, hc);
Background Field = 1;
Mesh.CharacteristicLengthFromPoints = 0;
Mesh.CharacteristicLengthExtendFromBoundary = 0;
