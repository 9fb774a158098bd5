// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for io/vtk_output's PvdCollection::load (VTK's XML parser) and truncate_after: times round-trip bit for
// bit, hand-written variants parse, later entries are dropped, malformed files are named with file and line.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <vtkNew.h>
#include <vtkXMLDataElement.h>
#include <vtkXMLDataParser.h>

#include "core/error.hpp"
#include "io/vtk_output.hpp"
#include "tests/support/vtk_output_testing.hpp"

namespace fs = std::filesystem;
using edgefem::testing::read_text;
using edgefem::testing::VtkOutput;
using edgefem::testing::write_text;

// ---- PvdCollection::load / truncate_after ------------------------------------------------------------

namespace {

std::uint64_t double_bits(double x) {
  std::uint64_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

/// load() must throw InputError whose message starts with "PATH:LINE: " and contains `needle`.
void expect_load_error(const fs::path& p, int line, const std::string& needle) {
  try {
    (void)edgefem::PvdCollection::load(p.string());
    ADD_FAILURE() << "no exception for " << p;
  } catch (const edgefem::InputError& e) {
    const std::string what = e.what();
    const std::string prefix = p.string() + ":" + std::to_string(line) + ": ";
    EXPECT_EQ(what.rfind(prefix, 0), 0u) << what << "\nexpected prefix: " << prefix;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
}

constexpr const char* pvd_head =
    "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
    "  <Collection>\n";
constexpr const char* pvd_tail = "  </Collection>\n</VTKFile>\n";

}  // namespace

TEST_F(VtkOutput, PvdLoadRoundTripsTimesBitForBitAndKeepsOrder) {
  const std::vector<double> times = {0.0,
                                     0.1,
                                     1.0 / 3.0,
                                     2.5e-7,
                                     0.1 + 0.2,
                                     std::nextafter(1.0, 2.0),
                                     -0.0,
                                     std::numeric_limits<double>::denorm_min(),
                                     std::numeric_limits<double>::max(),
                                     -123456.789e-300,
                                     0.05};  // not sorted: order is kept as written
  const std::vector<std::string> files = {"s_0.pvtu", "dir/s_1.pvtu", "a&b <c> \"d\" 'e'.pvtu", "s 3.pvtu"};
  const std::string path = (dir_ / "run.pvd").string();
  edgefem::PvdCollection pvd(path);
  for (std::size_t k = 0; k < times.size(); ++k) pvd.add(times[k], files[k % files.size()]);
  pvd.write();

  const edgefem::PvdCollection loaded = edgefem::PvdCollection::load(path);
  EXPECT_EQ(loaded.path(), path);
  ASSERT_EQ(loaded.entries().size(), times.size());
  for (std::size_t k = 0; k < times.size(); ++k) {
    EXPECT_EQ(double_bits(loaded.entries()[k].first), double_bits(times[k])) << k << ": " << loaded.entries()[k].first;
    EXPECT_EQ(loaded.entries()[k].second, files[k % files.size()]);
  }
  EXPECT_EQ(loaded.entries(), pvd.entries());

  // Rewriting the loaded collection reproduces the file exactly; appending continues it.
  const std::string before = read_text(path);
  loaded.write();
  EXPECT_EQ(read_text(path), before);
  edgefem::PvdCollection appended = edgefem::PvdCollection::load(path);
  appended.add(7.5, "s_7.pvtu");
  appended.write();
  const auto again = edgefem::PvdCollection::load(path).entries();
  ASSERT_EQ(again.size(), times.size() + 1);
  EXPECT_EQ(again.back(), (std::pair<double, std::string>{7.5, "s_7.pvtu"}));

  // VTK's own parser agrees with ours on the escaped file name.
  vtkNew<vtkXMLDataParser> parser;
  parser->SetFileName(path.c_str());
  ASSERT_EQ(parser->Parse(), 1);
  EXPECT_STREQ(parser->GetRootElement()->GetNestedElement(0)->GetNestedElement(2)->GetAttribute("file"),
               files[2].c_str());
}

TEST_F(VtkOutput, PvdLoadOfMissingFileIsEmptyAndHandWrittenVariantsParse) {
  const std::string path = (dir_ / "none.pvd").string();
  edgefem::PvdCollection pvd = edgefem::PvdCollection::load(path);
  EXPECT_EQ(pvd.path(), path);
  EXPECT_TRUE(pvd.entries().empty());
  EXPECT_FALSE(fs::exists(path));
  pvd.add(1.0, "a.pvtu");
  pvd.write();
  EXPECT_EQ(edgefem::PvdCollection::load(path).entries().size(), 1u);

  // No XML declaration, CRLF line ends, extra blank lines and spaces, attributes in another order,
  // character references: still the writer's one-tag-per-line layout, so accepted.
  const fs::path variant = dir_ / "variant.pvd";
  write_text(variant,
             "<VTKFile type=\"Collection\" version=\"0.1\">\r\n\r\n  <Collection>\r\n"
             "    <DataSet file=\"x&#38;y&#x3c;.pvtu\"   part=\"0\" timestep=\"1e-3\" />\r\n"
             "\t<DataSet timestep=\"2\" file=\"z.pvtu\"/>\r\n  </Collection>\r\n</VTKFile>\r\n\r\n");
  const auto entries = edgefem::PvdCollection::load(variant.string()).entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0], (std::pair<double, std::string>{1e-3, "x&y<.pvtu"}));
  EXPECT_EQ(entries[1], (std::pair<double, std::string>{2.0, "z.pvtu"}));

  const fs::path empty_collection = dir_ / "empty.pvd";
  write_text(empty_collection, std::string(pvd_head) + pvd_tail);
  EXPECT_TRUE(edgefem::PvdCollection::load(empty_collection.string()).entries().empty());
}

TEST_F(VtkOutput, PvdTruncateAfterDropsLaterEntriesOnly) {
  edgefem::PvdCollection pvd((dir_ / "run.pvd").string());
  // Output times of a run killed after t = 0.4; 0.1 + 0.2 is the checkpoint time accumulated by t += dt.
  pvd.add(0.0, "s0.pvtu");
  pvd.add(0.1, "s1.pvtu");
  pvd.add(0.2, "s2.pvtu");
  pvd.add(0.1 + 0.2, "s3.pvtu");  // 0.30000000000000004
  pvd.add(0.4, "s4.pvtu");
  pvd.add(0.25, "late.pvtu");  // out of order: kept, it is not later than the checkpoint

  edgefem::PvdCollection a = pvd;
  a.truncate_after(0.3);  // step * dt: 0.29999999999999999, within the relative tolerance of 0.30000000000000004
  std::vector<std::string> kept;
  for (const auto& e : a.entries()) kept.push_back(e.second);
  EXPECT_EQ(kept, (std::vector<std::string>{"s0.pvtu", "s1.pvtu", "s2.pvtu", "s3.pvtu", "late.pvtu"}));

  edgefem::PvdCollection b = pvd;
  b.truncate_after(0.3 * (1 - 1e-9));  // clearly earlier than 0.3: drops it
  kept.clear();
  for (const auto& e : b.entries()) kept.push_back(e.second);
  EXPECT_EQ(kept, (std::vector<std::string>{"s0.pvtu", "s1.pvtu", "s2.pvtu", "late.pvtu"}));

  edgefem::PvdCollection c = pvd;
  c.truncate_after(0.0);
  ASSERT_EQ(c.entries().size(), 1u);
  EXPECT_EQ(c.entries()[0].second, "s0.pvtu");

  edgefem::PvdCollection d = pvd;
  d.truncate_after(10.0);
  EXPECT_EQ(d.entries(), pvd.entries());

  // Tiny time steps: the tolerance is relative, so 1e-15 apart at t = 1e-12 still counts as later.
  edgefem::PvdCollection tiny((dir_ / "tiny.pvd").string());
  tiny.add(1e-12, "a.pvtu");
  tiny.add(1e-12 + 1e-15, "b.pvtu");
  tiny.truncate_after(1e-12);
  ASSERT_EQ(tiny.entries().size(), 1u);
  EXPECT_EQ(tiny.entries()[0].second, "a.pvtu");

  EXPECT_THROW(pvd.truncate_after(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  EXPECT_THROW(pvd.truncate_after(std::numeric_limits<double>::infinity()), std::invalid_argument);
  EXPECT_EQ(pvd.entries().size(), 6u);

  // Truncate, write, load: the file holds exactly the kept entries.
  a.write();
  EXPECT_EQ(edgefem::PvdCollection::load(a.path()).entries(), a.entries());
}

TEST_F(VtkOutput, PvdLoadOfMalformedFileNamesFileAndLine) {
  const fs::path p = dir_ / "bad.pvd";
  const std::string good_line = "    <DataSet timestep=\"0.5\" group=\"\" part=\"0\" file=\"a.pvtu\"/>\n";

  // Syntax errors are expat's (VTK's XML parser), with its line; the rest are ours, with the element's line.
  write_text(p, "");
  expect_load_error(p, 1, "not a VTK collection (.pvd): no element found");
  write_text(p, std::string(pvd_head) + good_line);  // killed mid-write (cannot happen with write(), still caught)
  expect_load_error(p, 5, "no element found");
  write_text(p, std::string(pvd_head) + good_line + "    <DataSet timestep=\"abc\" file=\"b.pvtu\"/>\n" + pvd_tail);
  expect_load_error(p, 5, "timestep=\"abc\" is not a finite number");
  write_text(p, std::string(pvd_head) + "    <DataSet timestep=\"nan\" file=\"b.pvtu\"/>\n" + pvd_tail);
  expect_load_error(p, 4, "not a finite number");
  write_text(p, std::string(pvd_head) + "    <DataSet timestep=\"1e999\" file=\"b.pvtu\"/>\n" + pvd_tail);
  expect_load_error(p, 4, "not a finite number");
  write_text(p, std::string(pvd_head) + "    <DataSet timestep=\"1.5x\" file=\"b.pvtu\"/>\n" + pvd_tail);
  expect_load_error(p, 4, "not a finite number");
  write_text(p, std::string(pvd_head) + "    <DataSet timestep=\"1\" group=\"\"/>\n" + pvd_tail);
  expect_load_error(p, 4, "DataSet without a file attribute");
  write_text(p, std::string(pvd_head) + "    <DataSet file=\"a.pvtu\"/>\n" + pvd_tail);
  expect_load_error(p, 4, "DataSet without a timestep attribute");
  write_text(p, std::string(pvd_head) + "    <DataSet timestep=\"1\" timestep=\"2\" file=\"a\"/>\n" + pvd_tail);
  expect_load_error(p, 4, "duplicate attribute");
  write_text(p, std::string(pvd_head) + "    <DataSet timestep=\"1\" file=\"a&nbsp;b\"/>\n" + pvd_tail);
  expect_load_error(p, 4, "undefined entity");
  write_text(p, std::string(pvd_head) + "    <DataSet timestep=\"1\" file=\"a.pvtu>\n" + pvd_tail);
  expect_load_error(p, 5, "not a VTK collection (.pvd)");
  write_text(p, std::string(pvd_head) + good_line + "    garbage\n" + pvd_tail);
  expect_load_error(p, 3, "unexpected text 'garbage' in <Collection>");
  write_text(p, std::string(pvd_head) + "    <Piece Source=\"a.vtu\"/>\n" + pvd_tail);
  expect_load_error(p, 4, "expected <DataSet");
  write_text(p, "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"0.1\">\n</VTKFile>\n");
  expect_load_error(p, 2, "not a VTK collection (.pvd): VTKFile type is 'UnstructuredGrid'");
  write_text(p, "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\">\n  <Other/>\n</VTKFile>\n");
  expect_load_error(p, 3, "expected one <Collection>");
  write_text(p, std::string(pvd_head) + pvd_tail + "<VTKFile type=\"Collection\">\n");
  expect_load_error(p, 6, "junk after document element");
  write_text(p, std::string(pvd_head) + "  </Collection>\n  </Other>\n");
  expect_load_error(p, 5, "mismatched tag");

  // A directory where the file should be.
  fs::create_directories(dir_ / "dir.pvd");
  try {
    (void)edgefem::PvdCollection::load((dir_ / "dir.pvd").string());
    ADD_FAILURE() << "no exception for a directory";
  } catch (const edgefem::InputError& e) {
    EXPECT_NE(std::string(e.what()).find((dir_ / "dir.pvd").string() + ": is a directory"), std::string::npos)
        << e.what();
  }
}
