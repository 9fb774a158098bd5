// Slender cantilever 10 x 1 x 1 (issue 47): unstructured tets, 3603 with Gmsh 4.8 (gmsh -3 slender_cantilever.geo);
// the geometry of jobs/bench/meshes/cantilever.geo at h = 0.25. Physical tags: 1 volume, 11 the x = 0 face
// (clamped), 12 the x = 10 face.
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 10, 1, 1};
Physical Volume(1) = {1};
Physical Surface(11) = {1};
Physical Surface(12) = {2};
Mesh.CharacteristicLengthMax = 0.25;
Mesh.MshFileVersion = 4.1;
