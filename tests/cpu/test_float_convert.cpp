// Tests of src/core/float_convert: decoding of every f16 / bf16 / fp8 bit pattern, correctly
// rounded encoding (checked against GCC's _Float16, the classic f32->bf16 bit trick, and a
// brute-force "nearest representable value" oracle written here from the decoded value table),
// fp8 saturation, and saturating integer stores.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/float_convert.hpp"

using namespace dgemm;

namespace {

struct NamedFormat {
  const char* name;
  SmallFloatFormat f;
};
const NamedFormat kFormats[] = {{"f16", kF16Format}, {"bf16", kBF16Format}, {"e4m3", kE4M3Format}, {"e5m2", kE5M2Format}};

int total_bits(SmallFloatFormat f) { return 1 + f.exp_bits + f.man_bits; }

// Independent decoder, straight from the definition with ldexp.
double decode_by_definition(uint32_t bits, SmallFloatFormat f) {
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const uint32_t s = (bits >> (f.exp_bits + f.man_bits)) & 1;
  const uint32_t e = (bits >> f.man_bits) & ((1u << f.exp_bits) - 1);
  const uint32_t m = bits & ((1u << f.man_bits) - 1);
  const uint32_t e_all = (1u << f.exp_bits) - 1, m_all = (1u << f.man_bits) - 1;
  double v;
  if (f.has_inf && e == e_all) {
    v = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (!f.has_inf && e == e_all && m == m_all) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    v = std::ldexp(double(m), 1 - bias - f.man_bits);
  } else {
    v = std::ldexp(1.0 + std::ldexp(double(m), -f.man_bits), int(e) - bias);
  }
  return s ? -v : v;
}

// Brute-force oracle: the non-negative finite values of a format, sorted, with their codes.
struct Table {
  SmallFloatFormat f;
  std::vector<double> values;  // ascending, from +0 to the largest finite value
  std::vector<uint32_t> codes;
  uint32_t inf_or_nan_overflow, nan;

  explicit Table(SmallFloatFormat fmt) : f(fmt) {
    const uint32_t sign_bit = 1u << (f.exp_bits + f.man_bits);
    for (uint32_t c = 0; c < sign_bit; ++c) {
      double v = decode_by_definition(c, f);
      if (std::isfinite(v)) {
        values.push_back(v);
        codes.push_back(c);
      }
    }
    // Positive codes are ordered like their values; check it, since the oracle relies on it.
    BOOST_REQUIRE(std::is_sorted(values.begin(), values.end()));
  }

  // Code of the nearest value to v (ties to the even code), by search, including overflow.
  uint32_t nearest(double v, bool saturate) const {
    const uint32_t sign_bit = 1u << (f.exp_bits + f.man_bits);
    const uint32_t e_all = (1u << f.exp_bits) - 1;
    const uint32_t nan_code = f.has_inf ? (e_all << f.man_bits) | (1u << (f.man_bits - 1)) : (e_all << f.man_bits) | ((1u << f.man_bits) - 1);
    if (std::isnan(v)) return nan_code;
    const uint32_t sign = std::signbit(v) ? sign_bit : 0;
    const double a = std::fabs(v);
    const uint32_t overflow = sign | (saturate ? codes.back() : f.has_inf ? (e_all << f.man_bits) : nan_code);
    const double max = values.back();
    const double top_ulp = max - values[values.size() - 2];
    if (a > max) {
      const double mid = max + top_ulp / 2;  // exact: few significant bits
      if (a > mid || (a == mid && (codes.back() & 1))) return overflow;
      return sign | codes.back();
    }
    auto it = std::lower_bound(values.begin(), values.end(), a);  // first >= a
    std::size_t hi = std::size_t(it - values.begin());
    if (values[hi] == a) return sign | codes[hi];
    std::size_t lo = hi - 1;
    const double mid = (values[lo] + values[hi]) / 2;  // exact in double
    if (a < mid) return sign | codes[lo];
    if (a > mid) return sign | codes[hi];
    return sign | ((codes[lo] & 1) == 0 ? codes[lo] : codes[hi]);
  }
};

bool same_code_or_both_nan(uint32_t a, uint32_t b, SmallFloatFormat f) {
  if (a == b) return true;
  return std::isnan(decode_by_definition(a, f)) && std::isnan(decode_by_definition(b, f));
}

// Random doubles spread over the format's whole range (and beyond it on both ends), with a
// share of exact midpoints between neighbours and values one double-ulp away from them.
std::vector<double> probe_values(const Table& t, std::mt19937_64& rng, int count) {
  std::vector<double> out;
  const int bias = (1 << (t.f.exp_bits - 1)) - 1;
  std::uniform_int_distribution<int> exp_dist(-bias - t.f.man_bits - 3, bias + 3);
  std::uniform_real_distribution<double> frac(1.0, 2.0);
  std::uniform_int_distribution<std::size_t> idx(0, t.values.size() - 2);
  for (int i = 0; i < count; ++i) {
    double v;
    switch (i % 4) {
      case 0: case 1: v = std::ldexp(frac(rng), exp_dist(rng)); break;
      case 2: {
        std::size_t j = idx(rng);
        v = (t.values[j] + t.values[j + 1]) / 2;  // a tie
        break;
      }
      default: {
        std::size_t j = idx(rng);
        double mid = (t.values[j] + t.values[j + 1]) / 2;
        v = std::nextafter(mid, (rng() & 1) ? 0.0 : 1e300);
        break;
      }
    }
    out.push_back((rng() & 1) ? -v : v);
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_bit_pattern_decodes_by_definition_and_reencodes_to_itself) {
  for (const NamedFormat& nf : kFormats) {
    const uint32_t patterns = 1u << total_bits(nf.f);
    int nans = 0;
    for (uint32_t c = 0; c < patterns; ++c) {
      const double v = decode_small_float(c, nf.f);
      const double want = decode_by_definition(c, nf.f);
      if (std::isnan(want)) {
        BOOST_REQUIRE_MESSAGE(std::isnan(v), nf.name << " code " << c << " should decode to NaN");
        ++nans;
        BOOST_REQUIRE(std::isnan(decode_small_float(encode_small_float(v, nf.f, false), nf.f)));
        continue;
      }
      BOOST_REQUIRE_MESSAGE(v == want && std::signbit(v) == std::signbit(want),
                            nf.name << " code " << c << " decodes to " << v << ", want " << want);
      for (bool sat : {false, true}) {
        uint32_t back = encode_small_float(v, nf.f, sat);
        bool ok = back == c || (sat && std::isinf(v));
        BOOST_REQUIRE_MESSAGE(ok, nf.name << " code " << c << " (" << v << ") re-encodes to " << back
                                          << " (saturate " << sat << ")");
      }
    }
    // NaN counts: e4m3 has exactly two NaN patterns; IEEE-like formats 2 * (2^m - 1).
    const int want_nans = nf.f.has_inf ? 2 * ((1 << nf.f.man_bits) - 1) : 2;
    BOOST_CHECK_EQUAL(nans, want_nans);
  }
}

BOOST_AUTO_TEST_CASE(known_values_of_the_ocp_fp8_and_ieee_formats) {
  BOOST_CHECK_EQUAL(e4m3_to_double(0x7e), 448.0);
  BOOST_CHECK(std::isnan(e4m3_to_double(0x7f)));
  BOOST_CHECK(std::isnan(e4m3_to_double(0xff)));
  BOOST_CHECK_EQUAL(e4m3_to_double(0x78), 256.0);
  BOOST_CHECK_EQUAL(e4m3_to_double(0x01), std::ldexp(1.0, -9));
  BOOST_CHECK_EQUAL(e4m3_to_double(0x08), std::ldexp(1.0, -6));
  BOOST_CHECK_EQUAL(e4m3_to_double(0x38), 1.0);
  BOOST_CHECK_EQUAL(e5m2_to_double(0x7b), 57344.0);
  BOOST_CHECK(std::isinf(e5m2_to_double(0x7c)) && e5m2_to_double(0xfc) < 0);
  BOOST_CHECK(std::isnan(e5m2_to_double(0x7d)));
  BOOST_CHECK_EQUAL(e5m2_to_double(0x01), std::ldexp(1.0, -16));
  BOOST_CHECK_EQUAL(e5m2_to_double(0x3c), 1.0);
  BOOST_CHECK_EQUAL(f16_to_double(0x7bff), kF16Max);
  BOOST_CHECK_EQUAL(f16_to_double(0x0001), std::ldexp(1.0, -24));
  BOOST_CHECK_EQUAL(bf16_to_double(0x7f7f), kBF16Max);
  BOOST_CHECK_EQUAL(bf16_to_double(0x0001), std::ldexp(1.0, -133));
  BOOST_CHECK_EQUAL(decode_small_float(0x7f7f, kBF16Format), kBF16Max);
  BOOST_CHECK_EQUAL(e4m3_to_double(0x7e), kE4M3Max);
  BOOST_CHECK_EQUAL(e5m2_to_double(0x7b), kE5M2Max);
}

// _Float16 is GCC's (and clang's from 15 on); the sanitizer tier builds with clang 14.
#ifdef __FLT16_MAX__
BOOST_AUTO_TEST_CASE(f16_decode_and_rounding_agree_with_gcc_float16) {
  for (uint32_t c = 0; c < 65536; ++c) {
    uint16_t bits = uint16_t(c);
    _Float16 h;
    std::memcpy(&h, &bits, 2);
    double want = double(h);
    double got = f16_to_double(bits);
    BOOST_REQUIRE_MESSAGE((std::isnan(want) && std::isnan(got)) || (want == got && std::signbit(want) == std::signbit(got)),
                          "f16 code " << c);
  }
  std::mt19937_64 rng(1234);
  Table table(kF16Format);
  std::vector<double> probes = probe_values(table, rng, 200000);
  for (double v : {0.0, -0.0, 65504.0, 65519.99, 65520.0, 65536.0, 1e6, -1e300, std::ldexp(1.0, -24),
                   std::ldexp(1.0, -25), std::ldexp(1.5, -25), std::ldexp(1.0, -26), std::ldexp(1.0, -14),
                   std::ldexp(1023.5, -24), std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::denorm_min()})
    probes.push_back(v);
  for (double v : probes) {
    _Float16 h = static_cast<_Float16>(v);  // GCC rounds double -> _Float16 once, to nearest even
    uint16_t want;
    std::memcpy(&want, &h, 2);
    uint16_t got = double_to_f16(v);
    BOOST_REQUIRE_MESSAGE(same_code_or_both_nan(got, want, kF16Format),
                          "double_to_f16(" << std::hexfloat << v << ") = " << got << ", _Float16 gives " << want);
  }
  BOOST_CHECK(std::isnan(f16_to_double(double_to_f16(std::nan("")))));
}
#endif

BOOST_AUTO_TEST_CASE(f32_to_bf16_agrees_with_the_bit_trick) {
  // The classic f32 -> bf16 round-to-nearest-even: add 0x7fff plus the lowest kept bit.
  auto trick = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  };
  std::mt19937_64 rng(99);
  for (int i = 0; i < 1000000; ++i) {
    uint32_t u = uint32_t(rng());
    if (i % 4 == 0) u = (u & 0xffff0000u) | 0x8000u;  // exact ties
    float f;
    std::memcpy(&f, &u, 4);
    if (std::isnan(f)) continue;
    BOOST_REQUIRE_MESSAGE(double_to_bf16(double(f)) == trick(f), "bits 0x" << std::hex << u);
  }
}

BOOST_AUTO_TEST_CASE(every_format_rounds_to_the_nearest_value_with_ties_to_even) {
  std::mt19937_64 rng(7);
  for (const NamedFormat& nf : kFormats) {
    Table table(nf.f);
    std::vector<double> probes = probe_values(table, rng, 100000);
    const double max = table.values.back();
    const double top_ulp = max - table.values[table.values.size() - 2];
    for (double v : {max, max + top_ulp / 2, std::nextafter(max + top_ulp / 2, 0.0),
                     std::nextafter(max + top_ulp / 2, 1e300), max * 4, 1e300, table.values[1] / 2,
                     table.values[1] * 1.5, table.values[1] / 2 * 1.0000001})
      for (double s : {1.0, -1.0}) probes.push_back(s * v);
    probes.push_back(std::numeric_limits<double>::infinity());
    probes.push_back(-std::numeric_limits<double>::infinity());
    probes.push_back(std::nan(""));
    for (bool sat : {false, true}) {
      for (double v : probes) {
        uint32_t got = encode_small_float(v, nf.f, sat);
        uint32_t want = table.nearest(v, sat);
        BOOST_REQUIRE_MESSAGE(same_code_or_both_nan(got, want, nf.f),
                              nf.name << " saturate=" << sat << " v=" << std::hexfloat << v << ": got " << got
                                      << " want " << want);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(fp8_ties_subnormals_and_saturation) {
  const double inf = std::numeric_limits<double>::infinity();
  // e4m3: ties between 1.0 (0x38) and 1.125 (0x39) go to the even code.
  BOOST_CHECK_EQUAL(double_to_e4m3(1.0625, true), 0x38);
  BOOST_CHECK_EQUAL(double_to_e4m3(1.1875, true), 0x3a);
  // Subnormals: the smallest is 2^-9; half of it ties to zero, 1.5x and 3x of half go up.
  BOOST_CHECK_EQUAL(double_to_e4m3(std::ldexp(1.0, -10), true), 0x00);
  BOOST_CHECK_EQUAL(double_to_e4m3(std::ldexp(1.5, -10), true), 0x01);
  BOOST_CHECK_EQUAL(double_to_e4m3(std::ldexp(3.0, -10), true), 0x02);
  BOOST_CHECK_EQUAL(double_to_e4m3(-std::ldexp(7.5, -9), true), 0x88);  // rounds up into the smallest normal
  // Overflow: 464 ties between 448 (0x7e, even) and 480 (beyond the format), so it stays 448.
  BOOST_CHECK_EQUAL(double_to_e4m3(464.0, false), 0x7e);
  BOOST_CHECK_EQUAL(double_to_e4m3(465.0, false), 0x7f);
  BOOST_CHECK_EQUAL(double_to_e4m3(465.0, true), 0x7e);
  BOOST_CHECK_EQUAL(double_to_e4m3(-1e9, true), 0xfe);
  BOOST_CHECK(std::isnan(e4m3_to_double(double_to_e4m3(-1e9, false))));
  BOOST_CHECK_EQUAL(double_to_e4m3(inf, true), 0x7e);
  BOOST_CHECK(std::isnan(e4m3_to_double(double_to_e4m3(inf, false))));
  BOOST_CHECK(std::isnan(e4m3_to_double(double_to_e4m3(std::nan(""), true))));
  // e5m2: 61440 ties between 57344 (0x7b, odd) and 65536 (even): overflows unless saturating.
  BOOST_CHECK_EQUAL(double_to_e5m2(61439.0, false), 0x7b);
  BOOST_CHECK_EQUAL(double_to_e5m2(61440.0, false), 0x7c);
  BOOST_CHECK_EQUAL(double_to_e5m2(61440.0, true), 0x7b);
  BOOST_CHECK_EQUAL(double_to_e5m2(-inf, false), 0xfc);
  BOOST_CHECK_EQUAL(double_to_e5m2(-inf, true), 0xfb);
  BOOST_CHECK_EQUAL(double_to_e5m2(std::ldexp(1.0, -17), true), 0x00);
  BOOST_CHECK_EQUAL(double_to_e5m2(std::ldexp(3.0, -17), true), 0x02);
  BOOST_CHECK(std::isnan(e5m2_to_double(double_to_e5m2(std::nan(""), true))));
  // f16 / bf16 ignore the saturate flag (it is an fp8 epilogue option).
  BOOST_CHECK(std::isinf(round_to_dtype(DType::F16, 1e6, true)));
  BOOST_CHECK(std::isinf(round_to_dtype(DType::BF16, 1e300, true)));
  BOOST_CHECK_EQUAL(round_to_dtype(DType::F8E4M3, 1e6, true), 448.0);
  BOOST_CHECK_EQUAL(round_to_dtype(DType::F8E5M2, 1e6, true), 57344.0);
}

BOOST_AUTO_TEST_CASE(integer_stores_round_to_nearest_even_and_saturate) {
  BOOST_CHECK_EQUAL(double_to_i8(2.5), 2);
  BOOST_CHECK_EQUAL(double_to_i8(3.5), 4);
  BOOST_CHECK_EQUAL(double_to_i8(-2.5), -2);
  BOOST_CHECK_EQUAL(double_to_i8(-2.5000001), -3);
  BOOST_CHECK_EQUAL(double_to_i8(126.5), 126);
  BOOST_CHECK_EQUAL(double_to_i8(127.5), 127);
  BOOST_CHECK_EQUAL(double_to_i8(-128.5), -128);
  BOOST_CHECK_EQUAL(double_to_i8(1e10), 127);
  BOOST_CHECK_EQUAL(double_to_i8(-1e10), -128);
  BOOST_CHECK_EQUAL(double_to_i8(std::numeric_limits<double>::infinity()), 127);
  BOOST_CHECK_EQUAL(double_to_i8(std::nan("")), 0);
  BOOST_CHECK_EQUAL(double_to_i32(2147483646.5), 2147483646);
  BOOST_CHECK_EQUAL(double_to_i32(2147483647.5), INT32_MAX);
  BOOST_CHECK_EQUAL(double_to_i32(-2147483648.5), INT32_MIN);
  BOOST_CHECK_EQUAL(double_to_i32(-1e300), INT32_MIN);
  BOOST_CHECK_EQUAL(double_to_i32(1e300), INT32_MAX);
  BOOST_CHECK_EQUAL(double_to_i32(-7.5), -8);
  BOOST_CHECK_EQUAL(double_to_i32(std::nan("")), 0);
}

BOOST_AUTO_TEST_CASE(load_and_store_every_type_at_an_index) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> dist(-100.0, 100.0);
  for (int t = 0; t < kNumDTypes; ++t) {
    const DType type = DType(t);
    alignas(16) unsigned char buf[64];
    std::memset(buf, 0xA5, sizeof buf);
    for (int i = 0; i < 200; ++i) {
      const double v = dist(rng);
      const int64_t index = 3;
      store_from_double(type, buf, index, v, true);
      const double back = load_as_double(type, buf, index);
      BOOST_REQUIRE_EQUAL(back, round_to_dtype(type, v, true));
      // The rounded value is representable, so it survives a second trip unchanged.
      store_from_double(type, buf, index, back, true);
      BOOST_REQUIRE_EQUAL(load_as_double(type, buf, index), back);
      // Within half a unit of the type at that magnitude (integers: 0.5), or half the smallest
      // subnormal; saturated i8 values aside.
      int precision = 0;
      double floor_abs = 0;
      switch (type) {
        case DType::F32: precision = 24; break;
        case DType::F16: precision = 11; floor_abs = std::ldexp(1.0, -25); break;
        case DType::BF16: precision = 8; break;
        case DType::F8E4M3: precision = 4; floor_abs = std::ldexp(1.0, -10); break;
        case DType::F8E5M2: precision = 3; floor_abs = std::ldexp(1.0, -17); break;
        default: break;
      }
      const double half_unit = dtype_is_integer(type) ? 0.5 : std::max(std::fabs(v) * std::ldexp(1.0, -precision), floor_abs);
      if (!(type == DType::I8 && std::fabs(v) > 127)) BOOST_REQUIRE_LE(std::fabs(back - v), half_unit);
    }
    // Neighbouring bytes are untouched.
    const std::size_t sz = dtype_size(type);
    for (std::size_t b = 0; b < sizeof buf; ++b)
      if (b < 3 * sz || b >= 4 * sz) BOOST_REQUIRE_EQUAL(buf[b], 0xA5);
  }
}
