// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file self_exchange.hpp
/// Self-contact's ghost layer (issue 53): which surface vertices' values a rank exchanges with which ranks, so that
/// it can evaluate the pairs it owns (solver/self_contact.hpp) with messages to the ranks whose surface is near its
/// own only — not an allgather of the whole surface.
///
/// Every rank holds the surface's topology and each vertex's owner (gathered once at set-up). A rank "knows" its
/// owned surface vertices and the ghosts it receives. A layer is built at positions c (collective): each rank
/// contributes 16 boxes B_r of its owned surface vertices (clusters by median splits, each over c and over the
/// anchor: the step's start, where friction was lagged) and the longest of its edges L_r (an edge belongs to its
/// first vertex's owner) — one MPI_Allgather of 97 doubles per rank. With L the longest edge of all and
/// G = 2 delta + 2 g (delta: how far any vertex may move from c while the layer serves; g: the largest box
/// inflation of a pair query), rank r needs every surface vertex within one of its boxes grown by 2 L + G (per
/// axis): every primitive that can come within g of one of r's primitives while all vertices stay within delta of c
/// has its vertices there. The owner q of such a vertex sends it to r; both know from the gathered boxes that q
/// talks to r (a box of q overlaps r's grown boxes), so the lists are settled with point-to-point messages (a
/// count, then the indices) between such pairs of ranks only.
///
/// While it serves, an evaluation exchanges with the layer's neighbours only: forward (owners send the positions
/// of the vertices on the lists, 3 doubles each) and reverse (the ghosts' contributions — gradients, Hessian blocks
/// — sent back and added by the owners). Whether every vertex is still within delta of c is one MPI_Allreduce of
/// 2 doubles per evaluation; a query beyond it builds a new layer there. With translate(true) (the position-based
/// integrator's), "within delta of c" is less one common translation of all vertices (per axis, half the range of
/// the moves from c over all ranks: 7 doubles): the pairs' geometry, and so which ghosts a rank needs, does not change
/// when the whole surface moves by one vector, so a falling body keeps its layer.
#include <mpi.h>

#include <array>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

namespace edgefem {

/// What the exchange cost this rank so far.
struct SelfExchangeTraffic {
  long long messages = 0;              ///< point-to-point messages sent (evaluations and builds)
  double bytes_sent = 0.0, bytes_received = 0.0;  ///< in those messages
  long long reductions = 0;            ///< small collectives (validity, limits, energies: 8-16 bytes each)
  long long builds = 0;                ///< layers built (each an MPI_Allgather of 97 doubles per rank)
  long long exchanges = 0;             ///< forward and reverse exchanges of values
};

class SelfExchange {
 public:
  /// Who talks to whom for one layer, and what.
  struct Layer {
    std::vector<int> ranks;                    ///< neighbours (increasing)
    std::vector<std::vector<int>> send, recv;  ///< per neighbour: owned vertices sent, ghosts received
    std::vector<char> known;                   ///< per surface vertex: owned or received
  };

  /// `owner`: each surface vertex's rank; `edges`: the surface's edges (an edge belongs to its first vertex's
  /// owner); `query_inflation`: g. The first layer holds the far vertices of the rank's edges only. Collective
  /// (duplicates comm).
  SelfExchange(MPI_Comm comm, std::vector<int> owner, std::vector<std::array<int, 2>> edges, double query_inflation);
  ~SelfExchange();
  SelfExchange(const SelfExchange&) = delete;
  SelfExchange& operator=(const SelfExchange&) = delete;

  [[nodiscard]] std::shared_ptr<const Layer> layer() const { return layer_; }
  [[nodiscard]] const std::vector<int>& owned() const { return owned_; }
  [[nodiscard]] double reach() const { return delta_; }
  [[nodiscard]] const SelfExchangeTraffic& traffic() const { return traffic_; }
  void reset_traffic() { traffic_ = {}; }

  /// Whether every vertex of every rank at x (and at x + dx, if given; 3 per surface vertex, owned entries read)
  /// lies within the layer's reach of its centre; `move` gets the largest |dx| component of any rank. Collective.
  bool serves(std::span<const double> x, std::span<const double> dx, double& move);
  /// serves() measures the distance from the centre less the best common translation (see above).
  void translate(bool on) { translating_ = on; }
  /// A new layer centred at x (3 per surface vertex, owned entries valid; the known ones are filled first through
  /// the current layer), serving moves up to `delta`. Collective.
  void build(std::span<double> x, double delta);
  /// The anchor: the step's start x (owned and known entries valid), where friction was lagged; later layers keep
  /// the vertices near the rank's surface there too. Empty: none.
  void set_anchor(std::span<const double> x);

  /// Forward: each array (k doubles per surface vertex) gets its ghosts' values from their owners. Collective among
  /// the layer's neighbours.
  void forward(const Layer& layer, std::initializer_list<std::span<double>> arrays, int k);
  /// Reverse: the ghosts' entries (k per vertex) are sent to their owners and added there; a ghost's own entry is
  /// left as it was.
  void reverse_add(const Layer& layer, std::span<double> values, int k);

 private:
  bool serves_translated(std::span<const double> x, std::span<const double> dx, double& move);
  /// The longest of this rank's edges at x (its far vertices known).
  double longest_edge(std::span<const double> x) const;
  /// Exchanges counts and then lists of surface indices with the ranks of `targets` (sent) and `sources`
  /// (received); returns the lists received, per source.
  std::vector<std::vector<int>> trade_lists(const std::vector<int>& targets, const std::vector<std::vector<int>>& lists,
                                            const std::vector<int>& sources);
  /// The new layer from the lists settled by build().
  void install(const std::vector<int>& targets, std::vector<std::vector<int>>& lists, const std::vector<int>& sources,
               std::vector<std::vector<int>> received);
  void post(const Layer& layer, bool reverse, int k, std::vector<std::vector<double>>& out,
            std::vector<std::vector<double>>& in, std::vector<MPI_Request>& requests);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  std::vector<int> owner_;
  std::vector<std::array<int, 2>> edges_;  ///< this rank's edges
  std::vector<int> owned_;                 ///< owned surface vertices, increasing
  double inflation_ = 0.0;
  std::shared_ptr<const Layer> layer_;
  std::vector<double> centre_;  ///< 3 per owned vertex (owned_ order): the layer's centre
  std::vector<double> anchor_;  ///< 3 per owned vertex, or empty
  double anchor_edge_ = 0.0;    ///< the longest of the rank's edges at the anchor
  double delta_ = -1.0;         ///< the layer's reach (negative: no geometric layer yet)
  bool translating_ = false;    ///< serves() less a common translation
  SelfExchangeTraffic traffic_;
};

}  // namespace edgefem
