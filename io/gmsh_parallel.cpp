// SPDX-License-Identifier: BSD-3-Clause
/// \file gmsh_parallel.cpp
/// read_gmsh_slice: rank 0 scans the block table, every rank preads its slice.
#include "io/gmsh_parallel.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "io/gmsh.hpp"
#include "partition/collective.hpp"

namespace edgefem {
namespace {

/// A file read with pread; every read past the end is an InputError naming what was being read.
class File {
 public:
  explicit File(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY);
    if (fd_ < 0) throw InputError(path + ": cannot open mesh file: " + std::strerror(errno));
    const off_t end = ::lseek(fd_, 0, SEEK_END);
    size_ = end < 0 ? 0 : static_cast<std::uint64_t>(end);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] std::uint64_t size() const { return size_; }
  [[nodiscard]] const std::string& path() const { return path_; }

  [[noreturn]] void fail(std::uint64_t offset, const std::string& what) const {
    throw InputError(path_ + ": byte " + std::to_string(offset) + ": " + what);
  }
  void read(std::uint64_t offset, void* out, std::uint64_t n, const std::string& what) const {
    if (offset + n > size_)
      fail(offset, "unexpected end of file (truncated?) while reading " + what + ": " + std::to_string(n) +
                       " bytes needed from here, the file has " + std::to_string(size_));
    auto* p = static_cast<char*>(out);
    while (n > 0) {
      const ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (got <= 0) fail(offset, std::string("error while reading ") + what + ": " + std::strerror(errno));
      p += got;
      offset += static_cast<std::uint64_t>(got);
      n -= static_cast<std::uint64_t>(got);
    }
  }
  template <class T>
  T value(std::uint64_t& offset, const std::string& what) const {
    T v;
    read(offset, &v, sizeof(T), what);
    offset += sizeof(T);
    return v;
  }
  /// The line starting at offset (without '\n'); offset moves past it. At most 256 bytes.
  std::string line(std::uint64_t& offset, const std::string& what) const {
    if (offset >= size_) fail(offset, "unexpected end of file (truncated?) while reading " + what);
    char buffer[256];
    const std::uint64_t n = std::min<std::uint64_t>(sizeof buffer, size_ - offset);
    read(offset, buffer, n, what);
    const auto* nl = static_cast<const char*>(std::memchr(buffer, '\n', n));
    const std::uint64_t length = nl != nullptr ? static_cast<std::uint64_t>(nl - buffer) : n;
    offset += length + (nl != nullptr ? 1 : 0);
    std::string s(buffer, length);
    while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.pop_back();
    return s;
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

/// The block table rank 0 broadcasts (plain integers).
struct NodeBlock {
  std::uint64_t tags;    ///< offset of the node tags
  std::uint64_t coords;  ///< offset of the coordinates
  std::uint64_t count;
  std::uint64_t stride;  ///< bytes per node in the coordinates (3 doubles + parametric ones)
};
struct ElementBlock {
  std::uint64_t data;  ///< offset of the first element
  std::uint64_t count;
  std::int64_t type, region;
};

struct MshLayout {
  std::vector<NodeBlock> nodes;
  std::vector<ElementBlock> elements;
  std::uint64_t n_nodes = 0;
};

/// Skips a text or unknown section: offset moves past "$End<name>".
void skip_section(const File& f, std::uint64_t& offset, const std::string& name) {
  const std::string end = "$End" + name;
  std::string window;
  const std::uint64_t start = offset;
  for (;;) {
    if (offset >= f.size()) f.fail(start, "section '$" + name + "' has no '" + end + "' (truncated?)");
    const std::uint64_t n = std::min<std::uint64_t>(1 << 16, f.size() - offset);
    std::string chunk(n, '\0');
    f.read(offset, chunk.data(), n, "$" + name);
    const std::string joined = window + chunk;
    const auto at = joined.find(end);
    if (at != std::string::npos) {
      offset = offset - window.size() + at + end.size();
      return;
    }
    window = joined.substr(joined.size() > end.size() ? joined.size() - end.size() : 0);
    offset += n;
  }
}

void expect_end(const File& f, std::uint64_t& offset, const std::string& name) {
  std::uint64_t at = offset;
  std::string line;
  while ((line = f.line(at, "'$End" + name + "'")).empty()) {
  }
  if (line != "$End" + name)
    f.fail(offset, "expected '$End" + name + "' after the binary data of $" + name + ", got '" + line.substr(0, 40) +
                       "' (damaged or truncated file?)");
  offset = at;
}

/// Entity tag -> its first physical tag, per dimension (from $Entities).
using EntityTags = std::array<std::unordered_map<std::int64_t, int>, 4>;

/// The $MeshFormat section (its header already read): MSH 4.1 binary, 8-byte size_t, this machine's byte order.
void scan_mesh_format(const File& f, std::uint64_t& offset) {
  const std::string format = f.line(offset, "the MSH version");
  if (format != "4.1 1 8") f.fail(0, "expected MSH 4.1 binary with 8-byte size_t ('4.1 1 8'), got '" + format + "'");
  if (f.value<std::int32_t>(offset, "the endianness check") != 1)
    f.fail(offset - 4, "the endianness check is not 1 in this machine's byte order");
  f.line(offset, "the end of the endianness line");
  expect_end(f, offset, "MeshFormat");
}

/// The body of $Entities: the first physical tag of every entity into `physical`.
void scan_entities(const File& f, std::uint64_t& offset, EntityTags& physical) {
  std::uint64_t counts[4];
  for (auto& c : counts) c = f.value<std::uint64_t>(offset, "$Entities counts");
  for (int d = 0; d < 4; ++d)
    for (std::uint64_t e = 0; e < counts[d]; ++e) {
      const std::string what = "$Entities (dimension " + std::to_string(d) + ")";
      const auto tag = f.value<std::int32_t>(offset, what);
      offset += (d == 0 ? 3 : 6) * sizeof(double);
      const auto n_physical = f.value<std::uint64_t>(offset, what);
      if (n_physical > 1000000) f.fail(offset - 8, "corrupt $Entities: " + std::to_string(n_physical) + " tags");
      int first = 0;
      for (std::uint64_t i = 0; i < n_physical; ++i) {
        const auto t = f.value<std::int32_t>(offset, what);
        if (i == 0) first = t;
      }
      if (d > 0) {
        const auto n_bounding = f.value<std::uint64_t>(offset, what);
        if (n_bounding > 100000000)
          f.fail(offset - 8, "corrupt $Entities: " + std::to_string(n_bounding) + " bounding entities");
        offset += n_bounding * sizeof(std::int32_t);
      }
      physical[d][tag] = first;
    }
  f.line(offset, "the end of $Entities");
  expect_end(f, offset, "Entities");
}

/// The body of $Nodes (its header line at `header`): the node blocks into `layout`, jumping over their data.
void scan_nodes(const File& f, std::uint64_t& offset, std::uint64_t header, MshLayout& layout) {
  const auto n_blocks = f.value<std::uint64_t>(offset, "the $Nodes header");
  layout.n_nodes = f.value<std::uint64_t>(offset, "the $Nodes header");
  offset += 16;  // minimum and maximum tags
  std::uint64_t total = 0;
  for (std::uint64_t b = 0; b < n_blocks; ++b) {
    const std::string what = "node block " + std::to_string(b + 1) + " of " + std::to_string(n_blocks);
    const auto dim = f.value<std::int32_t>(offset, what);
    offset += 4;  // entity tag
    const auto parametric = f.value<std::int32_t>(offset, what);
    const auto count = f.value<std::uint64_t>(offset, what);
    const std::uint64_t stride = 8 * (3 + (parametric != 0 ? std::clamp(dim, 0, 3) : 0));
    if (count > f.size()) f.fail(offset - 8, "corrupt " + what + " header: " + std::to_string(count) + " nodes");
    NodeBlock block{offset, offset + 8 * count, count, stride};
    offset = block.coords + stride * count;
    if (offset > f.size())
      f.fail(block.tags, "unexpected end of file (truncated?): " + what + " needs bytes up to " +
                             std::to_string(offset) + ", the file has " + std::to_string(f.size()));
    if (count > 0) layout.nodes.push_back(block);
    total += count;
  }
  if (total != layout.n_nodes)
    f.fail(header, "the $Nodes header announces " + std::to_string(layout.n_nodes) + " nodes, the blocks hold " +
                       std::to_string(total));
  expect_end(f, offset, "Nodes");
}

/// The body of $Elements (its header line at `header`): the element blocks into `layout` with the physical tag of
/// their entity, jumping over their data.
void scan_elements(const File& f, std::uint64_t& offset, std::uint64_t header, const EntityTags& physical,
                   MshLayout& layout) {
  const auto n_blocks = f.value<std::uint64_t>(offset, "the $Elements header");
  const auto n_elements = f.value<std::uint64_t>(offset, "the $Elements header");
  offset += 16;
  std::uint64_t total = 0;
  for (std::uint64_t b = 0; b < n_blocks; ++b) {
    const std::string what = "element block " + std::to_string(b + 1) + " of " + std::to_string(n_blocks);
    const auto dim = f.value<std::int32_t>(offset, what);
    const auto entity = f.value<std::int32_t>(offset, what);
    const auto type = f.value<std::int32_t>(offset, what);
    const auto count = f.value<std::uint64_t>(offset, what);
    const int n = gmsh_nodes_per_element(type);
    if (n == 0)
      f.fail(offset - 20, what + ": unsupported element type " + std::to_string(type) +
                              "; supported: 1 (2-node line), 2 (3-node triangle), 4 (4-node tetrahedron), 15 "
                              "(point, ignored)");
    if (count > f.size()) f.fail(offset - 8, "corrupt " + what + " header: " + std::to_string(count) + " elements");
    int region = 0;
    if (dim >= 0 && dim <= 3)
      if (const auto it = physical[dim].find(entity); it != physical[dim].end()) region = it->second;
    ElementBlock block{offset, count, type, region};
    offset += count * 8 * (1 + static_cast<std::uint64_t>(n));
    if (offset > f.size())
      f.fail(block.data, "unexpected end of file (truncated?): " + what + " needs bytes up to " +
                             std::to_string(offset) + ", the file has " + std::to_string(f.size()));
    if (count > 0) layout.elements.push_back(block);
    total += count;
  }
  if (total != n_elements)
    f.fail(header, "the $Elements header announces " + std::to_string(n_elements) + " elements, the blocks hold " +
                       std::to_string(total));
  expect_end(f, offset, "Elements");
}

MshLayout scan(const File& f) {
  MshLayout layout;
  std::uint64_t offset = 0;
  if (f.line(offset, "$MeshFormat") != "$MeshFormat") f.fail(0, "not a Gmsh .msh file: expected '$MeshFormat'");
  scan_mesh_format(f, offset);
  EntityTags physical;
  bool have_nodes = false, have_elements = false;
  while (offset < f.size()) {
    const std::uint64_t header = offset;
    const std::string name = f.line(offset, "a section header");
    if (name.empty()) continue;
    if (name[0] != '$') f.fail(header, "expected a section header such as '$Nodes', got '" + name.substr(0, 40) + "'");
    const std::string section = name.substr(1);
    if (section == "Entities") {
      scan_entities(f, offset, physical);
    } else if (section == "Nodes") {
      scan_nodes(f, offset, header, layout);
      have_nodes = true;
    } else if (section == "Elements") {
      scan_elements(f, offset, header, physical, layout);
      have_elements = true;
    } else if (section == "PartitionedEntities") {
      f.fail(header,
             "partitioned .msh files are not supported (found $PartitionedEntities); save the mesh without "
             "partitions, edgefem partitions it itself");
    } else {
      skip_section(f, offset, section);
    }
  }
  if (!have_nodes) f.fail(f.size(), "no $Nodes section in the file");
  if (!have_elements) f.fail(f.size(), "no $Elements section in the file");
  if (layout.n_nodes == 0) f.fail(f.size(), "the $Nodes section has no nodes");
  return layout;
}

template <class T>
void broadcast_vector(MPI_Comm comm, std::vector<T>& v) {
  long long n = static_cast<long long>(v.size());
  MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, comm);
  v.resize(static_cast<std::size_t>(n));
  MPI_Bcast(v.data(), static_cast<int>(n * sizeof(T)), MPI_BYTE, 0, comm);
}

/// Reads the items [first, end) of a sequence stored in `blocks` (each block's items contiguous), calling
/// read(block, index in block, count) for each overlapping piece, in order.
template <class Block, class Read>
void read_range(const std::vector<Block>& blocks, std::uint64_t first, std::uint64_t end, Read&& read) {
  std::uint64_t at = 0;
  for (const Block& b : blocks) {
    const std::uint64_t lo = std::max(first, at), hi = std::min(end, at + b.count);
    if (lo < hi) read(b, lo - at, hi - lo);
    at += b.count;
  }
}

/// Collective: rank 0 scans `path`; every rank gets the block table.
MshLayout broadcast_layout(MPI_Comm comm, const std::string& path, int rank) {
  MshLayout layout;
  run_collectively(comm, [&] {
    if (rank == 0) layout = scan(File(path));
  });
  MPI_Bcast(&layout.n_nodes, 1, MPI_UINT64_T, 0, comm);
  broadcast_vector(comm, layout.nodes);
  broadcast_vector(comm, layout.elements);
  return layout;
}

/// The element blocks of the cells (the tets, or the triangles of a mesh without tets) and of the facets (the
/// triangles, or the lines), and how many of each.
struct CellBlocks {
  bool solid = false;  ///< the mesh has tets
  std::vector<ElementBlock> cells, facets;
  std::uint64_t n_cells = 0, n_facets = 0;
};

CellBlocks cell_blocks(const MshLayout& layout) {
  CellBlocks c;
  c.solid = std::any_of(layout.elements.begin(), layout.elements.end(),
                        [](const ElementBlock& b) { return b.type == 4; });
  const int cell_type = c.solid ? 4 : 2, facet_type = c.solid ? 2 : 1;
  for (const ElementBlock& b : layout.elements) {
    if (b.type == cell_type) c.cells.push_back(b);
    if (b.type == facet_type) c.facets.push_back(b);
  }
  for (const auto& b : c.cells) c.n_cells += b.count;
  for (const auto& b : c.facets) c.n_facets += b.count;
  return c;
}

/// This rank's block of the nodes into s.coords (s.vertex_begin: its first vertex), coordinates checked finite;
/// `consecutive` becomes false if a node tag is not the first tag + its index in file order. Returns the first tag.
std::uint64_t read_node_slice(const File& f, const MshLayout& layout, int rank, int size, MeshSlice& s,
                              bool& consecutive) {
  std::uint64_t first_tag = 0;
  f.read(layout.nodes[0].tags, &first_tag, 8, "the first node tag");
  // Nodes: tags must run first_tag, first_tag + 1, ... in file order; coordinates finite.
  s.vertex_begin = slice_begin(s.n_vertices, rank, size);
  const GlobalIndex vertex_end = slice_begin(s.n_vertices, rank + 1, size);
  s.coords.reserve(3 * static_cast<std::size_t>(vertex_end - s.vertex_begin));
  std::uint64_t index = static_cast<std::uint64_t>(s.vertex_begin);
  read_range(layout.nodes, index, static_cast<std::uint64_t>(vertex_end),
             [&](const NodeBlock& b, std::uint64_t at, std::uint64_t n) {
               std::vector<std::uint64_t> tags(n);
               f.read(b.tags + 8 * at, tags.data(), 8 * n, "node tags");
               std::vector<double> x(n * b.stride / 8);
               f.read(b.coords + b.stride * at, x.data(), b.stride * n, "node coordinates");
               for (std::uint64_t i = 0; i < n; ++i, ++index) {
                 if (tags[i] != first_tag + index) consecutive = false;
                 const double* p = x.data() + i * b.stride / 8;
                 if (!std::isfinite(p[0]) || !std::isfinite(p[1]) || !std::isfinite(p[2])) {
                   std::ostringstream m;
                   m.precision(17);
                   m << "node " << tags[i] << " has a non-finite coordinate (" << p[0] << ", " << p[1] << ", " << p[2]
                     << "); expected finite numbers";
                   f.fail(b.coords + b.stride * (at + i), m.str());
                 }
                 s.coords.insert(s.coords.end(), p, p + 3);
               }
             });
  return first_tag;
}

/// This rank's block of cells and of facets into `s`, node tags turned into file-order vertex ids.
void read_element_slices(const File& f, const MshLayout& layout, const CellBlocks& blocks, std::uint64_t first_tag,
                         int rank, int size, MeshSlice& s) {
  auto read_elements = [&](const std::vector<ElementBlock>& element_blocks, std::uint64_t total, int n,
                           std::vector<GlobalIndex>& vertices, std::vector<int>& region) {
    const std::uint64_t first = static_cast<std::uint64_t>(slice_begin(static_cast<GlobalIndex>(total), rank, size));
    const std::uint64_t end = static_cast<std::uint64_t>(slice_begin(static_cast<GlobalIndex>(total), rank + 1, size));
    vertices.reserve(n * (end - first));
    region.reserve(end - first);
    read_range(element_blocks, first, end, [&](const ElementBlock& b, std::uint64_t at, std::uint64_t count) {
      const std::uint64_t record = 8 * (1 + static_cast<std::uint64_t>(n));
      std::vector<std::uint64_t> data(count * (1 + n));
      f.read(b.data + record * at, data.data(), record * count, "elements");
      for (std::uint64_t e = 0; e < count; ++e) {
        const std::uint64_t* r = data.data() + e * (1 + n);
        for (int k = 1; k <= n; ++k) {
          if (r[k] < first_tag || r[k] - first_tag >= layout.n_nodes)
            f.fail(b.data + record * (at + e), "element " + std::to_string(r[0]) + " references node " +
                                                   std::to_string(r[k]) + ", which is not in $Nodes (tags " +
                                                   std::to_string(first_tag) + " to " +
                                                   std::to_string(first_tag + layout.n_nodes - 1) + ")");
          vertices.push_back(static_cast<GlobalIndex>(r[k] - first_tag));
        }
        region.push_back(static_cast<int>(b.region));
      }
    });
    return first;
  };
  s.cell_begin = static_cast<GlobalIndex>(read_elements(blocks.cells, blocks.n_cells, s.nodes, s.cells, s.cell_region));
  read_elements(blocks.facets, blocks.n_facets, s.nodes - 1, s.facets, s.facet_region);
}

}  // namespace

bool is_gmsh41_binary(const std::string& path) {
  try {
    const File f(path);
    std::uint64_t offset = 0;
    if (f.line(offset, "") != "$MeshFormat" || f.line(offset, "") != "4.1 1 8") return false;
    return f.value<std::int32_t>(offset, "") == 1;
  } catch (const InputError&) {
    return false;
  }
}

MeshSlice read_gmsh_slice(MPI_Comm comm, const std::string& path) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const MshLayout layout = broadcast_layout(comm, path, rank);
  const CellBlocks blocks = cell_blocks(layout);

  MeshSlice s;
  s.nodes = blocks.solid ? 4 : 3;
  s.n_vertices = static_cast<GlobalIndex>(layout.n_nodes);
  s.n_cells = static_cast<GlobalIndex>(blocks.n_cells);
  std::uint64_t first_tag = 0;
  bool consecutive = true;
  run_collectively(comm, [&] {
    const File f(path);
    if (blocks.n_cells == 0) throw InputError(path + ": the mesh has no tetrahedra, triangles or lines");
    first_tag = read_node_slice(f, layout, rank, size, s, consecutive);
  });
  bool all_consecutive = false;
  MPI_Allreduce(&consecutive, &all_consecutive, 1, MPI_CXX_BOOL, MPI_LAND, comm);
  if (!all_consecutive)
    throw CollectiveError(path +
                          ": the parallel reader needs node tags numbered consecutively in file order (as Gmsh "
                          "writes a whole mesh); renumber the mesh (gmsh -renumber) or save it as ASCII");

  // Elements: this rank's block of cells and of facets, node tags turned into file-order vertex ids.
  run_collectively(comm, [&] { read_element_slices(File(path), layout, blocks, first_tag, rank, size, s); });
  return s;
}

}  // namespace edgefem
