// SPDX-License-Identifier: BSD-3-Clause
/// resize_first_touched (core/first_touch.hpp): the elements resize() gives, whatever the thread count, with the
/// new pages touched by the OpenMP threads first.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/first_touch.hpp"

namespace edgefem {
namespace {

/// Runs f with `threads` OpenMP threads, then restores the count.
template <class F>
void with_threads(int threads, F&& f) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  f();
  omp_set_num_threads(before);
}

// Grown from empty (tens of megabytes: many pages on every thread) and from a few elements (kept), on 1 and 3
// threads: resize()'s elements, value-initialized after the old ones.
TEST(FirstTouch, GrowsAsResizeDoes) {
  for (const int threads : {1, 3}) {
    with_threads(threads, [] {
      std::vector<double> big;
      resize_first_touched(big, std::size_t{5} << 20);
      ASSERT_EQ(big.size(), std::size_t{5} << 20);
      EXPECT_TRUE(std::all_of(big.begin(), big.end(), [](double x) { return x == 0.0; }));

      std::vector<std::int32_t> kept{7, -3, 11};
      kept.shrink_to_fit();
      resize_first_touched(kept, 300000);
      ASSERT_EQ(kept.size(), 300000u);
      EXPECT_EQ(kept[0], 7);
      EXPECT_EQ(kept[1], -3);
      EXPECT_EQ(kept[2], 11);
      EXPECT_TRUE(std::all_of(kept.begin() + 3, kept.end(), [](std::int32_t x) { return x == 0; }));

      std::vector<std::array<std::int32_t, 4>> blocks(5, {1, 2, 3, 4});
      resize_first_touched(blocks, 70001);
      ASSERT_EQ(blocks.size(), 70001u);
      EXPECT_EQ(blocks[4], (std::array<std::int32_t, 4>{1, 2, 3, 4}));
      EXPECT_EQ(blocks.back(), (std::array<std::int32_t, 4>{0, 0, 0, 0}));
    });
  }
}

// Within the capacity (no new memory) and shrinking: resize() itself, so stale values past the size come back as
// zeros, not as what the storage held.
TEST(FirstTouch, WithinCapacityItIsResize) {
  std::vector<double> v(100000, 7.0);
  v.clear();
  resize_first_touched(v, 50000);
  ASSERT_EQ(v.size(), 50000u);
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](double x) { return x == 0.0; }));
  v[0] = 2.0;
  resize_first_touched(v, 10);
  ASSERT_EQ(v.size(), 10u);
  EXPECT_EQ(v[0], 2.0);
}

}  // namespace
}  // namespace edgefem
