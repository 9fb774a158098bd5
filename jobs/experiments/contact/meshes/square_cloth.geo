// A horizontal square cloth for the folding-cloth experiment (issue 53; cloth_fold.sh): `size` x `size`, centred
// on the z axis at height `height`. Unstructured triangles; h = 0.0045 gives about 114,000 (not committed:
//   gmsh -2 -format msh22 -setnumber h 0.0045 square_cloth.geo -o square_cloth.msh ; the script does it).
SetFactory("OpenCASCADE");
If (!Exists(h))
  h = 0.0045;
EndIf
If (!Exists(size))
  size = 1.0;
EndIf
If (!Exists(height))
  height = 0.45;
EndIf
Rectangle(1) = {-size / 2, -size / 2, height, size, size};
Physical Surface(1) = {1};
Mesh.CharacteristicLengthMin = h;
Mesh.CharacteristicLengthMax = h;
