// A round column: radius 0.5, height 4. Physical tags: 1 volume, 21 bottom, 22 top, 23 side.
SetFactory("OpenCASCADE");
Cylinder(1) = {0, 0, 0, 0, 0, 4, 0.5};
Physical Volume(1) = {1};
Physical Surface(21) = {3};
Physical Surface(22) = {2};
Physical Surface(23) = {1};
Mesh.CharacteristicLengthMax = 0.2;
Mesh.MshFileVersion = 4.1;
