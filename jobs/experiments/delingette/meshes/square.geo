// Delingette Fig. 12 (a): a fairly uniform unstructured triangulation of the unit square.
// gmsh -2 -format msh22 square.geo -o square.msh
lc = 1.0 / 12;
Point(1) = {0, 0, 0, lc};
Point(2) = {1, 0, 0, lc};
Point(3) = {1, 1, 0, lc};
Point(4) = {0, 1, 0, lc};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Physical Line(11) = {4};  // x = 0
Physical Line(12) = {2};  // x = 1
Physical Line(13) = {1};  // y = 0
Physical Line(14) = {3};  // y = 1
Physical Surface(1) = {1};
Mesh.Algorithm = 5;  // Delaunay
