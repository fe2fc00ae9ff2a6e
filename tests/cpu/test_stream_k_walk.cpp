// The device-side scheduling code of stream-K and grouped launches, run on the host: the same
// headers the sm90 kernel compiles (kernels/common/stream_k_split.cuh, stream_k_walk.cuh,
// group_walk.cuh), checked exhaustively over unit counts, grid sizes and K lengths, because a GPU
// run only sees the few configurations its shapes happen to give.
//  - stream-K (in the kernel's form: whole units in a loop of their own, then the pieces, which
//    must be the one loop's pieces in the same order): every K block of every unit is computed
//    exactly once; each unit is finished by one
//    CTA, from its first K block, after exactly the partials of the CTAs it names (cta + 1 .. p - 1);
//    a CTA's units only increase (the grouped walk requires it); a CTA leaves its partial before it
//    waits for others, and waits only for later CTAs (so no cycle: the grid is co-resident);
//  - the grouped walk: the unit count the kernel finds by seeking past the end is the one the CPU
//    rule (core/grouping.cpp) gives; units walked in order after a restart decode to every tile of
//    every group exactly once, inside the group's rows.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/grouping.hpp"

// The kernel headers compile as plain C++ here: their device qualifiers mean nothing on the host.
#define __device__
#define __forceinline__ inline
#include "kernels/common/group_walk.cuh"
#include "kernels/common/stream_k_split.cuh"
#include "kernels/common/stream_k_walk.cuh"
#undef __device__
#undef __forceinline__

namespace {

// The split as the kernel's StreamKSource reads it.
struct Source {
  int n, tiles, ctas, iters, split;
  int units() const { return n; }
  int sk_tiles() const { return tiles; }
  int sk_ctas() const { return ctas; }
  int sk_iters() const { return iters; }
  int sk_split() const { return split; }
};

// grouped: the split a grouped kernel makes (dg_stream_k_split_grouped: even pieces or whole units).
Source source(int units, int grid, int kb, bool grouped = false) {
  const DgStreamKSplit s = grouped ? dg_stream_k_split_grouped(units, grid, kb) : dg_stream_k_split(units, grid, kb);
  return {units, int(s.sk_tiles), int(s.sk_ctas), int(s.sk_iters), s.split};
}

// "" when every CTA's walk together computes the launch as the kernel's reduction assumes.
std::string check_walk(int units, int grid, int kb, bool grouped = false) {
  const Source src = source(units, grid, kb, grouped);
  std::ostringstream err;
  auto fail = [&](const std::string& what) {
    if (err.tellp() == 0) err << "units " << units << " grid " << grid << " kb " << kb << ": " << what;
  };
  if (src.ctas > grid) fail("more stream-K CTAs than the grid");
  std::vector<std::vector<int>> covered(std::size_t(units), std::vector<int>(std::size_t(kb), 0));
  std::vector<int> finisher(std::size_t(units), -1), finisher_sk(std::size_t(units), 0);
  std::vector<std::set<int>> partial_ctas{std::size_t(units)};
  for (int cta = 0; cta < grid; ++cta) {
    // The walk as one loop, and as the kernel runs it (whole units in a loop of their own, then
    // the pieces): the same pieces in the same order.
    std::vector<DgStreamKPiece> one, two;
    int it = dg_stream_k_begin(src, cta, grid);
    DgStreamKPiece p;
    for (int guard = 0; dg_stream_k_next(src, cta, grid, kb, it, p); ++guard) {
      if (guard > units + 4) {
        fail("a CTA's walk does not end");
        break;
      }
      one.push_back(p);
    }
    for (int unit = cta; unit < dg_stream_k_whole_end(src); unit += grid) two.push_back({unit, 0, kb, 0});
    it = kDgStreamKShared;
    for (int guard = 0; dg_stream_k_next(src, cta, grid, kb, it, p) && guard <= units + 4; ++guard) two.push_back(p);
    bool same = one.size() == two.size();
    for (std::size_t i = 0; same && i < one.size(); ++i)
      same = one[i].unit == two[i].unit && one[i].kb0 == two[i].kb0 && one[i].kb1 == two[i].kb1 && one[i].sk == two[i].sk;
    if (!same) fail("CTA " + std::to_string(cta) + ": the kernel's two loops walk other pieces than the one loop");
    int last_unit = -1;
    bool waited = false;
    for (const DgStreamKPiece& piece : two) {
      p = piece;
      if (p.unit < 0 || p.unit >= units) {
        fail("unit " + std::to_string(p.unit) + " out of range");
        break;
      }
      if (p.unit <= last_unit) fail("units do not increase along CTA " + std::to_string(cta));
      last_unit = p.unit;
      if (p.kb0 < 0 || p.kb1 > kb || p.kb0 >= p.kb1) {
        fail("empty or out-of-range K blocks [" + std::to_string(p.kb0) + ", " + std::to_string(p.kb1) + ")");
        continue;
      }
      for (int k = p.kb0; k < p.kb1; ++k) ++covered[std::size_t(p.unit)][std::size_t(k)];
      const std::size_t u = std::size_t(p.unit);
      if (p.sk < 0) {
        if (p.kb0 == 0) fail("a partial piece holds the unit's first K block");
        if (waited) fail("CTA " + std::to_string(cta) + " leaves a partial after it waited");
        partial_ctas[u].insert(cta);
      } else {
        if (p.kb0 != 0) fail("a finishing piece does not start at K block 0");
        if (finisher[u] >= 0) fail("unit " + std::to_string(p.unit) + " finished twice");
        finisher[u] = cta;
        finisher_sk[u] = p.sk;
        if (p.sk == 0 && p.kb1 != kb) fail("a whole piece that does not cover K");
        if (p.sk > 0) {
          if (p.sk <= cta + 1 || p.sk > grid) fail("peer slots out of order or past the grid");
          waited = true;
        }
      }
    }
  }
  for (int u = 0; u < units && err.tellp() == 0; ++u) {
    for (int k = 0; k < kb; ++k)
      if (covered[std::size_t(u)][std::size_t(k)] != 1)
        fail("unit " + std::to_string(u) + " K block " + std::to_string(k) + " computed " +
             std::to_string(covered[std::size_t(u)][std::size_t(k)]) + " times");
    if (finisher[std::size_t(u)] < 0) {
      fail("unit " + std::to_string(u) + " never finished");
      continue;
    }
    std::set<int> want;
    for (int c = finisher[std::size_t(u)] + 1; c < finisher_sk[std::size_t(u)]; ++c) want.insert(c);
    if (want != partial_ctas[std::size_t(u)])
      fail("unit " + std::to_string(u) + ": the finisher adds other slots than those holding its partials");
  }
  return err.str();
}

// One random grouped launch: row arrays with bad values too (negative, past m, decreasing), which
// the walk clips as the CPU does. "" when the walk agrees with the CPU rule.
template <int kLayout>
std::string check_group_walk(std::mt19937& rng, int trial) {
  constexpr bool kContiguous = kLayout == dg::kGroupContiguous;
  constexpr int kBlockM = 64;
  const int groups = 1 + int(rng() % 12);
  const int alignment = kContiguous ? (trial % 3 == 0 ? 1 : trial % 3 == 1 ? 8 : 64) : 1;
  const long long m = (1 + (long long)(rng() % 700)) / alignment * alignment + alignment;  // a multiple of it
  const int n_blocks = 1 + int(rng() % 4);
  std::vector<int> rows(std::size_t(kContiguous ? groups + 1 : groups));
  std::uniform_int_distribution<int> v(-20, int(m) + 40);
  for (int& r : rows) r = v(rng);
  if (kContiguous && trial % 4 == 0)  // valid offsets too, not only clipped ones
    for (std::size_t i = 1; i < rows.size(); ++i) rows[i] = std::max(rows[i], rows[i - 1]);
  dgemm::Grouping g;
  g.layout = kContiguous ? dgemm::GroupLayout::Contiguous : dgemm::GroupLayout::Masked;
  g.m_alignment = alignment;
  const dgemm::GroupRows want = dgemm::resolve_group_rows(g, groups, m, kContiguous ? rows.data() : nullptr,
                                                          kContiguous ? nullptr : rows.data());
  // Every (group, M tile, N block) the launch must compute, with the tile's first row.
  std::set<std::tuple<int, long long, int>> tiles;
  for (int i = 0; i < groups; ++i)
    for (long long r = want.begin[std::size_t(i)]; r < want.end[std::size_t(i)]; r += kBlockM)
      for (int nb = 0; nb < n_blocks; ++nb) tiles.insert({i, r, nb});

  GroupArgs a{};
  a.rows = rows.data();
  a.groups = groups;
  a.alignment = alignment;
  std::ostringstream err;
  err << (kContiguous ? "contiguous" : "masked") << " trial " << trial << " G " << groups << " m " << m << ": ";
  // The count, as a stream-K launch finds it: seek past the end, then start again.
  dg::GroupWalk<kLayout, kBlockM> walk;
  walk.start(a, m, n_blocks);
  if (walk.seek(0x7fffffffffffffffll)) return err.str() + "seeking past the end found a group";
  if (walk.first != (long long)tiles.size())
    return err.str() + "counted " + std::to_string(walk.first) + " units, the CPU rule gives " + std::to_string(tiles.size());
  // Walks as the CTAs of a grid take them (unit = cta, cta + grid, ...): each unit decodes to a
  // distinct tile of the set, in its group's rows.
  const int grid = 1 + int(rng() % 5);
  std::set<std::tuple<int, long long, int>> seen;
  for (int cta = 0; cta < grid; ++cta) {
    walk.start(a, m, n_blocks);
    for (long long unit = cta; walk.seek(unit); unit += grid) {
      long long row0;
      int n_block;
      walk.tile(unit, row0, n_block);
      const std::tuple<int, long long, int> t{walk.group, row0, n_block};
      if (!tiles.count(t)) return err.str() + "unit " + std::to_string(unit) + " decodes to a tile outside the groups";
      if (walk.end != want.end[std::size_t(walk.group)]) return err.str() + "a group's end differs from the CPU rule";
      if (!seen.insert(t).second) return err.str() + "unit " + std::to_string(unit) + " decodes to a tile twice";
    }
  }
  if (seen != tiles) return err.str() + "the walk misses tiles";
  return "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(stream_k_walk)

BOOST_AUTO_TEST_CASE(every_k_block_once_and_reductions_consistent) {
  const int grids[] = {1, 2, 3, 5, 8, 66, 131, 132, 133, 264};
  const int kbs[] = {1, 2, 3, 4, 5, 7, 8, 16, 17, 112};
  int configs = 0, shared = 0, even = 0;
  for (int grid : grids)
    for (int kb : kbs)
      for (int units = 0; units <= 300; units += units < 140 ? 1 : 23) {
        const std::string e = check_walk(units, grid, kb);
        BOOST_TEST_REQUIRE(e.empty(), e);
        const std::string eg = check_walk(units, grid, kb, true);
        BOOST_TEST_REQUIRE(eg.empty(), "grouped: " + eg);
        const DgStreamKSplit s = dg_stream_k_split(units, grid, kb);
        const DgStreamKSplit g = dg_stream_k_split_grouped(units, grid, kb);
        // The grouped split is the plain one where that has even pieces (or none), else whole units.
        BOOST_TEST_REQUIRE((s.split > 0 || s.sk_tiles == 0 ? g.sk_tiles == s.sk_tiles && g.split == s.split
                                                            : g.sk_tiles == 0 && g.dp_tiles == units));
        ++configs;
        shared += s.sk_tiles > 0 && s.split == 0;
        even += s.split > 0;
      }
  // The sweep meets both ways of sharing (ranges crossing units and even pieces), not only whole units.
  BOOST_TEST(shared > 100);
  BOOST_TEST(even > 100);
  BOOST_TEST_MESSAGE(configs << " configurations, " << shared << " with ranges, " << even << " with even pieces");
}

// The grouped walk (kernels/common/group_walk.cuh) against the CPU's rule for the group rows.
BOOST_AUTO_TEST_CASE(grouped_walk_counts_and_decodes_every_tile) {
  std::mt19937 rng(7);
  int trials = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const bool contiguous = trial % 2 == 0;
    const std::string e = contiguous ? check_group_walk<dg::kGroupContiguous>(rng, trial) : check_group_walk<dg::kGroupMasked>(rng, trial);
    BOOST_TEST_REQUIRE(e.empty(), e);
    ++trials;
  }
  BOOST_TEST(trials == 600);
}

BOOST_AUTO_TEST_SUITE_END()
