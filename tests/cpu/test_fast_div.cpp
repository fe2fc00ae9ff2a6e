// The sm90 scheduler's division by multiply and shift (kernels/common/fast_div.cuh), run on the
// host: the same header the kernel compiles. fast_div(n, fast_div_for(d)) must equal n / d for
// every 0 <= n < 2^31 and d >= 1 (exhaustively where that is cheap, at the edges and at random
// beyond), and the scheduler's decoding that divides so (TileScheduler::coords_fast, with the
// divisors the host makes: backend/cuda/kernel_args.hpp, tile_divs) must give every unit the
// coordinates of the one dividing with `/` (coords).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <climits>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#define __device__
#define __forceinline__ inline
#include "kernels/common/fast_div.cuh"
#include "kernels/common/scheduler.cuh"
#undef __device__
#undef __forceinline__

#include "backend/cuda/kernel_args.hpp"

namespace {

// Whether fast_div agrees with `/` on every n for d (reports the first n where it does not).
bool check_divisor(int d, const std::vector<int>& ns) {
  const FastDiv f = fast_div_for(d);
  for (int n : ns) {
    if (fast_div(n, f) != n / d) {
      BOOST_ERROR("fast_div(" << n << ", d = " << d << ") = " << fast_div(n, f) << ", expected " << n / d
                              << " (mul " << f.mul << ", shift " << f.shift << ")");
      return false;
    }
  }
  return true;
}

// The host's grid (backend/cuda/kernel_args.cpp, tile_grid), without its KernelView.
TileGrid host_grid(int m_blocks, int n_blocks, int batches, int raster_group, int cluster_m) {
  TileGrid g{};
  g.num_m_blocks = m_blocks;
  g.num_n_blocks = n_blocks;
  g.batch_count = batches;
  g.raster_group = raster_group;
  g.cluster_m = cluster_m;
  g.split_k = 1;
  return g;
}


}  // namespace

BOOST_AUTO_TEST_CASE(fast_div_matches_division_exhaustively_for_small_values) {
  std::vector<int> ns(1 << 16);
  for (int i = 0; i < int(ns.size()); ++i) ns[i] = i;
  int wrong = 0;
  for (int d = 1; d <= 4096; ++d) wrong += !check_divisor(d, ns);
  BOOST_CHECK_EQUAL(wrong, 0);
}

BOOST_AUTO_TEST_CASE(fast_div_matches_division_at_the_edges_and_at_random) {
  std::mt19937 gen(20261206);
  std::uniform_int_distribution<int> any(0, INT_MAX);
  std::vector<int> ds;
  for (int s = 0; s < 31; ++s) {  // powers of two and their neighbours
    const long long p = 1LL << s;
    for (long long d : {p - 1, p, p + 1})
      if (d >= 1 && d <= INT_MAX) ds.push_back(int(d));
  }
  for (int d : {3, 5, 7, 11, 13, 33, 65, 129, 132, 255, 257, 1000, 4097, 65537, 1000003, 46341, INT_MAX - 1, INT_MAX})
    ds.push_back(d);
  for (int i = 0; i < 2000; ++i) ds.push_back(std::max(1, any(gen) >> (i % 31)));
  int wrong = 0;
  for (int d : ds) {
    std::vector<int> ns = {0, 1, d - 1, d, INT_MAX, INT_MAX - 1};
    for (long long q : {1LL, 2LL, 3LL, 1000LL, (long long)(INT_MAX / d), (long long)(INT_MAX / d) - 1}) {
      for (long long delta : {-1LL, 0LL, 1LL}) {
        const long long n = q * d + delta;
        if (n >= 0 && n <= INT_MAX) ns.push_back(int(n));
      }
    }
    for (int i = 0; i < 200; ++i) ns.push_back(any(gen));
    ns.erase(std::remove_if(ns.begin(), ns.end(), [](int n) { return n < 0; }), ns.end());
    wrong += !check_divisor(d, ns);
  }
  BOOST_CHECK_EQUAL(wrong, 0);
  BOOST_CHECK_GT(ds.size(), 2000u);
}

BOOST_AUTO_TEST_CASE(fast_scheduler_gives_every_unit_the_same_tile) {
  int grids = 0;
  for (int m_blocks : {1, 2, 3, 7, 8, 9, 16, 33})
    for (int n_blocks : {1, 2, 5, 8, 13, 64, 131})
      for (int batches : {1, 2, 3})
        for (int raster_group : {0, 1, 2, 4, 8})
          for (int cluster_m : {1, 2}) {
            if (raster_group > 1 && raster_group % cluster_m != 0) continue;
            const TileGrid g = host_grid(m_blocks, n_blocks, batches, raster_group, cluster_m);
            const dg::TileScheduler sched{g, dgemm::cuda::tile_divs(g)};
            BOOST_REQUIRE_EQUAL(sched.num_units_fast(), sched.num_units());
            std::set<std::tuple<int, int, int>> seen;
            for (int unit = 0; unit < sched.num_units(); ++unit) {
              const dg::TileCoord a = sched.coords_fast(unit), b = sched.coords(unit);
              if (a.m_block != b.m_block || a.n_block != b.n_block || a.batch != b.batch || a.split != b.split) {
                BOOST_ERROR("grid " << m_blocks << "x" << n_blocks << " batches " << batches << " raster "
                                    << raster_group << " cluster_m " << cluster_m << ": unit " << unit << " fast ("
                                    << a.m_block << ", " << a.n_block << ", " << a.batch << ") slow (" << b.m_block
                                    << ", " << b.n_block << ", " << b.batch << ")");
                return;
              }
              seen.insert({a.m_block, a.n_block, a.batch});
            }
            // Every tile once (a unit of cluster_m tiles counts by its first M block).
            BOOST_CHECK_EQUAL(int(seen.size()), sched.num_units());
            ++grids;
          }
  BOOST_TEST_MESSAGE(grids << " grids");
  BOOST_CHECK_GT(grids, 1000);
}
