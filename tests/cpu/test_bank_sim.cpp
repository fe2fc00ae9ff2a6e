// Verdicts of the shared-memory bank-conflict simulator on layouts whose answer is known by hand.
#include <boost/test/unit_test.hpp>

#include "plan/bank_sim.hpp"

using namespace dgemm::banksim;

BOOST_AUTO_TEST_CASE(unswizzled_128x64_bf16_kmajor_ldmatrix_conflicts_8_way) {
  // 64 bf16 = 128-byte rows: the 8 row addresses of one phase all start in banks 0-3.
  TileLayout t = TileLayout::k_major(128, 64, 2, Swizzle::none());
  ConflictResult r = simulate(ldmatrix_x4(t, 0, 0));
  BOOST_TEST(r.ideal == 4);
  BOOST_TEST(r.wavefronts == 32);
  BOOST_TEST(tile_conflict_degree(t, TileOp::Ldmatrix) == 8.0);
}

BOOST_AUTO_TEST_CASE(swizzled_128B_128x64_bf16_kmajor_ldmatrix_is_conflict_free) {
  TileLayout t = TileLayout::k_major(128, 64, 2, Swizzle::span_bytes(128));
  BOOST_TEST(simulate(ldmatrix_x4(t, 16, 32)).wavefronts == 4);
  BOOST_TEST(tile_conflict_degree(t, TileOp::Ldmatrix) == 1.0);
  BOOST_TEST(tile_conflict_degree(t, TileOp::Stmatrix) == 1.0);
  // The swizzle must keep cp.async's 16-byte stores conflict free too.
  BOOST_TEST(tile_conflict_degree(t, TileOp::CpAsync16) == 1.0);
}

BOOST_AUTO_TEST_CASE(padding_one_chunk_also_removes_ldmatrix_conflicts) {
  TileLayout t = TileLayout::k_major(128, 64, 2, Swizzle::none(), 16);
  BOOST_TEST(tile_conflict_degree(t, TileOp::Ldmatrix) == 1.0);
}

BOOST_AUTO_TEST_CASE(bk32_bf16_rows_need_the_64B_swizzle) {
  // 64-byte rows: rows r and r+2 share banks, so 4-way without a swizzle, none with 64B.
  TileLayout plain = TileLayout::k_major(128, 32, 2, Swizzle::none());
  TileLayout sw64 = TileLayout::k_major(128, 32, 2, Swizzle::span_bytes(64));
  BOOST_TEST(tile_conflict_degree(plain, TileOp::Ldmatrix) == 4.0);
  BOOST_TEST(tile_conflict_degree(sw64, TileOp::Ldmatrix) == 1.0);
  // A 32-byte swizzle is not enough for 64-byte rows: 2-way.
  TileLayout sw32 = TileLayout::k_major(128, 32, 2, Swizzle::span_bytes(32));
  BOOST_TEST(tile_conflict_degree(sw32, TileOp::Ldmatrix) == 2.0);
}

BOOST_AUTO_TEST_CASE(word_loads_broadcast_and_strided_conflicts) {
  WarpAccess same;
  same.bytes = 4;
  for (int i = 0; i < 32; ++i) same.addr[i] = 256;  // one word: broadcast
  BOOST_TEST(simulate(same).wavefronts == 1);

  WarpAccess column;
  column.bytes = 4;
  for (int i = 0; i < 32; ++i) column.addr[i] = uint32_t(i) * 128;  // a column of a 32-word-wide array
  BOOST_TEST(simulate(column).wavefronts == 32);

  WarpAccess two_way;
  two_way.bytes = 4;
  for (int i = 0; i < 32; ++i) two_way.addr[i] = uint32_t(i) * 8;  // stride 2 words
  BOOST_TEST(simulate(two_way).wavefronts == 2);

  // Inactive threads do not count.
  column.active = 0x1u;
  BOOST_TEST(simulate(column).wavefronts == 1);
}

BOOST_AUTO_TEST_CASE(sixteen_byte_accesses_use_quarter_warp_phases) {
  WarpAccess linear;
  linear.bytes = 16;
  for (int i = 0; i < 32; ++i) linear.addr[i] = uint32_t(i) * 16;
  ConflictResult r = simulate(linear);
  BOOST_TEST(r.ideal == 4);
  BOOST_TEST(r.wavefronts == 4);
  BOOST_TEST(r.degree() == 1.0);
}

BOOST_AUTO_TEST_CASE(swizzle_is_a_permutation_inside_its_atom) {
  for (int span : {32, 64, 128}) {
    Swizzle s = Swizzle::span_bytes(span);
    std::vector<bool> seen(1024, false);
    for (uint32_t a = 0; a < 1024; a += 16) {
      uint32_t b = s(a);
      BOOST_TEST(b < 1024u);
      BOOST_TEST(!seen[b]);
      seen[b] = true;
    }
  }
  BOOST_TEST(Swizzle::span_bytes(128).name() == "128B");
  BOOST_TEST(Swizzle::none().name() == "none");
}
