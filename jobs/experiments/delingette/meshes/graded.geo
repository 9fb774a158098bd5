// Delingette Fig. 12 (b): the unit square with a strong variation of triangle sizes (about 1:12 from the
// corner (0, 0) to the corner (1, 1)).
// gmsh -2 -format msh22 graded.geo -o graded.msh
Point(1) = {0, 0, 0, 0.02};
Point(2) = {1, 0, 0, 0.12};
Point(3) = {1, 1, 0, 0.24};
Point(4) = {0, 1, 0, 0.12};
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
Mesh.Algorithm = 5;
