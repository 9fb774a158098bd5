// A split ring: a beam bent into a circle with a gap, to be bent further until its ends press together (issue 53;
// jobs/experiments/self_contact/split_ring.yaml, tests/mpi/test_self_contact_ring.cpp). Mean radius 0.05, square
// cross-section 0.01 x 0.01, the gap 20 degrees wide around the +x axis (the ends at +-10 degrees); unstructured tets:
//   gmsh -3 -format msh22 -setnumber h 0.005 split_ring.geo -o split_ring.msh
// The ring is swept about the z axis in five pieces (built-in kernel: a rotation extrusion below 180 degrees):
// tip A (10 to 20 degrees, y > 0), 20 to 175, the back (175 to 185), 185 to 340, tip B (340 to 350, y < 0).
// Physical groups: volume 1; surfaces 11 the back's outer face (held), 13 and 14 the tips' outer faces (loaded),
// 15 and 16 the end faces of A and B.
If (!Exists(h))
  h = 0.005;
EndIf
R = 0.05;
b = 0.01;
t = 0.01;
Mesh.CharacteristicLengthMin = h;
Mesh.CharacteristicLengthMax = h;
Point(1) = {R - b / 2, 0, -t / 2, h};
Point(2) = {R + b / 2, 0, -t / 2, h};
Point(3) = {R + b / 2, 0, t / 2, h};
Point(4) = {R - b / 2, 0, t / 2, h};
Line(1) = {1, 2};  // bottom
Line(2) = {2, 3};  // outer
Line(3) = {3, 4};  // top
Line(4) = {4, 1};  // inner
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Rotate {{0, 0, 1}, {0, 0, 0}, 10 * Pi / 180} { Surface{1}; }
a[] = Extrude {{0, 0, 1}, {0, 0, 0}, 10 * Pi / 180} { Surface{1}; };
m1[] = Extrude {{0, 0, 1}, {0, 0, 0}, 155 * Pi / 180} { Surface{a[0]}; };
k[] = Extrude {{0, 0, 1}, {0, 0, 0}, 10 * Pi / 180} { Surface{m1[0]}; };
m2[] = Extrude {{0, 0, 1}, {0, 0, 0}, 155 * Pi / 180} { Surface{k[0]}; };
e[] = Extrude {{0, 0, 1}, {0, 0, 0}, 10 * Pi / 180} { Surface{m2[0]}; };
Physical Volume(1) = {a[1], m1[1], k[1], m2[1], e[1]};
Physical Surface(11) = {k[3]};
Physical Surface(13) = {a[3]};
Physical Surface(14) = {e[3]};
Physical Surface(15) = {1};
Physical Surface(16) = {e[0]};
